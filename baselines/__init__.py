"""Baseline players for Concentration: heuristics and exact optimal play."""

from baselines.policies import (
    POLICIES,
    BaselinePolicy,
    ForgetfulPolicy,
    GreedyMemoryPolicy,
    OptimalPolicy,
    RandomPolicy,
    SafeFirstPolicy,
    make_policy,
)

__all__ = [
    "POLICIES",
    "BaselinePolicy",
    "ForgetfulPolicy",
    "GreedyMemoryPolicy",
    "OptimalPolicy",
    "RandomPolicy",
    "SafeFirstPolicy",
    "make_policy",
]

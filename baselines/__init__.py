"""Baseline players for Concentration: heuristics and exact optimal play."""

from baselines.policies import (
    POLICIES,
    ForgetfulPolicy,
    GreedyMemoryPolicy,
    OptimalPolicy,
    Policy,
    RandomPolicy,
    SafeFirstPolicy,
    make_policy,
)

__all__ = [
    "POLICIES",
    "ForgetfulPolicy",
    "GreedyMemoryPolicy",
    "OptimalPolicy",
    "Policy",
    "RandomPolicy",
    "SafeFirstPolicy",
    "make_policy",
]

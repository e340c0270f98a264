"""Baseline players for Concentration: heuristics and exact optimal play."""

from baselines.base import BaselinePolicy
from baselines.heuristics import DeferPairsPolicy, ForgetfulPolicy, GreedyMemoryPolicy, RandomPolicy, SafeFirstPolicy
from baselines.optimal_policy import OptimalPolicy
from baselines.policies import POLICIES, make_policy

__all__ = [
    "POLICIES",
    "BaselinePolicy",
    "DeferPairsPolicy",
    "ForgetfulPolicy",
    "GreedyMemoryPolicy",
    "OptimalPolicy",
    "RandomPolicy",
    "SafeFirstPolicy",
    "make_policy",
]

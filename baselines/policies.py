"""The baseline players by name: random, perfect-memory greedy, safe-first, defer-pairs,
exact optimal and forgetful greedy.

The protocol they share is in :mod:`baselines.base`, the heuristic players in
:mod:`baselines.heuristics` and the optimal one in :mod:`baselines.optimal_policy`.
"""

from __future__ import annotations

from baselines.base import BaselinePolicy
from baselines.heuristics import (
    DeferPairsPolicy,
    ForgetfulPolicy,
    GreedyMemoryPolicy,
    RandomPolicy,
    SafeFirstPolicy,
)
from baselines.optimal_policy import OptimalPolicy
from concentration_env.game.rules import Rules

POLICIES = {
    policy.name: policy
    for policy in (
        RandomPolicy,
        GreedyMemoryPolicy,
        SafeFirstPolicy,
        DeferPairsPolicy,
        OptimalPolicy,
        ForgetfulPolicy,
    )
}


def make_policy(name: str, rules: Rules, **kwargs) -> BaselinePolicy:
    """A policy by name (``"random"``, ``"greedy"``, ``"safe_first"``, ``"defer_pairs"``,
    ``"optimal"``, ``"forgetful"``), built for ``rules`` with extra keyword arguments (e.g. ``capacity``)."""
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; allowed: {', '.join(POLICIES)}")
    return POLICIES[name](rules, **kwargs)

"""The policy protocol (players that are not the learner) and driving a table with policies.

A policy is built as ``Policy(rules)`` and has ``reset(seed=None)`` and
``act(observation, action_mask) -> int``, where ``observation`` is the solitaire env's
observation or the ``"observation"`` entry of a multi-player env's. The ``baselines``
package provides them by name: ``baselines.make_policy(name, rules)``.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol, runtime_checkable

import numpy as np

from concentration_env.rules import Rules

DEFAULT_OPPONENT = "greedy"


@runtime_checkable
class Policy(Protocol):
    """What the envs need from a player that is not the learner."""

    def reset(self, seed: int | None = None) -> None: ...

    def act(self, observation: Mapping[str, np.ndarray], action_mask: np.ndarray) -> int: ...


def resolve_policy(policy: Policy | str, rules: Rules) -> Policy:
    """A policy object as given, or one built by name through ``baselines.make_policy``."""
    if isinstance(policy, str):
        try:
            from baselines import make_policy
        except ImportError as error:
            raise ValueError(
                f"invalid policy {policy!r}: policies by name need the 'baselines' package ({error}); "
                "pass a policy object with reset() and act() instead"
            ) from None
        return make_policy(policy, rules)
    if isinstance(policy, Policy):
        return policy
    raise ValueError(f"invalid policy {policy!r}; allowed: a name for baselines.make_policy or an object with reset() and act()")


def play_turns(table: Any, policies: Mapping[int, Policy], watch: str) -> float:
    """Let ``policies`` (seat -> policy) move on a raw multi-player env for as long as the
    game runs and the seat to move has a policy; return what agent ``watch`` earned."""
    earned = 0.0
    while not table.terminations[table.agent_selection]:
        seat = table.possible_agents.index(table.agent_selection)
        if seat not in policies:
            break
        observed = table.observe(table.agent_selection)
        table.step(int(policies[seat].act(observed["observation"], observed["action_mask"])))
        earned += table.rewards[watch]
    return earned

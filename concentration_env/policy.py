"""The policy protocol (players that are not the learner) and driving a table with policies.

A policy is built as ``Policy(rules)`` and has ``reset(seed=None)`` and
``act(observation, action_mask) -> int``, where ``observation`` is the solitaire env's
observation or the ``"observation"`` entry of a multi-player env's. The ``baselines``
package provides them by name: ``baselines.make_policy(name, rules)``; a saved model's
file (``.zip`` of Stable-Baselines3, ``.pt`` of the recurrent learner, with the run's
``config.yaml`` beside it) plays through ``concentration_env.training.ModelPolicy``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Protocol, runtime_checkable

import numpy as np

from concentration_env.rules import Rules

DEFAULT_OPPONENT = "greedy"
MODEL_SUFFIXES = (".zip", ".pt")  # saved Stable-Baselines3 models, saved recurrent PPO networks


@runtime_checkable
class Policy(Protocol):
    """What the envs need from a player that is not the learner."""

    def reset(self, seed: int | None = None) -> None: ...

    def act(self, observation: Mapping[str, np.ndarray], action_mask: np.ndarray) -> int: ...


def is_model_path(spec: Any) -> bool:
    """Whether a policy spec names a saved model's file (by its suffix)."""
    return isinstance(spec, str) and spec.endswith(MODEL_SUFFIXES)


def check_policy_name(spec: str) -> str:
    """``spec`` if :func:`resolve_policy` can build a policy from it (a saved model's file
    that exists, or a baseline's name); ``ValueError`` saying what is allowed otherwise."""
    if is_model_path(spec):
        if not Path(spec).is_file():
            raise ValueError(f"no saved model at {spec!r}")
        return spec
    from baselines.policies import POLICIES

    if spec not in POLICIES:
        raise ValueError(f"unknown policy {spec!r}; allowed: {', '.join(POLICIES)} or a saved model's file "
                         f"({', '.join(MODEL_SUFFIXES)})")
    return spec


def load_model_policy(path: str, rules: Rules) -> Policy:
    """A saved model playing ``rules``; ``ValueError`` saying why if it cannot be had."""
    check_policy_name(path)
    try:
        from concentration_env.training import ModelPolicy
    except ImportError as error:
        raise ValueError(
            f"cannot load the saved model {path!r}: concentration_env.training.ModelPolicy is not "
            f"available ({error}); install the train extra: pip install 'concentration-env[train]'"
        ) from None
    try:
        return ModelPolicy(path, rules)
    except Exception as error:  # whatever the file holds, the user gets one clear line
        raise ValueError(f"cannot load the saved model {path!r}: {error}") from None


def resolve_policy(policy: Policy | str, rules: Rules) -> Policy:
    """A policy object as given, a saved model from its file (:data:`MODEL_SUFFIXES`), or a
    baseline built by name through ``baselines.make_policy``."""
    if is_model_path(policy):
        return load_model_policy(policy, rules)
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

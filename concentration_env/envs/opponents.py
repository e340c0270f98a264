"""Policies from what users name: baselines by name, saved models by file, objects as given.

The adapters (the versus envs, sessions, the SB3 VecEnv, training configs) turn a user's
spec into a :class:`~concentration_env.game.policy.Policy` here and hand objects to the game
layer. ``baselines.make_policy(name, rules)`` builds baselines; a saved model's file
(``.zip`` of Stable-Baselines3, ``.pt`` of the recurrent learner, with the run's
``config.yaml`` beside it) plays through ``concentration_env.training.ModelPolicy``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from concentration_env.envs.policy_specs import check_policy_name, is_model_path
from concentration_env.game.policy import BatchPolicy, Policy
from concentration_env.game.rules import Rules


def load_model_policy(path: str, rules: Rules) -> Policy:
    """A saved model playing ``rules``; ``ValueError`` saying why if it cannot be had."""
    check_policy_name(path)
    try:
        from concentration_env.training.model_policy import ModelPolicy
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
    raise ValueError(
        f"invalid policy {policy!r}; allowed: a name for baselines.make_policy or an object with reset() and act()"
    )


def resolve_opponents(specs: Any, rules: Rules, num_games: int) -> list[BatchPolicy]:
    """One batched policy per game for the batched engines: a spec (or one per game) as
    :func:`resolve_policy` takes them, each distinct name or file built once."""
    if isinstance(specs, (list, tuple)):
        if len(specs) != num_games:
            raise ValueError(
                f"invalid opponents: {len(specs)} given; allowed: one for all games or one per game ({num_games})"
            )
    else:
        specs = [specs] * num_games
    built: dict[Any, BatchPolicy] = {}
    chosen = []
    for spec in specs:
        key = spec if isinstance(spec, str) else id(spec)
        if key not in built:
            if not isinstance(spec, str) and not isinstance(spec, BatchPolicy):
                raise ValueError(
                    f"invalid opponents entry {spec!r}; allowed: baseline names, saved models' files "
                    "or policy objects with reset_batch(), reset_rows() and act_rows()"
                )
            policy = resolve_policy(spec, rules)
            if not isinstance(policy, BatchPolicy):
                raise ValueError(
                    f"the opponent {spec!r} cannot play batched games (it lacks reset_batch/reset_rows/act_rows)"
                )
            built[key] = policy
        chosen.append(built[key])
    return chosen


def play_turns(table: Any, policies: Mapping[int, Policy], watch: str) -> float:
    """Let ``policies`` (seat -> policy) move on a raw multi-player env for as long as the
    game runs (neither terminated nor truncated) and the seat to move has a policy; return
    what agent ``watch`` earned."""
    earned = 0.0
    while not (table.terminations[table.agent_selection] or table.truncations[table.agent_selection]):
        seat = table.possible_agents.index(table.agent_selection)
        if seat not in policies:
            break
        observed = table.observe(table.agent_selection)
        action = policies[seat].act(observed["observation"], observed["action_mask"])
        try:
            table.step(action)
        except (TypeError, ValueError) as error:  # the table is unchanged: say whose flip it was
            raise ValueError(
                f"the opponent in seat {seat} ({table.agent_selection}), policy {policies[seat]!r}, "
                f"played {action!r}: {error}"
            ) from None
        earned += table.rewards[watch]
    return earned

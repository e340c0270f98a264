"""Registration of the package's ids with Gymnasium and PettingZoo (idempotent)."""

from __future__ import annotations

import functools
import warnings
from typing import Any, NoReturn

import gymnasium as gym
import pettingzoo
from pettingzoo.env_registry.exceptions import PettingZooRegistryError

from concentration_env.envs.solitaire import MAX_EPISODE_STEPS
from concentration_env.game.rules import preset_names

SOLITAIRE_ENTRY_POINT = "concentration_env.envs.solitaire:ConcentrationEnv"
VECTOR_ENTRY_POINT = "concentration_env.envs.vector:ConcentrationVectorEnv"
VERSUS_ID = "ConcentrationVs-v0"
VERSUS_ENTRY_POINT = "concentration_env.envs.versus:VersusEnv"
VERSUS_VECTOR_ENTRY_POINT = "concentration_env.envs.versus_vector:VersusVectorEnv"
PETTINGZOO_NAMESPACE = "concentration"
MULTIPLAYER_ENTRY_POINT = "concentration_env.concentration_v0:env"
DUEL_ID = f"{PETTINGZOO_NAMESPACE}/Duel-v0"
DUEL_ENTRY_POINT = "concentration_env.duel_v0:env"


class NoParallelEnv(PettingZooRegistryError):
    """``pettingzoo.make("parallel", ...)`` of one of our ids: the games are turn-based."""


def _aec_only(env_id: str, classic: str, **kwargs: Any) -> NoReturn:
    """The parallel entry of an AEC id: one error saying why there is none and what to use
    (without it PettingZoo answers with a misleading ``NamespaceNotFound``)."""
    raise NoParallelEnv(
        f"{env_id} is turn-based (who flips next depends on the last flip), so it is offered as a "
        f"PettingZoo AEC env only, not as a parallel env: use pettingzoo.make('aec', {env_id!r}, ...) "
        f"or {classic}.env(...)"
    )


def preset_env_id(preset: str) -> str:
    """``two_decks`` -> ``Concentration-TwoDecks-v0``."""
    return "Concentration-" + "".join(part.capitalize() for part in preset.split("_")) + "-v0"


def solitaire_env_ids() -> tuple[str, ...]:
    """Every solitaire id this package registers."""
    return tuple(_preset_specs())


def _preset_specs() -> dict[str, dict]:
    """Id -> keyword arguments for the base id and one id per preset. Of two presets whose
    names make one id (``a_1`` and ``a1``), the first in sorted order gets it, with a warning."""
    specs: dict[str, dict] = {"Concentration-v0": {}}
    for preset in preset_names():
        env_id = preset_env_id(preset)
        if env_id in specs:
            warnings.warn(
                f"presets {specs[env_id]['rules']!r} and {preset!r} both make the env id {env_id!r}; "
                f"it plays {specs[env_id]['rules']!r} (use rules={preset!r} with Concentration-v0 for the other)",
                stacklevel=2,
            )
            continue
        specs[env_id] = {"rules": preset}
    return specs


def pettingzoo_env_ids() -> tuple[str, ...]:
    """Every PettingZoo AEC id this package registers."""
    return tuple(f"{PETTINGZOO_NAMESPACE}/{env_id}" for env_id in _preset_specs()) + (DUEL_ID,)


def register_envs() -> None:
    """Register every Gymnasium and PettingZoo id (the solitaire ids and ``ConcentrationVs-v0``
    with their native vector envs for ``gym.make_vec``; each AEC id with a parallel entry that
    refuses, saying it is AEC only); safe to call again."""
    for env_id, kwargs in _preset_specs().items():
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point=SOLITAIRE_ENTRY_POINT,
                vector_entry_point=VECTOR_ENTRY_POINT,
                max_episode_steps=MAX_EPISODE_STEPS,
                kwargs=kwargs,
            )
        aec_id = f"{PETTINGZOO_NAMESPACE}/{env_id}"
        _register_aec(aec_id, MULTIPLAYER_ENTRY_POINT, kwargs)
    _register_aec(DUEL_ID, DUEL_ENTRY_POINT, {})
    if VERSUS_ID not in gym.registry:
        gym.register(
            id=VERSUS_ID,
            entry_point=VERSUS_ENTRY_POINT,
            vector_entry_point=VERSUS_VECTOR_ENTRY_POINT,
            max_episode_steps=MAX_EPISODE_STEPS,
        )


def _register_aec(env_id: str, entry_point: str, kwargs: dict) -> None:
    """Register an AEC id, and under the same id a parallel entry that says it is AEC only."""
    if env_id not in pettingzoo.aec_registry:
        pettingzoo.register("aec", env_id, entry_point, kwargs=kwargs)
    if env_id not in pettingzoo.parallel_registry:
        classic_module = entry_point.split(":")[0]
        pettingzoo.register("parallel", env_id, functools.partial(_aec_only, env_id, classic_module))

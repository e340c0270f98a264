"""Registration of the package's ids with Gymnasium (idempotent)."""

from __future__ import annotations

import gymnasium as gym

from concentration_env.rules import preset_names
from concentration_env.solitaire import MAX_EPISODE_STEPS

SOLITAIRE_ENTRY_POINT = "concentration_env.solitaire:ConcentrationEnv"
VECTOR_ENTRY_POINT = "concentration_env.vector:ConcentrationVectorEnv"


def preset_env_id(preset: str) -> str:
    """``two_decks`` -> ``Concentration-TwoDecks-v0``."""
    return "Concentration-" + "".join(part.capitalize() for part in preset.split("_")) + "-v0"


def solitaire_env_ids() -> tuple[str, ...]:
    """Every solitaire id this package registers."""
    return ("Concentration-v0",) + tuple(preset_env_id(name) for name in preset_names())


def register_envs() -> None:
    """Register every solitaire id (with the native vector env for ``gym.make_vec``); safe to call again."""
    specs = {"Concentration-v0": {}} | {preset_env_id(p): {"rules": p} for p in preset_names()}
    for env_id, kwargs in specs.items():
        if env_id in gym.registry:
            continue
        gym.register(
            id=env_id,
            entry_point=SOLITAIRE_ENTRY_POINT,
            vector_entry_point=VECTOR_ENTRY_POINT,
            max_episode_steps=MAX_EPISODE_STEPS,
            kwargs=kwargs,
        )

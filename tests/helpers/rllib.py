"""A tiny RLlib run config shared by the RLlib test files (needs no Ray to build)."""

from __future__ import annotations

from pathlib import Path

from concentration_env.integrations.rllib import RLlibConfig

TINY_RULES = {"ranks": 2, "matching": "rank"}  # 8 cards: a game is a few dozen flips


def tiny_config(tmp_path: Path, **fields) -> RLlibConfig:
    """A few small PPO steps of the per-card module on 8 cards; ``fields`` override."""
    defaults = dict(
        rules=TINY_RULES,
        network="per_card",
        iterations=1,
        train_batch_size=120,
        minibatch_size=60,
        num_epochs=1,
        hidden=[16],
        checkpoint_dir=str(tmp_path / "ckpt"),
    )
    return RLlibConfig(**{**defaults, **fields})

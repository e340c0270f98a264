"""Training and benchmarking learned agents (needs the ``train`` extra: torch, SB3, ...).

``import concentration_env`` never imports this package, and this package imports torch only
when a learner, a network or a saved model is used. Entry points:

- :func:`train` (``scripts/train.py``, ``concentration-train``): one run from a config;
- :func:`load_config`: read and validate a ``configs/train/*.yaml``;
- :class:`ModelPolicy`: a saved model behind the ``baselines`` policy protocol.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ModelPolicy", "load_config", "train"]


def __getattr__(name: str) -> Any:
    # Lazy: loading a config must not pay for torch.
    if name == "ModelPolicy":
        from concentration_env.training.policy import ModelPolicy

        return ModelPolicy
    if name == "load_config":
        from concentration_env.training.config import load_config

        return load_config
    if name == "train":
        from concentration_env.training.run import train

        return train
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

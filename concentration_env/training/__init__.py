"""Training and benchmarking learned agents (needs the ``train`` extra: torch, SB3, ...).

``import concentration_env`` never imports this package, and this package imports torch only
when a learner, a network or a saved model is used. Entry points:

- :func:`train` (``scripts/train.py``, ``concentration-train``): one run from a config;
- :func:`load_config`: read and validate a ``configs/train/*.yaml``;
- :class:`ModelPolicy`: a saved model behind the ``baselines`` policy protocol.
"""

from __future__ import annotations

import importlib
from typing import Any

# Lazy exports (loading a config must not pay for torch): name -> module defining it.
EXPORTS = {
    "ModelPolicy": "concentration_env.training.model_policy",
    "load_config": "concentration_env.training.config",
    "train": "concentration_env.training.run",
}
__all__ = list(EXPORTS)


def __getattr__(name: str) -> Any:
    if name in EXPORTS:
        return getattr(importlib.import_module(EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

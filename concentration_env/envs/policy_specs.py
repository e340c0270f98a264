"""Policy specs as users write them in configs and on command lines: a baseline's name or
a saved model's file. Checked here, without building anything (that is
:mod:`concentration_env.envs.opponents`), so that config loading needs no learner.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeGuard

DEFAULT_OPPONENT = "greedy"
MODEL_SUFFIXES = (".zip", ".pt")  # saved Stable-Baselines3 models, saved recurrent PPO networks


def is_model_path(spec: Any) -> TypeGuard[str]:
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
        raise ValueError(
            f"unknown policy {spec!r}; allowed: {', '.join(POLICIES)} or a saved model's file "
            f"({', '.join(MODEL_SUFFIXES)})"
        )
    return spec

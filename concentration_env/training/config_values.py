"""Checks of the single values a training config holds: counts, numbers, choices, mappings,
the learners' hyperparameters and SB3's ``net_arch``. Each raises the one ``ValueError`` of
:func:`~concentration_env.game.checks.fail`; :mod:`concentration_env.training.config` checks
how the values combine. No torch here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from concentration_env.game.checks import check_bool, check_choice, check_int, check_number, fail

# The policy_kwargs of network: card_attention (the first four are whole sizes).
ATTENTION_SIZES = ("d_model", "layers", "heads", "value_layers", "shared", "value_scale")
ATTENTION_SWITCHES = ("shared", "value_scale")


def whole_number(key: str, minimum: int = 1) -> Callable[[Any], int]:
    """A check of a whole number >= minimum; floats such as 2e6 are accepted when integral."""
    return lambda value: check_int(key, value, minimum, whole_floats=True)


def one_of(key: str, allowed: tuple[str, ...]) -> Callable[[Any], str]:
    return lambda value: check_choice(key, value, allowed)


def as_mapping(value: Any) -> dict:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"expected a mapping, got {value!r}")
    return dict(value)


def section_mapping(value: Any, allowed: Iterable[str]) -> dict:
    """A config section (``league``, ``restart``) as a mapping of only the ``allowed`` keys."""
    values, names = as_mapping(value), list(allowed)
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(names)}")
    return values


def positive(key: str) -> Callable[[Any], float]:
    return lambda value: finite(key, value, minimum=0.0, above=True)


def fraction(key: str) -> Callable[[Any], float]:
    """A check of a number in (0, 1], as discount factors are."""
    return lambda value: finite(key, value, minimum=0.0, above=True, maximum=1.0)


def finite(key: str, value: Any, minimum: float, above: bool = False, maximum: float | None = None) -> float:
    allowed = f"a number {'>' if above else '>='} {minimum}" + (f" and <= {maximum}" if maximum is not None else "")
    number = check_number(key, value, minimum, maximum, allowed=allowed)
    if not math.isfinite(number) or (above and number <= minimum):
        fail(key, value, allowed)
    return number


def non_negative(name: str) -> Callable[[Any], float]:
    return lambda value: finite(name, value, 0.0)


# Values of the learners' arguments that YAML can give, checked here rather than deep in
# the first update of a run.
HYPERPARAMETER_CHECKS: dict[str, Callable[[Any], Any]] = {
    **{name: whole_number(name) for name in ("n_steps", "batch_size", "n_epochs", "buffer_size", "train_freq")},
    **{name: whole_number(name) for name in ("gradient_steps", "target_update_interval")},
    "learning_starts": whole_number("learning_starts", minimum=0),
    "learning_rate": positive("learning_rate"),
    "clip_range": positive("clip_range"),
    "max_grad_norm": positive("max_grad_norm"),
    "gamma": fraction("gamma"),
    "gae_lambda": fraction("gae_lambda"),
    **{name: non_negative(name) for name in ("ent_coef", "vf_coef")},
    "value_scale": positive("value_scale"),
    "target_kl": lambda value: None if value is None else positive("target_kl")(value),  # null: no early stop
    "value_trunk": lambda value: check_bool("value_trunk", value),
    "policy_frozen_steps": whole_number("policy_frozen_steps", minimum=0),
    "policy_from": lambda value: value if value is None or Path(str(value)).is_file() else _no_model(value),
}


def _no_model(value: Any) -> None:
    fail("policy_from", value, "null or the file of a saved MaskablePPO model (.zip)")


def hyperparameter_values(value: Any) -> dict:
    values = as_mapping(value)
    return {name: HYPERPARAMETER_CHECKS.get(name, lambda v: v)(v) for name, v in values.items()}


def policy_kwargs_values(value: Any) -> dict:
    values = as_mapping(value)
    if "net_arch" in values:
        _check_net_arch(values["net_arch"])
    return values


def _check_net_arch(value: Any) -> None:
    """SB3's ``net_arch``: a list of layer widths, or a mapping of such lists per head."""
    allowed = "a list of layer widths (ints >= 1), or a mapping of such lists (pi, vf, qf)"
    layers = value.values() if isinstance(value, Mapping) else [value]
    if isinstance(value, Mapping) and (not value or not set(value) <= {"pi", "vf", "qf"}):
        fail("net_arch", value, allowed)
    for widths in layers:
        if not isinstance(widths, list):
            fail("net_arch", value, allowed)
        for width in widths:
            check_int("net_arch", width, 1, allowed=allowed)

"""One way to validate a setting: every bad value raises one ``ValueError`` that reads

    invalid <field>=<value>[: <why>]; allowed: <what is allowed>

Rules, batches, seats, training, benchmark and RLlib configs all check their fields here, so
"an int but not a bool" and "one of these names" are written once. An unknown keyword is
refused by :func:`reject_unknown`, with an error that is both a ``TypeError`` and a ``ValueError``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal, NoReturn, TypeGuard, overload

import numpy as np


class UnknownFieldError(TypeError, ValueError):
    """An unknown keyword argument (or key of a rules mapping): a ``TypeError`` worded like
    Python's own, so that callers probing for optional keywords (TorchRL's ``GymEnv`` passes
    ``frameskip`` and retries without it) recognise it, and a ``ValueError`` like every other
    bad setting."""


def reject_unknown(source: str, names: Sequence[Any], kind: str, allowed: Sequence[str]) -> None:
    """Raise :class:`UnknownFieldError` naming every one of ``names`` (if any) in Python's
    words, with the ``kind`` of field they are not and what is ``allowed``."""
    if not names:
        return
    listed = ", ".join(map(repr, names))
    if len(names) == 1:
        got = f"unknown {kind}: got an unexpected keyword argument {listed}"
    else:
        got = f"unknown {kind}s: got unexpected keyword arguments {listed}"
    raise UnknownFieldError(f"{source}: {got}; allowed: {', '.join(allowed)}")


def fail(field: str, value: Any, allowed: str, why: str | None = None) -> NoReturn:
    """Raise the one ``ValueError`` for a bad setting."""
    reason = f": {why}" if why else ""
    raise ValueError(f"invalid {field}={value!r}{reason}; allowed: {allowed}")


def is_int(value: Any, numpy: bool = False) -> TypeGuard[int | np.integer]:
    """An int but not a bool (with ``numpy``, NumPy integers count too)."""
    types = (int, np.integer) if numpy else int
    return isinstance(value, types) and not isinstance(value, bool)


def _int_range(minimum: float | None, maximum: float | None, noun: str) -> str:
    if minimum is not None and maximum is not None:
        return f"{noun} from {minimum} to {maximum}"
    if minimum is not None:
        return f"{noun} >= {minimum}"
    if maximum is not None:
        return f"{noun} <= {maximum}"
    return noun


@overload
def check_int(
    field: str,
    value: Any,
    minimum: int | None = None,
    maximum: int | None = None,
    *,
    optional: Literal[False] = False,
    allowed: str | None = None,
    numpy: bool = False,
    whole_floats: bool = False,
) -> int: ...


@overload
def check_int(
    field: str,
    value: Any,
    minimum: int | None = None,
    maximum: int | None = None,
    *,
    optional: bool,
    allowed: str | None = None,
    numpy: bool = False,
    whole_floats: bool = False,
) -> int | None: ...


def check_int(
    field: str,
    value: Any,
    minimum: int | None = None,
    maximum: int | None = None,
    *,
    optional: bool = False,
    allowed: str | None = None,
    numpy: bool = False,
    whole_floats: bool = False,
) -> int | None:
    """``value`` as an int within ``[minimum, maximum]``.

    ``optional`` lets None through; ``numpy`` accepts NumPy integers; ``whole_floats``
    accepts integral floats such as ``2e6`` (YAML reads it as a float). ``allowed`` replaces
    the generated description of what is allowed.
    """
    if optional and value is None:
        return None
    noun = "a whole number" if whole_floats else "an int"
    allowed = allowed or ("None or " if optional else "") + _int_range(minimum, maximum, noun)
    if whole_floats and isinstance(value, float) and not isinstance(value, bool):
        if not math.isfinite(value) or not value.is_integer():
            fail(field, value, allowed, "not a whole number")
        number = int(value)
    elif is_int(value, numpy):
        number = int(value)
    elif isinstance(value, float):
        fail(field, value, allowed, "not a whole number" if not float(value).is_integer() else "not an int")
    else:
        fail(field, value, allowed, "not a number")
    if minimum is not None and number < minimum:
        fail(field, value, allowed, f"below the minimum {minimum}")
    if maximum is not None and number > maximum:
        fail(field, value, allowed, f"above the maximum {maximum}")
    return number


def check_seed(seed: Any, field: str = "seed") -> int | None:
    """A reset seed: None or an int >= 0 (NumPy integers too), as a plain int."""
    return check_int(field, seed, 0, optional=True, numpy=True)


def check_number(
    field: str, value: Any, minimum: float | None = None, maximum: float | None = None, *, allowed: str | None = None
) -> float:
    """``value`` as a real number (int or float, not a bool) within ``[minimum, maximum]``."""
    allowed = allowed or _int_range(minimum, maximum, "a number")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        fail(field, value, allowed, "not a number")
    if minimum is not None and value < minimum:
        fail(field, value, allowed, f"below the minimum {minimum}")
    if maximum is not None and value > maximum:
        fail(field, value, allowed, f"above the maximum {maximum}")
    return value


def check_choice(field: str, value: Any, allowed: Sequence[str]) -> str:
    """``value`` if it is one of ``allowed``."""
    if not isinstance(value, str) or value not in allowed:
        fail(field, value, ", ".join(allowed))
    return value


def check_bool(field: str, value: Any) -> bool:
    """``value`` if it is True or False."""
    if not isinstance(value, bool):
        fail(field, value, "True or False")
    return value

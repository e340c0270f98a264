"""One parser for ``key=value`` overrides (``--set`` on every command line).

Values are YAML (``2``, ``true``, ``[4, 13]``); ``2e6`` is a number (YAML 1.1 reads it as a
string). A dotted key (``hyperparameters.learning_rate=1e-4``) reaches into a mapping.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml


def parse_override(text: str, form: str = "key=value", flag: str = "--set") -> tuple[list[str], Any]:
    """``"a.b=value"`` -> (``["a", "b"]``, parsed value); ``ValueError`` naming ``flag`` and
    the expected ``form`` when there is no key, and when the value is not valid YAML."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ValueError(f"{flag} {text!r}: expected {form}")
    try:
        value = yaml.safe_load(raw) if raw else None
    except yaml.YAMLError as error:
        raise ValueError(f"{flag} {text!r}: the value is not valid YAML ({yaml_problem(error)})") from None
    if isinstance(value, str):
        try:
            value = float(value)  # YAML 1.1 reads "2e6" as a string
        except ValueError:
            pass
    return key.split("."), value


def yaml_problem(error: yaml.YAMLError) -> str:
    """A YAML error on one line: what is wrong and at which column (PyYAML's own message
    spans several lines, with the text and a caret)."""
    problem = getattr(error, "problem", None)
    mark = getattr(error, "problem_mark", None)
    if problem is None:
        return " ".join(str(error).split())
    return f"{problem} at column {mark.column + 1}" if mark is not None else problem


def apply_overrides(
    data: Mapping[str, Any], overrides: Iterable[str], form: str = "key=value", flag: str = "--set"
) -> dict[str, Any]:
    """A copy of ``data`` with the overrides applied (nested mappings are copied, not changed)."""
    result = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in data.items()}
    for text in overrides:
        path, value = parse_override(text, form, flag)
        target = result
        for part in path[:-1]:
            nested = target.get(part)
            target[part] = dict(nested) if isinstance(nested, Mapping) else {}
            target = target[part]
        target[path[-1]] = value
    return result

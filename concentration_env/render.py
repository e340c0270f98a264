"""Drawing the table from plain values (no env objects), so every env draws the same way."""

from __future__ import annotations

import string
from typing import Sequence

from concentration_env.cards import Card

FACE_DOWN = "##"
CAPTURED = "  "
BACK_MARKS = ("##", "%%")  # the two back designs of a checkerboard deal
CELL_WIDTH = 4


def coordinate(position: int, cols: int) -> str:
    """Grid name of a position, rows lettered from A and columns numbered from 1 ("B7")."""
    row, col = divmod(position, cols)
    return f"{row_label(row)}{col + 1}"


def row_label(row: int) -> str:
    """A, B, ..., Z, AA, AB, ... for rows 0, 1, ..."""
    letters = string.ascii_uppercase
    label = ""
    row += 1
    while row:
        row, rest = divmod(row - 1, 26)
        label = letters[rest] + label
    return label


def render_ansi(
    shape: tuple[int, int],
    cards: Sequence[Card],
    face_up: Sequence[bool],
    removed: Sequence[bool],
    backs: Sequence[int] | None = None,
    header: str = "",
) -> str:
    """The table as text: face-down cards as ``##`` (``%%`` for the second back design),
    face-up cards by name, captured cards as blanks."""
    rows, cols = shape
    label_width = len(row_label(rows - 1)) + 1
    lines = [header] if header else []
    lines.append(" " * label_width + "".join(f"{c + 1:>{CELL_WIDTH}}" for c in range(cols)))
    for r in range(rows):
        cells = []
        for c in range(cols):
            i = r * cols + c
            if i >= len(cards) or removed[i]:
                text = CAPTURED
            elif face_up[i]:
                text = str(cards[i])
            else:
                text = BACK_MARKS[backs[i]] if backs is not None else FACE_DOWN
            cells.append(f"{text:>{CELL_WIDTH}}")
        lines.append(f"{row_label(r):<{label_width}}" + "".join(cells))
    return "\n".join(lines) + "\n"

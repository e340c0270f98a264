"""The table as text (``render_mode="ansi"``): one line per grid row under a line of
column numbers, each card in a cell of its own."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from concentration_env.game.cards import Card
from concentration_env.render.coordinates import row_label

FACE_DOWN = "##"
CAPTURED = "  "
BACK_MARKS = ("##", "%%")  # the two back designs of a checkerboard deal
CELL_WIDTH = 4


def render_ansi(
    shape: tuple[int, int],
    cards: Sequence[Card],
    face_up: Sequence[bool],
    removed: Sequence[bool],
    backs: Sequence[int] | np.ndarray | None = None,
    header: str = "",
) -> str:
    """A text grid of the table under an optional ``header`` line: a card lying face down
    shows its back mark (``##``, or ``%%`` for the second design when ``backs`` are
    given), a face-up card its name, and a captured card an empty cell."""
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

"""Whole frames (``render_mode="rgb_array"``): a status band over one or more tables.

A frame is a ``(height, width, 3)`` uint8 array drawn with numpy alone, from plain values
rather than env objects, so every env draws the same state to the same pixels on any
machine. Its size follows from the tables' shapes, never from the text on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from concentration_env.game.cards import Card
from concentration_env.render.coordinates import coordinate, row_label
from concentration_env.render.font import FONT_H, LINE_H, SMALL_SCALE, TEXT_SCALE, draw_text, text_width
from concentration_env.render.shapes import GAP, MARGIN, TAG_PADDING, table_geometry
from concentration_env.render.sprites import CARD_H, CARD_W, back_sprite, card_mask, face_sprite

STATUS_LINES = 2  # score line + status line above every table
STATUS_H = STATUS_LINES * LINE_H + GAP  # the height of the status band
MIN_FRAME_WIDTH = 520  # room for a status line of 40 characters at full size
TITLE_TOP = 3  # a table's title line starts this far below the table's top
LABEL_TOP = 2  # the column numbers of a grid start this far below the title
HIGHLIGHT_BORDER = 2  # the width of the frame round a face-up card

FELT = (22, 100, 58)
FELT_DARK = (16, 76, 44)
INK = (240, 240, 230)  # text on the felt
HIGHLIGHT = (255, 208, 40)  # face-up cards and the player to move


class Table(NamedTuple):
    """What a layout shows, as plain values: the arguments of ``render_ansi`` and a title."""

    shape: tuple[int, int]
    cards: Sequence[Card]
    face_up: Sequence[bool]
    removed: Sequence[bool]
    backs: Sequence[int] | np.ndarray | None = None
    title: str = ""


def draw_table(table: Table, table_shape: str = "grid") -> np.ndarray:
    """The picture of one layout on the felt, under its title if it has one: card backs,
    faces framed in the highlight colour, bare felt where a pair was captured, and either
    the grid's row letters and column numbers or a coordinate under each card."""
    geometry = table_geometry(tuple(table.shape), len(table.cards), table_shape)
    title_h = LINE_H if table.title else 0
    image = np.empty((geometry.height + title_h, geometry.width, 3), dtype=np.uint8)
    image[:] = FELT
    if table.title:
        draw_text(image, table.title, MARGIN, TITLE_TOP, INK)
    rows, cols = table.shape
    mask = card_mask()
    border = HIGHLIGHT_BORDER
    for i, card in enumerate(table.cards):
        if table.removed[i]:
            continue
        x, y = (int(v) for v in geometry.xy[i])
        y += title_h
        if table.face_up[i]:
            sprite = face_sprite(card)
            image[y - border : y + CARD_H + border, x - border : x + CARD_W + border] = HIGHLIGHT
        else:
            sprite = back_sprite(int(table.backs[i]) if table.backs is not None else 0)
        region = image[y : y + CARD_H, x : x + CARD_W]
        region[mask] = sprite[mask]
        if geometry.tags:
            tag = coordinate(i, cols)
            tag_x = x + (CARD_W - text_width(tag, SMALL_SCALE)) // 2
            draw_text(image, tag, tag_x, y + CARD_H + TAG_PADDING, INK, SMALL_SCALE)
    if not geometry.tags:
        first_x, first_y = (int(v) for v in geometry.xy[0])
        for c in range(cols):
            label = str(c + 1)
            x = first_x + c * (CARD_W + GAP) + (CARD_W - text_width(label)) // 2
            draw_text(image, label, x, title_h + LABEL_TOP, INK)
        for r in range(rows):
            y = title_h + first_y + r * (CARD_H + GAP) + (CARD_H - FONT_H * TEXT_SCALE) // 2
            draw_text(image, row_label(r), MARGIN, y, INK)
    return image


def draw_status(
    width: int,
    status: str = "",
    scores: Sequence[tuple[str, int]] | None = None,
    to_move: int | None = None,
) -> np.ndarray:
    """The band ``width`` pixels wide at the top of a frame. With ``scores`` its first line
    lists each player's points, the player to move marked with ">" and highlighted; the
    lines of ``status`` follow. A line that would not fit is printed in the small font, so
    all frames of a game keep one size. ``ValueError`` if there are more lines than room."""
    lines = status.split("\n")
    entries = [f"{'>' if seat == to_move else ' '}{name} {score}  " for seat, (name, score) in enumerate(scores or ())]
    if len(lines) + bool(entries) > STATUS_LINES:
        raise ValueError(f"the status band holds {STATUS_LINES} lines, the scores counting as one; got {status!r}")
    image = np.empty((STATUS_H, width, 3), dtype=np.uint8)
    image[:] = FELT_DARK

    def fitting(text: str) -> int:
        return TEXT_SCALE if text_width(text) <= width - 2 * MARGIN else SMALL_SCALE

    scale, x = fitting("".join(entries)), MARGIN
    for seat, entry in enumerate(entries):
        draw_text(image, entry, x, GAP, HIGHLIGHT if seat == to_move else INK, scale)
        x += text_width(entry, scale)
    for row, text in enumerate(lines, start=1 if entries else 0):
        draw_text(image, text, MARGIN, GAP + row * LINE_H, INK, fitting(text))
    return image


def render_tables(
    tables: Sequence[Table],
    status: str = "",
    scores: Sequence[tuple[str, int]] | None = None,
    to_move: int | None = None,
    table_shape: str = "grid",
) -> np.ndarray:
    """A full frame: the status band (see ``draw_status``) over the ``tables``, stacked top
    to bottom and each centred on felt as wide as the widest (or ``MIN_FRAME_WIDTH``)."""
    panels = [draw_table(table, table_shape) for table in tables]
    width = max([MIN_FRAME_WIDTH] + [panel.shape[1] for panel in panels])
    frame = [draw_status(width, status, scores, to_move)]
    for panel in panels:
        padded = np.empty((panel.shape[0], width, 3), dtype=np.uint8)
        padded[:] = FELT
        left = (width - panel.shape[1]) // 2
        padded[:, left : left + panel.shape[1]] = panel
        frame.append(padded)
    return np.concatenate(frame, axis=0)


def position_at(frame: np.ndarray, shape: tuple[int, int], num_cards: int, table_shape: str, x: int, y: int):
    """Which position's card lies under pixel (x, y) of ``frame``, a ``render_tables`` frame of
    one untitled table; None if no card does."""
    geometry = table_geometry(tuple(shape), num_cards, table_shape)
    left = (frame.shape[1] - geometry.width) // 2
    return geometry.position_at(x - left, y - STATUS_H)

"""Where the cards lie in a picture: the grid, or one of the fancy table shapes.

Besides the plain grid (dealing order), cards can be drawn in the layouts of the reference
texts: concentric ``"circle"``s, a ``"diamond"``, or a ``"scatter"`` strewn over the table.
A shape moves only the pictures; positions, coordinates and actions stay the grid's, so
each card of a fancy shape is drawn with its grid coordinate beneath it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from concentration_env.render.coordinates import row_label
from concentration_env.render.font import FONT_H, LINE_H, SMALL_SCALE, text_width
from concentration_env.render.sprites import CARD_H, CARD_W

TABLE_SHAPES = ("grid", "circle", "diamond", "scatter")
GAP = 8  # between neighbouring cards
MARGIN = 16  # around the table
TAG_PADDING = 2  # between a card and its coordinate tag
TAG_H = (FONT_H + 1) * SMALL_SCALE + TAG_PADDING  # the room a coordinate tag takes under its card
SCATTER_SEED = 20_240_607  # fixed: a scatter layout is the same picture every time
SCATTER_ROOM = 2.4  # table area per card area in a scatter: sparse enough to place quickly
SCATTER_GROWTH = 1.0005  # how much a crowded scatter table widens before the next try
RING_TWIST = 0.4  # radians each ring of a circle layout turns, so rings do not line up in spokes


@dataclass(frozen=True)
class Geometry:
    """The placement of one table's cards in a ``width`` x ``height`` panel: ``xy[i]`` is
    the top-left pixel of position ``i``, and ``tags`` tells whether cards carry their
    coordinate (fancy shapes) or the panel has row and column labels (the grid)."""

    xy: np.ndarray  # (n, 2) int: x, y
    width: int
    height: int
    tags: bool

    def position_at(self, x: int, y: int) -> int | None:
        """The position of the card under pixel (x, y) of the panel; None between cards."""
        inside = (
            (self.xy[:, 0] <= x) & (x < self.xy[:, 0] + CARD_W) & (self.xy[:, 1] <= y) & (y < self.xy[:, 1] + CARD_H)
        )
        hits = np.flatnonzero(inside)
        return int(hits[0]) if len(hits) else None


def check_table_shape(table_shape: str) -> str:
    """``table_shape`` itself if it is one of ``TABLE_SHAPES``; ``ValueError`` listing them otherwise."""
    if table_shape not in TABLE_SHAPES:
        raise ValueError(f"invalid table_shape={table_shape!r}; allowed: {' | '.join(repr(s) for s in TABLE_SHAPES)}")
    return table_shape


@cache
def table_geometry(shape: tuple[int, int], num_cards: int, table_shape: str = "grid") -> Geometry:
    """The placement of the ``num_cards`` cards of a ``shape`` grid when drawn as ``table_shape``.

    No two cards overlap, nor do the coordinate tags of the fancy shapes, and the result
    depends on the arguments alone (so it is cached and shared, read-only).
    """
    check_table_shape(table_shape)
    if table_shape == "grid":
        rows, cols = shape
        label_w = text_width(row_label(rows - 1)) + GAP
        label_h = LINE_H
        index = np.arange(num_cards)
        xy = np.stack(
            [MARGIN + label_w + index % cols * (CARD_W + GAP), label_h + index // cols * (CARD_H + GAP)], axis=1
        )
        width = MARGIN * 2 + label_w + cols * (CARD_W + GAP) - GAP
        height = label_h + rows * (CARD_H + GAP) - GAP + MARGIN
        return _geometry(xy, width, height, tags=False)
    slot_w, slot_h = CARD_W + GAP, CARD_H + TAG_H + GAP  # a card, its tag and a gap
    centres = {"circle": _circle_centres, "diamond": _diamond_centres, "scatter": _scatter_centres}[table_shape](
        num_cards, slot_w, slot_h
    )
    # Number the cards in reading order, position 0 top left, as people scan a table.
    order = np.lexsort((centres[:, 0], np.round(centres[:, 1], 6)))
    corners = np.round(centres[order] - (slot_w / 2, slot_h / 2)).astype(np.int64)
    corners -= corners.min(axis=0)
    xy = corners + (MARGIN + GAP // 2, MARGIN + GAP // 2)
    width = int(corners[:, 0].max()) + slot_w + 2 * MARGIN
    height = int(corners[:, 1].max()) + slot_h + 2 * MARGIN
    return _geometry(xy, width, height, tags=True)


def _geometry(xy: np.ndarray, width: int, height: int, tags: bool) -> Geometry:
    """A Geometry whose ``xy`` cannot be written to, since the cache hands it to every caller."""
    xy = xy.astype(np.int64)
    xy.setflags(write=False)
    return Geometry(xy, int(width), int(height), tags)


def _circle_centres(n: int, slot_w: int, slot_h: int) -> np.ndarray:
    """Card centres on rings around one centre card. Rings are a slot diagonal apart, and
    so are neighbours on a ring, which keeps cards apart at any angle."""
    step = math.hypot(slot_w, slot_h)
    capacity = [1]  # the centre holds one card
    while sum(capacity) < n:
        ring = len(capacity)
        # Neighbours on ring k are a chord 2k*step*sin(pi/count) apart: keep it >= step.
        capacity.append(int(math.pi / math.asin(1 / (2 * ring)) + 1e-9))
    # Each ring gets cards in proportion to its capacity, leftovers by largest remainder.
    share = np.array(capacity) * n / sum(capacity)
    counts = np.floor(share).astype(int)  # share <= capacity, so a ring never overflows
    for ring in np.argsort(-(share - counts), kind="stable")[: n - counts.sum()]:
        counts[ring] += 1
    points = []
    for ring, count in enumerate(counts):
        for k in range(count):
            angle = -math.pi / 2 + 2 * math.pi * k / count + ring * RING_TWIST
            points.append((ring * step * math.cos(angle), ring * step * math.sin(angle)))
    return np.array(points)


def _diamond_centres(n: int, slot_w: int, slot_h: int) -> np.ndarray:
    """Card centres in a diamond: take the ``n`` slots of a large grid closest to its middle
    by taxicab distance in pixels, keep how many fell in each row, and centre every row.
    Rows lie a slot apart and cards within a row a slot wide, so none overlap."""
    side = 4 * math.isqrt(n) + 5  # a grid wide enough for the diamond's long axis
    r, c = np.divmod(np.arange(side * side), side)
    x, y = (c - side // 2) * slot_w, (r - side // 2) * slot_h
    nearest = np.argsort(np.abs(x) + np.abs(y), kind="stable")[:n]
    rows, lengths = np.unique(r[nearest], return_counts=True)
    points = [
        ((k - (length - 1) / 2) * slot_w, (row - side // 2) * slot_h)
        for row, length in zip(rows, lengths)
        for k in range(length)
    ]
    return np.array(points, dtype=float)


def _scatter_centres(n: int, slot_w: int, slot_h: int) -> np.ndarray:
    """Card centres thrown at random (from a fixed seed) onto a roomy 4:3 table; a throw
    that would overlap a card already down is thrown again."""
    rng = np.random.default_rng(SCATTER_SEED + n)
    area = SCATTER_ROOM * n * slot_w * slot_h
    width = max(math.sqrt(area * 4 / 3), 2 * slot_w)
    height = max(area / width, 2 * slot_h)
    placed = np.empty((0, 2))
    while len(placed) < n:
        candidate = rng.uniform((0, 0), (width - slot_w, height - slot_h))
        clear = (np.abs(placed[:, 0] - candidate[0]) >= slot_w) | (np.abs(placed[:, 1] - candidate[1]) >= slot_h)
        if clear.all():
            placed = np.vstack([placed, candidate])
        else:  # free spots get rare near the end: grow the table a little to keep going
            width, height = width * SCATTER_GROWTH, height * SCATTER_GROWTH
    return placed + (slot_w / 2, slot_h / 2)

"""Drawing the table from plain values (no env objects), so every env draws the same way.

Two outputs: ``render_ansi`` (a text grid) and ``render_rgb`` / ``render_tables`` (an RGB
picture as a ``(height, width, 3)`` uint8 array). Pictures are drawn with numpy only, from
a built-in bitmap font and hand-made suit sprites, so the same state gives the same pixels
on every machine, with no window and no font files. ``Screen`` shows such frames in a pygame
window (``render_mode="human"``); pygame is imported only when a window is opened.

Cards can be drawn in a grid (their dealing order) or in the fancy layouts of the reference
texts: concentric ``"circle"``s, a ``"diamond"`` or a ``"scatter"`` strewn over the table.
The drawing shape only moves the pictures: positions, coordinates and actions stay the
grid's, and each card of a fancy layout carries its grid coordinate ("B7") beneath it.
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import NamedTuple

import numpy as np

from concentration_env.game.cards import RANK_NAMES, Card

FACE_DOWN = "##"
CAPTURED = "  "
BACK_MARKS = ("##", "%%")  # the two back designs of a checkerboard deal
CELL_WIDTH = 4

TABLE_SHAPES = ("grid", "circle", "diamond", "scatter")
RENDER_EXTRA = "pip install 'concentration-env[render]'"


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


def parse_coordinate(text: str, shape: tuple[int, int], num_cards: int) -> int:
    """Position of a grid name such as "B7" (case and spaces ignored); ``ValueError`` naming
    what was wrong and the allowed range otherwise."""
    rows, cols = shape
    last = coordinate(num_cards - 1, cols)
    allowed = f"a row letter A..{row_label(rows - 1)} then a column number 1..{cols} (A1 to {last})"
    cleaned = "".join(text.split()).upper()
    letters = cleaned.rstrip(string.digits)
    digits = cleaned[len(letters) :]
    if not letters or not digits or not letters.isalpha() or not letters.isascii():
        raise ValueError(f"{text.strip()!r} is not a card coordinate; expected {allowed}")
    row = 0
    for letter in letters:
        row = row * 26 + string.ascii_uppercase.index(letter) + 1
    row, col = row - 1, int(digits) - 1
    if not (0 <= row < rows and 0 <= col < cols) or row * cols + col >= num_cards:
        raise ValueError(f"{cleaned} is not on the table; expected {allowed}")
    return row * cols + col


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


# -- pixels ------------------------------------------------------------------------------
CARD_W, CARD_H = 48, 68
GAP = 8  # between neighbouring cards
MARGIN = 16  # around the table
TEXT_SCALE = 2  # status and grid labels are drawn with 2x2-pixel font dots
SMALL_SCALE = 1  # coordinate tags of fancy layouts
LINE_H = 8 * TEXT_SCALE + 6  # one status line
TAG_H = 8 * SMALL_SCALE + 2  # the coordinate tag under a card of a fancy layout
STATUS_LINES = 2  # score line + status line above every table
MIN_FRAME_WIDTH = 520  # room for a status line of 40 characters at full size
SCATTER_SEED = 20_240_607  # fixed: a scatter layout is the same picture every time
SCATTER_ROOM = 2.4  # table area per card area in a scatter: sparse enough to place quickly
RING_TWIST = 0.4  # radians each ring of a circle layout turns, so rings do not line up in spokes

FELT = (22, 100, 58)
FELT_DARK = (16, 76, 44)
INK = (240, 240, 230)  # text on the felt
HIGHLIGHT = (255, 208, 40)  # face-up cards and the player to move
CARD_FACE = (250, 248, 240)
CARD_EDGE = (70, 70, 70)
RED = (196, 28, 40)
BLACK = (24, 24, 28)
COURT_PANEL = (246, 214, 120)
JOKER_INK = (120, 40, 170)
BACK_COLOURS = (((36, 66, 160), (120, 150, 230)), ((160, 36, 50), (235, 140, 140)))  # (base, pattern)
PICTURE_PALETTE = (
    (214, 40, 40),
    (30, 110, 210),
    (40, 160, 70),
    (240, 150, 20),
    (140, 60, 180),
    (20, 160, 170),
    (200, 60, 140),
    (110, 80, 40),
)

# A 5x7 font (one string per row, "#" = ink) for every character the pictures print.
_FONT_ROWS = {
    "A": (".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"),
    "B": ("####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."),
    "C": (".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."),
    "D": ("####.", "#...#", "#...#", "#...#", "#...#", "#...#", "####."),
    "E": ("#####", "#....", "#....", "####.", "#....", "#....", "#####"),
    "F": ("#####", "#....", "#....", "####.", "#....", "#....", "#...."),
    "G": (".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"),
    "H": ("#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"),
    "I": (".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."),
    "J": ("..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."),
    "K": ("#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"),
    "L": ("#....", "#....", "#....", "#....", "#....", "#....", "#####"),
    "M": ("#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"),
    "N": ("#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"),
    "O": (".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."),
    "P": ("####.", "#...#", "#...#", "####.", "#....", "#....", "#...."),
    "Q": (".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"),
    "R": ("####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"),
    "S": (".####", "#....", "#....", ".###.", "....#", "....#", "####."),
    "T": ("#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."),
    "U": ("#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."),
    "V": ("#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."),
    "W": ("#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."),
    "X": ("#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"),
    "Y": ("#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."),
    "Z": ("#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"),
    "0": (".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."),
    "1": ("..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."),
    "2": (".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"),
    "3": ("####.", "....#", "....#", ".###.", "....#", "....#", "####."),
    "4": ("...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."),
    "5": ("#####", "#....", "####.", "....#", "....#", "#...#", ".###."),
    "6": (".###.", "#....", "#....", "####.", "#...#", "#...#", ".###."),
    "7": ("#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."),
    "8": (".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."),
    "9": (".###.", "#...#", "#...#", ".####", "....#", "....#", ".###."),
    " ": (".....",) * 7,
    ".": (".....", ".....", ".....", ".....", ".....", ".##..", ".##.."),
    ",": (".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."),
    ":": (".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."),
    "!": ("..#..", "..#..", "..#..", "..#..", "..#..", ".....", "..#.."),
    "?": (".###.", "#...#", "....#", "...#.", "..#..", ".....", "..#.."),
    "-": (".....", ".....", ".....", "#####", ".....", ".....", "....."),
    "+": (".....", "..#..", "..#..", "#####", "..#..", "..#..", "....."),
    "=": (".....", ".....", "#####", ".....", "#####", ".....", "....."),
    "_": (".....", ".....", ".....", ".....", ".....", ".....", "#####"),
    "/": ("....#", "....#", "...#.", "..#..", ".#...", "#....", "#...."),
    ">": (".#...", "..#..", "...#.", "....#", "...#.", "..#..", ".#..."),
    "<": ("...#.", "..#..", ".#...", "#....", ".#...", "..#..", "...#."),
    "(": ("...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."),
    ")": (".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."),
    "'": ("..#..", "..#..", ".#...", ".....", ".....", ".....", "....."),
    "#": (".#.#.", ".#.#.", "#####", ".#.#.", "#####", ".#.#.", ".#.#."),
    "*": (".....", "#.#.#", ".###.", "#####", ".###.", "#.#.#", "....."),
}
FONT_W, FONT_H = 5, 7
UNKNOWN_GLYPH = "?"

# 9x9 suit and joker sprites.
_SPRITE_ROWS = {
    "H": (
        ".##...##.",
        "####.####",
        "#########",
        "#########",
        ".#######.",
        "..#####..",
        "...###...",
        "....#....",
        ".........",
    ),
    "D": (
        "....#....",
        "...###...",
        "..#####..",
        ".#######.",
        "#########",
        ".#######.",
        "..#####..",
        "...###...",
        "....#....",
    ),
    "S": (
        "....#....",
        "...###...",
        "..#####..",
        ".#######.",
        "#########",
        "#########",
        ".##.#.##.",
        "....#....",
        "...###...",
    ),
    "C": (
        "...###...",
        "..#####..",
        "..#####..",
        ".##.#.##.",
        "#########",
        "#########",
        ".##.#.##.",
        "....#....",
        "...###...",
    ),
    "J": (
        "....#....",
        "....#....",
        "...###...",
        "#########",
        ".#######.",
        "..#####..",
        "..##.##..",
        ".##...##.",
        ".#.....#.",
    ),
}


def _bitmap(rows: Sequence[str]) -> np.ndarray:
    return np.array([[ch == "#" for ch in row] for row in rows], dtype=bool)


FONT = {ch: _bitmap(rows) for ch, rows in _FONT_ROWS.items()}
SPRITES = {name: _bitmap(rows) for name, rows in _SPRITE_ROWS.items()}


def text_width(text: str, scale: int = TEXT_SCALE) -> int:
    """Pixel width of ``text`` in the built-in font."""
    return max(len(text) * (FONT_W + 1) - 1, 0) * scale


def draw_text(image: np.ndarray, text: str, x: int, y: int, colour, scale: int = TEXT_SCALE) -> None:
    """Print ``text`` (upper-cased) with its top-left corner at (x, y), clipped to the image."""
    for i, ch in enumerate(text.upper()):
        glyph = FONT.get(ch, FONT[UNKNOWN_GLYPH])
        paint(image, glyph, x + i * (FONT_W + 1) * scale, y, colour, scale)


def paint(image: np.ndarray, mask: np.ndarray, x: int, y: int, colour, scale: int = 1) -> None:
    """Colour the pixels of a boolean ``mask`` (scaled up) at (x, y), clipped to the image."""
    if scale != 1:
        mask = np.kron(mask, np.ones((scale, scale), dtype=bool)).astype(bool)
    h, w = mask.shape
    top, left = max(y, 0), max(x, 0)
    bottom, right = min(y + h, image.shape[0]), min(x + w, image.shape[1])
    if top >= bottom or left >= right:
        return
    region = image[top:bottom, left:right]
    region[mask[top - y : bottom - y, left - x : right - x]] = colour


# -- card sprites ------------------------------------------------------------------------
CORNER_RADIUS = 4


@lru_cache(maxsize=1)
def card_mask() -> np.ndarray:
    """(CARD_H, CARD_W) bool: the card's outline with rounded corners."""
    y, x = np.mgrid[0:CARD_H, 0:CARD_W]
    cx = np.clip(x, CORNER_RADIUS, CARD_W - 1 - CORNER_RADIUS)
    cy = np.clip(y, CORNER_RADIUS, CARD_H - 1 - CORNER_RADIUS)
    return (x - cx) ** 2 + (y - cy) ** 2 <= CORNER_RADIUS**2


def _blank_card(fill) -> np.ndarray:
    """A card-sized sprite with an edge line and ``fill`` inside."""
    sprite = np.zeros((CARD_H, CARD_W, 3), dtype=np.uint8)
    sprite[:] = CARD_EDGE
    inner = np.zeros_like(card_mask())
    inner[1:-1, 1:-1] = card_mask()[2:, 2:] & card_mask()[:-2, :-2]
    sprite[inner] = fill
    return sprite


@cache
def back_sprite(design: int) -> np.ndarray:
    """A face-down card: blue lattice (design 0) or red dots (design 1)."""
    base, pattern = BACK_COLOURS[design]
    sprite = _blank_card(CARD_FACE)
    inset = 4
    y, x = np.mgrid[0 : CARD_H - 2 * inset, 0 : CARD_W - 2 * inset]
    field = sprite[inset:-inset, inset:-inset]
    field[:] = base
    if design == 0:
        lattice = ((x + y) % 8 == 0) | ((x - y) % 8 == 0)
    else:
        lattice = ((x % 6) // 2 == 1) & ((y % 6) // 2 == 1)
    field[lattice] = pattern
    sprite.setflags(write=False)
    return sprite


def _shape_mask(kind: int, size: int) -> np.ndarray:
    """One of eight simple filled shapes (size x size) for picture cards."""
    y, x = (np.mgrid[0:size, 0:size] + 0.5) / size * 2 - 1  # -1..1
    shapes = (
        x**2 + y**2 <= 0.9,  # disc
        (abs(x) <= 0.8) & (abs(y) <= 0.8),  # square
        (y >= -0.8) & (y <= 0.8) & (abs(x) <= (y + 0.8) / 1.6 * 0.9),  # triangle
        abs(x) + abs(y) <= 0.95,  # diamond
        (abs(x) <= 0.3) | (abs(y) <= 0.3),  # cross
        (x**2 + y**2 <= 0.9) & (x**2 + y**2 >= 0.35),  # ring
        (abs(x) <= 0.85) & (abs(y) <= 0.85) & ~((abs(x) <= 0.4) & (abs(y) <= 0.4)),  # frame
        np.kron(SPRITES["J"], np.ones((size // 9 + 1,) * 2, dtype=bool))[:size, :size],  # star
    )
    return shapes[kind % len(shapes)]


PICTURE_SIZE = 30


@cache
def face_sprite(card: Card) -> np.ndarray:
    """A face-up card: rank and suit in the suit's colour, a court panel for J/Q/K, a star
    for a joker, a coloured shape and its number for a picture card."""
    sprite = _blank_card(CARD_FACE)
    corner_x, corner_y = 4, 4
    if card.is_picture:
        index = card.rank - 1
        colour = PICTURE_PALETTE[index % len(PICTURE_PALETTE)]
        kind = index // len(PICTURE_PALETTE)
        # Every palette colour is used with shape 0 first, so picture n's shape and
        # colour pair is unique up to 64 pictures; the number tells them apart beyond.
        paint(sprite, _shape_mask(kind, PICTURE_SIZE), (CARD_W - PICTURE_SIZE) // 2, 20, colour)
        draw_text(sprite, str(card.rank), corner_x, corner_y, BLACK, scale=1)
    elif card.is_joker:
        paint(sprite, SPRITES["J"], (CARD_W - 27) // 2, (CARD_H - 27) // 2 + 4, JOKER_INK, scale=3)
        draw_text(sprite, "JK", corner_x, corner_y, JOKER_INK)
    else:
        colour = RED if card.colour == "red" else BLACK
        name = RANK_NAMES.get(card.rank, str(card.rank))
        if card.rank in (11, 12, 13):
            sprite[24:62, 8:40] = COURT_PANEL
            draw_text(sprite, name, (CARD_W - text_width(name, 3)) // 2, 32, colour, scale=3)
        else:
            paint(sprite, SPRITES[card.suit], (CARD_W - 27) // 2, 30, colour, scale=3)
        draw_text(sprite, name, corner_x, corner_y, colour)
        paint(sprite, SPRITES[card.suit], corner_x + text_width(name) + 3, corner_y + 3, colour)
    sprite.setflags(write=False)
    return sprite


# -- where the cards lie -----------------------------------------------------------------
@dataclass(frozen=True)
class Geometry:
    """Where each card of a table is drawn: top-left pixel ``xy[i]`` of position ``i``, in
    a ``width`` x ``height`` panel; ``tags`` says whether each card carries its coordinate."""

    xy: np.ndarray  # (n, 2) int: x, y
    width: int
    height: int
    tags: bool

    def position_at(self, x: int, y: int) -> int | None:
        """The position whose card covers pixel (x, y) of the panel, or None."""
        inside = (
            (self.xy[:, 0] <= x) & (x < self.xy[:, 0] + CARD_W) & (self.xy[:, 1] <= y) & (y < self.xy[:, 1] + CARD_H)
        )
        hits = np.flatnonzero(inside)
        return int(hits[0]) if len(hits) else None


def check_table_shape(table_shape: str) -> str:
    """Validate a drawing shape name."""
    if table_shape not in TABLE_SHAPES:
        raise ValueError(f"invalid table_shape={table_shape!r}; allowed: {' | '.join(repr(s) for s in TABLE_SHAPES)}")
    return table_shape


@cache
def table_geometry(shape: tuple[int, int], num_cards: int, table_shape: str = "grid") -> Geometry:
    """Where the ``num_cards`` cards of a ``shape`` grid are drawn in a table shape.

    Every shape keeps cards (and the coordinate tags of fancy shapes) from overlapping, and
    is a pure function of its arguments: the same picture every time.
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
    # Position 0 at the top-left, reading order after: people scan fancy tables that way too.
    order = np.lexsort((centres[:, 0], np.round(centres[:, 1], 6)))
    corners = np.round(centres[order] - (slot_w / 2, slot_h / 2)).astype(np.int64)
    corners -= corners.min(axis=0)
    xy = corners + (MARGIN + GAP // 2, MARGIN + GAP // 2)
    width = int(corners[:, 0].max()) + slot_w + 2 * MARGIN
    height = int(corners[:, 1].max()) + slot_h + 2 * MARGIN
    return _geometry(xy, width, height, tags=True)


def _geometry(xy: np.ndarray, width: int, height: int, tags: bool) -> Geometry:
    """A read-only Geometry (they are cached and shared)."""
    xy = xy.astype(np.int64)
    xy.setflags(write=False)
    return Geometry(xy, int(width), int(height), tags)


def _circle_centres(n: int, slot_w: int, slot_h: int) -> np.ndarray:
    """Concentric rings. Cards at least a slot diagonal apart along and across the rings
    cannot overlap, whatever their angle."""
    step = math.hypot(slot_w, slot_h)
    capacity = [1]  # the centre holds one card
    while sum(capacity) < n:
        ring = len(capacity)
        # Neighbours on ring k are a chord 2k*step*sin(pi/count) apart: keep it >= step.
        capacity.append(int(math.pi / math.asin(1 / (2 * ring)) + 1e-9))
    capacity = np.array(capacity)
    # Share the cards among the rings in proportion to their room (largest remainders).
    share = capacity * n / capacity.sum()
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
    """Rows as long as the ``n`` grid cells nearest the centre in taxicab distance (in
    pixels) make them, each row centred: a diamond. Rows are a slot apart, so no overlap."""
    side = 4 * math.isqrt(n) + 5  # room for the diamond's long axis
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
    """Cards strewn at random (a fixed seed) over a table with room to spare, each placed
    where it overlaps no card before it."""
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
        else:  # the table fills up slowly near the end; widen it a little to keep going
            width, height = width * 1.0005, height * 1.0005
    return placed + (slot_w / 2, slot_h / 2)


# -- frames ------------------------------------------------------------------------------
class Table(NamedTuple):
    """One layout to draw, as plain values (the arguments of ``render_ansi``)."""

    shape: tuple[int, int]
    cards: Sequence[Card]
    face_up: Sequence[bool]
    removed: Sequence[bool]
    backs: Sequence[int] | None = None
    title: str = ""


def draw_table(table: Table, table_shape: str = "grid") -> np.ndarray:
    """One layout on the felt: backs, faces (highlighted), gaps where cards were captured,
    and grid labels (row letters and column numbers) or each card's coordinate tag."""
    geometry = table_geometry(tuple(table.shape), len(table.cards), table_shape)
    title_h = LINE_H if table.title else 0
    image = np.empty((geometry.height + title_h, geometry.width, 3), dtype=np.uint8)
    image[:] = FELT
    if table.title:
        draw_text(image, table.title, MARGIN, 3, INK)
    rows, cols = table.shape
    mask = card_mask()
    for i, card in enumerate(table.cards):
        if table.removed[i]:
            continue
        x, y = (int(v) for v in geometry.xy[i])
        y += title_h
        if table.face_up[i]:
            sprite = face_sprite(card)
            image[y - 2 : y + CARD_H + 2, x - 2 : x + CARD_W + 2] = HIGHLIGHT
        else:
            sprite = back_sprite(int(table.backs[i]) if table.backs is not None else 0)
        region = image[y : y + CARD_H, x : x + CARD_W]
        region[mask] = sprite[mask]
        if geometry.tags:
            tag = coordinate(i, cols)
            draw_text(image, tag, x + (CARD_W - text_width(tag, SMALL_SCALE)) // 2, y + CARD_H + 2, INK, SMALL_SCALE)
    if not geometry.tags:
        first_x, first_y = (int(v) for v in geometry.xy[0])
        for c in range(cols):
            label = str(c + 1)
            x = first_x + c * (CARD_W + GAP) + (CARD_W - text_width(label)) // 2
            draw_text(image, label, x, title_h + 2, INK)
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
    """The band above the table: every player's score (the player to move marked and
    highlighted) if there are ``scores``, then the lines of ``status``. A line too long for
    the band is printed small, so that a game's frames all have one size."""
    lines = status.split("\n")
    entries = [f"{'>' if seat == to_move else ' '}{name} {score}  " for seat, (name, score) in enumerate(scores or ())]
    if len(lines) + bool(entries) > STATUS_LINES:
        raise ValueError(f"the status band holds {STATUS_LINES} lines, the scores counting as one; got {status!r}")
    image = np.empty((STATUS_LINES * LINE_H + GAP, width, 3), dtype=np.uint8)
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
    """A frame: the status band, then each table below the other, centred on the felt. Its
    size depends on the tables' shapes only, never on the text."""
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


def render_rgb(
    shape: tuple[int, int],
    cards: Sequence[Card],
    face_up: Sequence[bool],
    removed: Sequence[bool],
    backs: Sequence[int] | None = None,
    *,
    status: str = "",
    scores: Sequence[tuple[str, int]] | None = None,
    to_move: int | None = None,
    table_shape: str = "grid",
) -> np.ndarray:
    """One table as an RGB picture ``(height, width, 3)`` uint8 (see ``render_tables``)."""
    return render_tables([Table(shape, cards, face_up, removed, backs)], status, scores, to_move, table_shape)


def position_at(frame: np.ndarray, shape: tuple[int, int], num_cards: int, table_shape: str, x: int, y: int):
    """The position whose card covers pixel (x, y) of a one-table ``render_rgb`` frame, or None."""
    geometry = table_geometry(tuple(shape), num_cards, table_shape)
    top = STATUS_LINES * LINE_H + GAP
    left = (frame.shape[1] - geometry.width) // 2
    return geometry.position_at(x - left, y - top)


# -- the window ----------------------------------------------------------------------------
def check_render_mode(render_mode: str | None, metadata: dict) -> str | None:
    """Validate an env's ``render_mode`` against its metadata."""
    if render_mode is not None and render_mode not in metadata["render_modes"]:
        raise ValueError(f"invalid render_mode={render_mode!r}; allowed: None | {metadata['render_modes']}")
    return render_mode


def import_pygame():
    """pygame, or an error that says how to install it."""
    try:
        import pygame
    except ImportError as error:
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled(
            f"render_mode='human' and --window need pygame, which is not installed; run {RENDER_EXTRA}"
        ) from error
    return pygame


class Screen:
    """A pygame window that shows frames at a fixed rate (``render_mode="human"``)."""

    def __init__(self, fps: int, caption: str = "Concentration"):
        self.pygame = import_pygame()
        self.fps = fps
        self.caption = caption
        self._window = None
        self._clock = None

    def show(self, frame: np.ndarray) -> None:
        """Draw ``frame`` in the window (opened or resized to fit) and wait out the frame time."""
        pygame = self.pygame
        size = (frame.shape[1], frame.shape[0])
        if self._window is None:
            pygame.display.init()  # display only: no audio devices to open
            pygame.display.set_caption(self.caption)
            self._clock = pygame.time.Clock()
        if self._window is None or self._window.get_size() != size:
            self._window = pygame.display.set_mode(size)
        pygame.event.pump()  # keep the window responsive between frames
        surface = pygame.surfarray.make_surface(np.ascontiguousarray(frame.transpose(1, 0, 2)))
        self._window.blit(surface, (0, 0))
        pygame.display.flip()
        self._clock.tick(self.fps)

    def wait_click(self) -> tuple[int, int] | None:
        """Block until a left click in the window: its pixel, or None if the window is closed."""
        pygame = self.pygame
        while True:
            event = pygame.event.wait()
            if event.type == pygame.QUIT:
                return None
            if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
                return event.pos

    def close(self) -> None:
        """Close the window (safe to call more than once)."""
        if self._window is not None:
            self.pygame.display.quit()
            self._window = None

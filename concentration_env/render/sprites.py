"""Card pictures: the rounded outline, the two back designs and every face.

Each sprite is a read-only ``(CARD_H, CARD_W, 3)`` uint8 array, made once per card and
cached. Suits and the joker star are 9x9 bitmaps kept here as data, so the pictures depend
on nothing but numpy.
"""

from __future__ import annotations

from functools import cache, lru_cache

import numpy as np

from concentration_env.game.cards import RANK_NAMES, Card
from concentration_env.render.font import bitmap, draw_text, paint, text_width

CARD_W, CARD_H = 48, 68
CORNER_RADIUS = 4  # of the card's rounded corners
CORNER_INSET = 4  # the rank in the top-left corner starts this far in from both edges
CORNER_SUIT_OFFSET = 3  # the small suit beside the corner rank: its gap and its drop
SPRITE_SIZE = 9  # suit and joker bitmaps are square
PIP_SCALE = 3  # the big suit, court letter and joker star in the middle of a face
PIP_TOP = 30  # top of the big suit of a number card
COURT_RANKS = (11, 12, 13)  # J, Q, K: their letter on a coloured panel
COURT_PANEL_ROWS, COURT_PANEL_COLS = (24, 62), (8, 40)
COURT_NAME_TOP = 32
JOKER_DROP = 4  # the star sits this much below the card's centre
PICTURE_SIZE = 30  # the shape on a picture card is square
PICTURE_TOP = 20
BACK_INSET = 4  # the white border around a back's pattern
LATTICE_SPACING = 8  # of the diagonal lines on back design 0
DOT_SPACING, DOT_SIZE = 6, 2  # of the square dots on back design 1

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
SPRITES = {name: bitmap(rows) for name, rows in _SPRITE_ROWS.items()}
PIP_SIZE = SPRITE_SIZE * PIP_SCALE


@lru_cache(maxsize=1)
def card_mask() -> np.ndarray:
    """The card's silhouette, ``(CARD_H, CARD_W)`` bool: a rectangle with rounded corners."""
    y, x = np.mgrid[0:CARD_H, 0:CARD_W]
    cx = np.clip(x, CORNER_RADIUS, CARD_W - 1 - CORNER_RADIUS)
    cy = np.clip(y, CORNER_RADIUS, CARD_H - 1 - CORNER_RADIUS)
    return (x - cx) ** 2 + (y - cy) ** 2 <= CORNER_RADIUS**2


def _blank_card(fill) -> np.ndarray:
    """An empty card: ``fill`` inside a one-pixel edge that follows the rounded corners."""
    sprite = np.zeros((CARD_H, CARD_W, 3), dtype=np.uint8)
    sprite[:] = CARD_EDGE
    inner = np.zeros_like(card_mask())
    inner[1:-1, 1:-1] = card_mask()[2:, 2:] & card_mask()[:-2, :-2]
    sprite[inner] = fill
    return sprite


@cache
def back_sprite(design: int) -> np.ndarray:
    """The back of a face-down card: design 0 is a blue lattice, design 1 red dots (the
    second back of a checkerboard deal)."""
    base, pattern = BACK_COLOURS[design]
    sprite = _blank_card(CARD_FACE)
    y, x = np.mgrid[0 : CARD_H - 2 * BACK_INSET, 0 : CARD_W - 2 * BACK_INSET]
    field = sprite[BACK_INSET:-BACK_INSET, BACK_INSET:-BACK_INSET]
    field[:] = base
    if design == 0:
        lattice = ((x + y) % LATTICE_SPACING == 0) | ((x - y) % LATTICE_SPACING == 0)
    else:
        lattice = ((x % DOT_SPACING) // DOT_SIZE == 1) & ((y % DOT_SPACING) // DOT_SIZE == 1)
    field[lattice] = pattern
    sprite.setflags(write=False)
    return sprite


def _shape_mask(kind: int, size: int) -> np.ndarray:
    """Filled shape number ``kind`` (of eight, wrapping round) in a ``size`` square, for
    picture cards."""
    y, x = (np.mgrid[0:size, 0:size] + 0.5) / size * 2 - 1  # -1..1
    shapes = (
        x**2 + y**2 <= 0.9,  # disc
        (abs(x) <= 0.8) & (abs(y) <= 0.8),  # square
        (y >= -0.8) & (y <= 0.8) & (abs(x) <= (y + 0.8) / 1.6 * 0.9),  # triangle
        abs(x) + abs(y) <= 0.95,  # diamond
        (abs(x) <= 0.3) | (abs(y) <= 0.3),  # cross
        (x**2 + y**2 <= 0.9) & (x**2 + y**2 >= 0.35),  # ring
        (abs(x) <= 0.85) & (abs(y) <= 0.85) & ~((abs(x) <= 0.4) & (abs(y) <= 0.4)),  # frame
        np.kron(SPRITES["J"], np.ones((size // SPRITE_SIZE + 1,) * 2, dtype=bool))[:size, :size],  # star
    )
    return shapes[kind % len(shapes)]


@cache
def face_sprite(card: Card) -> np.ndarray:
    """The face of ``card``. A playing card shows its rank and suit in the suit's colour
    (a court card its letter on a panel), a joker a purple star, and a picture card a
    coloured shape with its number in the corner."""
    sprite = _blank_card(CARD_FACE)
    if card.is_picture:
        index = card.rank - 1
        colour = PICTURE_PALETTE[index % len(PICTURE_PALETTE)]
        kind = index // len(PICTURE_PALETTE)
        # The colours cycle fastest, so each of the first 64 pictures has a shape and
        # colour of its own; past that only the number in the corner tells them apart.
        paint(sprite, _shape_mask(kind, PICTURE_SIZE), (CARD_W - PICTURE_SIZE) // 2, PICTURE_TOP, colour)
        draw_text(sprite, str(card.rank), CORNER_INSET, CORNER_INSET, BLACK, scale=1)
    elif card.is_joker:
        left, top = (CARD_W - PIP_SIZE) // 2, (CARD_H - PIP_SIZE) // 2 + JOKER_DROP
        paint(sprite, SPRITES["J"], left, top, JOKER_INK, scale=PIP_SCALE)
        draw_text(sprite, "JK", CORNER_INSET, CORNER_INSET, JOKER_INK)
    else:
        colour = RED if card.colour == "red" else BLACK
        name = RANK_NAMES.get(card.rank, str(card.rank))
        if card.rank in COURT_RANKS:
            (top, bottom), (left, right) = COURT_PANEL_ROWS, COURT_PANEL_COLS
            sprite[top:bottom, left:right] = COURT_PANEL
            left = (CARD_W - text_width(name, PIP_SCALE)) // 2
            draw_text(sprite, name, left, COURT_NAME_TOP, colour, scale=PIP_SCALE)
        else:
            paint(sprite, SPRITES[card.suit], (CARD_W - PIP_SIZE) // 2, PIP_TOP, colour, scale=PIP_SCALE)
        draw_text(sprite, name, CORNER_INSET, CORNER_INSET, colour)
        suit_x = CORNER_INSET + text_width(name) + CORNER_SUIT_OFFSET
        paint(sprite, SPRITES[card.suit], suit_x, CORNER_INSET + CORNER_SUIT_OFFSET, colour)
    sprite.setflags(write=False)
    return sprite

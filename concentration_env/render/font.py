"""The built-in bitmap font and the pixel painter every picture is drawn with.

Text is printed from a 5x7 font kept here as data, so frames need no font files and come
out the same on every machine. ``paint`` is the one routine that puts a boolean mask on an
image; the font and the card sprites both go through it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

FONT_W, FONT_H = 5, 7
UNKNOWN_GLYPH = "?"  # printed for characters the font lacks
TEXT_SCALE = 2  # status lines and grid labels: each font dot is 2x2 pixels
SMALL_SCALE = 1  # the coordinate tags under the cards of fancy layouts
LINE_LEADING = 6  # pixels between two lines of full-size text
LINE_H = (FONT_H + 1) * TEXT_SCALE + LINE_LEADING  # the height of one line of full-size text

# One string per glyph row, "#" for ink: every character the pictures print.
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


def bitmap(rows: Sequence[str]) -> np.ndarray:
    """A boolean mask from rows of text, "#" marking the set pixels."""
    return np.array([[ch == "#" for ch in row] for row in rows], dtype=bool)


FONT = {ch: bitmap(rows) for ch, rows in _FONT_ROWS.items()}


def text_width(text: str, scale: int = TEXT_SCALE) -> int:
    """How many pixels wide ``text`` prints at ``scale`` (one blank dot column between glyphs)."""
    return max(len(text) * (FONT_W + 1) - 1, 0) * scale


def draw_text(image: np.ndarray, text: str, x: int, y: int, colour, scale: int = TEXT_SCALE) -> None:
    """Print ``text`` in capitals from the top-left corner (x, y); what falls off the image is dropped."""
    for i, ch in enumerate(text.upper()):
        glyph = FONT.get(ch, FONT[UNKNOWN_GLYPH])
        paint(image, glyph, x + i * (FONT_W + 1) * scale, y, colour, scale)


def paint(image: np.ndarray, mask: np.ndarray, x: int, y: int, colour, scale: int = 1) -> None:
    """Set the pixels under ``mask``, each mask dot blown up to ``scale`` x ``scale``, to
    ``colour``, the mask's top-left corner at (x, y); parts outside the image are skipped."""
    if scale != 1:
        mask = np.kron(mask, np.ones((scale, scale), dtype=bool)).astype(bool)
    h, w = mask.shape
    top, left = max(y, 0), max(x, 0)
    bottom, right = min(y + h, image.shape[0]), min(x + w, image.shape[1])
    if top >= bottom or left >= right:
        return
    region = image[top:bottom, left:right]
    region[mask[top - y : bottom - y, left - x : right - x]] = colour

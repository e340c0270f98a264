"""Grid names of card positions: row letters (A..Z, AA, ...) and column numbers from 1.

The text table, the pictures and the terminal game all name a card by its grid cell
("B7" is row B, column 7), whatever shape the pictures are drawn in.
"""

from __future__ import annotations

import string

LETTERS = string.ascii_uppercase
MAX_TEXT = 64  # characters: far more than any table's coordinates need, with spaces around them


def coordinate(position: int, cols: int) -> str:
    """The grid name of ``position`` on a table ``cols`` cards wide, such as "B7"."""
    row, col = divmod(position, cols)
    return f"{row_label(row)}{col + 1}"


def row_label(row: int) -> str:
    """The letters of row ``row`` (from 0): A to Z, then AA, AB and so on, as spreadsheets do."""
    label = ""
    row += 1
    while row:
        row, rest = divmod(row - 1, len(LETTERS))
        label = LETTERS[rest] + label
    return label


def parse_coordinate(text: str, shape: tuple[int, int], num_cards: int) -> int:
    """The position a grid name such as "b 7" stands for (spaces and case do not matter).

    Raises ``ValueError`` when the text is no coordinate or names a cell off the table,
    saying which names are allowed.
    """
    rows, cols = shape
    last = coordinate(num_cards - 1, cols)
    allowed = f"a row letter A..{row_label(rows - 1)} then a column number 1..{cols} (A1 to {last})"
    if len(text) > MAX_TEXT:  # the letters' arithmetic below grows quadratically with their number
        raise ValueError(
            f"{text[:MAX_TEXT]!r}... ({len(text)} characters) is not a card coordinate; expected {allowed}"
        )
    cleaned = "".join(text.split()).upper()
    letters = cleaned.rstrip(string.digits)
    digits = cleaned[len(letters) :]
    if not letters or not digits or not letters.isalpha() or not letters.isascii():
        raise ValueError(f"{text.strip()!r} is not a card coordinate; expected {allowed}")
    row = 0
    for letter in letters:
        row = row * len(LETTERS) + LETTERS.index(letter) + 1
    row, col = row - 1, int(digits) - 1
    if not (0 <= row < rows and 0 <= col < cols) or row * cols + col >= num_cards:
        raise ValueError(f"{cleaned} is not on the table; expected {allowed}")
    return row * cols + col

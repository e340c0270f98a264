"""Playing cards and the face deck a rule set plays with.

A *face* is a kind of card (the queen of spades, the joker, picture 7). Every deck is a
list of face ids, and a game deals a permutation of that list. Face ids are dense
(``0 .. num_faces - 1``) so that observations can encode ``face id + 1`` with 0 meaning
"unknown".
"""

from __future__ import annotations

from dataclasses import dataclass

SUITS = ("C", "D", "H", "S")
RED_SUITS = frozenset({"D", "H"})
JOKER_SUIT = "J"
PICTURE_SUIT = "P"
JOKER_RANK = 0
RANK_NAMES = {1: "A", 11: "J", 12: "Q", 13: "K"}
JOKERS_PER_PACK = 2


@dataclass(frozen=True, order=True)
class Card:
    """One card face.

    ``rank`` is 1..13 (ace = 1) for standard cards, 0 for a joker and the picture id for a
    picture card. ``suit`` is one of ``"C" "D" "H" "S"``, ``"J"`` for a joker or ``"P"`` for
    a picture.
    """

    rank: int
    suit: str

    @property
    def colour(self) -> str:
        """``"red"``, ``"black"``, or ``"none"`` for jokers and pictures."""
        if self.suit in RED_SUITS:
            return "red"
        if self.suit in SUITS:
            return "black"
        return "none"

    @property
    def is_joker(self) -> bool:
        """Whether this is a joker."""
        return self.suit == JOKER_SUIT

    @property
    def is_picture(self) -> bool:
        """Whether this is a picture card."""
        return self.suit == PICTURE_SUIT

    def __str__(self) -> str:
        if self.is_joker:
            return "JK"
        if self.is_picture:
            return f"P{self.rank}"
        return f"{RANK_NAMES.get(self.rank, str(self.rank))}{self.suit}"


def standard_faces(ranks: int, jokers: bool) -> tuple[Card, ...]:
    """The distinct faces of a standard pack cut down to ranks ``1..ranks``, jokers last."""
    faces = [Card(rank, suit) for rank in range(1, ranks + 1) for suit in SUITS]
    if jokers:
        faces.append(Card(JOKER_RANK, JOKER_SUIT))
    return tuple(faces)


def picture_faces(pairs: int) -> tuple[Card, ...]:
    """``pairs`` distinct picture faces, numbered from 1."""
    return tuple(Card(picture, PICTURE_SUIT) for picture in range(1, pairs + 1))


def cards_match(a: Card, b: Card, matching: str) -> bool:
    """Whether two faces form a pair under a matching rule.

    Jokers pair only with jokers and pictures only with their twin, whatever the rule.
    """
    if a.is_joker or b.is_joker:
        return a.is_joker and b.is_joker
    if a.is_picture or b.is_picture:
        return a == b
    if a.rank != b.rank:
        return False
    if matching == "rank":
        return True
    if matching == "rank_colour":
        return a.colour == b.colour
    if matching == "zebra":
        return a.colour != b.colour
    if matching == "identical":
        return a.suit == b.suit
    raise ValueError(f"unknown matching rule {matching!r}")

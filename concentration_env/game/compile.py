"""Rules compiled into the arrays the core runs on: :class:`Game`, :func:`compile_rules`, :func:`deal`.

A :class:`Game` is built once per rule set (``compile_rules`` is cached): the face deck,
the boolean match table, the pair values and the back pattern, plus the read-only byte
table the compiled kernels take as one argument. The layout of that table is written
here (``Game.kernel_table``) and read here (``_unpack_game``), so the two cannot drift.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, cached_property

import numpy as np
from numba import njit

from concentration_env.game.cards import Card, cards_match
from concentration_env.game.jit import CACHE
from concentration_env.game.rules import Rules

NONE = -1  # "no card" / "no seat" marker in position and player arrays
_INT64_BYTES = 8
FACE_DTYPE = np.dtype(np.int16)  # dtype instances: np.empty converts a scalar type on every call
FLAG_DTYPE = np.dtype(np.int8)
# The rule switches of a kernel table, in their order there.
NUM_PARAMS = 3
PARAM_ONE_FLIP, PARAM_RAISE, PARAM_MAX_MISMATCHES = range(NUM_PARAMS)


@dataclass(frozen=True, eq=False)
class Game:
    """A ``Rules`` compiled into the arrays the core runs on (build with ``compile_rules``)."""

    rules: Rules
    faces: tuple[Card, ...]  # face id -> card
    deck: np.ndarray  # (num_cards,) face ids of the deck, sorted
    match: np.ndarray  # (num_faces, num_faces) bool: do two faces form a pair
    pair_value: np.ndarray  # (num_faces,) points for capturing a pair of this face
    backs: np.ndarray  # (num_cards,) int8 back design at each position (all 0 for plain)
    is_joker: np.ndarray  # (num_faces,) bool

    # Derived once (the game is immutable): every flip of the single env reads them.
    @cached_property
    def num_cards(self) -> int:
        return len(self.deck)

    @cached_property
    def num_faces(self) -> int:
        return len(self.faces)

    @cached_property
    def num_players(self) -> int:
        return self.rules.num_players

    @cached_property
    def checkerboard(self) -> bool:
        return self.rules.backs == "checkerboard"

    @cached_property
    def kernel_table(self) -> np.ndarray:
        """What the compiled step reads of the rules, in one read-only byte buffer (one
        kernel argument): the number of faces and the rule switches (one-flip turns,
        raising on illegal flips, the chip count or 0) as int64, then the pair values
        (int32) and the match table (bool); ``_unpack_game`` takes it apart."""
        rules = self.rules
        params = np.zeros(NUM_PARAMS, dtype=np.int64)
        params[PARAM_ONE_FLIP] = rules.turn_policy == "one_flip"
        params[PARAM_RAISE] = rules.illegal_action == "raise"
        params[PARAM_MAX_MISMATCHES] = rules.max_mismatches or 0
        parts = (np.array([self.num_faces], dtype=np.int64), params, self.pair_value, self.match)
        table = np.concatenate([part.view(np.uint8).ravel() for part in parts])
        table.setflags(write=False)
        return table


@cache
def compile_rules(rules: Rules) -> Game:
    """Compile a rule set once into its face deck, match table and back pattern."""
    faces = rules.faces
    deck = np.repeat(np.arange(len(faces), dtype=FACE_DTYPE), rules.copies)
    match = np.array([[cards_match(a, b, rules.matching) for b in faces] for a in faces], dtype=bool)
    is_joker = np.array([card.is_joker for card in faces], dtype=bool)
    pair_value = np.where(is_joker, rules.joker_value, 1).astype(np.int32)
    rows, cols = rules.shape
    index = np.arange(len(deck))
    if rules.backs == "checkerboard":
        backs = ((index // cols + index % cols) % 2).astype(FLAG_DTYPE)
    else:
        backs = np.zeros(len(deck), dtype=FLAG_DTYPE)
    for array in (deck, match, pair_value, backs, is_joker):
        array.setflags(write=False)
    return Game(rules, faces, deck, match, pair_value, backs, is_joker)


def deal(game: Game, rng: np.random.Generator) -> np.ndarray:
    """Shuffle the deck onto the table: the face id at each position, shape (num_cards,).

    With checkerboard backs each pack is shuffled on its own and laid on its own colour of
    the checkerboard, so the back of a card says which pack it came from.
    """
    if not game.checkerboard:
        return rng.permutation(game.deck)
    faces = np.empty(game.num_cards, dtype=FACE_DTYPE)
    pack = game.deck[::2]  # the deck holds every face twice, so each pack is every other card
    for design in (0, 1):
        faces[game.backs == design] = rng.permutation(pack)
    return faces


def deal_seeded(game: Game, seeds: Sequence[int]) -> np.ndarray:
    """(len(seeds), num_cards) face ids: game ``g`` dealt from seed ``seeds[g]``, as the envs
    deal it after ``reset(seed=seeds[g])``."""
    return np.stack([deal(game, np.random.default_rng(seed)) for seed in seeds])


@njit(cache=CACHE, inline="always")
def _unpack_game(table):
    """A ``Game.kernel_table`` as (match (F, F) bool, pair_value (F,) int32, params (NUM_PARAMS,) int64)."""
    num_faces = table[:_INT64_BYTES].view(np.int64)[0]
    at = _INT64_BYTES * (1 + NUM_PARAMS)
    params = table[_INT64_BYTES:at].view(np.int64)
    pair_value = table[at : at + 4 * num_faces].view(np.int32)
    at += 4 * num_faces
    match = table[at : at + num_faces * num_faces].view(np.bool_).reshape((num_faces, num_faces))
    return match, pair_value, params

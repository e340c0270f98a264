"""The game core: all of Concentration's logic on plain numpy arrays, batch first.

Nothing here knows about Gymnasium or PettingZoo. ``compile_rules`` turns a ``Rules`` into
a :class:`Game` (the face deck, a boolean match table, pair values, the back pattern) once;
a :class:`State` holds a batch of games as arrays of shape ``(batch, ...)``; :func:`step`
advances every game in the batch by one flip with array operations. The solitaire env,
the vector env and the multi-player envs are thin adapters over these functions (a single
game is a batch of one).

A turn is two flips. The first flip turns a card face up. The second either captures the
pair (both cards leave the table, scoring for the mover) or misses (both stay face up for
the observation that follows, and turn face down at the next flip). Flipping a captured or
already face-up card is illegal: under ``illegal_action="end_turn"`` it is undone, ends the
turn and counts as an unsuccessful pair; under ``"raise"`` it raises before anything changes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from concentration_env.cards import Card, cards_match
from concentration_env.rules import Rules

NONE = -1  # "no card" / "no seat" marker in position and player arrays
FACE_DTYPE = np.int16
FLAG_DTYPE = np.int8


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

    @property
    def num_cards(self) -> int:
        return len(self.deck)

    @property
    def num_faces(self) -> int:
        return len(self.faces)

    @property
    def num_players(self) -> int:
        return self.rules.num_players

    @property
    def checkerboard(self) -> bool:
        return self.rules.backs == "checkerboard"


@lru_cache(maxsize=None)
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


@dataclass
class State:
    """A batch of games in progress. Arrays are (batch,) or (batch, num_cards) unless noted."""

    faces: np.ndarray  # (B, n) int16 face id dealt at each position
    removed: np.ndarray  # (B, n) bool captured and off the table
    seen: np.ndarray  # (B, n) bool turned face up at least once (everyone watches every flip)
    captured_by: np.ndarray  # (B, n) int8 seat that captured the card, NONE while on the table
    first: np.ndarray  # (B,) int32 position flipped first this turn, NONE before it
    shown: np.ndarray  # (B, 2) int32 last turn's missed pair, face up until the next flip
    player: np.ndarray  # (B,) int32 seat to move
    scores: np.ndarray  # (B, P) int32 points per seat
    first_capture: np.ndarray  # (B, P) int32 turn of each seat's first capture, NONE if none
    mismatches: np.ndarray  # (B,) int32 unsuccessful pairs (illegal flips included)
    turns: np.ndarray  # (B,) int32 completed turns
    done: np.ndarray  # (B,) bool game over

    @property
    def batch_size(self) -> int:
        return self.faces.shape[0]

    def copy(self) -> "State":
        return State(**{f.name: getattr(self, f.name).copy() for f in dataclasses.fields(self)})

    def assign(self, other: "State", rows: np.ndarray | slice = slice(None)) -> None:
        """Overwrite games ``rows`` of this batch with the games of ``other``."""
        for f in dataclasses.fields(self):
            getattr(self, f.name)[rows] = getattr(other, f.name)


def new_state(game: Game, faces: np.ndarray, first_player: int | np.ndarray = 0) -> State:
    """Fresh games on dealt tables ``faces`` of shape (B, n)."""
    faces = np.asarray(faces, dtype=FACE_DTYPE)
    batch, n = faces.shape
    players = game.num_players
    return State(
        faces=faces.copy(),
        removed=np.zeros((batch, n), dtype=bool),
        seen=np.zeros((batch, n), dtype=bool),
        captured_by=np.full((batch, n), NONE, dtype=np.int8),
        first=np.full(batch, NONE, dtype=np.int32),
        shown=np.full((batch, 2), NONE, dtype=np.int32),
        player=np.broadcast_to(np.asarray(first_player, dtype=np.int32), (batch,)).copy(),
        scores=np.zeros((batch, players), dtype=np.int32),
        first_capture=np.full((batch, players), NONE, dtype=np.int32),
        mismatches=np.zeros(batch, dtype=np.int32),
        turns=np.zeros(batch, dtype=np.int32),
        done=np.zeros(batch, dtype=bool),
    )


def face_up(state: State) -> np.ndarray:
    """(B, n) bool: cards lying face up on the table now."""
    positions = np.arange(state.faces.shape[1])
    up = positions == state.first[:, None]
    up |= positions == state.shown[:, :1]
    up |= positions == state.shown[:, 1:]
    return up


def legal_mask(state: State) -> np.ndarray:
    """(B, n) bool: positions the player to move may flip (none once a game is over)."""
    positions = np.arange(state.faces.shape[1])
    return ~state.removed & (positions != state.first[:, None]) & ~state.done[:, None]


def known_cards(state: State, memory: bool) -> np.ndarray:
    """(B, n) bool: cards whose face the players know, with perfect memory or by sight."""
    return (state.seen if memory else face_up(state)) | state.removed


def observe(game: Game, state: State, memory: bool) -> dict[str, np.ndarray]:
    """What every player sees: ``cards`` (0 = unknown, else face id + 1), ``face_up``,
    ``removed``, ``action_mask`` and, for checkerboard backs, ``back``; each (B, n)."""
    up = face_up(state)
    known = (state.seen if memory else up) | state.removed
    obs = {
        "cards": np.where(known, state.faces + 1, 0).astype(FACE_DTYPE),
        "face_up": up.astype(FLAG_DTYPE),
        "removed": state.removed.astype(FLAG_DTYPE),
        "action_mask": legal_mask(state).astype(FLAG_DTYPE),
    }
    if game.checkerboard:
        obs["back"] = np.broadcast_to(game.backs, state.faces.shape).copy()
    return obs


@dataclass
class Outcome:
    """What one flip did in each game of the batch; every array is (B,)."""

    mover: np.ndarray  # int32 seat that flipped
    acted: np.ndarray  # bool the game was running and took the flip
    legal: np.ndarray  # bool the flip was legal
    second: np.ndarray  # bool the flip completed a turn
    matched: np.ndarray  # bool a pair was captured
    missed: np.ndarray  # bool an unsuccessful pair (or an illegal flip) ended the turn
    gained: np.ndarray  # int32 points the mover scored
    ended: np.ndarray  # bool the game ended on this flip


class IllegalFlipError(ValueError):
    """An illegal flip under ``illegal_action="raise"``."""


def check_actions(game: Game, actions: np.ndarray) -> np.ndarray:
    """Validate a (B,) array of positions; raise naming the first bad one."""
    actions = np.asarray(actions)
    if actions.dtype.kind not in "iu":
        raise TypeError(f"actions must be integer positions, got dtype {actions.dtype}")
    bad = (actions < 0) | (actions >= game.num_cards)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"action {int(actions[index])} (game {index}) is out of range; valid flips are 0..{game.num_cards - 1}"
        )
    return actions.astype(np.intp, copy=False)


def step(game: Game, state: State, actions: np.ndarray) -> Outcome:
    """Flip ``actions[b]`` in every running game ``b``, in place. Finished games are left
    as they are (``acted`` is False for them).

    Raises ``IllegalFlipError`` before changing anything if a flip is illegal and the rules
    say ``illegal_action="raise"``.
    """
    actions = check_actions(game, actions)
    rows = np.arange(state.batch_size)
    active = ~state.done
    first = state.first
    legal = active & ~state.removed[rows, actions] & (actions != first)
    illegal = active & ~legal
    if game.rules.illegal_action == "raise" and illegal.any():
        index = int(np.flatnonzero(illegal)[0])
        position = int(actions[index])
        why = "captured" if state.removed[index, position] else "already face up"
        raise IllegalFlipError(
            f"illegal flip at position {position} (game {index}): the card is {why}; "
            f"flip a face-down card on the table (see the action mask)"
        )
    mover = state.player.copy()

    # Any flip turns the previous turn's missed pair face down again.
    state.shown[active] = NONE
    second = legal & (first != NONE)
    opening = legal & ~second
    state.seen[rows[legal], actions[legal]] = True

    first_face = state.faces[rows, np.maximum(first, 0)]
    matched = second & game.match[first_face, state.faces[rows, actions]]
    missed_pair = second & ~matched
    missed = missed_pair | illegal

    took = rows[matched]
    state.removed[took, actions[matched]] = True
    state.removed[took, first[matched]] = True
    state.captured_by[took, actions[matched]] = mover[matched]
    state.captured_by[took, first[matched]] = mover[matched]
    gained = np.where(matched, game.pair_value[first_face], 0).astype(np.int32)
    state.scores[took, mover[matched]] += gained[matched]
    first_time = matched & (state.first_capture[rows, mover] == NONE)
    state.first_capture[rows[first_time], mover[first_time]] = state.turns[first_time]

    state.shown[missed_pair, 0] = first[missed_pair]
    state.shown[missed_pair, 1] = actions[missed_pair]

    turn_over = second | illegal
    state.first = np.where(opening, actions, np.where(turn_over, NONE, first)).astype(np.int32)
    state.turns += turn_over
    state.mismatches += missed
    passes = missed | (matched & (game.rules.turn_policy == "one_flip"))
    state.player = np.where(passes, (mover + 1) % game.num_players, mover).astype(np.int32)

    ended = active & state.removed.all(axis=1)
    if game.rules.max_mismatches is not None:
        ended |= active & (state.mismatches >= game.rules.max_mismatches)
    state.done |= ended
    return Outcome(mover, active, legal, second, matched, missed, gained, ended)


def cleared(state: State) -> np.ndarray:
    """(B,) bool: every card has been captured."""
    return state.removed.all(axis=1)


def pairs_captured(state: State) -> np.ndarray:
    """(B, P) int: pairs captured by each seat (jokers count as one pair)."""
    players = state.scores.shape[1]
    counts = (state.captured_by[:, :, None] == np.arange(players)).sum(axis=1)
    return counts // 2

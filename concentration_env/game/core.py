"""The game core: all of Concentration's logic on plain numpy arrays, batch first.

Nothing here knows about Gymnasium or PettingZoo. ``compile_rules`` turns a ``Rules`` into
a :class:`Game` (the face deck, a boolean match table, pair values, the back pattern) once;
a :class:`State` holds a batch of games as arrays of shape ``(batch, ...)``; :func:`step`
advances every game in the batch by one flip in one compiled (numba) call. The rules of a
flip are written once, in ``_flip``; ``step``, ``step_observe`` and the batch-of-one fast
path ``step_one`` all run it. The solitaire env, the vector env and the multi-player envs
are thin adapters over these functions (a single game is a batch of one).

A turn is two flips. The first flip turns a card face up. The second either captures the
pair (both cards leave the table, scoring for the mover) or misses (both stay face up for
the observation that follows, and turn face down at the next flip). Flipping a captured or
already face-up card is illegal: under ``illegal_action="end_turn"`` it is undone, ends the
turn and counts as an unsuccessful pair; under ``"raise"`` it raises before anything changes.
"""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass
from functools import cache, cached_property
from typing import NamedTuple

import numpy as np
from numba import njit, types

from concentration_env.game.cards import Card, cards_match
from concentration_env.game.rules import Rules

NONE = -1  # "no card" / "no seat" marker in position and player arrays
_INT64_BYTES = 8
FACE_DTYPE = np.dtype(np.int16)  # dtype instances: np.empty converts a scalar type on every call
FLAG_DTYPE = np.dtype(np.int8)


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


@dataclass
class State:
    """A batch of games in progress. Arrays are (batch,) or (batch, num_cards) unless noted.

    Every array is a view into one byte buffer (``buffer``), so the compiled kernels take
    the whole state as a single argument: numba pays about 0.1 us to unbox each array
    argument, which was a third of a single env's flip. Assigning a field writes into its
    view (``state.player = ...`` keeps the buffer and the field one), and the constructor
    copies the arrays it is given into a fresh buffer.
    """

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

    def __post_init__(self) -> None:
        arrays = {name: getattr(self, name) for name in STATE_FIELDS}
        batch, num_cards = np.shape(arrays["faces"])
        players = np.shape(arrays["scores"])[1]
        buffer = np.zeros(_state_nbytes(batch, num_cards, players), dtype=np.uint8)
        buffer[:_HEADER_BYTES].view(np.int64)[:] = (batch, num_cards, players)
        self._bind(buffer)
        for name, value in arrays.items():
            getattr(self, name)[...] = value

    def _bind(self, buffer: np.ndarray) -> None:
        """Make the fields views of ``buffer``."""
        views = _unpack(buffer)
        object.__setattr__(self, "buffer", buffer)
        for name, view in zip(STATE_FIELDS, views):
            object.__setattr__(self, name, view)

    def __setattr__(self, name: str, value) -> None:
        if name in STATE_FIELDS and "buffer" in self.__dict__:
            getattr(self, name)[...] = value  # into the buffer: the kernels read only that
        else:
            object.__setattr__(self, name, value)

    def __getstate__(self) -> dict:
        return {"buffer": self.buffer}  # the views are rebuilt: pickling them would unshare them

    def __setstate__(self, saved: dict) -> None:
        self._bind(saved["buffer"])

    @property
    def batch_size(self) -> int:
        return self.faces.shape[0]

    def copy(self) -> State:
        clone = object.__new__(State)
        clone._bind(self.buffer.copy())
        return clone

    def assign(self, other: State, rows: np.ndarray | slice = slice(None)) -> None:
        """Overwrite games ``rows`` of this batch with the games of ``other``."""
        for name in STATE_FIELDS:
            getattr(self, name)[rows] = getattr(other, name)


STATE_FIELDS = tuple(f.name for f in dataclasses.fields(State))
_HEADER_BYTES = 3 * _INT64_BYTES  # batch, num_cards, players at the start of a state buffer
_INT32_COLUMNS = 6  # first, shown (2), player, mismatches, turns; scores and first_capture add 2P


def _state_nbytes(batch: int, num_cards: int, players: int) -> int:
    """Bytes of a state buffer: the header, the int32 fields, the int16 faces, then the
    one-byte fields (largest items first, so every field is aligned without padding)."""
    return (
        _HEADER_BYTES + 4 * batch * (_INT32_COLUMNS + 2 * players) + 2 * batch * num_cards + batch * (3 * num_cards + 1)
    )


@njit(cache=True, inline="always")
def _unpack(buffer):
    """The State fields (in ``STATE_FIELDS`` order) as views of a state buffer."""
    header = buffer[:_HEADER_BYTES].view(np.int64)
    batch, n, players = header[0], header[1], header[2]
    at = _HEADER_BYTES
    first = buffer[at : at + 4 * batch].view(np.int32)
    at += 4 * batch
    shown = buffer[at : at + 8 * batch].view(np.int32).reshape((batch, 2))
    at += 8 * batch
    player = buffer[at : at + 4 * batch].view(np.int32)
    at += 4 * batch
    scores = buffer[at : at + 4 * batch * players].view(np.int32).reshape((batch, players))
    at += 4 * batch * players
    first_capture = buffer[at : at + 4 * batch * players].view(np.int32).reshape((batch, players))
    at += 4 * batch * players
    mismatches = buffer[at : at + 4 * batch].view(np.int32)
    at += 4 * batch
    turns = buffer[at : at + 4 * batch].view(np.int32)
    at += 4 * batch
    faces = buffer[at : at + 2 * batch * n].view(np.int16).reshape((batch, n))
    at += 2 * batch * n
    removed = buffer[at : at + batch * n].view(np.bool_).reshape((batch, n))
    at += batch * n
    seen = buffer[at : at + batch * n].view(np.bool_).reshape((batch, n))
    at += batch * n
    captured_by = buffer[at : at + batch * n].view(np.int8).reshape((batch, n))
    at += batch * n
    done = buffer[at : at + batch].view(np.bool_)
    return faces, removed, seen, captured_by, first, shown, player, scores, first_capture, mismatches, turns, done


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


# -- compiled kernels ---------------------------------------------------------------------
# The rules of a flip live once, in these numba kernels, written as loops over the games of
# a batch: a flip touches at most four cards, so each game costs O(1) work (O(num_cards)
# only when a capture may have cleared the table), and a batch of one pays no numpy
# per-operation overhead. The per-card predicates use bitwise, branch-free operators so
# that the whole-board loops vectorise. NUMBA_DISABLE_JIT=1 runs the same code as Python.

# Status codes of the kernels' validation (nothing is changed unless OK).
OK, OUT_OF_RANGE, ILLEGAL, NOT_ONE_RUNNING_GAME = 0, 1, 2, 3
# Outcome arrays travel through the kernel as two blocks: rows of ``flags`` (bool) and of
# ``numbers`` (int32), in this order.
FLAG_FIELDS = ("acted", "legal", "second", "matched", "missed", "ended")
NUMBER_FIELDS = ("mover", "gained")
ACTED, LEGAL, SECOND, MATCHED, MISSED, ENDED = range(len(FLAG_FIELDS))
MOVER, GAINED = range(len(NUMBER_FIELDS))
NUM_FLAGS = len(FLAG_FIELDS)
# Planes of the int8 observation block, and the rule switches the kernels read.
MARKS = ("face_up", "removed", "action_mask")
NUM_MARKS = len(MARKS)
MARK_FACE_UP, MARK_REMOVED, MARK_LEGAL = range(NUM_MARKS)
NUM_PARAMS = 3
PARAM_ONE_FLIP, PARAM_RAISE, PARAM_MAX_MISMATCHES = range(NUM_PARAMS)


@njit(cache=True, inline="always")
def _unpack_game(table):
    """A ``Game.kernel_table`` as (match (F, F) bool, pair_value (F,) int32, params (NUM_PARAMS,) int64)."""
    num_faces = table[:_INT64_BYTES].view(np.int64)[0]
    at = _INT64_BYTES * (1 + NUM_PARAMS)
    params = table[_INT64_BYTES:at].view(np.int64)
    pair_value = table[at : at + 4 * num_faces].view(np.int32)
    at += 4 * num_faces
    match = table[at : at + num_faces * num_faces].view(np.bool_).reshape((num_faces, num_faces))
    return match, pair_value, params


@njit(cache=True, inline="always")
def _is_face_up(first, shown, b, i):
    """Card ``i`` of game ``b`` lies face up: flipped first this turn, or last turn's miss."""
    return (i == first[b]) | (i == shown[b, 0]) | (i == shown[b, 1])


@njit(cache=True, inline="always")
def _is_legal(removed, first, done, b, i):
    """Game ``b``'s player to move may flip card ``i``."""
    return (not done[b]) & (not removed[b, i]) & (i != first[b])


@njit(cache=True, inline="always")
def _illegal_to_raise(removed, first, done, b, a, params):
    """The flip ``a`` in game ``b`` is illegal and the rules say illegal flips raise."""
    return params[PARAM_RAISE] and not done[b] and not _is_legal(removed, first, done, b, a)


@njit(cache=True)
def _validate(removed, first, done, actions, params):
    """(status, game): the first out-of-range action, else the first illegal flip when
    illegal flips must raise, else (OK, -1). Nothing is changed."""
    num_cards = removed.shape[1]
    for b in range(actions.shape[0]):
        if actions[b] < 0 or actions[b] >= num_cards:
            return OUT_OF_RANGE, b
    for b in range(actions.shape[0]):
        if _illegal_to_raise(removed, first, done, b, actions[b], params):
            return ILLEGAL, b
    return OK, -1


@njit(cache=True, inline="always")  # inlined: a call per game would pay refcounting on 17 arrays
def _flip(
    b,
    a,
    faces,
    removed,
    seen,
    captured_by,
    first,
    shown,
    player,
    scores,
    first_capture,
    mismatches,
    turns,
    done,
    match,
    pair_value,
    params,
):
    """Game ``b`` (running) flips card ``a``, in place: THE rules of a flip.
    Returns (legal, second, matched, missed, gained, ended)."""
    legal = second = matched = missed = ended = False
    gained = 0
    mover = player[b]
    opened = first[b]
    # Any flip turns the previous turn's missed pair face down again.
    shown[b, 0] = NONE
    shown[b, 1] = NONE
    if not _is_legal(removed, first, done, b, a):
        # Undone; ends the turn and counts as an unsuccessful pair.
        first[b] = NONE
        missed = True
    else:
        legal = True
        seen[b, a] = True
        if opened == NONE:
            first[b] = a
            return legal, second, matched, missed, gained, ended
        second = True
        first[b] = NONE
        face = faces[b, opened]
        if match[face, faces[b, a]]:
            matched = True
            removed[b, a] = removed[b, opened] = True
            captured_by[b, a] = captured_by[b, opened] = mover
            gained = pair_value[face]
            scores[b, mover] += gained
            if first_capture[b, mover] == NONE:
                first_capture[b, mover] = turns[b]
            ended = True
            for i in range(faces.shape[1]):
                if not removed[b, i]:
                    ended = False
                    break
        else:
            missed = True
            shown[b, 0] = opened
            shown[b, 1] = a
    turns[b] += 1
    if missed:
        mismatches[b] += 1
        max_mismatches = params[PARAM_MAX_MISMATCHES]
        if max_mismatches > 0 and mismatches[b] >= max_mismatches:
            ended = True
    if missed or (matched and params[PARAM_ONE_FLIP]):
        player[b] = (mover + 1) % scores.shape[1]
    if ended:
        done[b] = True
    return legal, second, matched, missed, gained, ended


@njit(cache=True)
def _step_games(
    faces,
    removed,
    seen,
    captured_by,
    first,
    shown,
    player,
    scores,
    first_capture,
    mismatches,
    turns,
    done,
    actions,
    match,
    pair_value,
    params,
    flags,
    numbers,
):
    """Flip ``actions[b]`` in every running game ``b`` (in place) and record the outcome."""
    for b in range(faces.shape[0]):
        numbers[MOVER, b] = player[b]
        acted = not done[b]
        flags[ACTED, b] = acted
        if acted:
            legal, second, matched, missed, gained, ended = _flip(
                b,
                actions[b],
                faces,
                removed,
                seen,
                captured_by,
                first,
                shown,
                player,
                scores,
                first_capture,
                mismatches,
                turns,
                done,
                match,
                pair_value,
                params,
            )
        else:
            legal = second = matched = missed = ended = False
            gained = 0
        flags[LEGAL, b] = legal
        flags[SECOND, b] = second
        flags[MATCHED, b] = matched
        flags[MISSED, b] = missed
        flags[ENDED, b] = ended
        numbers[GAINED, b] = gained


@njit(cache=True, inline="always")
def _observe_game(b, faces, removed, seen, first, shown, done, memory, cards, up, gone, mask):
    """Fill one game's observation rows: ``cards``, face up, removed and legal."""
    for i in range(faces.shape[1]):
        is_up = _is_face_up(first, shown, b, i)
        known = (seen[b, i] if memory else is_up) | removed[b, i]
        cards[i] = (faces[b, i] + 1) * known
        up[i] = is_up
        gone[i] = removed[b, i]
        mask[i] = _is_legal(removed, first, done, b, i)


@njit(cache=True)
def _observe_games(faces, removed, seen, first, shown, done, memory, cards, marks):
    """Fill ``cards`` and the ``marks`` planes (face up, removed, legal) of every game."""
    for b in range(faces.shape[0]):
        _observe_game(
            b,
            faces,
            removed,
            seen,
            first,
            shown,
            done,
            memory,
            cards[b],
            marks[MARK_FACE_UP, b],
            marks[MARK_REMOVED, b],
            marks[MARK_LEGAL, b],
        )


@njit(cache=True)
def _step_entry(buffer, table, actions, flags, numbers):
    """Validate, then step every game of a state buffer (one compiled call); returns
    ``_validate``'s verdict."""
    faces, removed, seen, captured_by, first, shown, player, scores, first_capture, mismatches, turns, done = _unpack(
        buffer
    )
    match, pair_value, params = _unpack_game(table)
    status, index = _validate(removed, first, done, actions, params)
    if status == OK:
        _step_games(
            faces,
            removed,
            seen,
            captured_by,
            first,
            shown,
            player,
            scores,
            first_capture,
            mismatches,
            turns,
            done,
            actions,
            match,
            pair_value,
            params,
            flags,
            numbers,
        )
    return status, index


@njit(cache=True)
def _step_observe_entry(buffer, table, actions, flags, numbers, memory, cards, marks):
    """``_step_entry`` followed by the observation, in one compiled call."""
    status, index = _step_entry(buffer, table, actions, flags, numbers)
    if status == OK:
        _observe_entry(buffer, memory, cards, marks)
    return status, index


@njit(cache=True)
def _observe_entry(buffer, memory, cards, marks):
    """Fill ``cards`` and the ``marks`` planes of every game of a state buffer."""
    faces, removed, seen, _, first, shown, _, _, _, _, _, done = _unpack(buffer)
    _observe_games(faces, removed, seen, first, shown, done, memory, cards, marks)


@njit(cache=True)
def _step_one_entry(buffer, table, action, memory, cards, marks):
    """The only game of a state buffer's batch flips ``action``, then its observation
    fills ``cards`` (n,) and ``marks`` (3, n). Returns (status, *Flip)."""
    faces, removed, seen, captured_by, first, shown, player, scores, first_capture, mismatches, turns, done = _unpack(
        buffer
    )
    match, pair_value, params = _unpack_game(table)
    mover = player[0]
    if faces.shape[0] != 1 or done[0]:
        status = NOT_ONE_RUNNING_GAME
    elif action < 0 or action >= faces.shape[1]:
        status = OUT_OF_RANGE
    elif _illegal_to_raise(removed, first, done, 0, action, params):
        status = ILLEGAL
    else:
        legal, second, matched, missed, gained, ended = _flip(
            0,
            action,
            faces,
            removed,
            seen,
            captured_by,
            first,
            shown,
            player,
            scores,
            first_capture,
            mismatches,
            turns,
            done,
            match,
            pair_value,
            params,
        )
        _observe_game(
            0,
            faces,
            removed,
            seen,
            first,
            shown,
            done,
            memory,
            cards,
            marks[MARK_FACE_UP],
            marks[MARK_REMOVED],
            marks[MARK_LEGAL],
        )
        return OK, mover, legal, second, matched, missed, gained, ended, turns[0], mismatches[0]
    return status, mover, False, False, False, False, 0, False, turns[0], mismatches[0]


@njit(cache=True)
def _face_up_games(buffer, out):
    _, _, _, _, first, shown, _, _, _, _, _, _ = _unpack(buffer)
    for b in range(out.shape[0]):
        for i in range(out.shape[1]):
            out[b, i] = _is_face_up(first, shown, b, i)


@njit(cache=True)
def _legal_games(buffer, out):
    _, removed, _, _, first, _, _, _, _, _, _, done = _unpack(buffer)
    for b in range(out.shape[0]):
        for i in range(out.shape[1]):
            out[b, i] = _is_legal(removed, first, done, b, i)


# -- the public functions -------------------------------------------------------------------
def face_up(state: State) -> np.ndarray:
    """(B, n) bool: cards lying face up on the table now."""
    out = np.empty(state.faces.shape, dtype=bool)
    _face_up_games(state.buffer, out)
    return out


def legal_mask(state: State) -> np.ndarray:
    """(B, n) bool: positions the player to move may flip (none once a game is over)."""
    out = np.empty(state.faces.shape, dtype=bool)
    _legal_games(state.buffer, out)
    return out


def known_cards(state: State, memory: bool) -> np.ndarray:
    """(B, n) bool: cards whose face the players know, with perfect memory or by sight."""
    return (state.seen if memory else face_up(state)) | state.removed


def _observation_buffers(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Fresh ``cards`` (int16) and ``marks`` (3 int8 planes) arrays of ``shape``."""
    return np.empty(shape, dtype=FACE_DTYPE), np.empty((NUM_MARKS, *shape), dtype=FLAG_DTYPE)


def _observation(game: Game, cards: np.ndarray, marks: np.ndarray) -> dict[str, np.ndarray]:
    """The observation dict over filled buffers."""
    # Indexing the planes costs a third of unpacking the array (``up, gone, legal = marks``),
    # which iterates it: 0.3 vs 0.8 us, a tenth of a single env's flip.
    obs = {
        "cards": cards,
        "face_up": marks[MARK_FACE_UP],
        "removed": marks[MARK_REMOVED],
        "action_mask": marks[MARK_LEGAL],
    }
    if game.checkerboard:
        obs["back"] = np.broadcast_to(game.backs, cards.shape).copy()
    return obs


def observe(game: Game, state: State, memory: bool) -> dict[str, np.ndarray]:
    """What every player sees: ``cards`` (0 = unknown, else face id + 1), ``face_up``,
    ``removed``, ``action_mask`` and, for checkerboard backs, ``back``; each (B, n)."""
    cards, marks = _observation_buffers(state.faces.shape)
    _observe_entry(state.buffer, memory, cards, marks)
    return _observation(game, cards, marks)


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


def _as_positions(actions: np.ndarray) -> np.ndarray:
    """Actions as a platform-int array; TypeError unless they are integers."""
    if type(actions) is np.ndarray and actions.dtype == np.intp:
        return actions  # the hot path: already what the kernels take
    actions = np.asarray(actions)
    if actions.dtype.kind not in "iu":
        raise TypeError(f"actions must be integer positions, got dtype {actions.dtype}")
    return actions.astype(np.intp, copy=False)


def _raise_out_of_range(game: Game, actions: np.ndarray, index: int) -> None:
    raise ValueError(
        f"action {int(actions[index])} (game {index}) is out of range; valid flips are 0..{game.num_cards - 1}"
    )


def check_actions(game: Game, actions: np.ndarray) -> np.ndarray:
    """Validate a (B,) array of positions; raise naming the first bad one."""
    actions = _as_positions(actions)
    bad = (actions < 0) | (actions >= game.num_cards)
    if bad.any():
        _raise_out_of_range(game, actions, int(np.flatnonzero(bad)[0]))
    return actions


def _raise_verdict(game: Game, state: State, actions: np.ndarray, status: int, index: int) -> None:
    """Turn a kernel's validation verdict into the error it stands for."""
    if status == OUT_OF_RANGE:
        _raise_out_of_range(game, actions, index)
    if status == ILLEGAL:
        position = int(actions[index])
        why = "captured" if state.removed[index, position] else "already face up"
        raise IllegalFlipError(
            f"illegal flip at position {position} (game {index}): the card is {why}; "
            f"flip a face-down card on the table (see the action mask)"
        )


def _step_call(game: Game, state: State, actions, entry, *extra) -> Outcome:
    """Run a compiled batch step entry point over the state; raise on its verdict."""
    actions = _as_positions(actions)
    batch = state.faces.shape[0]
    if actions.shape != (batch,):
        raise ValueError(f"actions must have shape ({batch},), one position per game; got {actions.shape}")
    flags = np.empty((NUM_FLAGS, batch), dtype=bool)
    numbers = np.empty((len(NUMBER_FIELDS), batch), dtype=np.int32)
    status, index = entry(state.buffer, game.kernel_table, actions, flags, numbers, *extra)
    _raise_verdict(game, state, actions, status, index)
    acted, legal, second, matched, missed, ended = flags
    mover, gained = numbers
    return Outcome(mover, acted, legal, second, matched, missed, gained, ended)


def step(game: Game, state: State, actions: np.ndarray) -> Outcome:
    """Flip ``actions[b]`` in every running game ``b``, in place. Finished games are left
    as they are (``acted`` is False for them).

    Raises ``IllegalFlipError`` before changing anything if a flip is illegal and the rules
    say ``illegal_action="raise"``.
    """
    return _step_call(game, state, actions, _step_entry)


def step_observe(game: Game, state: State, actions: np.ndarray, memory: bool) -> tuple[Outcome, dict]:
    """``step`` then ``observe`` in one compiled call: the hot path of the batched envs."""
    cards, marks = _observation_buffers(state.faces.shape)
    outcome = _step_call(game, state, actions, _step_observe_entry, memory, cards, marks)
    return outcome, _observation(game, cards, marks)


class Flip(NamedTuple):
    """What one flip did in a single game, as plain Python values (``step_one``'s outcome),
    with the game's counters after it."""

    mover: int
    legal: bool
    second: bool
    matched: bool
    missed: bool
    gained: int
    ended: bool
    turns: int
    mismatches: int


@cache
def _step_one_compiled():
    """``_step_one_entry``'s compiled code, called without numba's per-call type dispatch
    (about 0.35 of a single env's 6 us flip). Safe because ``step_one`` builds every
    argument with fixed types (a State's buffer, a Game's table, an int, a bool and fresh
    arrays). The plain function when numba's JIT is disabled."""
    if not hasattr(_step_one_entry, "compile"):
        return _step_one_entry
    _step_one_entry.compile(_STEP_ONE_SIGNATURE)
    return _step_one_entry.overloads[_STEP_ONE_SIGNATURE].entry_point


_STEP_ONE_SIGNATURE = (
    types.Array(types.uint8, 1, "C"),  # State.buffer
    types.Array(types.uint8, 1, "C", readonly=True),  # Game.kernel_table
    types.int64,  # position
    types.boolean,  # memory
    types.Array(types.int16, 1, "C"),  # cards
    types.Array(types.int8, 2, "C"),  # marks
)


def step_one(game: Game, state: State, position: int, memory: bool) -> tuple[Flip, dict[str, np.ndarray]]:
    """Flip ``position`` in the running game of a batch of one, then observe it: the same
    rules as ``step`` (one compiled ``_flip``) without per-flip array plumbing, for the
    single-game envs. Observation arrays are (num_cards,). Errors as ``step``'s."""
    if type(position) is not int:
        position = operator.index(position)  # the compiled entry point takes an int64
    num_cards = game.num_cards
    cards, marks = np.empty(num_cards, dtype=FACE_DTYPE), np.empty((NUM_MARKS, num_cards), dtype=FLAG_DTYPE)
    status, *flip = _step_one_compiled()(state.buffer, game.kernel_table, position, memory, cards, marks)
    if status != OK:
        if status == NOT_ONE_RUNNING_GAME:
            raise ValueError("step_one needs a batch of exactly one running game")
        _raise_verdict(game, state, np.array([position]), status, 0)
    return tuple.__new__(Flip, flip), _observation(game, cards, marks)


def cleared(state: State) -> np.ndarray:
    """(B,) bool: every card has been captured."""
    return state.removed.all(axis=1)


def pairs_captured(state: State) -> np.ndarray:
    """(B, P) int: pairs captured by each seat (jokers count as one pair)."""
    players = state.scores.shape[1]
    counts = (state.captured_by[:, :, None] == np.arange(players)).sum(axis=1)
    return counts // 2

"""The core's public functions: step a batch of games, observe them, and read off results.

``step`` and ``step_observe`` flip one card in every game of a batch and return an
:class:`Outcome` of (B,) arrays; ``step_one`` is the batch-of-one fast path of the single
envs and returns a :class:`Flip` of plain values. The facts the adapters report (whether
a flip ended a turn, the solitaire reward, a win, the pairs captured) are derived here,
once, on those two results.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

import numpy as np
from numba import types

from concentration_env.game.compile import FACE_DTYPE, FLAG_DTYPE, Game
from concentration_env.game.kernels import (
    ILLEGAL,
    MARK_FACE_UP,
    MARK_LEGAL,
    MARK_REMOVED,
    NOT_ONE_RUNNING_GAME,
    NUM_FLAGS,
    NUM_MARKS,
    NUMBER_FIELDS,
    OK,
    OUT_OF_RANGE,
    _face_up_games,
    _legal_games,
    _observe_entry,
    _step_entry,
    _step_observe_entry,
    _step_one_entry,
)
from concentration_env.game.state import State

MISS_REWARD = -1.0  # solitaire: each unsuccessful pair costs a point


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

    # The facts the adapters report, derived here once (``Flip`` has the same, per game).
    @property
    def turn_ended(self) -> np.ndarray:
        """bool: the flip ended the mover's turn (a turn's second flip, or an illegal flip)."""
        return self.acted & (self.second | ~self.legal)

    @property
    def won(self) -> np.ndarray:
        """bool: the flip cleared the table (see ``Flip.won``)."""
        return self.ended & self.matched

    @property
    def solitaire_reward(self) -> np.ndarray:
        """float64: the solitaire reward, ``MISS_REWARD`` for an unsuccessful pair, else 0."""
        return np.where(self.missed, MISS_REWARD, 0.0)


class IllegalFlipError(ValueError):
    """An illegal flip under ``illegal_action="raise"``."""


def as_positions(game: Game, actions: np.ndarray) -> np.ndarray:
    """Actions as a platform-int array; TypeError unless they are integers, ValueError for
    unsigned ones too large to convert (they would wrap to negative numbers)."""
    if type(actions) is np.ndarray and actions.dtype == np.intp:
        return actions  # the hot path: already what the kernels take
    actions = np.asarray(actions)
    if actions.dtype.kind not in "iu":
        raise TypeError(f"actions must be integer positions, got dtype {actions.dtype}")
    if actions.dtype.kind == "u" and actions.dtype.itemsize >= np.dtype(np.intp).itemsize:
        wide = np.flatnonzero(actions.ravel() > np.iinfo(np.intp).max)
        if wide.size:
            _raise_out_of_range(game, actions.ravel(), int(wide[0]))
    return actions.astype(np.intp, copy=False)


def _raise_out_of_range(game: Game, actions: np.ndarray, index: int) -> None:
    raise ValueError(
        f"action {int(actions[index])} (game {index}) is out of range; valid flips are 0..{game.num_cards - 1}"
    )


def check_actions(game: Game, actions: np.ndarray) -> np.ndarray:
    """Validate a (B,) array of positions; raise naming the first bad one."""
    actions = as_positions(game, actions)
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
    actions = as_positions(game, actions)
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

    # Properties, not fields: the compiled entry point returns exactly the fields above, and
    # a single env reads only the facts it reports.
    @property
    def turn_ended(self) -> bool:
        """The flip ended the mover's turn (a turn's second flip, or an illegal flip)."""
        return self.second or not self.legal

    @property
    def won(self) -> bool:
        """The flip cleared the table: a game ends on a capture only when no card is left,
        and otherwise on a miss that pays the last chip, which is a loss."""
        return self.ended and self.matched

    @property
    def solitaire_reward(self) -> float:
        """The solitaire reward, ``MISS_REWARD`` for an unsuccessful pair, else 0."""
        return MISS_REWARD if self.missed else 0.0

    @property
    def pairs(self) -> int:
        """Pairs captured so far (see :func:`pairs_completed`)."""
        return pairs_completed(self.turns, self.mismatches)


@cache
def _step_one_compiled():
    """``_step_one_entry``'s compiled code, called without numba's per-call type dispatch
    (about 0.35 of a single env's 6 us flip). Safe because ``step_one`` builds every
    argument with fixed types (a State's buffer, a Game's table, an int, a bool and fresh
    arrays). The plain function when numba's JIT is disabled."""
    if not hasattr(_step_one_entry, "compile"):
        return _step_one_uncompiled
    _step_one_entry.compile(_STEP_ONE_SIGNATURE)
    return _step_one_entry.overloads[_STEP_ONE_SIGNATURE].entry_point  # type: ignore[attr-defined]  # set at run time, not in numba's class


def _step_one_uncompiled(*args):
    """``_step_one_entry`` run as plain Python, its numbers turned into Python scalars as the
    compiled entry point returns them (NumPy scalars would reach the envs' infos)."""
    return tuple(value.item() if isinstance(value, np.generic) else value for value in _step_one_entry(*args))


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


def pairs_completed(turns, mismatches):
    """Pairs captured, from a game's counters (ints or arrays): every completed turn ends
    in a capture or in an unsuccessful pair, illegal flips included."""
    return turns - mismatches


def counters(state: State) -> dict[str, np.ndarray]:
    """(B,) int64 ``mismatches``, ``pairs`` and ``turns`` of every game: a solitaire env's
    info counters."""
    turns = state.turns.astype(np.int64)
    mismatches = state.mismatches.astype(np.int64)
    return {"mismatches": mismatches, "pairs": pairs_completed(turns, mismatches), "turns": turns}


def cleared(state: State) -> np.ndarray:
    """(B,) bool: every card has been captured."""
    return np.all(state.removed, axis=1)


def pairs_captured(state: State) -> np.ndarray:
    """(B, P) int: pairs captured by each seat (jokers count as one pair)."""
    players = state.scores.shape[1]
    counts = (state.captured_by[:, :, None] == np.arange(players)).sum(axis=1)
    return counts // 2

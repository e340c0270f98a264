"""The batch-first game state: :class:`State`, its one-buffer layout and :func:`new_state`.

A state holds a batch of games as arrays of shape ``(batch, ...)``, all views into one
byte buffer; ``_unpack`` (compiled, inlined into every kernel) cuts the buffer into those
views, and ``_state_nbytes`` sizes it: both follow ``STATE_FIELDS`` and must change together.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numba import njit

from concentration_env.game.compile import _INT64_BYTES, FACE_DTYPE, NONE, Game
from concentration_env.game.jit import CACHE


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


@njit(cache=CACHE, inline="always")
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

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

from concentration_env.game.checks import fail
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
        self.buffer: np.ndarray = buffer  # not a field: __setattr__ stores it as is
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


def validate_state(game: Game, state: State, batch: int | None = None) -> None:
    """Check that ``state`` is a batch of games the compiled kernels can run under ``game``
    (of ``batch`` games if given): shapes, the buffer header, every value in range and the
    fields consistent with each other. Raises one ``ValueError`` naming the first bad field;
    changes nothing. The kernels index arrays with these values unchecked, so a snapshot
    from outside must pass here before it is used."""
    if not isinstance(state, State) or not isinstance(getattr(state, "buffer", None), np.ndarray):
        fail("state", type(state).__name__, "a concentration_env.game.state.State")
    n, players = game.num_cards, game.num_players
    rows = state.faces.shape[0] if state.faces.ndim == 2 else -1
    expected = (rows if batch is None else batch, n, players)
    buffer = state.buffer
    if (
        buffer.dtype != np.uint8
        or buffer.ndim != 1
        or buffer.size < _HEADER_BYTES
        or tuple(buffer[:_HEADER_BYTES].view(np.int64)) != expected
        or buffer.size != _state_nbytes(*expected)
        or state.faces.shape != expected[:2]
        or state.scores.shape != (expected[0], players)
    ):
        fail("state.faces.shape", state.faces.shape, f"{expected[:2]} ({n} cards, {players} seats)")
    for name in ("removed", "seen", "done"):
        _require(name, getattr(state, name).view(np.uint8), getattr(state, name).view(np.uint8) <= 1, "0 or 1 (bool)")
    faces = state.faces
    _require("faces", state.faces, (faces >= 0) & (faces < game.num_faces), f"face ids 0..{game.num_faces - 1}")
    if not (np.sort(faces, axis=1) == np.sort(game.deck)).all():
        fail("state.faces", "a table", "a shuffle of this game's deck", "the faces are not this game's cards")
    removed, captured_by = state.removed, state.captured_by
    _require(
        "captured_by",
        state.captured_by,
        np.where(removed, (captured_by >= 0) & (captured_by < players), captured_by == NONE),
        f"a seat 0..{players - 1} for captured cards, {NONE} for the others",
    )
    _require("removed", state.removed, removed.sum(axis=1) % 2 == 0, "captured cards in pairs")
    first = state.first
    inside = (first >= 0) & (first < n)
    _require("first", state.first, (first == NONE) | inside, f"{NONE} or a position 0..{n - 1}")
    _require(
        "first", state.first, ~inside | ~removed[np.arange(len(first)), np.clip(first, 0, n - 1)], "a card on the table"
    )
    shown = state.shown
    _require(
        "shown",
        state.shown,
        ((shown >= 0) & (shown < n)).all(axis=1) | (shown == NONE).all(axis=1),
        f"two positions 0..{n - 1}, or {NONE} twice",
    )
    _require("player", state.player, (state.player >= 0) & (state.player < players), f"a seat 0..{players - 1}")
    for name in ("mismatches", "turns"):
        _require(name, getattr(state, name), getattr(state, name) >= 0, "counts of 0 or more")
    _require("mismatches", state.mismatches, state.mismatches <= state.turns, "at most one per completed turn")
    values = np.where(removed, game.pair_value[faces], 0)
    won = np.stack([(values * (captured_by == seat)).sum(axis=1) // 2 for seat in range(players)], axis=1)
    _require("scores", state.scores, state.scores == won, "the points of the pairs each seat captured")
    turn = state.first_capture
    _require(
        "first_capture", turn, (turn == NONE) | ((turn >= 0) & (turn < state.turns[:, None])), f"{NONE} or a past turn"
    )
    running = ~state.done
    chips = game.rules.max_mismatches or 0
    _require("done", state.done, ~running | ~removed.all(axis=1), "True for a cleared table")
    _require("done", state.done, ~running | (chips == 0) | (state.mismatches < chips), "True once the chips are paid")


def _require(field: str, values: np.ndarray, good: np.ndarray, allowed: str) -> None:
    """Fail naming ``state.<field>`` and its first bad value, unless ``good`` holds everywhere
    (``good`` has the shape of ``values`` or of its leading axes)."""
    if not good.all():
        where = tuple(int(i) for i in np.argwhere(~good)[0])
        value = values[where]
        fail(
            f"state.{field}[{', '.join(map(str, where))}]",
            value.tolist() if hasattr(value, "tolist") else value,
            allowed,
        )


SNAPSHOT_KEYS = ("rules", "core", "rng")  # what every env's get_state() holds


def read_snapshot(snapshot: object, game: Game, extra: tuple[str, ...] = ()) -> tuple[State, np.random.Generator]:
    """The game state (a batch of one) and a generator in the saved state, from an env's
    ``get_state()`` snapshot (its :data:`SNAPSHOT_KEYS` plus ``extra``), checked against
    ``game`` in full first: a ``ValueError`` naming what is wrong, and nothing changed."""
    if not isinstance(snapshot, dict):
        fail("snapshot", type(snapshot).__name__, "a dict from get_state()")
    keys = (*SNAPSHOT_KEYS, *extra)
    if set(snapshot) != set(keys):
        fail(
            "snapshot keys",
            sorted(map(str, snapshot)),
            ", ".join(keys),
            "a snapshot from get_state() has exactly these",
        )
    if snapshot["rules"] != game.rules:
        fail("snapshot['rules']", "other rules", f"this env's rules ({game.rules!r})", "a snapshot of another game")
    validate_state(game, snapshot["core"], batch=1)
    bits = np.random.PCG64()
    try:
        bits.state = snapshot["rng"]
    except (TypeError, ValueError, KeyError) as error:
        fail("snapshot['rng']", type(snapshot["rng"]).__name__, "a PCG64 state from get_state()", str(error))
    return snapshot["core"], np.random.Generator(bits)

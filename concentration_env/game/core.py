"""The game core: all of Concentration's logic on plain numpy arrays, batch first.

Nothing here knows about Gymnasium or PettingZoo. ``compile_rules`` turns a ``Rules`` into
a :class:`Game` (the face deck, a boolean match table, pair values, the back pattern) once;
a :class:`State` holds a batch of games as arrays of shape ``(batch, ...)``; :func:`step`
advances every game in the batch by one flip in one compiled (numba) call. The rules of a
flip are written once, in ``_flip``; ``step``, ``step_observe`` and the batch-of-one fast
path ``step_one`` all run it. The solitaire env, the vector env and the multi-player envs
are thin adapters over these functions (a single game is a batch of one).

This module is the core's one public face; the code lives by concern in
:mod:`.compile` (rules to arrays, dealing), :mod:`.state` (the state and its buffer),
:mod:`.kernels` (the compiled flip) and :mod:`.step` (the functions below and the
results they return, with the facts derived from them).

A turn is two flips. The first flip turns a card face up. The second either captures the
pair (both cards leave the table, scoring for the mover) or misses (both stay face up for
the observation that follows, and turn face down at the next flip). Flipping a captured or
already face-up card is illegal: under ``illegal_action="end_turn"`` it is undone, ends the
turn and counts as an unsuccessful pair; under ``"raise"`` it raises before anything changes.
"""

from concentration_env.game.compile import FACE_DTYPE, FLAG_DTYPE, NONE, Game, compile_rules, deal, deal_seeded
from concentration_env.game.kernels import NUM_MARKS
from concentration_env.game.state import STATE_FIELDS, State, new_state
from concentration_env.game.step import (
    Flip,
    IllegalFlipError,
    Outcome,
    as_positions,
    check_actions,
    cleared,
    counters,
    face_up,
    known_cards,
    legal_mask,
    observe,
    pairs_captured,
    step,
    step_observe,
    step_one,
)

__all__ = [
    "FACE_DTYPE",
    "FLAG_DTYPE",
    "NONE",
    "NUM_MARKS",
    "STATE_FIELDS",
    "Flip",
    "Game",
    "IllegalFlipError",
    "Outcome",
    "State",
    "as_positions",
    "check_actions",
    "cleared",
    "compile_rules",
    "counters",
    "deal",
    "deal_seeded",
    "face_up",
    "known_cards",
    "legal_mask",
    "new_state",
    "observe",
    "pairs_captured",
    "step",
    "step_observe",
    "step_one",
]

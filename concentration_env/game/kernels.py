"""The numba-compiled kernels of the core: THE rules of a flip (``_flip``), the batched
step and observation loops, and the entry points the public functions call.

Everything here runs on a :class:`concentration_env.game.state.State` buffer and a
``Game.kernel_table``; :mod:`concentration_env.game.step` wraps it in the public API.
"""

from __future__ import annotations

from numba import njit

from concentration_env.game.compile import NONE, PARAM_MAX_MISMATCHES, PARAM_ONE_FLIP, PARAM_RAISE, _unpack_game
from concentration_env.game.jit import CACHE
from concentration_env.game.state import _unpack

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


@njit(cache=CACHE, inline="always")
def _is_face_up(first, shown, b, i):
    """Card ``i`` of game ``b`` lies face up: flipped first this turn, or last turn's miss."""
    return (i == first[b]) | (i == shown[b, 0]) | (i == shown[b, 1])


@njit(cache=CACHE, inline="always")
def _is_legal(removed, first, done, b, i):
    """Game ``b``'s player to move may flip card ``i``."""
    return (not done[b]) & (not removed[b, i]) & (i != first[b])


@njit(cache=CACHE, inline="always")
def _illegal_to_raise(removed, first, done, b, a, params):
    """The flip ``a`` in game ``b`` is illegal and the rules say illegal flips raise."""
    return params[PARAM_RAISE] and not done[b] and not _is_legal(removed, first, done, b, a)


@njit(cache=CACHE)
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


@njit(cache=CACHE, inline="always")  # inlined: a call per game would pay refcounting on 17 arrays
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


@njit(cache=CACHE)
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


@njit(cache=CACHE, inline="always")
def _observe_game(b, faces, removed, seen, first, shown, done, memory, cards, up, gone, mask):
    """Fill one game's observation rows: ``cards``, face up, removed and legal."""
    for i in range(faces.shape[1]):
        is_up = _is_face_up(first, shown, b, i)
        known = (seen[b, i] if memory else is_up) | removed[b, i]
        cards[i] = (faces[b, i] + 1) * known
        up[i] = is_up
        gone[i] = removed[b, i]
        mask[i] = _is_legal(removed, first, done, b, i)


@njit(cache=CACHE)
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


@njit(cache=CACHE)
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


@njit(cache=CACHE)
def _step_observe_entry(buffer, table, actions, flags, numbers, memory, cards, marks):
    """``_step_entry`` followed by the observation, in one compiled call."""
    status, index = _step_entry(buffer, table, actions, flags, numbers)
    if status == OK:
        _observe_entry(buffer, memory, cards, marks)
    return status, index


@njit(cache=CACHE)
def _observe_entry(buffer, memory, cards, marks):
    """Fill ``cards`` and the ``marks`` planes of every game of a state buffer."""
    faces, removed, seen, _, first, shown, _, _, _, _, _, done = _unpack(buffer)
    _observe_games(faces, removed, seen, first, shown, done, memory, cards, marks)


@njit(cache=CACHE)
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


@njit(cache=CACHE)
def _face_up_games(buffer, out):
    _, _, _, _, first, shown, _, _, _, _, _, _ = _unpack(buffer)
    for b in range(out.shape[0]):
        for i in range(out.shape[1]):
            out[b, i] = _is_face_up(first, shown, b, i)


@njit(cache=CACHE)
def _legal_games(buffer, out):
    _, removed, _, _, first, _, _, _, _, _, _, done = _unpack(buffer)
    for b in range(out.shape[0]):
        for i in range(out.shape[1]):
            out[b, i] = _is_legal(removed, first, done, b, i)

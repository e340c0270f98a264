"""The core's fast paths agree exactly with its batched step: ``step_one`` (the single envs'
path) and ``step_observe`` against ``step`` followed by ``observe``."""

import copy
import dataclasses
import pickle
import re

import numpy as np
import pytest

from concentration_env import Rules
from concentration_env.game import core
from concentration_env.game import state as state_module
from concentration_env.game import step as step_module

RULES = [
    Rules(ranks=3),
    Rules(ranks=2, packs=2, matching="identical", backs="checkerboard", turn_policy="one_flip"),
    Rules(deck="pictures", pairs=5, max_mismatches=6, jokers=False),
    Rules(ranks=3, jokers=True, joker_value=2, num_players=3, turn_policy="one_flip"),
    Rules(ranks=3, illegal_action="raise"),
]


def assert_states_equal(a: core.State, b: core.State) -> None:
    for field in dataclasses.fields(core.State):
        np.testing.assert_array_equal(getattr(a, field.name), getattr(b, field.name), err_msg=field.name)


@pytest.mark.parametrize("rules", RULES, ids=lambda r: f"{r.num_cards}cards-{r.matching}-{r.illegal_action}")
@pytest.mark.parametrize("memory", [True, False])
def test_step_one_and_step_observe_equal_step_then_observe(rules, memory):
    game = core.compile_rules(rules)
    rng = np.random.default_rng(7)
    illegal_flips = 0
    for _ in range(2):  # games
        one = core.new_state(game, core.deal(game, rng)[None])
        fused, batched = one.copy(), one.copy()
        tried_face_up = False
        while not one.done[0]:
            legal = np.flatnonzero(core.legal_mask(one)[0])
            # mostly legal flips, and now and then any card (often an illegal flip); the
            # card just turned face up once per game, which is always illegal
            if not tried_face_up and one.first[0] != core.NONE:
                position, tried_face_up = int(one.first[0]), True
            else:
                position = int(rng.choice(legal) if rng.random() < 0.8 else rng.integers(game.num_cards))
            try:
                flip, obs = core.step_one(game, one, position, memory)
            except core.IllegalFlipError as error:
                with pytest.raises(core.IllegalFlipError, match=re.escape(str(error))):
                    core.step(game, batched, np.array([position]))
                with pytest.raises(core.IllegalFlipError):
                    core.step_observe(game, fused, np.array([position]), memory)
                assert_states_equal(one, batched)
                illegal_flips += 1
                continue
            outcome = core.step(game, batched, np.array([position]))
            fused_outcome, fused_obs = core.step_observe(game, fused, np.array([position]), memory)
            expected = core.observe(game, batched, memory)
            for name, value in expected.items():
                np.testing.assert_array_equal(obs[name], value[0], err_msg=name)
                np.testing.assert_array_equal(fused_obs[name], value, err_msg=name)
                assert obs[name].dtype == value.dtype
            for name in core.Flip._fields[:-2]:
                assert getattr(flip, name) == getattr(outcome, name)[0], name
                np.testing.assert_array_equal(getattr(fused_outcome, name), getattr(outcome, name))
            assert (flip.turns, flip.mismatches) == (batched.turns[0], batched.mismatches[0])
            assert_states_equal(one, batched)
            assert_states_equal(fused, batched)
            illegal_flips += not flip.legal
    assert illegal_flips > 0  # the illegal-flip paths (undone, or raised) were compared too


def test_step_one_errors():
    game = core.compile_rules(Rules(ranks=2))
    state = core.new_state(game, core.deal(game, np.random.default_rng(0))[None])
    with pytest.raises(ValueError, match=r"action 8 \(game 0\) is out of range; valid flips are 0..7"):
        core.step_one(game, state, 8, True)
    two = core.new_state(game, np.stack([core.deal(game, np.random.default_rng(s)) for s in (1, 2)]))
    with pytest.raises(ValueError, match="exactly one running game"):
        core.step_one(game, two, 0, True)
    state.done[0] = True
    with pytest.raises(ValueError, match="exactly one running game"):
        core.step_one(game, state, 0, True)


def test_state_fields_are_views_of_one_buffer():
    """The kernels read only ``state.buffer``: every field must stay a view of it, through
    construction, field assignment, copies, pickling and deep copies."""
    game = core.compile_rules(Rules(ranks=2, num_players=3))
    faces = np.stack([core.deal(game, np.random.default_rng(s)) for s in (1, 2)])
    state = core.new_state(game, faces, first_player=1)
    views = [getattr(state, name) for name in core.STATE_FIELDS]
    # the fields tile the buffer after its header, without overlap or gaps
    assert sum(view.nbytes for view in views) == state.buffer.nbytes - state_module._HEADER_BYTES
    assert all(np.shares_memory(view, state.buffer) for view in views)
    assert [view.dtype for view in views] == [
        np.int16,
        np.bool_,
        np.bool_,
        np.int8,
        np.int32,
        np.int32,
        np.int32,
        np.int32,
        np.int32,
        np.int32,
        np.int32,
        np.bool_,
    ]
    np.testing.assert_array_equal(state.faces, faces)
    np.testing.assert_array_equal(state.player, [1, 1])

    state.player = np.array([2, 0])  # written into the buffer, seen by the kernels
    assert np.shares_memory(state.player, state.buffer)
    core.step(game, state, np.array([0, 0]))
    np.testing.assert_array_equal(state.first, [0, 0])
    clones = [state.copy(), pickle.loads(pickle.dumps(state)), copy.deepcopy(state)]
    for clone in clones:
        assert_states_equal(clone, state)
        assert not np.shares_memory(clone.buffer, state.buffer)
        assert all(np.shares_memory(getattr(clone, name), clone.buffer) for name in core.STATE_FIELDS)
        core.step(game, clone, np.array([1, 1]))  # a whole turn in the clone only
        np.testing.assert_array_equal(clone.turns, [1, 1])
    np.testing.assert_array_equal(state.turns, [0, 0])


def test_step_one_calls_the_compiled_code_with_the_types_it_was_compiled_for():
    """``step_one`` skips numba's type dispatch, so the arguments it builds must have
    exactly the types of the signature it compiled (else the compiled code misreads them)."""
    numba = pytest.importorskip("numba")
    game = core.compile_rules(Rules(ranks=2, backs="checkerboard", packs=2, matching="identical"))
    state = core.new_state(game, core.deal(game, np.random.default_rng(0))[None])
    for copy_of_state in (state, state.copy(), pickle.loads(pickle.dumps(state))):
        cards = np.empty(game.num_cards, dtype=core.FACE_DTYPE)
        marks = np.empty((core.NUM_MARKS, game.num_cards), dtype=core.FLAG_DTYPE)
        actual = tuple(numba.typeof(arg) for arg in (copy_of_state.buffer, game.kernel_table, 0, True, cards, marks))
        assert actual == step_module._STEP_ONE_SIGNATURE
    with pytest.raises(TypeError):
        core.step_one(game, state, 1.0, True)  # not silently truncated to position 1
    flip, _ = core.step_one(game, state, np.int16(1), True)  # integers of any type are fine
    assert flip.legal and state.first[0] == 1

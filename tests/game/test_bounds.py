"""Upper bounds on sizes and numbers: every rule set either plays, within what the state's
dtypes hold, or is refused with one error naming the field, the value and the maximum."""

import numpy as np
import pytest

from concentration_env import Rules
from concentration_env.game import core
from concentration_env.game.rules import MAX_CARDS, MAX_JOKER_VALUE, MAX_LAYOUT_SIDE, MAX_MISMATCHES, MAX_PLAYERS


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"deck": "pictures", "pairs": 10**6}, rf"pairs=1000000: above the maximum {MAX_CARDS // 2}"),
        ({"deck": "pictures", "pairs": MAX_CARDS // 2 + 1}, rf"pairs={MAX_CARDS // 2 + 1}: above the maximum"),
        ({"deck": "pictures", "packs": 2, "pairs": MAX_CARDS // 4 + 1}, rf"above the maximum {MAX_CARDS // 4}"),
        ({"num_players": 10**5}, rf"num_players=100000: above the maximum {MAX_PLAYERS}"),
        ({"num_players": MAX_PLAYERS + 1}, rf"num_players={MAX_PLAYERS + 1}: above the maximum"),
        ({"joker_value": 2**31}, rf"joker_value=2147483648: above the maximum {MAX_JOKER_VALUE}"),
        ({"joker_value": 2**32}, r"joker_value=4294967296: above the maximum"),
        ({"joker_value": 2**64}, r"joker_value=18446744073709551616: above the maximum"),
        ({"joker_value": MAX_JOKER_VALUE + 1}, r"joker_value=.*above the maximum"),
        ({"max_mismatches": 2**63}, rf"max_mismatches=9223372036854775808: above the maximum {MAX_MISMATCHES}"),
        ({"max_mismatches": MAX_MISMATCHES + 1}, r"max_mismatches=.*above the maximum"),
        ({"layout": (1, 10**9)}, rf"layout=\(1, 1000000000\); allowed: .* from 1 to {MAX_LAYOUT_SIDE}"),
        ({"ranks": 1, "layout": (1, MAX_LAYOUT_SIDE + 1)}, rf"layout=.*from 1 to {MAX_LAYOUT_SIDE}"),
    ],
)
def test_sizes_above_the_maximum_are_refused_naming_field_value_and_maximum(fields, message):
    with pytest.raises(ValueError, match=message):
        Rules(**fields)


@pytest.mark.parametrize(
    "fields",
    [
        {"deck": "pictures", "pairs": MAX_CARDS // 2},
        {"deck": "pictures", "packs": 2, "pairs": MAX_CARDS // 4},
        {"deck": "pictures", "pairs": MAX_CARDS // 2, "layout": (MAX_CARDS // MAX_LAYOUT_SIDE, MAX_LAYOUT_SIDE)},
        {"ranks": 1, "layout": (1, MAX_LAYOUT_SIDE)},
    ],
)
def test_the_largest_games_are_dealt_and_played(fields):
    rules = Rules(**fields)
    assert rules.num_cards <= MAX_CARDS
    game = core.compile_rules(rules)
    state = core.new_state(game, core.deal(game, np.random.default_rng(0))[None])
    core.step(game, state, np.array([0]))
    core.step(game, state, np.array([1]))
    assert state.turns[0] == 1


def test_the_last_seat_of_the_largest_table_scores_its_captures():
    # seats are stored as int8: seat 126 is the last one whose captures are recorded
    game = core.compile_rules(Rules(ranks=1, num_players=MAX_PLAYERS))
    faces = np.array([[0, 1, 3, 2]])  # the black aces (clubs 0, spades 3) at positions 0 and 2
    assert game.match[0, 3]
    state = core.new_state(game, faces, first_player=MAX_PLAYERS - 1)
    core.step(game, state, np.array([0]))
    core.step(game, state, np.array([2]))
    assert state.captured_by[0, [0, 2]].tolist() == [MAX_PLAYERS - 1] * 2
    assert state.scores[0, MAX_PLAYERS - 1] == 1 and state.scores[0].sum() == 1


def test_every_bound_fits_the_dtype_that_holds_it():
    game = core.compile_rules(Rules())
    state = core.new_state(game, game.deck[None])
    # every pair of the largest deck worth the most points still fits a score
    assert MAX_CARDS // 2 * MAX_JOKER_VALUE <= np.iinfo(state.scores.dtype).max
    assert MAX_JOKER_VALUE <= np.iinfo(game.pair_value.dtype).max
    assert MAX_MISMATCHES <= np.iinfo(state.mismatches.dtype).max
    assert MAX_PLAYERS - 1 <= np.iinfo(state.captured_by.dtype).max
    assert MAX_PLAYERS - 1 <= np.iinfo(state.player.dtype).max
    assert MAX_CARDS <= np.iinfo(state.faces.dtype).max  # face ids are below the number of cards
    assert MAX_CARDS <= np.iinfo(state.first.dtype).max


def test_the_most_valuable_joker_pair_scores_its_full_value():
    game = core.compile_rules(Rules(ranks=1, jokers=True, joker_value=MAX_JOKER_VALUE, num_players=2))
    faces = np.array([[4, 0, 4, 1, 2, 3]])  # the two jokers (face 4) at positions 0 and 2
    state = core.new_state(game, faces)
    core.step(game, state, np.array([0]))
    outcome = core.step(game, state, np.array([2]))
    assert int(outcome.gained[0]) == MAX_JOKER_VALUE
    assert state.scores[0].tolist() == [MAX_JOKER_VALUE, 0]


def test_the_most_chips_are_counted_without_overflow():
    game = core.compile_rules(Rules(ranks=1, max_mismatches=MAX_MISMATCHES))
    state = core.new_state(game, np.array([[0, 1, 3, 2]]))
    state.mismatches[0] = MAX_MISMATCHES - 2
    core.step(game, state, np.array([0]))
    core.step(game, state, np.array([1]))  # a miss: one chip left
    assert state.mismatches[0] == MAX_MISMATCHES - 1 and not state.done[0]
    core.step(game, state, np.array([0]))
    core.step(game, state, np.array([1]))  # the last chip
    assert state.mismatches[0] == MAX_MISMATCHES and state.done[0]

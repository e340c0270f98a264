"""Upper bounds on sizes and numbers: every rule set either plays, within what the state's
dtypes hold, or is refused with one error naming the field, the value and the maximum."""

import numpy as np
import pytest

from concentration_env import Rules
from concentration_env.game import core
from concentration_env.game.rules import MAX_CARDS, MAX_LAYOUT_SIDE, MAX_PLAYERS


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"deck": "pictures", "pairs": 10**6}, rf"pairs=1000000: above the maximum {MAX_CARDS // 2}"),
        ({"deck": "pictures", "pairs": MAX_CARDS // 2 + 1}, rf"pairs={MAX_CARDS // 2 + 1}: above the maximum"),
        ({"deck": "pictures", "packs": 2, "pairs": MAX_CARDS // 4 + 1}, rf"above the maximum {MAX_CARDS // 4}"),
        ({"num_players": 10**5}, rf"num_players=100000: above the maximum {MAX_PLAYERS}"),
        ({"num_players": MAX_PLAYERS + 1}, rf"num_players={MAX_PLAYERS + 1}: above the maximum"),
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

"""Winners, tie-breaks, win/loss rewards and session standings (concentration_env.game.scoring)."""

import numpy as np
import pytest

from concentration_env import Rules
from concentration_env.game import core, scoring


def captured_state(rules: Rules, hands: list[list[str]], first_capture=None) -> tuple[core.Game, core.State]:
    """A one-game state in which seat ``s`` has captured the cards named in ``hands[s]``
    (scores follow: each two cards are a pair worth its face's pair value)."""
    game = core.compile_rules(rules)
    names = [str(face) for face in game.faces]
    state = core.new_state(game, game.deck[None])
    free = list(range(game.num_cards))
    for seat, hand in enumerate(hands):
        for name in hand:
            face = names.index(name)
            position = next(p for p in free if game.deck[p] == face)
            free.remove(position)
            state.removed[0, position] = True
            state.captured_by[0, position] = seat
            state.scores[0, seat] += game.pair_value[face]  # half a pair's value per card ...
        state.scores[0, seat] //= 2  # ... so each pair counts once
    if first_capture is not None:
        state.first_capture[0] = first_capture
    return game, state


JOKER_DECK = {"jokers": True, "matching": "rank"}

# (tie_break, extra rule fields, captured hands per seat, first_capture, expected winners)
WINNER_TABLE = [
    ("share", {}, [["KH", "KD", "2C", "2S"], ["QH", "QD"]], None, [True, False]),
    ("share", {}, [["KH", "KD"], ["QH", "QD"]], None, [True, True]),
    ("share", {}, [[], [], []], None, [True, True, True]),
    ("share", {}, [["2C", "2S"], ["3C", "3S", "4C", "4S"], ["5C", "5S", "6C", "6S"]], None, [False, True, True]),
    ("first_capture", {}, [["KH", "KD"], ["QH", "QD"]], [3, 1], [False, True]),
    ("first_capture", {}, [["KH", "KD"], ["QH", "QD"]], [0, 5], [True, False]),
    ("first_capture", {}, [["KH", "KD", "2C", "2S"], ["QH", "QD"]], [9, 0], [True, False]),  # no tie: points decide
    ("first_capture", {}, [[], []], [-1, -1], [True, True]),  # nobody captured: shared
    ("first_capture", {}, [["2C", "2S"], ["3C", "3S"], ["4C", "4S"]], [4, 2, 7], [False, True, False]),
    ("highest_rank", {}, [["KH", "KD", "2C", "2S"], ["QH", "QD", "3C", "3S"]], None, [True, False]),
    ("highest_rank", {}, [["AH", "AD", "2C", "2S"], ["KH", "KD", "3C", "3S"]], None, [True, False]),  # aces high
    ("highest_rank", {}, [["KH", "KD", "2C", "2S"], ["KC", "KS", "3C", "3S"]], None, [False, True]),  # next pair
    ("highest_rank", {}, [["KH", "KD"], ["KC", "KS"]], None, [True, True]),  # same ranks: shared
    ("highest_rank", {}, [["5C", "5S"], ["KH", "KD"], ["KC", "KS"]], None, [False, True, True]),
    (
        "highest_rank",
        JOKER_DECK,
        [["JK", "JK", "2C", "2S"], ["3C", "3S", "2H", "2D"]],
        None,
        [False, True],
    ),  # jokers unranked
    ("jokers", JOKER_DECK, [["JK", "JK", "2C", "2S"], ["3C", "3S", "4C", "4S"]], None, [True, False]),
    ("jokers", JOKER_DECK, [["2C", "2S"], ["3C", "3S"], ["JK", "JK"]], None, [False, False, True]),
    ("jokers", {}, [["2C", "2S"], ["3C", "3S"]], None, [True, True]),  # nobody holds jokers
    ("jokers", {**JOKER_DECK, "joker_value": 2}, [["JK", "JK"], ["3C", "3S", "4C", "4S"]], None, [True, False]),
    ("share", {**JOKER_DECK, "joker_value": 2}, [["JK", "JK"], ["3C", "3S", "4C", "4S"]], None, [True, True]),
    ("highest_rank", {**JOKER_DECK, "joker_value": 2}, [["JK", "JK"], ["3C", "3S", "4C", "4S"]], None, [False, True]),
]


@pytest.mark.parametrize("tie_break, fields, hands, first_capture, expected", WINNER_TABLE)
def test_winners_table(tie_break, fields, hands, first_capture, expected):
    rules = Rules(num_players=len(hands), tie_break=tie_break, **fields)
    game, state = captured_state(rules, hands, first_capture)
    assert scoring.winners(game, state)[0].tolist() == expected


def test_winners_are_computed_per_game_of_a_batch():
    rules = Rules(num_players=2, tie_break="highest_rank")
    rows = [row for row in WINNER_TABLE if row[0] == "highest_rank" and not row[1] and len(row[2]) == 2]
    states = [captured_state(rules, hands)[1] for _, _, hands, _, _ in rows]
    batch = core.new_state(core.compile_rules(rules), np.concatenate([s.faces for s in states]))
    for name in ("captured_by", "scores", "removed"):
        setattr(batch, name, np.concatenate([getattr(s, name) for s in states]))
    expected = [row[4] for row in rows]
    assert scoring.winners(core.compile_rules(rules), batch).tolist() == expected


def test_rank_keys_put_aces_high_and_leave_jokers_and_pictures_out():
    game = core.compile_rules(Rules(jokers=True))
    keys = dict(zip(map(str, game.faces), scoring.rank_keys(game)))
    assert keys["AS"] == scoring.ACE_HIGH > keys["KS"] == 13 > keys["2C"] == 2
    assert keys["JK"] == scoring.UNRANKED
    pictures = core.compile_rules(Rules(deck="pictures", pairs=3))
    assert (scoring.rank_keys(pictures) == scoring.UNRANKED).all()


@pytest.mark.parametrize(
    "won, rewards",
    [
        ([True, False], [1, -1]),
        ([True, True], [0, 0]),
        ([True, True, False], [1, 1, -1]),
        ([False, True, False, False], [-1, 1, -1, -1]),
        ([True, True, True], [0, 0, 0]),
    ],
)
def test_win_loss_rewards(won, rewards):
    assert scoring.win_loss_rewards(np.array([won]))[0].tolist() == rewards


@pytest.mark.parametrize(
    "mode, mover, gained, players, rewards",
    [
        ("pairs", 1, 2, 2, [0, 2]),
        ("pairs", 0, 0, 3, [0, 0, 0]),
        ("margin", 0, 1, 2, [1, -1]),
        ("margin", 2, 1, 3, [-0.5, -0.5, 1]),
        ("margin", 1, 0, 2, [0, 0]),
        ("win_loss", 0, 1, 2, [0, 0]),
    ],
)
def test_capture_rewards(mode, mover, gained, players, rewards):
    shares = scoring.capture_rewards(mode, np.array([mover]), np.array([gained]), players)
    assert shares[0].tolist() == rewards
    if mode == "margin":
        assert shares.sum() == 0  # zero-sum


@pytest.mark.parametrize(
    "points, expected",
    [
        ([[3, 1], [1, 3]], [True, True]),  # level on points and head to head
        ([[3, 1], [1, 2], [0, 1]], [False, True]),  # level on points, seat 1 won two games to one
        ([[5, 0, 1], [0, 4, 2]], [True, False, False]),  # points decide
        ([[2, 2, 0], [2, 2, 4]], [False, False, True]),  # all level; seat 2 beat both in game 1
        ([[4, 0, 4], [0, 3, 0]], [True, False, True]),  # seat 1 is behind; 0 and 2 never beat each other
    ],
)
def test_session_winners(points, expected):
    assert scoring.session_winners(np.array(points)).tolist() == expected


def test_head_to_head_counts_only_games_against_the_given_seats():
    points = np.array([[3, 1, 9], [2, 5, 0]])
    assert scoring.head_to_head(points, np.array([True, True, False])).tolist() == [1, 1, 2]
    assert scoring.head_to_head(points, np.array([True, True, True])).tolist() == [2, 2, 2]

"""Sessions: a series of games with the first player rotating and a session winner."""

import numpy as np
import pytest

from concentration_env.game import scoring
from concentration_env.play.session import Session, SessionResult
from tests.helpers.tables import RandomPolicy


def make(players=3, **fields):
    fields.setdefault("ranks", 3)
    return Session([RandomPolicy() for _ in range(players)], **fields)


def test_first_player_rotates_and_points_add_up():
    session = make(players=3)
    result = session.play(7, seed=0)
    assert result.first_players == ["player_0", "player_1", "player_2"] * 2 + ["player_0"]
    assert len(result.points) == len(result.game_winners) == 7
    assert all(sum(game) == 6 for game in result.points)  # 12 cards: 6 pairs a game
    assert result.totals == {agent: sum(game[s] for game in result.points) for s, agent in enumerate(result.agents)}
    for points, winners in zip(result.points, result.game_winners):
        assert winners == [a for a, p in zip(result.agents, points) if p == max(points)]


def test_a_session_continues_where_it_stopped():
    whole = make(players=2).play(4, seed=10)
    session = make(players=2)
    session.play(2, seed=10)
    split = session.play(2, seed=12)
    assert split.first_players == whole.first_players == ["player_0", "player_1"] * 2
    assert split.points == whole.points


def test_same_seed_same_session_and_different_seeds_differ():
    first = make().play(3, seed=5).points
    assert make().play(3, seed=5).points == first
    assert make().play(3, seed=6).points != first


def test_session_winner_uses_head_to_head():
    result = SessionResult(["player_0", "player_1", "player_2"], points=[[6, 0, 0], [0, 1, 0], [0, 5, 6]])
    assert result.totals == {"player_0": 6, "player_1": 6, "player_2": 6}
    # player_0 beat both others in game 0; player_1 beat both in game 1 and player_0 in
    # game 2; player_2 beat both in game 2.
    assert scoring.head_to_head(np.array(result.points), np.ones(3, bool)).tolist() == [2, 3, 2]
    assert result.winners == ["player_1"]
    assert SessionResult(["player_0", "player_1"]).winners == []


def test_rules_and_tie_break_reach_the_games():
    session = make(players=2, tie_break="first_capture", ranks=1, turn_policy="one_flip")
    result = session.play(6, seed=1)
    assert session.env.rules.tie_break == "first_capture"
    assert all(len(winners) == 1 for winners in result.game_winners)  # first capture settles 1-1


@pytest.mark.parametrize(
    "players, games, field",
    [
        ([RandomPolicy()], 1, "players"),
        ("random", 1, "players"),
        ([RandomPolicy(), RandomPolicy()], 0, "games"),
        ([RandomPolicy(), RandomPolicy()], 1.5, "games"),
    ],
)
def test_bad_input(players, games, field):
    with pytest.raises(ValueError, match=field):
        Session(players, ranks=2).play(games, seed=0)

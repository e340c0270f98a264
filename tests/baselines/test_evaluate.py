"""The evaluation harness: unfinished games (stalled, capped) are told apart and reported."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from baselines import make_policy
from baselines.evaluate import play, seeded_games, summarise, table
from concentration_env import Rules


def lineup(rules, *names):
    return [make_policy(name, rules) for name in names]


@pytest.mark.parametrize("names", [("random", "random"), ("forgetful", "forgetful"), ("random", "optimal")])
def test_players_who_may_flip_differently_never_stall(names):
    # Random and forgetful players pass often late in a game (every card has been seen),
    # yet they keep flipping other pairs, so every game is played to the end.
    rules = Rules(ranks=5, num_players=2)
    result = play(rules, lineup(rules, *names), 200, seed=0)
    assert not result.stalled.any() and not result.capped.any()
    assert result.cleared.all()
    assert (result.scores.sum(axis=1) == rules.num_pairs).all()


def test_optimal_players_stall_and_the_game_is_scored_as_it_stands():
    rules = Rules(deck="pictures", pairs=8, num_players=2)
    result = summarise(play(rules, lineup(rules, "optimal", "optimal"), 400, seed=3))
    assert result.stalled.any() and not result.capped.any()
    assert not result.cleared[result.stalled].any()
    assert result.summary["stalled_games"] == int(result.stalled.sum())
    assert result.summary["games_scored"] == 400
    assert "stalled games" in table([result])


def test_capped_games_are_counted_and_left_out_of_the_figures():
    rules = Rules(ranks=5, num_players=2)
    full = play(rules, lineup(rules, "random", "random"), 100, seed=0)
    cap = int(np.median(full.turns))
    result = summarise(play(rules, lineup(rules, "random", "random"), 100, seed=0, max_turns=cap))
    capped = full.turns > cap
    assert (result.capped == capped).all() and not result.stalled.any()
    summary = result.summary
    assert summary["capped_games"] == capped.sum() and summary["games_scored"] == (~capped).sum()
    margin = full.scores[~capped, 0] - full.scores[~capped, 1]
    assert summary["margin_seat0_minus_seat1"].mean == pytest.approx(margin.mean())
    assert "capped games" in table([result])


class LowestLegal:
    """Flips the lowest legal position: once two unpaired cards lead, it misses them forever."""

    name = "lowest_legal"

    def __init__(self, stationary):
        self.stationary, self.flips_asked = stationary, 0

    def reset_batch(self, seeds):
        pass

    def keep(self, rows):
        pass

    def act_batch(self, observations):
        self.flips_asked += 1
        return np.argmax(np.asarray(observations["action_mask"]) > 0, axis=1)


def test_a_lone_stationary_player_who_repeats_a_miss_is_booked_to_the_cap_as_if_played():
    rules = Rules(ranks=1)  # four cards: it clears the deal when the first two pair
    players = LowestLegal(stationary=False), LowestLegal(stationary=True)
    played, booked = (play(rules, [player], 60, seed=0, max_turns=300) for player in players)
    assert played.capped.any() and played.cleared.any()
    assert players[1].flips_asked < players[0].flips_asked / 10  # the repeats were booked, not played
    for name in ("turns", "mismatches", "scores", "cleared", "stalled", "capped"):
        assert (getattr(booked, name) == getattr(played, name)).all(), name


def test_every_game_capped_gives_counts_and_no_figures():
    rules = Rules(ranks=5)
    result = summarise(play(rules, lineup(rules, "random"), 20, seed=0, max_turns=1))
    assert result.capped.all()
    assert result.summary == {"games_scored": 0, "capped_games": 20}


def test_bad_turn_cap_is_refused():
    rules = Rules(ranks=5)
    with pytest.raises(ValueError, match="max_turns"):
        play(rules, lineup(rules, "random"), 2, max_turns=0)


@pytest.mark.parametrize("games", [0, -3])
def test_no_games_is_refused_by_both_ways_of_dealing(games):
    rules = Rules(ranks=5)
    with pytest.raises(ValueError, match=f"games={games}"):
        play(rules, lineup(rules, "random"), games)
    with pytest.raises(ValueError, match=f"games={games}"):
        seeded_games(rules, games, 0)


def test_script_reports_unfinished_games(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("evaluate_script", Path("scripts/evaluate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = tmp_path / "out.json"
    args = ["--players", "2", "--set", "ranks=5", "--policies", "random", "random", "--games", "50"]
    module.main([*args, "--json", str(path)])
    out = capsys.readouterr().out
    assert "stalled_games                      0" in out and "capped_games" in out
    summary = json.loads(path.read_text())[0]["summary"]
    assert summary["stalled_games"] == 0 and summary["capped_games"] == 0 and summary["games_scored"] == 50


def test_training_stats_count_unfinished_games():
    from concentration_env.training.evaluation import duel_stats, solitaire_stats

    rules = Rules(ranks=5, num_players=2)
    random, optimal = lineup(rules, "random", "optimal")
    capped = duel_stats(rules, random, random, 20, seed=0, max_turns=3)
    assert capped["capped"] == 40 and capped["stalled"] == 0
    stalled = duel_stats(rules, optimal, make_policy("optimal", rules), 200, seed=0)
    assert stalled["capped"] == 0 and stalled["stalled"] > 0
    solo = Rules(ranks=5)
    assert solitaire_stats(solo, make_policy("random", solo), 10, seed=0, max_turns=1)["capped"] == 10

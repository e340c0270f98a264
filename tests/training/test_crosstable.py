"""Crosstables: outcomes per game, Bradley-Terry fits, seat symmetry, and the files of a tiny run."""

import json
from functools import partial

import numpy as np
import pytest

from baselines import make_policy
from baselines.evaluate import play
from concentration_env.game.rules import resolve_rules
from concentration_env.training.crosstable import (
    ELO_MEAN,
    Entrant,
    bradley_terry,
    crosstable,
    elo,
    game_outcomes,
    pairwise_wins,
)
from concentration_env.training.crosstable_report import main

TINY = resolve_rules("standard", num_players=2, ranks=2)


def baseline(name, rules, label=None):
    return Entrant(label or name, "baseline", partial(make_policy, name, rules))


def test_game_outcomes_split_ties_and_measure_the_best_other_seat():
    scores = np.array([[3, 1, 0], [2, 2, 0], [1, 2, 1], [2, 2, 2]])
    share, margin = game_outcomes(scores, 0)
    np.testing.assert_allclose(share, [1, 0.5, 0, 1 / 3])
    np.testing.assert_array_equal(margin, [2, 0, -1, 0])


def test_bradley_terry_recovers_known_strengths():
    strength = np.array([1.0, 2.0, 4.0, 8.0])
    expected = 1000 * strength[:, None] / (strength[:, None] + strength[None, :])
    np.fill_diagonal(expected, 0)
    fitted = bradley_terry(expected)
    np.testing.assert_allclose(fitted / fitted[0], strength, rtol=1e-6)
    # Sampled games: the fit is within a few percent of the truth.
    rng = np.random.default_rng(0)
    wins = np.zeros((4, 4))
    for i in range(4):
        for j in range(i + 1, 4):
            wins[i, j] = rng.binomial(20_000, strength[i] / (strength[i] + strength[j]))
            wins[j, i] = 20_000 - wins[i, j]
    sampled = bradley_terry(wins)
    np.testing.assert_allclose(sampled / sampled[0], strength, rtol=0.05)
    ratings = elo(fitted)
    assert ratings.mean() == pytest.approx(ELO_MEAN)
    assert ratings[1] - ratings[0] == pytest.approx(400 * np.log10(2))


def test_bradley_terry_rejects_what_it_cannot_fit():
    with pytest.raises(ValueError, match="square"):
        bradley_terry(np.ones((2, 3)))
    with pytest.raises(ValueError, match="needs a win"):
        bradley_terry(np.array([[0.0, 0.0], [5.0, 0.0]]))
    # The prior game keeps an entrant that never wins finite and last.
    ratings = elo(bradley_terry(pairwise_wins(np.array([[np.nan, 0.0], [1.0, np.nan]]), 100)))
    assert np.isfinite(ratings).all() and ratings[1] > ratings[0]


class ShiftedSeeds:
    """A policy drawing its randomness from other streams than the harness gives it."""

    def __init__(self, policy, shift):
        self.policy, self.shift, self.name = policy, shift, policy.name

    def reset_batch(self, seeds):
        self.policy.reset_batch([s + self.shift for s in seeds])

    def keep(self, rows):
        self.policy.keep(rows)

    def act_batch(self, observations):
        return self.policy.act_batch(observations)


@pytest.mark.parametrize("players", [2, 3])
def test_swapping_the_seat_order_of_identical_policies_keeps_the_expected_result(players):
    """On one fixed set of deals, random players in every seat, once in one seat order and
    once reversed (drawing other random numbers): the per-seat win shares agree within noise
    (a bound of 4 standard errors and then some, so the check is not flaky)."""
    rules = resolve_rules("standard", num_players=players, ranks=3)
    games = 2000
    first = play(rules, [make_policy("random", rules) for _ in range(players)], games, seed=11)
    shifted = [ShiftedSeeds(make_policy("random", rules), 10**6) for _ in range(players)]
    second = play(rules, shifted[::-1], games, seed=11)
    for seat in range(players):
        a, b = game_outcomes(first.scores, seat)[0], game_outcomes(second.scores, seat)[0]
        bound = 4 * np.sqrt(a.var() / games + b.var() / games) + 0.01
        assert abs(a.mean() - b.mean()) < bound, (seat, a.mean(), b.mean())


@pytest.mark.parametrize("players", [2, 3])
def test_two_entrants_playing_one_policy_get_the_fair_share(players):
    """Rotating the lone entrant through every seat cancels the first mover's advantage."""
    rules = resolve_rules("standard", num_players=players, ranks=2)
    table = crosstable(rules, [baseline("greedy", rules), baseline("greedy", rules, "greedy_too")], games=40)
    np.testing.assert_allclose(table.share[[0, 1], [1, 0]], 1 / players)
    np.testing.assert_allclose(table.ratings, ELO_MEAN)


def test_three_player_crosstable_plays_both_directions():
    rules = resolve_rules("standard", num_players=3, ranks=2)
    table = crosstable(rules, [baseline("greedy", rules), baseline("random", rules)], games=30)
    assert table.share[0, 1] > 1 / 3 > table.share[1, 0]
    assert table.share[0, 1] + table.share[1, 0] != pytest.approx(1.0)  # not a mirror with 3 seats
    assert table.ratings[0] > table.ratings[1]
    with pytest.raises(ValueError, match="names must differ"):
        crosstable(rules, [baseline("greedy", rules), baseline("greedy", rules)], games=2)


def test_command_line_rejects_bad_input_in_one_line(tmp_path, capsys):
    out = str(tmp_path / "out")
    assert main(["--baselines", "greedy", "optimal", "--players", "3", "--out", out]) == 2
    assert "2-player games only" in capsys.readouterr().err
    assert main(["--baselines", "greedy", "nobody", "--out", out]) == 2
    assert "unknown baseline 'nobody'" in capsys.readouterr().err
    assert main(["--agents", str(tmp_path), "--baselines", "greedy", "--out", out]) == 2
    assert "no saved model" in capsys.readouterr().err


def test_a_tiny_run_writes_its_table_ratings_and_chart(tmp_path):
    pytest.importorskip("sb3_contrib")
    from concentration_env.training.config import config_from_mapping
    from concentration_env.training.run import train

    config = config_from_mapping(
        {
            "rules": {"num_players": 2, "ranks": 2},
            "num_envs": 4,
            "vec_env": "native",
            "total_timesteps": 128,
            "hyperparameters": {"n_steps": 32, "batch_size": 64, "n_epochs": 1},
            "eval_freq": 128,
            "eval_episodes": 4,
        }
    )
    run_dir = train(config, "tiny", tmp_path / "tiny", progress_bar=False)
    out = tmp_path / "crosstable"
    args = ["--agents", str(run_dir), "--baselines", "greedy", "optimal", "random", "--set", "ranks=2"]
    assert main([*args, "--games", "20", "--out", str(out)]) == 0
    data = json.loads((out / "crosstable.json").read_text())
    assert [(e["name"], e["tier"]) for e in data["entrants"]] == [
        ("tiny", "raw"),
        ("greedy", "baseline"),
        ("optimal", "baseline"),
        ("random", "baseline"),
    ]
    assert data["games_per_cell"] == 40 and data["win_share"][0][0] is None
    share = np.array(data["win_share"], dtype=float)
    np.testing.assert_allclose(share + share.T, np.where(np.eye(4, dtype=bool), np.nan, 1.0))
    text = (out / "crosstable.md").read_text()
    assert "| tiny | raw |" in text and "## Win share" in text and "## Pair margin" in text
    assert (out / "crosstable.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

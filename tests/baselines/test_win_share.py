"""Win shares (baselines.win_share): an independent hand-written DP agrees, the optimum and
fixed strategies at tables of two to four match the harness, a table of one strategy shares
every game out, and bad input fails clearly."""

import numpy as np
import pytest

from baselines import make_policy
from baselines.evaluate import play
from baselines.win_share import win_share
from concentration_env.game.rules import Rules
from concentration_env.training.crosstable import game_outcomes
from tests.helpers.one_partner_win import one_partner_win_share


@pytest.mark.parametrize("turn_policy", ["extra_turn", "one_flip"])
@pytest.mark.parametrize("learner", ["optimal", "best_response"])
@pytest.mark.parametrize("ranks", [2, 5, 13])
def test_agrees_with_a_hand_written_dp_of_one_partner_decks(ranks, learner, turn_policy):
    rules = Rules(ranks=ranks, num_players=2, turn_policy=turn_policy)
    share = win_share(rules, learner)
    first, second = one_partner_win_share(rules.num_pairs, turn_policy == "extra_turn", learner == "best_response")
    assert share["seats"] == pytest.approx((first, second), abs=1e-12)


@pytest.mark.parametrize("turn_policy", ["extra_turn", "one_flip"])
def test_the_optimum_against_itself_splits_evenly_and_the_best_response_does_no_worse(turn_policy):
    rules = Rules(ranks=5, num_players=2, turn_policy=turn_policy)
    itself, best = win_share(rules, "optimal"), win_share(rules)
    assert itself["every_seat"] == pytest.approx(0.5, abs=1e-12)
    assert all(b >= i - 1e-12 for b, i in zip(best["seats"], itself["seats"]))


@pytest.mark.parametrize(
    ("turn_policy", "opponent"), [("extra_turn", "optimal"), ("one_flip", "optimal"), ("extra_turn", "greedy")]
)
def test_the_optimum_matches_the_harness(turn_policy, opponent):
    """Stalls, turn rules, ties and the opponent's strategy as the engine plays them: the
    optimum's exact share in the first seat against the one measured over 3,000 dealt games
    (within four standard errors)."""
    rules = Rules(ranks=4, num_players=2, turn_policy=turn_policy)
    result = play(rules, [make_policy("optimal", rules), make_policy(opponent, rules)], 3000, seed=0)
    lead = result.scores[:, 0] - result.scores[:, 1]
    shares = np.where(lead > 0, 1.0, np.where(lead == 0, 0.5, 0.0))
    exact = win_share(rules, "optimal", opponent)["seats"][0]
    assert abs(shares.mean() - exact) < 4 * shares.std() / np.sqrt(len(shares))


@pytest.mark.parametrize(("players", "turn_policy"), [(3, "extra_turn"), (3, "one_flip"), (4, "extra_turn")])
def test_a_fixed_strategy_at_a_table_matches_the_harness(players, turn_policy):
    """Turn order, captures, ties split three or four ways and the seat mapping as the engine
    plays them: safe_first's exact share in every seat with greedy in the others, against
    2,000 dealt games per seat (within four standard errors)."""
    rules = Rules(ranks=4, num_players=players, turn_policy=turn_policy)
    exact = win_share(rules, "safe_first", "greedy")["seats"]
    for seat in range(players):
        policies = [make_policy("safe_first" if s == seat else "greedy", rules) for s in range(players)]
        shares, _margins = game_outcomes(play(rules, policies, 2000, seed=seat).scores, seat)
        assert abs(shares.mean() - exact[seat]) < 4 * shares.std() / np.sqrt(len(shares)), seat


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_table_of_one_strategy_shares_every_game_out(players):
    """With the same strategy in every seat the seats' shares of each game sum to one, so
    their exact shares do too; the best response does at least as well in every seat."""
    rules = Rules(ranks=5, num_players=players)
    for strategy in ("greedy", "safe_first"):
        itself = win_share(rules, strategy, strategy)["seats"]
        assert sum(itself) == pytest.approx(1.0, abs=1e-12)
        best = win_share(rules, "best_response", strategy)["seats"]
        assert all(b >= i - 1e-12 for b, i in zip(best, itself))


def test_bad_input_is_one_clear_error():
    allowed = "allowed: best_response | optimal | greedy | safe_first"
    with pytest.raises(ValueError, match=f"invalid learner='random'; {allowed}"):
        win_share(Rules(ranks=2, num_players=2), "random")
    with pytest.raises(ValueError, match="invalid opponent='random'; allowed: optimal | greedy | safe_first"):
        win_share(Rules(ranks=2, num_players=2), opponent="random")
    with pytest.raises(ValueError, match="exactly one partner"):
        win_share(Rules(ranks=2, num_players=2, matching="rank"))
    with pytest.raises(ValueError, match="num_players=1: win shares need 2 or more players"):
        win_share(Rules(ranks=2, num_players=1))
    for learner, opponent in (("best_response", "optimal"), ("optimal", "greedy")):
        with pytest.raises(ValueError, match="num_players=3 with the optimum: the DP solves two players only"):
            win_share(Rules(ranks=2, num_players=3), learner, opponent)

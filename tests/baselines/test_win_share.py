"""Win shares against the exact optimum (baselines.win_share): an independent hand-written DP
agrees, the optimum against itself matches the harness, and bad input fails clearly."""

import numpy as np
import pytest

from baselines import make_policy
from baselines.evaluate import play
from baselines.win_share import win_share
from concentration_env.game.rules import Rules
from tests.helpers.one_partner_win import one_partner_win_share


@pytest.mark.parametrize("turn_policy", ["extra_turn", "one_flip"])
@pytest.mark.parametrize("learner", ["optimal", "best_response"])
@pytest.mark.parametrize("ranks", [2, 5, 13])
def test_agrees_with_a_hand_written_dp_of_one_partner_decks(ranks, learner, turn_policy):
    rules = Rules(ranks=ranks, num_players=2, turn_policy=turn_policy)
    share = win_share(rules, learner)
    first, second = one_partner_win_share(rules.num_pairs, turn_policy == "extra_turn", learner == "best_response")
    assert share["first"] == pytest.approx(first, abs=1e-12)
    assert share["second"] == pytest.approx(second, abs=1e-12)


@pytest.mark.parametrize("turn_policy", ["extra_turn", "one_flip"])
def test_the_optimum_against_itself_splits_evenly_and_the_best_response_does_no_worse(turn_policy):
    rules = Rules(ranks=5, num_players=2, turn_policy=turn_policy)
    itself, best = win_share(rules, "optimal"), win_share(rules)
    assert itself["both_seats"] == pytest.approx(0.5, abs=1e-12)
    assert best["first"] >= itself["first"] - 1e-12 and best["second"] >= itself["second"] - 1e-12


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
    exact = win_share(rules, "optimal", opponent)["first"]
    assert abs(shares.mean() - exact) < 4 * shares.std() / np.sqrt(len(shares))


def test_bad_input_is_one_clear_error():
    with pytest.raises(ValueError, match="invalid learner='greedy'; allowed: best_response | optimal"):
        win_share(Rules(ranks=2, num_players=2), "greedy")
    with pytest.raises(ValueError, match="invalid opponent='random'; allowed: optimal | greedy | safe_first"):
        win_share(Rules(ranks=2, num_players=2), opponent="random")
    with pytest.raises(ValueError, match="exactly one partner"):
        win_share(Rules(ranks=2, num_players=2, matching="rank"))
    for players in (1, 3):
        with pytest.raises(ValueError, match=rf"num_players={players}; this DP is for 2 player"):
            win_share(Rules(ranks=2, num_players=players))

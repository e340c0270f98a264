"""The exact DP of baselines.optimal: brute force on tiny decks, pinned values, literature."""

import math
from fractions import Fraction

import pytest

from baselines import optimal
from baselines.optimal import class_structure, expected_mismatches, expected_moves, expected_pair_difference
from concentration_env import Rules
from tests.helpers.brute_force import solve


def pictures(pairs, **fields):
    return Rules(deck="pictures", pairs=pairs, **fields)


# Two packs of the four aces with different backs, dealt as a checkerboard.
CHECKERBOARD = Rules(ranks=1, packs=2, matching="identical", backs="checkerboard", layout=(2, 4))

# Tiny decks covering every class shape: one partner, cliques of 4 and 8, zebra classes of
# 2 + 2 and 4 + 4, jokers beside ranks, two packs.
TINY_SOLITAIRE = [
    pictures(2),
    pictures(3),
    pictures(4),
    pictures(2, packs=2),
    Rules(ranks=1),
    Rules(ranks=2),
    Rules(ranks=1, matching="rank"),
    Rules(ranks=2, matching="rank"),
    Rules(ranks=1, matching="zebra"),
    Rules(ranks=2, matching="zebra"),
    Rules(ranks=1, matching="rank", jokers=True),
    Rules(ranks=1, matching="zebra", jokers=True),
    Rules(ranks=1, packs=2, matching="rank"),
    Rules(ranks=1, packs=2, matching="zebra"),
    Rules(ranks=1, packs=2, matching="identical"),
    CHECKERBOARD,
]


@pytest.mark.parametrize("rules", TINY_SOLITAIRE, ids=str)
@pytest.mark.parametrize("strategy", ["optimal", "greedy", "defer_pairs"])
def test_solitaire_dp_equals_brute_force(rules, strategy):
    if strategy != "optimal" and rules.backs == "checkerboard":
        with pytest.raises(ValueError, match="which back"):
            expected_moves(rules, strategy)
        return
    assert expected_moves(rules, strategy, exact=True) == solve(rules, strategy)


def test_checkerboard_backs_make_the_game_shorter():
    # Turning a card, then one under the other back, clears n pairs in 3n/2 - 1/2 moves.
    for ranks in (1, 2, 13):
        rules = CHECKERBOARD.replace(ranks=ranks, layout=None)
        n = rules.num_pairs
        assert expected_moves(rules, exact=ranks < 13) == pytest.approx(Fraction(3 * n - 1, 2))
    assert expected_moves(Rules.from_preset("two_decks")) > 83


TINY_DUELS = [pictures(n) for n in (1, 2, 3, 4)] + [Rules(ranks=1, jokers=True, joker_value=2), CHECKERBOARD]


@pytest.mark.parametrize("rules", TINY_DUELS, ids=str)
@pytest.mark.parametrize("turn_policy", ["extra_turn", "one_flip"])
@pytest.mark.parametrize("strategy", ["optimal", "greedy"])
def test_two_player_dp_equals_brute_force(rules, turn_policy, strategy):
    if strategy == "greedy" and rules.backs == "checkerboard":
        return  # no value for greedy with checkerboard backs (see the solitaire test)
    rules = rules.replace(num_players=2, turn_policy=turn_policy)
    assert expected_pair_difference(rules, strategy, exact=True) == solve(rules, strategy)


def test_pinned_one_partner_values():
    # n pairs of twins, perfect memory, optimal play: 1, 8/3, 13/3, 622/105, 793/105 moves
    expected = [Fraction(1), Fraction(8, 3), Fraction(13, 3), Fraction(622, 105), Fraction(793, 105)]
    assert [expected_moves(pictures(n), exact=True) for n in range(1, 6)] == expected
    # the same deck whatever the card names: rank_colour with one pack, identical with two
    assert expected_moves(Rules(ranks=2), exact=True) == Fraction(622, 105)
    assert expected_moves(Rules(ranks=1, packs=2, matching="identical"), exact=True) == Fraction(622, 105)
    assert expected_mismatches(pictures(2), exact=True) == Fraction(2, 3)


def test_four_card_classes_beat_greedy_by_keeping_a_known_pair():
    # With four cards of a rank, leaving a known pair on the table (so that the next card of
    # the rank pairs at once) beats taking it: 188/35 < 38/7 moves for two ranks.
    rules = pictures(2, packs=2)
    assert expected_moves(rules, exact=True) == Fraction(188, 35)
    assert expected_moves(rules, "greedy", exact=True) == Fraction(38, 7)


@pytest.mark.parametrize("n", [26, 52, 100])
def test_velleman_warrington_asymptotics(n):
    # (3 - 2 ln 2) n + 7/8 - 2 ln 2 moves; the DP approaches it from below like c / n.
    asymptote = (3 - 2 * math.log(2)) * n + 7 / 8 - 2 * math.log(2)
    gap = asymptote - expected_moves(pictures(n))
    assert 0 < gap < 0.05 / n


@pytest.mark.parametrize(
    "rules",
    [Rules(ranks=5, matching="rank"), Rules(ranks=4, matching="zebra"), Rules(), Rules(ranks=6, jokers=True)],
    ids=str,
)
def test_optimal_never_worse_than_greedy(rules):
    assert expected_moves(rules) <= expected_moves(rules, "greedy") <= expected_moves(rules, "safe_first")


def test_optimal_strictly_better_with_rank_matching():
    rules = Rules(ranks=5, matching="rank")
    assert expected_moves(rules) < expected_moves(rules, "greedy") - 0.1


def test_two_player_parity_rule_and_stalling():
    """Zwick and Paterson: after an unknown first card that pairs with nothing, turn a second
    unknown card when pairs + known cards is odd, else a known card, with the one exception
    of 6 pairs and 1 known card; and in some late positions both players prefer to flip two
    known cards forever."""
    rules = pictures(26, num_players=2)
    solver = optimal.solver(rules)
    solver.value_of(solver.initial_state())
    unknown_pairs, single, _ = (solver.type_of(0, 2, a) for a in (0, 1, 2))

    def state(n, k):  # n pairs on the table, k of them with one card known
        counts = [0, 0, 0]
        counts[unknown_pairs], counts[single] = n - k, k
        return tuple(counts)

    exceptions = []
    for n in range(2, 27):
        for k in range(1, n):
            after = list(state(n, k))
            after[unknown_pairs] -= 1
            after[single] += 1
            choice = solver.second_choice(tuple(after), single, first_known=False)
            if choice != (optimal.UNKNOWN if (n + k) % 2 else optimal.KNOWN):
                exceptions.append((n, k))
    assert exceptions == [(6, 1)]
    assert solver.first_choice(state(5, 4)) == optimal.STALL
    assert solver.value_of(state(5, 4)) == 0


def test_one_flip_reference_strategy_checked_against_its_dp():
    """Reference text 004: under one-flip, after an unknown first card that pairs with
    nothing, turn a known card. The DP agrees in most positions and finds the exceptions
    (every position with all but one pair half-known, among others)."""
    rules = pictures(12, num_players=2, turn_policy="one_flip")
    solver = optimal.solver(rules)
    unknown_pairs, single, pair = (solver.type_of(0, 2, a) for a in (0, 1, 2))
    agree = disagree = 0
    for n in range(3, 13):
        for k in range(1, n):
            after = [0, 0, 0]
            after[unknown_pairs], after[single] = n - k - 1, k + 1
            choice = solver.second_choice(tuple(after), single, first_known=False)
            agree += choice == optimal.KNOWN
            disagree += choice == optimal.UNKNOWN
            if k == n - 1:
                assert choice == optimal.UNKNOWN  # "towards the end of the game"
    assert agree > disagree > 0
    # The reference strategy is worth less to the mover than optimal play against itself.
    assert expected_pair_difference(rules, "safe_first") != expected_pair_difference(rules)


def test_class_structure_from_match_table():
    def shape(rules):
        structure = class_structure(rules)
        return sorted((structure.kinds[k].zebra, structure.kinds[k].size) for k in structure.class_kind)

    assert shape(Rules(ranks=2)) == [(False, 2)] * 4
    assert shape(Rules(ranks=2, matching="rank")) == [(False, 4)] * 2
    assert shape(Rules(ranks=2, matching="zebra")) == [(True, 4)] * 2
    assert shape(Rules(ranks=1, packs=2, matching="rank", jokers=True)) == [(False, 4), (False, 8)]
    assert shape(Rules(ranks=1, packs=2, matching="zebra")) == [(True, 8)]
    jokers = class_structure(Rules(ranks=1, jokers=True, joker_value=2))
    assert sorted(kind.value for kind in jokers.kinds) == [1, 2]


@pytest.mark.parametrize(
    "rules, message",
    [
        (Rules(num_players=3), "1 or 2 players"),
        (Rules(packs=2, matching="identical", backs="checkerboard", jokers=True), "checkerboard"),
        (Rules(num_players=2, matching="rank"), "exactly one partner"),
        (Rules(packs=2, matching="rank"), "too many for the exact DP"),
    ],
)
def test_unsupported_games_raise_clear_errors(rules, message):
    with pytest.raises(ValueError, match=message):
        optimal.Solver(rules, rules.num_players)


def test_value_functions_check_the_number_of_players():
    with pytest.raises(ValueError, match="num_players=2"):
        expected_moves(Rules(num_players=2))
    with pytest.raises(ValueError, match="num_players=1"):
        expected_pair_difference(Rules())


def test_bad_strategy_raises():
    with pytest.raises(ValueError, match="strategy"):
        expected_moves(Rules(ranks=1), "clever")


@pytest.mark.parametrize("matching", ["rank", "zebra"])
def test_deferring_known_pairs_is_what_optimal_gains_under_rank_matching(matching):
    # Four cards a rank: a known pair left on the table can still pair a card that turns up.
    rules = Rules(ranks=4, matching=matching)
    greedy, defer, best = (expected_moves(rules, s, exact=True) for s in ("greedy", "defer_pairs", "optimal"))
    assert best <= defer < greedy
    assert float(defer - best) < 0.01 * float(greedy - best)  # nearly all of optimal's edge
    one_partner = Rules(ranks=4)
    assert expected_moves(one_partner, "defer_pairs", exact=True) == expected_moves(one_partner, "greedy", exact=True)

"""The second-flip probe against the exact optimum: baselines with known answers, the CLI."""

import numpy as np

from baselines import make_policy
from concentration_env.game.rules import resolve_rules
from concentration_env.training.decisions import decision_table, gap_main, main, second_flip_decisions

RULES = resolve_rules("standard", num_players=2, ranks=5)


def test_the_optimum_agrees_with_itself_and_greedy_never_turns_a_known_card():
    optimum = second_flip_decisions(RULES, make_policy("optimal", RULES), games=30, seed=7)
    assert len(optimum.agent_known) > 0
    np.testing.assert_array_equal(optimum.agent_known, optimum.optimum_known)
    greedy = second_flip_decisions(RULES, make_policy("greedy", RULES), games=30, seed=7)
    assert not greedy.agent_known.any() and greedy.optimum_known.any()
    safe = second_flip_decisions(RULES, make_policy("safe_first", RULES), games=30, seed=7)
    assert safe.agent_known.all()
    assert "agent = optimum" in decision_table(greedy)


def test_command_line_prints_a_table_or_one_error_line(capsys):
    assert main(["greedy", "--games", "5", "--set", "ranks=3"]) == 0
    assert "| unseen pairs |" in capsys.readouterr().out
    assert main(["greedy", "--games", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--games" in err
    assert gap_main(["greedy", "--games", "3", "--set", "ranks=3"]) == 0
    assert "| the optimum decides |" in capsys.readouterr().out


def test_gap_probe_changes_only_the_decisions_it_names():
    from concentration_env.training.crosstable import Entrant, seat_games
    from concentration_env.training.decisions import OptimumAt, gap_table

    optimum = Entrant("optimal", "baseline", lambda: make_policy("optimal", RULES))
    alone = seat_games(RULES, Entrant("greedy", "baseline", lambda: make_policy("greedy", RULES)), optimum, 40, 3)
    untouched = OptimumAt(make_policy("greedy", RULES), RULES, first=False, second=False)
    same = seat_games(RULES, Entrant("probe", "probe", lambda: untouched), optimum, 40, 3)
    np.testing.assert_array_equal(same[0], alone[0])  # nothing taken over: greedy's own games
    assert untouched.taken == untouched.changed == 0
    greedy_second = OptimumAt(make_policy("greedy", RULES), RULES, first=False, second=True)
    seat_games(RULES, Entrant("probe", "probe", lambda: greedy_second), optimum, 40, 3)
    assert 0 < greedy_second.changed < greedy_second.taken  # greedy turns an unknown card, the optimum not always
    itself = OptimumAt(make_policy("optimal", RULES), RULES, first=True, second=True)
    seat_games(RULES, Entrant("probe", "probe", lambda: itself), optimum, 40, 3)
    assert itself.taken > 0 and itself.changed == 0
    table = gap_table(RULES, make_policy("optimal", RULES), 20, 3)
    rows = table.splitlines()[2:]
    assert len(rows) == 4  # the optimum against itself: nothing changes, the seats' results cancel
    assert all("| 0 | 0.500 ± " in row and "| +0.00 ± " in row for row in rows)

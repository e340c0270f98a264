"""The second-flip probe against the exact optimum: baselines with known answers, the CLI."""

import numpy as np

from baselines import make_policy
from concentration_env.game.rules import resolve_rules
from concentration_env.training.decisions import decision_table, main, second_flip_decisions

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

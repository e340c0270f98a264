"""The solitaire situation probe: baselines with known answers, one face left unmatched, the CLI."""

import dataclasses

import numpy as np

from baselines import make_policy
from baselines.base import BaselinePolicy
from concentration_env.game import core
from concentration_env.game.rules import resolve_rules
from concentration_env.training.match_probe import (
    SECOND_OTHER_KNOWN,
    SECOND_TAKES_MATCH,
    SECOND_UNKNOWN_BESIDE_MATCH,
    SITUATIONS,
    main,
    match_decisions,
    match_table,
)

RANK = resolve_rules("standard", ranks=4, matching="rank")  # 16 cards, four to a rank


class LeavesOneFace:
    """Greedy, except that with a card of face ``face`` showing it turns the first card that is
    not a known match of it: that face's known match is taken only when nothing else is left."""

    def __init__(self, rules, face: int):
        self.greedy: BaselinePolicy = make_policy("greedy", rules)
        self.match = core.compile_rules(rules).match
        self.face = face

    def reset_batch(self, seeds):
        self.greedy.reset_batch(seeds)

    def act_batch(self, observations):
        flips = self.greedy.act_batch(observations)
        cards, legal = observations["cards"], observations["action_mask"].astype(bool)
        showing = observations["face_up"].astype(bool) & ~observations["removed"].astype(bool)
        for game in np.flatnonzero(showing.sum(axis=1) == 1):
            if cards[game, np.flatnonzero(showing[game])[0]] - 1 != self.face:
                continue
            others = [
                p
                for p in np.flatnonzero(legal[game])
                if not (cards[game, p] and self.match[self.face, cards[game, p] - 1])
            ]
            flips[game] = others[0] if others else flips[game]
        return flips


def test_the_optimum_agrees_with_itself_and_every_flip_is_sorted_once():
    decisions = match_decisions(RANK, make_policy("optimal", RANK), games=40, seed=3)
    np.testing.assert_array_equal(decisions.agent, decisions.optimal)
    assert decisions.finished.all()
    assert decisions.agent.sum() == 2 * decisions.moves.sum()  # two flips a turn
    assert decisions.missed.sum() == 0 and decisions.taken.sum() == decisions.agent[SECOND_TAKES_MATCH]


def test_greedy_takes_every_known_match_and_random_leaves_many():
    greedy = match_decisions(RANK, make_policy("greedy", RANK), games=40, seed=3)
    assert greedy.missed.sum() == 0 and greedy.taken.sum() > 0
    assert greedy.agent[SECOND_OTHER_KNOWN] == greedy.agent[SECOND_UNKNOWN_BESIDE_MATCH] == 0
    # under rank matching the optimum leaves known pairs on the table where greedy takes them
    assert greedy.optimal.sum() < greedy.agent.sum()
    shuffled = match_decisions(RANK, make_policy("random", RANK), games=40, seed=3)
    assert shuffled.missed.sum() > shuffled.taken.sum()
    assert shuffled.moves.mean() > greedy.moves.mean()


def test_a_face_whose_match_is_never_taken_is_named():
    face = 5
    decisions = match_decisions(RANK, LeavesOneFace(RANK, face), games=60, seed=11)
    others = np.arange(len(decisions.missed)) != face
    assert decisions.missed[face] > decisions.taken[face] and decisions.missed[others].sum() == 0
    assert "left more often than taken: 1." in match_table(decisions)
    never = dataclasses.replace(decisions, taken=np.where(others, decisions.taken, 0))
    assert f"never taken: 1 ({core.compile_rules(RANK).faces[face]})" in match_table(never)


def test_a_game_the_dp_does_not_model_sorts_the_agent_alone():
    rules = resolve_rules("standard", ranks=3, matching="rank", packs=2, backs="checkerboard")
    decisions = match_decisions(rules, make_policy("greedy", rules), games=10, seed=0)
    assert not decisions.compared and decisions.agent.sum() == 2 * decisions.moves.sum()
    assert "does not model this game" in match_table(decisions)


def test_command_line_prints_a_table_or_one_error_line(capsys):
    assert main(["optimal", "--games", "5", "--set", "ranks=3", "matching=rank"]) == 0
    out = capsys.readouterr().out
    assert "| situation |" in out and SITUATIONS[0] in out
    assert main(["greedy", "--games", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--games" in err
    assert main(["nobody", "--games", "2"]) == 2
    assert capsys.readouterr().err.count("\n") == 1

"""The partner-recall probe: agents with known answers, the table, the command line."""

import re

import numpy as np
import pytest

from baselines import make_policy
from concentration_env.envs.features import FEATURE_COLUMN, card_features
from concentration_env.game import core
from concentration_env.game.rules import resolve_rules
from concentration_env.training.recall import main, partner_recall, recall_table

RULES = resolve_rules("standard", ranks=5)  # 20 cards


class AvoidsPartners:
    """Turns the first legal unknown card that is not a partner of the face-up card, else the
    first legal non-partner, else the first legal card: it misses whenever it can."""

    name = "avoids_partners"

    def __init__(self, rules):
        self.game = core.compile_rules(rules)

    def reset_batch(self, seeds):
        pass

    def keep(self, rows):
        pass

    def act_batch(self, observations):
        features = card_features(self.game, dict(observations))
        legal = features[..., FEATURE_COLUMN["legal"]] > 0
        avoid = legal & (features[..., FEATURE_COLUMN["matches_first"]] == 0)
        fresh = avoid & (features[..., FEATURE_COLUMN["unknown"]] > 0)
        choice = np.where(avoid.any(axis=1), avoid.argmax(axis=1), legal.argmax(axis=1))
        return np.where(fresh.any(axis=1), fresh.argmax(axis=1), choice)


class CapturesKnownPairsOnly:
    """Captures a pair known before the turn, else turns unseen cards: it never looks up the
    partner of a new first card (what the running-maximum learner of the suite does)."""

    name = "captures_known_pairs_only"

    def __init__(self, rules):
        self.game = core.compile_rules(rules)

    def reset_batch(self, seeds):
        self.first_known = np.zeros(len(seeds), dtype=bool)

    def keep(self, rows):
        self.first_known = self.first_known[rows]

    def act_batch(self, observations):
        features = card_features(self.game, dict(observations))
        mid_turn = features[:, 0, FEATURE_COLUMN["mid_turn"]] > 0
        chosen = self.choose(features, mid_turn)
        turned_known = features[np.arange(len(chosen)), chosen, FEATURE_COLUMN["known"]] > 0
        self.first_known = np.where(mid_turn, self.first_known, turned_known)  # of the card turned
        return chosen

    def choose(self, features, mid_turn):
        legal = features[..., FEATURE_COLUMN["legal"]] > 0
        unseen = legal & (features[..., FEATURE_COLUMN["unknown"]] > 0)
        pair = legal & (features[..., FEATURE_COLUMN["known_pair"]] > 0)
        partner = legal & (features[..., FEATURE_COLUMN["matches_first"]] > 0)
        fallback = np.where(unseen.any(axis=1), unseen.argmax(axis=1), legal.argmax(axis=1))
        first = np.where(pair.any(axis=1), pair.argmax(axis=1), fallback)
        second = np.where(partner.any(axis=1) & self.first_known, partner.argmax(axis=1), fallback)
        return np.where(mid_turn, second, first)


class UnseenCardsFirst(CapturesKnownPairsOnly):
    """Turns unseen cards while any remain, then clears the known pairs: what the suite's
    running-maximum learner does (as many moves as capturing known pairs first)."""

    name = "unseen_cards_first"

    def choose(self, features, mid_turn):
        unseen = (features[..., FEATURE_COLUMN["legal"]] > 0) & (features[..., FEATURE_COLUMN["unknown"]] > 0)
        return np.where(unseen.any(axis=1), unseen.argmax(axis=1), super().choose(features, mid_turn))


def test_perfect_memory_finds_every_partner_and_an_avoider_none():
    greedy = partner_recall(RULES, make_policy("greedy", RULES), games=40, seed=3)
    assert len(greedy.found) > 40 and greedy.found.all()
    assert greedy.load.min() >= 1 and greedy.load.max() < RULES.num_cards  # the partner itself is known
    avoider = partner_recall(RULES, AvoidsPartners(RULES), games=10, seed=3)
    assert len(avoider.found) > 0 and not avoider.found.any()


def test_the_split_by_first_card_tells_a_pair_capturer_from_a_matcher():
    greedy = partner_recall(RULES, make_policy("greedy", RULES), games=40, seed=3)
    assert greedy.first_new.any() and (~greedy.first_new).any()  # both kinds of second flip occur
    capturer = partner_recall(RULES, CapturesKnownPairsOnly(RULES), games=40, seed=3)
    assert capturer.first_new.any() and (~capturer.first_new).any()
    assert capturer.found[~capturer.first_new].all() and not capturer.found[capturer.first_new].any()
    assert "after a new first card 0.000" in recall_table(capturer, games=40)
    assert (capturer.unseen_left[~capturer.first_new] > 0).any()  # it captures with unseen cards left


def test_the_split_by_unseen_cards_left_tells_when_known_pairs_are_captured():
    late = partner_recall(RULES, UnseenCardsFirst(RULES), games=40, seed=3)
    known_first = ~late.first_new
    assert known_first.any() and late.found[known_first].all()
    assert (late.unseen_left[known_first] == 0).all()  # every capture waits for the unseen cards
    assert not late.found[late.first_new].any()  # and it never looks up a new card's partner
    assert "nan (0) while unseen cards remained, 1.000 (" in recall_table(late, games=40)
    capturer = recall_table(partner_recall(RULES, CapturesKnownPairsOnly(RULES), games=40, seed=3), games=40)
    assert re.search(r"\(1\.000 \(\d+\) while unseen cards remained", capturer)


def test_a_small_memory_finds_fewer_partners_than_a_large_one():
    shares = [
        partner_recall(
            RULES, make_policy("forgetful", RULES, capacity=capacity, forget=0.0), games=200, seed=3
        ).found.mean()
        for capacity in (2, 4, 16)
    ]
    assert shares[0] < shares[1] < shares[2] == 1.0


def test_table_and_two_player_refusal():
    recall = partner_recall(RULES, make_policy("forgetful", RULES, capacity=2, forget=0.0), games=20, seed=0)
    table = recall_table(recall, games=20)
    assert table.startswith("| cards of known face |") and "| 0-7 |" in table
    assert f"All {len(recall.found)} such second flips" in table
    with pytest.raises(ValueError, match="one-player"):
        partner_recall(resolve_rules("standard", num_players=2, ranks=3), make_policy("greedy", RULES), 2, 0)


def test_command_line_prints_a_table_or_one_error_line(capsys):
    assert main(["greedy", "--games", "5", "--set", "ranks=3"]) == 0
    assert "partner found in 1.000" in capsys.readouterr().out
    for bad in (["greedy", "--games", "0"], ["no_such_agent_or_folder"]):
        assert main(bad) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("probe_recall.py: error:")

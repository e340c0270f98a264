"""Rules: matching tables from the reference texts, presets, layouts and every bad value."""

import dataclasses

import numpy as np
import pytest

from concentration_env import Card, Rules, preset_names
from concentration_env.game.cards import cards_match
from concentration_env.game.core import compile_rules

C = Card


@pytest.mark.parametrize(
    "matching, a, b, expected",
    [
        # same rank and colour (the default): 6H-6D and QC-QS pair, 6H-6S does not
        ("rank_colour", C(6, "H"), C(6, "D"), True),
        ("rank_colour", C(12, "C"), C(12, "S"), True),
        ("rank_colour", C(6, "H"), C(6, "S"), False),
        ("rank_colour", C(6, "H"), C(7, "H"), False),
        # any suit
        ("rank", C(6, "H"), C(6, "S"), True),
        ("rank", C(1, "C"), C(1, "D"), True),
        ("rank", C(6, "H"), C(5, "H"), False),
        # zebra: 7D pairs with 7C and 7S, not 7H
        ("zebra", C(7, "D"), C(7, "C"), True),
        ("zebra", C(7, "D"), C(7, "S"), True),
        ("zebra", C(7, "D"), C(7, "H"), False),
        ("zebra", C(7, "D"), C(8, "C"), False),
        # identical: 10C only with 10C
        ("identical", C(10, "C"), C(10, "C"), True),
        ("identical", C(10, "C"), C(10, "S"), False),
        ("identical", C(10, "C"), C(10, "H"), False),
    ],
)
def test_matching_rules(matching, a, b, expected):
    assert cards_match(a, b, matching) is expected
    assert cards_match(b, a, matching) is expected


@pytest.mark.parametrize("matching", ["rank_colour", "rank", "zebra", "identical"])
def test_jokers_match_only_jokers(matching):
    joker = C(0, "J")
    assert cards_match(joker, joker, matching)
    for card in (C(1, "S"), C(13, "H"), C(7, "D")):
        assert not cards_match(joker, card, matching)
        assert not cards_match(card, joker, matching)


def test_pictures_match_only_their_twin():
    assert cards_match(C(3, "P"), C(3, "P"), "rank_colour")
    assert not cards_match(C(3, "P"), C(4, "P"), "rank")


def test_card_names_and_colours():
    assert str(C(10, "H")) == "10H" and str(C(12, "S")) == "QS" and str(C(1, "C")) == "AC"
    assert str(C(0, "J")) == "JK" and str(C(5, "P")) == "P5"
    assert C(10, "H").colour == "red" and C(12, "S").colour == "black" and C(0, "J").colour == "none"


@pytest.mark.parametrize(
    "fields, cards, shape",
    [
        ({}, 52, (4, 13)),
        ({"jokers": True}, 54, (6, 9)),
        ({"packs": 2, "matching": "identical"}, 104, (8, 13)),
        ({"packs": 2, "matching": "identical", "jokers": True}, 108, (9, 12)),
        ({"ranks": 5}, 20, (4, 5)),
        ({"deck": "pictures", "pairs": 18}, 36, (6, 6)),
        ({"deck": "pictures", "pairs": 7}, 14, (4, 4)),
        ({"layout": (2, 26)}, 52, (2, 26)),
        ({"layout": [13, 4]}, 52, (13, 4)),
    ],
)
def test_deck_sizes_and_layouts(fields, cards, shape):
    rules = Rules(**fields)
    assert rules.num_cards == cards and rules.shape == shape
    assert len(compile_rules(rules).deck) == cards


def test_every_match_table_pairs_every_card():
    """Each deck can be cleared: every card has at least one partner."""
    for name in preset_names():
        game = compile_rules(Rules.from_preset(name))
        partners = game.match[game.deck][:, game.deck].sum(axis=1) - np.diag(game.match[game.deck][:, game.deck])
        assert (partners >= 1).all(), name


def test_checkerboard_backs_alternate_and_split_packs():
    game = compile_rules(Rules.from_preset("checkerboard"))
    rows, cols = game.rules.shape
    grid = game.backs.reshape(rows, cols)
    assert (grid[:, 1:] != grid[:, :-1]).all() and (grid[1:] != grid[:-1]).all()
    assert grid.sum() == game.num_cards // 2


@pytest.mark.parametrize("ranks", range(1, 14))
@pytest.mark.parametrize("jokers", [False, True])
def test_every_checkerboard_grid_splits_evenly_between_backs(ranks, jokers):
    """A two-pack deck has a multiple of 4 cards; any grid of it splits evenly by colour,
    so each pack fills exactly one colour of the checkerboard."""
    base = Rules(packs=2, matching="identical", backs="checkerboard", ranks=ranks, jokers=jokers)
    n = base.num_cards
    for rows in range(1, n + 1):
        cols = -(-n // rows)
        if (rows - 1) * cols < n:
            game = compile_rules(base.replace(layout=(rows, cols)))
            assert 2 * game.backs.sum() == n, (rows, cols)


def test_presets_load():
    names = preset_names()
    assert {
        "standard",
        "any_colour",
        "zebra",
        "two_decks",
        "jokers",
        "one_flip",
        "toddler",
        "checkerboard",
        "solitaire_chips",
        "pictures",
    } <= set(names)
    assert Rules.from_preset("standard") == Rules()
    assert Rules.from_preset("toddler").num_cards == 20
    assert Rules.from_preset("any_colour", jokers=True).joker_value == 2
    assert Rules.from_preset("solitaire_chips").max_mismatches == 18


def test_rules_are_frozen_and_hashable():
    rules = Rules()
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.packs = 2
    assert hash(rules) == hash(Rules())
    assert compile_rules(rules) is compile_rules(Rules())


@pytest.mark.parametrize(
    "fields, field",
    [
        ({"deck": "tarot"}, "deck"),
        ({"packs": 3}, "packs"),
        ({"packs": 0}, "packs"),
        ({"packs": "2"}, "packs"),
        ({"packs": True}, "packs"),
        ({"jokers": "yes"}, "jokers"),
        ({"ranks": 0}, "ranks"),
        ({"ranks": 14}, "ranks"),
        ({"matching": "colour"}, "matching"),
        ({"matching": "identical"}, "matching"),
        ({"turn_policy": "again"}, "turn_policy"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"max_mismatches": 0}, "max_mismatches"),
        ({"max_mismatches": 2.5}, "max_mismatches"),
        ({"layout": (3, 13)}, "layout"),
        ({"layout": (10, 13)}, "layout"),
        ({"layout": (4, -13)}, "layout"),
        ({"layout": "4x13"}, "layout"),
        ({"backs": "checkerboard"}, "backs"),
        ({"backs": "tartan"}, "backs"),
        ({"joker_value": 0}, "joker_value"),
        ({"num_players": 0}, "num_players"),
        ({"tie_break": "coin"}, "tie_break"),
        ({"reward_mode": "money"}, "reward_mode"),
        ({"deck": "pictures"}, "pairs"),
        ({"deck": "pictures", "pairs": 0}, "pairs"),
        ({"deck": "pictures", "pairs": 5, "jokers": True}, "jokers"),
        ({"pairs": 5}, "pairs"),
    ],
)
def test_bad_rules_raise_one_value_error_naming_the_field(fields, field):
    with pytest.raises(ValueError, match=rf"{field}=.*allowed"):
        Rules(**fields)


def test_unknown_fields_and_presets_are_named():
    with pytest.raises(ValueError, match="'colour'.*allowed"):
        Rules.from_mapping({"colour": "red"})
    with pytest.raises(ValueError, match="unknown preset 'nope'.*standard"):
        Rules.from_preset("nope")
    with pytest.raises(ValueError, match="preset 'two_decks'.*packs=3"):
        Rules.from_preset("two_decks", packs=3)

"""Values of every integer type and odd keys are taken, or refused, the same way everywhere."""

import numpy as np
import pytest

from concentration_env import Rules
from concentration_env.game import core
from concentration_env.game.batch import GameBatch


def test_numpy_integers_are_accepted_in_every_field_and_kept_as_plain_ints():
    given = Rules(
        packs=np.int64(2),
        matching="identical",
        ranks=np.int32(3),
        jokers=True,
        joker_value=np.int16(2),
        num_players=np.uint8(2),
        max_mismatches=np.int64(5),
        layout=(np.int64(4), np.int64(7)),
    )
    plain = Rules(
        packs=2,
        matching="identical",
        ranks=3,
        jokers=True,
        joker_value=2,
        num_players=2,
        max_mismatches=5,
        layout=(4, 7),
    )
    assert given == plain and hash(given) == hash(plain)
    for field in ("packs", "ranks", "joker_value", "num_players", "max_mismatches"):
        assert type(getattr(given, field)) is int, field
    assert [type(side) for side in given.layout] == [int, int]
    pictures = Rules(deck=np.str_("pictures"), pairs=np.int64(3))
    assert type(pictures.pairs) is int and type(pictures.deck) is str


def test_a_deck_given_as_an_array_is_refused():
    with pytest.raises(ValueError, match=r"invalid rules: deck=array\(\['standard'\].*allowed: standard, pictures"):
        Rules(deck=np.array(["standard"]))


def test_keys_that_are_not_strings_are_named():
    with pytest.raises(
        ValueError, match=r"unknown rule fields: got unexpected keyword arguments 'colour', \(1,\), 1; allowed: deck"
    ):
        Rules.from_mapping({1: 2, "colour": "red", (1,): 3, "packs": 1})


def test_wide_unsigned_actions_are_named_as_given():
    game = core.compile_rules(Rules(ranks=1))
    for action in (2**64 - 1, 2**63):
        with pytest.raises(ValueError, match=rf"action {action} \(game 0\) is out of range; valid flips are 0..3"):
            core.check_actions(game, np.array([action], dtype=np.uint64))
    assert core.check_actions(game, np.array([3], dtype=np.uint64)).tolist() == [3]


def test_a_reset_mask_of_all_false_deals_nothing():
    batch = GameBatch(3, ranks=2)
    batch.reset(seed=0)
    batch.step(np.array([0, 1, 2]))
    before = batch.state.copy()
    batch.reset(mask=np.zeros(3, dtype=bool))
    assert np.array_equal(batch.state.buffer, before.buffer)


def test_a_bad_reset_mask_reseeds_nothing():
    batch, twin = GameBatch(2, ranks=2), GameBatch(2, ranks=2)
    batch.reset(seed=0)
    twin.reset(seed=0)
    with pytest.raises(ValueError, match="reset mask"):
        batch.reset(seed=5, mask=np.array([1, 0]))
    batch.reset()
    twin.reset()
    assert np.array_equal(batch.state.faces, twin.state.faces)


@pytest.mark.parametrize(
    "seed, message",
    [
        ("12", r"invalid seed='12'; allowed: None, an int >= 0, or a list"),
        (3.0, r"invalid seed=3.0; allowed"),
        (True, r"invalid seed=True; allowed"),
        (-1, r"invalid seed=-1: below the minimum 0"),
        ([1, "a"], r"invalid seed\[1\]='a': not a number"),
    ],
)
def test_bad_batch_seeds_raise_one_error_naming_the_seed(seed, message):
    batch = GameBatch(2, ranks=2)
    with pytest.raises(ValueError, match=message):
        batch.reset(seed=seed)
    assert batch.state is None


def test_numpy_seeds_deal_like_plain_ones():
    batch, twin = GameBatch(2, ranks=2), GameBatch(2, ranks=2)
    batch.reset(seed=np.int64(4))
    twin.reset(seed=[4, np.uint32(5)])
    assert np.array_equal(batch.state.faces, twin.state.faces)

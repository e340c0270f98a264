"""The largest games the rules allow play and render in every env; larger ones are refused."""

import gymnasium as gym
import pytest

import concentration_env  # noqa: F401  (registers the envs)
from concentration_env.envs import multiplayer
from concentration_env.game.rules import MAX_CARDS, MAX_JOKER_VALUE, MAX_LAYOUT_SIDE, MAX_PLAYERS

LARGEST = {"deck": "pictures", "pairs": MAX_CARDS // 2}


@pytest.mark.parametrize("mode", ["ansi", "rgb_array"])
@pytest.mark.parametrize("layout", [None, (MAX_CARDS // MAX_LAYOUT_SIDE, MAX_LAYOUT_SIDE)])
def test_the_largest_solitaire_deck_renders(mode, layout):
    env = gym.make("Concentration-v0", render_mode=mode, layout=layout, **LARGEST)
    env.reset(seed=0)
    env.step(0)
    frame = env.render()
    assert len(frame) > 0


def test_the_largest_table_plays_and_renders():
    env = multiplayer.env(num_players=MAX_PLAYERS, render_mode="ansi", **LARGEST)
    env.reset(seed=0)
    for _ in range(4):
        env.step(int(env.last()[0]["action_mask"].argmax()))
    assert f"player_{MAX_PLAYERS - 1}" in env.agents
    assert env.render()


@pytest.mark.parametrize(
    "make", [lambda: multiplayer.env(num_players=10**5), lambda: multiplayer.env(pairs=10**6, deck="pictures")]
)
def test_tables_above_the_maximum_are_refused(make):
    with pytest.raises(ValueError, match="above the maximum"):
        make()


def test_the_most_valuable_joker_pair_fits_the_scores_space():
    env = gym.make("ConcentrationVs-v0", jokers=True, joker_value=MAX_JOKER_VALUE, packs=2)
    observation, _ = env.reset(seed=0)
    assert env.observation_space.contains(observation)
    assert env.observation_space["scores"].high.max() == 2 * MAX_JOKER_VALUE + 52

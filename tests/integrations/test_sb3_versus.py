"""The batched play-against-opponents game (VersusBatch and its SB3 VecEnv): the same games
as a DummyVecEnv of ConcentrationVs-v0 envs seeded alike, across autoresets."""

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
from stable_baselines3.common.vec_env import DummyVecEnv

import concentration_env  # noqa: F401
from concentration_env.envs.opponents import resolve_opponents
from concentration_env.game.batch import VersusBatch
from concentration_env.game.rules import FIELDS
from concentration_env.game.seats import table_rules
from concentration_env.integrations.sb3 import ConcentrationSB3VecEnv, ConcentrationVsSB3VecEnv, make_sb3_vec_env
from tests.helpers.batched import assert_same, play_alongside, random_actions

NUM_ENVS = 6
STEPS = 250
# Short decks so that games end often; every opponent whose play is a function of its seed.
CASES = [
    dict(num_players=2, ranks=3, opponents=["greedy"] * NUM_ENVS),
    dict(num_players=3, ranks=3, opponents=["greedy", "safe_first"] * 3, reward_mode="margin"),
    dict(
        num_players=2,
        ranks=4,
        opponents=["optimal"] * NUM_ENVS,
        reward_mode="win_loss",
        observation_mode="visible",
        max_episode_steps=20,
    ),
    dict(
        num_players=2,
        rules="checkerboard",
        ranks=2,
        turn_policy="one_flip",
        opponents=["safe_first"] * NUM_ENVS,
        first_player=1,
    ),
    dict(num_players=2, ranks=3, illegal_action="end_turn", opponents=["greedy"] * NUM_ENVS),
]
COMPARED_INFO = ("action_mask", "scores", "agent", "winners", "TimeLimit.truncated", "terminal_observation")


def versus_batch(num_envs, opponent="greedy", **kwargs):
    """A VersusBatch whose opponents the adapter's resolver built from a name."""
    num_players = kwargs.pop("num_players")
    rules = table_rules(None, num_players, **{k: kwargs.pop(k) for k in list(kwargs) if k in FIELDS})
    return VersusBatch(num_envs, rules, opponents=resolve_opponents(opponent, rules, num_envs), **kwargs)


def single_env(kwargs, seat, opponent):
    """The reference: one ConcentrationVs-v0 env as gym.make builds it."""

    def make():
        fields = {key: value for key, value in kwargs.items() if key != "opponents"}
        return gym.make("ConcentrationVs-v0", seat=seat, opponents=opponent, **fields)

    return make


def same_infos(ours, theirs, where):
    for a, b in zip(ours, theirs):
        assert_same({k: a[k] for k in COMPARED_INFO if k in a}, {k: b[k] for k in COMPARED_INFO if k in b}, where)


@pytest.mark.parametrize(
    "kwargs", CASES, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items() if k != "opponents")
)
def test_same_as_dummy_vec_env_of_versus_envs(kwargs):
    kwargs = dict(kwargs)
    kwargs.setdefault("max_episode_steps", 60)
    players = kwargs["num_players"]
    seats = [i % players for i in range(NUM_ENVS)]
    ours = make_sb3_vec_env(NUM_ENVS, seats=seats, **kwargs)
    assert isinstance(ours, ConcentrationVsSB3VecEnv)
    reference = DummyVecEnv([single_env(kwargs, seat, opponent) for seat, opponent in zip(seats, kwargs["opponents"])])
    assert ours.observation_space == reference.observation_space
    assert ours.seed(5) == reference.seed(5)
    assert_same(ours.reset(), reference.reset(), "reset")
    same_infos(ours.reset_infos, reference.reset_infos, "reset infos")

    def compare(result, expected, where):
        assert_same(result[:3], expected[:3], where)
        same_infos(result[3], expected[3], f"{where} infos")

    assert play_alongside(ours, reference, STEPS, 2, compare) > NUM_ENVS


def test_learner_rewards_add_up_to_its_points_and_margin():
    venv = make_sb3_vec_env(4, num_players=2, ranks=2, seats=[0, 1, 0, 1], reward_mode="margin")
    venv.seed(0)
    venv.reset()
    totals, rng, finished = np.zeros(4), np.random.default_rng(0), 0
    while finished < 40:  # enough games that some opponent captures before its learner moves
        masks = np.stack(venv.env_method("action_masks"))
        _, rewards, dones, infos = venv.step(random_actions(rng, masks, 1))
        totals += rewards
        for i in np.flatnonzero(dones):
            scores = infos[i]["scores"]
            mine = scores[int(infos[i]["agent"].removeprefix("player_"))]
            assert totals[i] == 2 * mine - scores.sum()  # margin: mine minus theirs
            assert not infos[i]["terminal_observation"]["action_mask"].any()
            totals[i], finished = 0.0, finished + 1


def test_dispatch_and_bad_arguments():
    assert isinstance(make_sb3_vec_env(2, rules="toddler"), ConcentrationSB3VecEnv)
    assert isinstance(make_sb3_vec_env(2, rules="toddler", opponents="greedy"), ConcentrationVsSB3VecEnv)
    with pytest.raises(ValueError, match="seats"):
        versus_batch(2, num_players=2, seats=2)
    with pytest.raises(ValueError, match=r"invalid seats: 3 given"):
        versus_batch(2, num_players=2, seats=[0, 1, 0])
    with pytest.raises(ValueError, match="opponents entry"):
        make_sb3_vec_env(2, num_players=2, opponents=[3, "greedy"])
    with pytest.raises(ValueError, match="unknown policy|invalid policy"):
        make_sb3_vec_env(2, num_players=2, opponents="nobody")
    # The engine takes policy objects only: names are the adapters' business.
    with pytest.raises(ValueError, match="opponents entry 'greedy'"):
        VersusBatch(2, num_players=2, opponents="greedy")
    with pytest.raises(ValueError, match="needs opponents"):
        VersusBatch(2, num_players=2)
    batch = versus_batch(2, num_players=2, ranks=2)
    with pytest.raises(RuntimeError, match="reset"):
        batch.step([0, 0])
    batch.reset(seed=0)
    with pytest.raises(ValueError, match="out of range"):
        batch.step([0, 99])


def test_stepping_a_finished_game_and_an_unplayable_deck_raise():
    batch = versus_batch(2, num_players=2, deck="pictures", pairs=2, seats=[0, 1])
    batch.reset(seed=0)
    rng, terminated = np.random.default_rng(0), np.zeros(2, dtype=bool)
    while not terminated.any():
        _, terminated, _ = batch.step([rng.choice(np.flatnonzero(row)) for row in batch.action_masks()])
    with pytest.raises(RuntimeError, match=r"games \[.*\] are over; deal them before step\(\)"):
        batch.step([0, 0])
    # On one pair the opponent moving first (game 1) always captures it before the learner.
    tiny = versus_batch(2, num_players=2, deck="pictures", pairs=1, seats=[0, 1])
    with pytest.raises(RuntimeError, match=r"cleared 1000 deals in a row before the learner \(seat 1\).*too small"):
        tiny.reset(seed=0)

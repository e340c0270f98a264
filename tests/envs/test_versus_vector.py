"""The native vector env of ConcentrationVs-v0: the same games as Gymnasium's SyncVectorEnv of
single versus envs seeded alike, across autoresets in both modes."""

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import SyncVectorEnv

import concentration_env  # noqa: F401  (registers the ids)
from concentration_env.envs.registration import VERSUS_ID
from concentration_env.envs.versus_vector import VersusVectorEnv
from tests.helpers.batched import assert_same, random_actions

NUM_ENVS = 6
STEPS = 250
# Short decks so that games end often; opponents whose play is a function of their seed.
CASES = [
    dict(num_players=2, ranks=3, opponents=["greedy"] * NUM_ENVS),
    dict(num_players=3, ranks=3, opponents=["greedy", "safe_first"] * 3, reward_mode="margin"),
    dict(num_players=2, ranks=4, opponents=["optimal"] * NUM_ENVS, reward_mode="win_loss", max_episode_steps=20),
    dict(
        num_players=2,
        rules="checkerboard",
        ranks=2,
        turn_policy="one_flip",
        observation_mode="visible",
        opponents=["safe_first"] * NUM_ENVS,
        first_player=1,
    ),
]


def reference_env(kwargs, seats, mode):
    """Gymnasium's SyncVectorEnv of ``gym.make("ConcentrationVs-v0", seat=..., opponents=...)``."""
    fields = {key: value for key, value in kwargs.items() if key != "opponents"}

    def single(seat, opponent):
        return lambda: gym.make(VERSUS_ID, seat=seat, opponents=opponent, **fields)

    return SyncVectorEnv([single(s, o) for s, o in zip(seats, kwargs["opponents"])], autoreset_mode=mode)


def seat_order(learner_first, seats):
    """Observed scores (each learner's seat first) rearranged into seat order."""
    players = learner_first.shape[1]
    return np.stack([np.roll(row, seat) for row, seat in zip(learner_first, seats)]).reshape(-1, players)


def winner_flags(info, players):
    """The reference's winners as (num_envs, num_players) bool in seat order (each single env
    reports its bool row at every step)."""
    flags = np.zeros((len(info["_action_mask"]), players), dtype=bool)
    rows = np.flatnonzero(info["_winners"])
    flags[rows] = np.asarray(info["winners"])[rows]
    return flags


def check_infos(ours, obs, reference_info, seats, players, where):
    """Our infos: the reference's action mask, the observed scores in seat order and its winners."""
    assert set(ours) == {"action_mask", "_action_mask", "scores", "_scores", "winners", "_winners"}, where
    rows = ours["_action_mask"]
    assert (ours["_scores"] == rows).all() and (ours["_winners"] == rows).all(), where
    assert_same(ours["action_mask"], reference_info["action_mask"], f"{where}/action_mask")
    assert ours["scores"].dtype == np.int32 and ours["winners"].dtype == bool, where
    expected = np.where(rows[:, None], seat_order(obs["scores"], seats), 0)
    np.testing.assert_array_equal(ours["scores"], expected, err_msg=where)
    np.testing.assert_array_equal(ours["winners"], winner_flags(reference_info, players), err_msg=where)


@pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
@pytest.mark.parametrize(
    "kwargs", CASES, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items() if k != "opponents")
)
def test_same_games_as_sync_vector_env_of_versus_envs(kwargs, mode):
    kwargs = dict(kwargs)
    kwargs.setdefault("max_episode_steps", 60)
    players = kwargs["num_players"]
    seats = [i % players for i in range(NUM_ENVS)]
    ours = gym.make_vec(VERSUS_ID, num_envs=NUM_ENVS, seats=seats, autoreset_mode=mode, **kwargs)
    reference = reference_env(kwargs, seats, mode)
    assert isinstance(ours, VersusVectorEnv) and ours.metadata["autoreset_mode"].value == mode
    assert ours.single_observation_space == reference.single_observation_space
    assert ours.observation_space == reference.observation_space

    def compare(result, expected, where):
        obs, info = result[0], result[-1]
        assert_same(result[:-1], expected[:-1], where)
        check_infos({k: v for k, v in info.items() if "final" not in k}, obs, expected[-1], seats, players, where)
        if "final_info" in info or "final_info" in expected[-1]:
            assert_same(info["_final_obs"], expected[-1]["_final_obs"], where)
            assert_same(info["final_obs"], expected[-1]["final_obs"], f"{where}/final_obs")
            last = np.stack([o["scores"] if o is not None else np.zeros(players, np.int32) for o in info["final_obs"]])
            final = info["final_info"]
            check_infos(final, {"scores": last}, expected[-1]["final_info"], seats, players, f"{where}/final_info")
            assert (final["_action_mask"] == info["_final_info"]).all(), where

    result = ours.reset(seed=11)
    compare(result, reference.reset(seed=11), "reset")
    rng = np.random.default_rng(0)
    ends, won = 0, 0
    for step in range(STEPS):
        if step == STEPS // 2:  # reseeding mid-run, and continuing the generators
            result = ours.reset(seed=[5, None, 7, None, 9, None])
            compare(result, reference.reset(seed=[5, None, 7, None, 9, None]), "reseed")
        actions = random_actions(rng, result[-1]["action_mask"], step)
        result = ours.step(actions)
        compare(result, reference.step(actions), f"step {step}")
        ends += (result[2] | result[3]).sum()
        won += result[-1].get("final_info", result[-1])["winners"].any(axis=1).sum()
    assert ends > NUM_ENVS and won > 0


def test_make_vec_defaults_and_reset_mask():
    envs = gym.make_vec(VERSUS_ID, num_envs=512)
    assert isinstance(envs, VersusVectorEnv) and envs.batch.max_episode_steps == 10_000
    assert envs.rules.num_players == 2 and envs.metadata["autoreset_mode"].value == "NextStep"
    obs, info = envs.reset(seed=0)
    assert envs.observation_space.contains(obs)
    assert info["action_mask"].shape == (512, 52) and info["action_mask"].dtype == np.int8
    assert info["scores"].shape == info["winners"].shape == (512, 2) and not info["winners"].any()
    obs, *_ = envs.step(np.zeros(512, dtype=np.int64))
    assert (obs["face_up"][:, 0] | obs["removed"][:, 0]).all()
    fresh, info = envs.reset(options={"reset_mask": np.arange(512) == 1})
    assert not fresh["face_up"][1].any() and info["_scores"].tolist() == [i == 1 for i in range(512)]


def test_pickles_and_deep_copies_mid_game_and_continues_identically():
    envs = VersusVectorEnv(4, num_players=3, ranks=3, seats=[0, 1, 2, 0], opponents="safe_first")
    obs, info = envs.reset(seed=3)
    rng = np.random.default_rng(1)
    for step in range(15):
        obs, *_, info = envs.step(random_actions(rng, info["action_mask"], step))
    copies = [pickle.loads(pickle.dumps(envs)), copy.deepcopy(envs)]
    for step in range(40):
        actions = random_actions(rng, info["action_mask"], step)
        result = envs.step(actions)
        for other in copies:
            assert_same(other.step(actions), result, f"step {step}")
        info = result[-1]


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match=r"invalid max_turns=5; allowed: None in the vector env"):
        gym.make_vec(VERSUS_ID, num_envs=2, max_turns=5)
    with pytest.raises(ValueError, match="render_mode"):
        VersusVectorEnv(2, render_mode="rgb_array")
    with pytest.raises(ValueError, match="autoreset_mode"):
        VersusVectorEnv(2, autoreset_mode="Disabled")
    with pytest.raises(ValueError, match=r"invalid opponents: 3 given"):
        VersusVectorEnv(2, opponents=["greedy"] * 3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'seat'"):
        VersusVectorEnv(2, seat=1)
    envs = VersusVectorEnv(2, ranks=2)
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(np.zeros(2, dtype=int))
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        envs.step(np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match=r"action 9 \(game 1\) is out of range; valid flips are 0..7"):
        envs.step(np.array([0, 9]))

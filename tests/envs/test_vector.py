"""The native vector env: same trajectories as Gymnasium's SyncVectorEnv of single envs."""

import gymnasium as gym
import numpy as np
import pytest

import concentration_env  # noqa: F401  (registers the ids)
from concentration_env.envs.registration import solitaire_env_ids
from concentration_env.envs.vector import ConcentrationVectorEnv
from concentration_env.game.core import IllegalFlipError
from tests.helpers.batched import RULE_SETS, assert_same, random_actions

NUM_ENVS = 5
STEPS = 400


@pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
@pytest.mark.parametrize("kwargs", RULE_SETS, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_same_trajectories_as_sync_vector_env(kwargs, mode):
    common = dict(num_envs=NUM_ENVS, max_episode_steps=70, **kwargs)
    ours = gym.make_vec("Concentration-v0", autoreset_mode=mode, **common)
    reference = gym.make_vec(
        "Concentration-v0", vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode}, **common
    )
    assert isinstance(ours, ConcentrationVectorEnv) and ours.metadata["autoreset_mode"].value == mode
    obs, info = ours.reset(seed=11)
    assert_same((obs, info), reference.reset(seed=11), "reset")
    rng = np.random.default_rng(0)
    seen = {"terminated": 0, "truncated": 0, "won": 0}
    for step in range(STEPS):
        if step == STEPS // 2:  # reseeding mid-run, and continuing the generators
            obs, info = ours.reset(seed=[5, None, 7, None, 9])
            assert_same((obs, info), reference.reset(seed=[5, None, 7, None, 9]), "reseed")
        actions = random_actions(rng, info["action_mask"], step)
        result = ours.step(actions)
        assert_same(result, reference.step(actions), f"step {step}")
        obs, _, terminated, truncated, info = result
        seen["terminated"] += terminated.sum()
        seen["truncated"] += truncated.sum()
        finals = info.get("final_info", info)
        seen["won"] += finals.get("won", np.zeros(1, bool)).sum()
    # the run covered wins, and chip losses or time-limit truncations
    assert seen["won"] > 0, seen
    if "max_mismatches" in kwargs:
        assert seen["terminated"] > seen["won"], seen
    else:
        assert seen["truncated"] > 0, seen


def test_make_vec_returns_the_native_env_for_every_id():
    for env_id in solitaire_env_ids():
        assert isinstance(gym.make_vec(env_id, num_envs=2).unwrapped, ConcentrationVectorEnv)
    envs = gym.make_vec("Concentration-v0", num_envs=4096, matching="rank")
    assert envs.unwrapped.rules.matching == "rank" and envs.unwrapped.batch.max_episode_steps == 10_000
    obs, info = envs.reset(seed=0)
    assert obs["cards"].shape == (4096, 52) and obs["cards"].dtype == np.int16
    assert info["action_mask"].shape == (4096, 52) and info["action_mask"].dtype == np.int8
    assert envs.observation_space.contains(obs)
    masks = envs.unwrapped.action_masks()
    assert masks.dtype == bool and masks.all()
    obs, rewards, terminated, truncated, info = envs.step(np.zeros(4096, dtype=np.int64))
    assert rewards.shape == (4096,) and not terminated.any() and (info["action_mask"][:, 0] == 0).all()
    assert envs.unwrapped.action_masks().sum() == 4096 * 51


def test_reset_mask_redeals_only_those_games():
    envs = ConcentrationVectorEnv(num_envs=3, rules="toddler")
    obs, _ = envs.reset(seed=1)
    envs.step(np.zeros(3, dtype=int))
    fresh, info = envs.reset(options={"reset_mask": np.array([False, True, False])})
    assert (fresh["face_up"][[0, 2], 0] == 1).all() and not fresh["face_up"][1].any()
    assert list(info["_turns"]) == [False, True, False]


def test_bad_actions_and_arguments_raise_clear_errors():
    envs = ConcentrationVectorEnv(num_envs=2, rules="toddler")
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(np.zeros(2, dtype=int))
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        envs.step(np.zeros(3, dtype=int))
    with pytest.raises(TypeError, match="integer"):
        envs.step(np.zeros(2))
    with pytest.raises(ValueError, match=r"action 20 \(game 1\) is out of range; valid flips are 0..19"):
        envs.step(np.array([0, 20]))
    strict = ConcentrationVectorEnv(num_envs=2, rules="toddler", illegal_action="raise")
    strict.reset(seed=0)
    strict.step(np.array([4, 4]))
    before = strict.batch.state.copy()
    with pytest.raises(IllegalFlipError, match=r"position 4 \(game 0\).*already face up"):
        strict.step(np.array([4, 5]))
    for name, value in vars(before).items():  # nothing changed in any game
        np.testing.assert_array_equal(value, getattr(strict.batch.state, name))
    with pytest.raises(ValueError, match="autoreset_mode"):
        ConcentrationVectorEnv(num_envs=2, autoreset_mode="Disabled")
    with pytest.raises(ValueError, match="num_envs"):
        ConcentrationVectorEnv(num_envs=0)
    with pytest.raises(ValueError, match="num_players"):
        ConcentrationVectorEnv(num_envs=2, num_players=2)


def test_a_rejected_step_in_next_step_mode_changes_nothing():
    """A game waiting to be reset next step (here truncated) stays as it was when another
    game's flip is rejected."""
    env = ConcentrationVectorEnv(2, rules="toddler", illegal_action="raise", max_episode_steps=2)
    env.reset(seed=0)
    env.step(np.array([0, 0]))
    env.reset(options={"reset_mask": np.array([False, True])})
    _, _, terminated, truncated, _ = env.step(np.array([1, 0]))
    assert truncated.tolist() == [True, False] and not terminated.any()
    before = env.batch.state.buffer.copy()
    with pytest.raises(IllegalFlipError, match="position 0 \\(game 1\\)"):
        env.step(np.array([5, 0]))  # game 1 flips its face-up card again
    assert np.array_equal(env.batch.state.buffer, before)
    assert env._pending.tolist() == [True, False]
    obs, rewards, terminated, truncated, _ = env.step(np.array([5, 1]))
    assert rewards[0] == 0 and not (terminated | truncated)[0] and not obs["face_up"][0].any()  # game 0 was redealt

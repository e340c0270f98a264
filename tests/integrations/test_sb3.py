"""The SB3 VecEnv adapter: same as a DummyVecEnv of single envs, and MaskablePPO trains on it."""

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

import concentration_env  # noqa: F401
from concentration_env.integrations.sb3 import ConcentrationSB3VecEnv, make_sb3_vec_env
from tests.helpers.batched import RULE_SETS, assert_same, play_alongside

NUM_ENVS = 5
STEPS = 300


@pytest.mark.parametrize("kwargs", RULE_SETS, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_same_as_dummy_vec_env_of_single_envs(kwargs):
    kwargs = dict(max_episode_steps=70, **kwargs)
    ours = make_sb3_vec_env(NUM_ENVS, **kwargs)
    reference = DummyVecEnv([lambda: gym.make("Concentration-v0", **kwargs)] * NUM_ENVS)
    assert ours.seed(21) == reference.seed(21)
    assert_same(ours.reset(), reference.reset(), "reset")
    assert_same(ours.reset_infos, reference.reset_infos, "reset infos")

    def compare(result, expected, where):
        assert_same(result, expected, where)
        assert_same(ours.reset_infos, reference.reset_infos, f"{where} reset infos")

    assert play_alongside(ours, reference, STEPS, 1, compare) > 0


def test_vec_env_api():
    venv = VecMonitor(make_sb3_vec_env(4, rules="toddler"))  # the API also reaches through wrappers
    assert isinstance(venv.unwrapped, ConcentrationSB3VecEnv)
    assert venv.has_attr("action_masks") and venv.get_attr("rules", indices=[1, 2]) == [venv.unwrapped.rules] * 2
    venv.set_attr("render_mode", None)
    assert venv.env_is_wrapped(gym.Wrapper) == [False] * 4
    venv.seed(0)
    obs = venv.reset()
    assert obs["cards"].shape == (4, 20) and venv.observation_space["cards"].shape == (20,)
    masks = venv.env_method("action_masks", indices=[0, 3])
    assert len(masks) == 2 and masks[0].dtype == bool and masks[0].all()
    with pytest.raises(ValueError, match=r"action 20 \(game 0\) is out of range"):
        venv.step(np.array([20, 0, 0, 0]))
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        venv.step(np.array([0, 0]))
    with pytest.raises(AttributeError):
        venv.get_attr("no_such_attribute")


def test_maskable_ppo_learns_on_the_adapter():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    # Illegal flips raise under these rules, so training proves the masks reach the policy.
    venv = VecMonitor(make_sb3_vec_env(8, rules="toddler", illegal_action="raise"))
    model = sb3_contrib.MaskablePPO(
        "MultiInputPolicy",
        venv,
        n_steps=32,
        batch_size=128,
        n_epochs=1,
        policy_kwargs={"net_arch": [32]},
        seed=0,
        device="cpu",
    )
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    assert len(model.ep_info_buffer) > 0  # VecMonitor saw whole episodes

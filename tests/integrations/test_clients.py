"""The envs under the RL libraries people bring, used the way those libraries' users write it.

Each test needs its client from the ``clients`` extra and is skipped where that is not installed
(so the main venv skips them); ``make test`` runs this file in ``.venv-clients``. Decks are small so
that games are a few dozen flips and the whole module stays within a few minutes.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import concentration_env  # noqa: F401  (registers the env ids)
from concentration_env import concentration_v0, duel_v0

SMALL = {"ranks": 2, "matching": "rank"}  # 8 cards, 4 pairs: two players tie at 2-2 often enough
SOLO_IDS = ("Concentration-v0", "ConcentrationVs-v0")


def _legal(mask, action) -> bool:
    return bool(np.asarray(mask).astype(bool)[int(action)])


# --- TorchRL -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def torchrl():
    return pytest.importorskip("torchrl")


def _gym_env(env_id: str):
    from torchrl.envs import GymEnv

    # Categorical actions (an index, as Gymnasium's Discrete) so that the mask and the action line up.
    return GymEnv(env_id, categorical_action_encoding=True, **SMALL)


def _masked(env):
    from torchrl.envs import TransformedEnv
    from torchrl.envs.transforms import ActionMask

    return TransformedEnv(env, ActionMask())


@pytest.mark.parametrize("env_id", SOLO_IDS)
def test_torchrl_gym_env_specs_and_masked_rollout(torchrl, env_id):
    from torchrl.envs.utils import check_env_specs

    env = _masked(_gym_env(env_id))
    check_env_specs(env, seed=0)
    # rand_action samples the action spec, which ActionMask restricts to the legal flips.
    rollout = env.rollout(200, break_when_any_done=False)
    masks, actions = rollout["action_mask"], rollout["action"]
    assert all(_legal(mask, action) for mask, action in zip(masks, actions))
    assert rollout["next", "done"].any(), "200 flips of an 8-card game end at least one game"
    env.close()


def _masked_random_policy(tensordict):
    """Uniform over the flips the observation's mask allows, for any batch of envs."""
    import torch

    mask = tensordict["action_mask"].float()
    tensordict["action"] = torch.multinomial(mask.reshape(-1, mask.shape[-1]), 1).reshape(mask.shape[:-1])
    return tensordict


def _check_masked_rollout(env, num_envs: int) -> None:
    """60 masked random flips in each of a batched TorchRL env's games: every flip legal, every game ended."""
    rollout = env.rollout(60, policy=_masked_random_policy, break_when_any_done=False)
    assert rollout.batch_size == (num_envs, 60)
    for masks, actions in zip(rollout["action_mask"], rollout["action"]):
        assert all(_legal(mask, action) for mask, action in zip(masks, actions))
    assert rollout["next", "done"].any(dim=1).all(), "60 flips end a game in each env"


def test_torchrl_serial_env(torchrl):
    from torchrl.envs import SerialEnv
    from torchrl.envs.utils import check_env_specs

    # The policy reads each env's own mask: an ActionMask over the batch keeps, after one env's reset,
    # the other env's mask from its last reset (TorchRL 0.14), so rand_action would draw illegal flips.
    env = SerialEnv(2, lambda: _gym_env("Concentration-v0"))
    check_env_specs(env, seed=0)
    _check_masked_rollout(env, num_envs=2)
    env.close()


@pytest.mark.parametrize("env_id", SOLO_IDS)
def test_torchrl_gym_wrapper_over_native_vector_env(torchrl, env_id):
    """As docs/compatibility.md says: GymWrapper takes the native vector env made with same-step autoreset."""
    from torchrl.envs import GymWrapper
    from torchrl.envs.utils import check_env_specs

    vector = gym.make_vec(env_id, num_envs=3, autoreset_mode="SameStep", **SMALL)
    env = GymWrapper(vector, categorical_action_encoding=True)
    check_env_specs(env, seed=0)
    _check_masked_rollout(env, num_envs=3)
    env.close()


def test_torchrl_pettingzoo_wrapper(torchrl):
    from torchrl.envs import PettingZooWrapper
    from torchrl.envs.utils import check_env_specs

    env = PettingZooWrapper(env=concentration_v0.env(**SMALL), use_mask=True, categorical_actions=True, seed=0)
    check_env_specs(env)
    rollout = env.rollout(100, break_when_any_done=False)
    # An AEC env becomes one group per seat; a group's "mask" says whether its seat was on turn.
    assert sorted(env.group_map) == ["player_0", "player_1"]
    for group in env.group_map:
        on_turn = rollout[group, "mask"].squeeze(-1)
        masks, actions = rollout[group, "action_mask"].squeeze(1), rollout[group, "action"].squeeze(1)
        assert on_turn.any()
        assert all(_legal(masks[t], actions[t]) for t in on_turn.nonzero().flatten().tolist())
    assert rollout["next", "done"].any(), "100 flips of an 8-card game end at least one game"
    env.close()


# --- Tianshou ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tianshou():
    return pytest.importorskip("tianshou")


def _tianshou_env(make=concentration_v0.env, **fields):
    from tianshou.env.pettingzoo_env import PettingZooEnv

    return PettingZooEnv(make(**fields))


def _random_algorithm(env):
    from tianshou.algorithm import MARLRandomDiscreteMaskedOffPolicyAlgorithm

    return MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)


TABLES = {
    "two_players": (concentration_v0.env, SMALL),
    "three_players": (concentration_v0.env, {**SMALL, "num_players": 3}),
    "duel": (duel_v0.env, SMALL),
}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_tianshou_collector_over_wins_and_ties(tianshou, table):
    """Tianshou's tic-tac-toe pattern with random players: the buffer holds won and tied games alike."""
    from tianshou.algorithm import MultiAgentOffPolicyAlgorithm
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv

    make, fields = TABLES[table]
    env = _tianshou_env(make, **fields)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[_random_algorithm(env) for _ in env.agents], env=env)
    envs = DummyVectorEnv([lambda: _tianshou_env(make, **fields) for _ in range(4)])
    envs.seed(0)
    np.random.seed(0)  # the random players draw from NumPy's global generator
    collector = Collector[CollectStats](algorithm, envs, VectorReplayBuffer(4000, len(envs)))
    collector.reset()
    stats = collector.collect(n_episode=60)
    assert stats.n_collected_episodes >= 60
    buffer = collector.buffer
    rows = buffer.sample_indices(0)  # every stored step
    winners, done = buffer.info.winners[rows], buffer.done[rows]
    assert winners.shape == (len(rows), len(env.agents)) and winners.dtype == np.bool_
    # Fixed-shape winners on every stored step: no seat before a game's end, one or more at it.
    assert not winners[~done].any()
    ended = winners[done].sum(axis=1)
    assert (ended >= 1).all()
    assert (ended == 1).any() and (ended > 1).any(), "the games include both wins and ties"


def test_tianshou_trainer_dqn_against_random(tianshou, tmp_path):
    """A short off-policy trainer run: DQN for one seat over the flat observation, random for the other."""
    import torch
    from tianshou.algorithm import DQN, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net

    # A greedy untrained learner may flip the same two known cards forever: max_turns ends such games.
    fields = {**SMALL, "observation_format": "box", "max_turns": 40}
    env = _tianshou_env(**fields)
    observation_space = env.observation_space["observation"]
    torch.manual_seed(0)
    net = Net(state_shape=observation_space.shape, action_shape=int(env.action_space.n), hidden_sizes=[64])
    learner = DQN(
        policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.2, eps_inference=0.05),
        optim=AdamOptimizerFactory(lr=1e-3),
        n_step_return_horizon=1,
        gamma=0.9,
        target_update_freq=50,
    )
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, _random_algorithm(env)], env=env)
    train_envs = DummyVectorEnv([lambda: _tianshou_env(**fields) for _ in range(2)])
    test_envs = DummyVectorEnv([lambda: _tianshou_env(**fields) for _ in range(2)])
    train_envs.seed(0)
    test_envs.seed(1)
    train_collector = Collector[CollectStats](
        algorithm, train_envs, VectorReplayBuffer(2000, len(train_envs)), exploration_noise=True
    )
    test_collector = Collector[CollectStats](algorithm, test_envs, exploration_noise=True)
    train_collector.reset()
    train_collector.collect(n_step=64)
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=train_collector,
            test_collector=test_collector,
            max_epochs=1,
            epoch_num_steps=300,
            collection_step_num_env_steps=10,
            test_step_num_episodes=4,
            batch_size=32,
            update_step_num_gradient_steps_per_sample=0.1,
            test_in_training=False,
            show_progress=False,
            multi_agent_return_reduction=lambda returns: returns[:, 0],
        )
    )
    assert result.update_step >= 1 and result.train_step >= 300
    assert np.isfinite(result.best_reward)


# --- Gymnasium's vector envs ---------------------------------------------------------------------


def _make(env_id: str):
    return gym.make(env_id, **SMALL)


@pytest.mark.parametrize("context", ["fork", "spawn"])
@pytest.mark.parametrize("env_id", SOLO_IDS)
def test_gymnasium_async_vector_env(env_id, context):
    if context not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {context!r} start method on this platform")
    envs = gym.vector.AsyncVectorEnv([lambda: _make(env_id)] * 2, context=context)
    try:
        observations, _ = envs.reset(seed=0)
        rng = np.random.default_rng(0)
        episodes = 0
        for _ in range(80):
            # A finished game's last observation has no legal flip; Gymnasium's next-step autoreset
            # ignores the action sent with it, so any index does.
            legal = [np.flatnonzero(mask) for mask in observations["action_mask"]]
            actions = np.array([rng.choice(flips) if flips.size else 0 for flips in legal])
            observations, rewards, terminated, truncated, _ = envs.step(actions)
            assert rewards.shape == (2,)
            episodes += int(np.sum(terminated | truncated))
        assert episodes >= 2, "80 flips of an 8-card game end a game in each env"
    finally:
        envs.close()


# --- SuperSuit -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def supersuit():
    return pytest.importorskip("supersuit")


def _flat_env():
    return concentration_v0.env(observation_format="flat", **SMALL)


SUPERSUIT_WRAPPERS = {
    "flatten_v0": lambda ss, env: ss.flatten_v0(env),
    "dtype_v0": lambda ss, env: ss.dtype_v0(env, np.float32),
    "normalize_obs_v0": lambda ss, env: ss.normalize_obs_v0(env, env_min=0.0, env_max=1.0),
    "frame_stack_v1": lambda ss, env: ss.frame_stack_v1(env, 3),
    "agent_indicator_v0": lambda ss, env: ss.agent_indicator_v0(env),
    "pad_observations_v0": lambda ss, env: ss.pad_observations_v0(env),
}


@pytest.mark.parametrize("name", sorted(SUPERSUIT_WRAPPERS))
def test_supersuit_observation_wrappers(supersuit, name):
    """SuperSuit's observation wrappers take a plain Box: ``observation_format="flat"``, whose
    legal flips come in the infos, where ``api_test`` and a user's random game take them."""
    from pettingzoo.test import api_test

    env = SUPERSUIT_WRAPPERS[name](supersuit, _flat_env())
    api_test(env, num_cycles=200)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter(max_iter=500):
        observation, _, terminated, truncated, info = env.last()
        assert env.observation_space(agent).contains(observation)
        if terminated or truncated:
            action = None
        else:
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        env.step(action)
    assert not env.agents, "the game ends within 500 moves"


# --- Stable-Baselines3: PettingZoo's action-masking tutorial -------------------------------------

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "scripts" / "examples" / "sb3_action_mask.py"


def test_sb3_action_mask_tutorial_from_the_command_line(tmp_path):
    """The tutorial script run as its readers run it: a few thousand flips of self-play, saved and replayed."""
    pytest.importorskip("sb3_contrib")
    out = tmp_path / "model"
    command = [sys.executable, str(TUTORIAL), "--steps", "2048", "--ranks", "2", "--out", str(out)]
    done = subprocess.run(
        command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert f"saved {out}.zip" in done.stdout
    from sb3_contrib import MaskablePPO

    assert MaskablePPO.load(out).num_timesteps >= 2048

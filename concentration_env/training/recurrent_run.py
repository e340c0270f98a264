"""The training loop around :class:`RecurrentPPO`: evaluation, logs, checkpoints, Ctrl-C."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import torch

from concentration_env.core import compile_rules
from concentration_env.training.envs import make_vec_env
from concentration_env.training.recurrent import RecurrentPPO, RecurrentPPOSettings, masked_distribution, obs_tensors

EVAL_ENVS = 16


def evaluate_recurrent(agent: RecurrentPPO, venv, episodes: int) -> np.ndarray:
    """Returns of ``episodes`` games, the same number from every env of ``venv`` (so short
    games are not over-sampled). Flips are sampled from the policy: an argmax over an
    imperfect memory can repeat the same missed pair forever."""
    num_envs = venv.num_envs
    per_env = math.ceil(episodes / num_envs)
    returns = [[] for _ in range(num_envs)]
    running = np.zeros(num_envs)
    obs = obs_tensors(venv.reset())
    memory = agent.net.initial_state(num_envs, agent.num_cards)
    with torch.no_grad():
        while min(len(r) for r in returns) < per_env:
            logits, _, memory = agent.net.step(agent.net.card_inputs(obs), memory)
            action = masked_distribution(logits, obs["action_mask"].bool()).sample()
            next_obs, reward, done, _ = venv.step(action.numpy())
            running += reward
            for index in np.flatnonzero(done):
                returns[index].append(running[index])
                running[index] = 0.0
            memory = memory * torch.as_tensor(1.0 - done, dtype=torch.float32)[:, None, None]
            obs = obs_tensors(next_obs)
    return np.concatenate([r[:per_env] for r in returns])[:episodes]


def train_recurrent(config, rules, run_dir: Path, log, progress_bar: bool) -> tuple[int, bool]:
    """Train a recurrent PPO agent for ``config``; returns (steps, interrupted)."""
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    settings = RecurrentPPOSettings(**config.hyperparameters)
    venv = make_vec_env(config, rules, config.num_envs, config.seed)
    eval_env = make_vec_env(config, rules, min(EVAL_ENVS, config.eval_episodes), config.seed + 10_000)
    agent = RecurrentPPO(venv, compile_rules(rules).num_faces, settings, seed=config.seed)
    writer = SummaryWriter(str(run_dir / "tb"))
    checkpoints = run_dir / "checkpoints"
    checkpoints.mkdir(exist_ok=True)
    bar = tqdm(total=config.total_timesteps, unit="step", disable=not progress_bar)
    marks = {"eval": 0, "checkpoint": 0}
    episode_returns: list[float] = []

    def on_rollout(agent: RecurrentPPO, stats: dict) -> bool:
        steps = agent.num_timesteps
        bar.update(steps - bar.n)
        episode_returns.extend(info["episode"]["r"] for info in stats["episodes"] if "episode" in info)
        for key in ("policy_loss", "value_loss", "entropy"):
            writer.add_scalar(f"train/{key}", stats[key], steps)
        if episode_returns:
            writer.add_scalar("rollout/ep_rew_mean", float(np.mean(episode_returns[-100:])), steps)
        if steps - marks["eval"] >= config.eval_freq:
            marks["eval"] = steps
            row = log.add(steps, evaluate_recurrent(agent, eval_env, config.eval_episodes))
            writer.add_scalar("eval/mean_reward", row["mean_reward"], steps)
            writer.add_scalar("eval/mean_moves", row["mean_moves"], steps)
            bar.set_postfix(moves=f"{row['mean_moves']:.1f}")
        if steps - marks["checkpoint"] >= config.checkpoint_freq:
            marks["checkpoint"] = steps
            agent.save(checkpoints / f"model_{steps}_steps.pt")
        return True

    interrupted = False
    try:
        agent.learn(config.total_timesteps, on_rollout)
    except KeyboardInterrupt:
        interrupted = True
        print(f"\ninterrupted at {agent.num_timesteps} steps: saving the model")
    bar.close()
    if marks["eval"] != agent.num_timesteps and not interrupted:
        log.add(agent.num_timesteps, evaluate_recurrent(agent, eval_env, config.eval_episodes))
    agent.save(run_dir / "final_model.pt")
    writer.close()
    venv.close()
    eval_env.close()
    return agent.num_timesteps, interrupted

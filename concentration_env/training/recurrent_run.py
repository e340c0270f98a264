"""The training loop around :class:`RecurrentPPO`: evaluation, logs, checkpoints, Ctrl-C."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import numpy as np

from concentration_env.game.core import compile_rules
from concentration_env.game.rules import Rules
from concentration_env.training.config import RAW_MEMORY_NETWORKS, TrainConfig
from concentration_env.training.envs import make_vec_env
from concentration_env.training.learners import LinearDecay, learning_rate
from concentration_env.training.model_policy import ModelPolicy
from concentration_env.training.recall_attention import RecallAttentionNet
from concentration_env.training.recurrent import RecurrentPPO, RecurrentPPOSettings
from concentration_env.training.run_folder import keep_best_at_resume, latest_model


def build_agent(config: TrainConfig, rules: Rules, venv: Any) -> RecurrentPPO:
    """A fresh learner for ``config`` on ``venv``; only the engineered network is given the
    rules' match table (the raw networks are built from the observation space alone)."""
    settings = RecurrentPPOSettings(**config.hyperparameters)
    match = None if config.network in RAW_MEMORY_NETWORKS else compile_rules(rules).match
    agent = RecurrentPPO(venv, settings, seed=config.seed, network=config.network, match=match)
    if settings.policy_from is not None:  # only card_recall_attention takes it (the config checks)
        cast(RecallAttentionNet, agent.net).start_from(settings.policy_from)
    return agent


def train_recurrent(
    config: TrainConfig, rules: Rules, run_dir: Path, log: Any, progress_bar: bool, resume: bool = False
) -> tuple[int, bool]:
    """Train a recurrent PPO agent for ``config``; returns (steps, interrupted). ``resume``
    carries on from the run folder's latest model, on fresh deals, up to ``total_timesteps``."""
    from torch.utils.tensorboard import SummaryWriter
    from tqdm import tqdm

    latest = latest_model(run_dir) if resume else None
    done = 0 if latest is None else latest[1]
    venv = make_vec_env(config, rules, config.num_envs, config.seed + done)  # fresh deals after a resume
    if latest is None:
        agent = build_agent(config, rules, venv)
    else:
        settings = RecurrentPPOSettings(**config.hyperparameters)
        agent = RecurrentPPO.resume(latest[0], venv, settings, done, seed=config.seed + done)
        print(f"resuming from {latest[0]} at {done} steps")
    decay = learning_rate(config)
    if isinstance(decay, LinearDecay):  # a function of the env step, so a resumed run carries on along it
        agent.schedule = lambda steps: decay(1.0 - steps / decay.total)
    writer = SummaryWriter(str(run_dir / "tb"))
    checkpoints = run_dir / "checkpoints"
    checkpoints.mkdir(exist_ok=True)
    bar = tqdm(total=config.total_timesteps, initial=done, unit="step", disable=not progress_bar)
    marks = {"eval": log.last or 0, "checkpoint": done}
    episode_returns: list[float] = []

    def keep(path: Path) -> None:
        agent.save(path.with_suffix(".pt"))

    keep_best_at_resume(log.selected, done, run_dir, ".pt", keep)

    def on_rollout(agent: RecurrentPPO, stats: dict) -> bool:
        steps = agent.num_timesteps
        bar.update(steps - bar.n)
        episode_returns.extend(info["episode"]["r"] for info in stats["episodes"] if "episode" in info)
        for key in ("policy_loss", "value_loss", "entropy", "recall_loss", "learning_rate"):
            writer.add_scalar(f"train/{key}", stats[key], steps)
        if episode_returns:
            writer.add_scalar("rollout/ep_rew_mean", float(np.mean(episode_returns[-100:])), steps)
        if steps - marks["eval"] >= config.eval_freq:
            marks["eval"] = steps
            row = log.evaluate(steps, ModelPolicy.of_model(agent, config, rules), keep)
            writer.add_scalar("eval/moves", row["moves"], steps)
            writer.add_scalar("eval/misses", row["misses"], steps)
            bar.set_postfix(moves=f"{row['moves']:.1f}")
        if steps - marks["checkpoint"] >= config.checkpoint_freq:
            marks["checkpoint"] = steps
            agent.save(checkpoints / f"model_{steps}_steps.pt")
        return True

    interrupted = False
    try:  # the logs and envs close however the attempt ends: finished, interrupted, or stopped for a restart
        try:
            agent.learn(config.total_timesteps, on_rollout)
        except KeyboardInterrupt:
            interrupted = True
            print(f"\ninterrupted at {agent.num_timesteps} steps: saving the model")
        agent.save(run_dir / "final_model.pt")
        log.finish(agent.num_timesteps, ModelPolicy.of_model(agent, config, rules), keep)
    finally:
        bar.close()
        writer.close()
        venv.close()
    return agent.num_timesteps, interrupted

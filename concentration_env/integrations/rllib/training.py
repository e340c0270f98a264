"""PPO on the new API stack for this game (needs Ray): the algorithm config, the league's
policy pool, checkpoints that a killed run resumes from, and the headline numbers of a run.

The league is the simplest design that keeps both kinds of opponent honest: frozen
snapshots are RLModules of the learner's own class that are never trained
(``frozen_0``, ...; every ``snapshot_every`` iterations the oldest one is overwritten with
the learner's weights and synced to the env runners), chosen per game by the policy mapping;
the greedy baseline is not a module but is played inside the env
(:mod:`~concentration_env.integrations.rllib.multiagent`), by ``baselines``' own code.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import random
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from concentration_env.integrations.rllib.config import LEARNER, SHARED_MODULE, RLlibConfig
from concentration_env.integrations.rllib.env import ENV_NAME

CONFIG_FILE = "concentration_rllib.yaml"  # the run's config, saved in every checkpoint
PROGRESS_FILE = "progress.yaml"  # iteration, env steps and training time of a checkpoint
LATEST_FILE = "latest"  # in the checkpoint_dir: the name of the newest complete checkpoint
INSTALL_HINT = 'RLlib is not installed: pip install -e ".[rllib]" (see the README, "Scale-out with RLlib")'
KEEP_CHECKPOINTS = 2


def require_ray() -> None:
    """Fail with the install hint when the ``rllib`` extra is missing."""
    try:
        import ray.rllib  # noqa: F401
    except ImportError as error:
        raise ImportError(INSTALL_HINT) from error


def make_multiagent_env(env_config: dict):
    """RLlib env creator: the multi-player game as an RLlib ``MultiAgentEnv`` (see
    :class:`~concentration_env.integrations.rllib.multiagent.ConcentrationMultiAgentEnv`)."""
    from concentration_env.integrations.rllib.multiagent import ConcentrationMultiAgentEnv

    return ConcentrationMultiAgentEnv(env_config)


def shared_mapping(agent_id, episode, **kwargs) -> str:
    """Every seat plays the one shared module (self-play)."""
    return SHARED_MODULE


def seat_mapping(agent_id, episode, **kwargs) -> str:
    """Each seat plays its own module, named after the agent."""
    return agent_id


def league_mapping(agent_id, episode, *, frozen: tuple[str, ...], self_play_share: float, **kwargs) -> str:
    """The learner plays the shared module; each opponent plays it too (with probability
    ``self_play_share``) or a frozen snapshot, drawn per game and seat."""
    if agent_id == LEARNER or not frozen:
        return SHARED_MODULE
    draw = random.Random(f"{episode.id_}/{agent_id}")
    return SHARED_MODULE if draw.random() < self_play_share else draw.choice(frozen)


def module_spec(config: RLlibConfig):
    """The MultiRLModule spec: the trained modules and the frozen snapshots, one class."""
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from concentration_env.integrations.rllib.module import model_config, module_class

    cls, model = module_class(config.network), model_config(config)
    ids = config.module_ids() + config.frozen_ids()
    return MultiRLModuleSpec(rl_module_specs={mid: RLModuleSpec(module_class=cls, model_config=model) for mid in ids})


def mapping_fn(config: RLlibConfig) -> Callable:
    """The policy mapping of a run."""
    if config.league:
        return functools.partial(
            league_mapping, frozen=tuple(config.frozen_ids()), self_play_share=config.self_play_share
        )
    return shared_mapping if config.policy == "shared" else seat_mapping


def ppo_config(config: RLlibConfig):
    """The PPO algorithm config for a run (new API stack; failed env runners are restarted)."""
    require_ray()
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.tune.registry import register_env

    register_env(ENV_NAME, make_multiagent_env)
    return (
        PPOConfig()
        .environment(env=ENV_NAME, env_config=config.env_config())
        .env_runners(
            num_env_runners=config.num_env_runners,
            num_envs_per_env_runner=config.num_envs_per_env_runner,
            custom_resources_per_env_runner=dict(config.env_runner_resources),
        )
        .fault_tolerance(
            restart_failed_env_runners=config.max_env_runner_restarts > 0,
            max_num_env_runner_restarts=config.max_env_runner_restarts,
            delay_between_env_runner_restarts_s=1.0,
        )
        .multi_agent(
            policies=set(config.module_ids() + config.frozen_ids()),
            policy_mapping_fn=mapping_fn(config),
            policies_to_train=config.module_ids(),
        )
        .rl_module(rl_module_spec=module_spec(config))
        .training(
            train_batch_size_per_learner=config.train_batch_size,
            minibatch_size=config.minibatch_size,
            num_epochs=config.num_epochs,
            lr=config.lr,
            gamma=config.gamma,
            lambda_=config.gae_lambda,
            entropy_coeff=config.entropy_coeff,
        )
        .debugging(seed=config.seed)
    )


def build_algorithm(config: RLlibConfig):
    """A PPO ``Algorithm`` ready to ``train()`` (needs a running or startable Ray); the
    league's frozen slots start as copies of the learner."""
    algorithm = ppo_config(config).build_algo()
    snapshot(algorithm, config, config.frozen_ids())
    return algorithm


def snapshot(algorithm, config: RLlibConfig, slots) -> None:
    """Copy the shared module's weights into the frozen ``slots``, on the learner and on
    every env runner."""
    from ray.rllib.core import COMPONENT_RL_MODULE

    if not slots:
        return
    weights = algorithm.learner_group.get_weights(module_ids=[SHARED_MODULE])[SHARED_MODULE]
    algorithm.learner_group.set_weights(dict.fromkeys(slots, weights))
    # Straight to the runners: RLlib's own weight sync skips a runner whose weights sequence
    # number is current, which it is right after a training step.
    state = {COMPONENT_RL_MODULE: dict.fromkeys(slots, weights)}
    algorithm.env_runner_group.foreach_env_runner(lambda runner: runner.set_state(state), local_env_runner=True)


def save_checkpoint(
    algorithm, config: RLlibConfig, path: str | Path | None = None, progress: dict | None = None
) -> Path:
    """Save the algorithm, the run's config (which :class:`RLlibPolicy` reads back) and its
    progress into ``path`` (default: the config's ``checkpoint_dir``)."""
    path = Path(path or config.checkpoint_dir).absolute()
    algorithm.save_to_path(str(path))
    (path / CONFIG_FILE).write_text(yaml.safe_dump(config.to_mapping(), sort_keys=False))
    (path / PROGRESS_FILE).write_text(yaml.safe_dump(progress or {}, sort_keys=False))
    return path


def save_numbered(algorithm, config: RLlibConfig, progress: dict) -> Path:
    """Save ``checkpoint_dir/iteration_NNNNNN`` and then point ``latest`` at it (written
    last and atomically, so a driver killed mid-save leaves the previous one in charge);
    older numbered checkpoints beyond the newest two are removed."""
    root = Path(config.checkpoint_dir).absolute()
    path = save_checkpoint(algorithm, config, root / f"iteration_{progress['iteration']:06d}", progress)
    pointer = root / f"{LATEST_FILE}.tmp"
    pointer.write_text(path.name)
    os.replace(pointer, root / LATEST_FILE)
    for old in sorted(root.glob("iteration_*"))[:-KEEP_CHECKPOINTS]:
        shutil.rmtree(old, ignore_errors=True)
    return path


def latest_checkpoint(path: str | Path) -> Path | None:
    """The newest complete checkpoint under a run's ``checkpoint_dir`` (or ``path`` itself
    when it is a checkpoint); None when there is none."""
    path = Path(path).absolute()
    if (path / CONFIG_FILE).is_file():
        return path
    pointer = path / LATEST_FILE
    if pointer.is_file() and (path / pointer.read_text().strip() / CONFIG_FILE).is_file():
        return path / pointer.read_text().strip()
    return None


def read_progress(checkpoint: str | Path) -> dict:
    """The progress saved with a checkpoint (``iteration``, ``env_steps``, ``train_seconds``, ...)."""
    path = Path(checkpoint) / PROGRESS_FILE
    return dict(yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}


def episode_stats(result: dict) -> dict[str, float]:
    """The headline numbers of one ``Algorithm.train()`` result (those present): flips per
    game, games and steps sampled, each agent's mean return (``return/player_0``, ...;
    ``return/learner`` in a league) and the env runners restarted so far after failures."""
    runners = result.get("env_runners", {})
    keys = ("episode_len_mean", "num_episodes", "num_env_steps_sampled_lifetime")
    stats = {key: float(runners[key]) for key in keys if key in runners}
    for agent, value in sorted(runners.get("agent_episode_returns_mean", {}).items()):
        stats[f"return/{agent}"] = float(value)
    faults = result.get("fault_tolerance", {})
    if "num_remote_worker_restarts" in faults:
        stats["env_runner_restarts"] = float(faults["num_remote_worker_restarts"])
        stats["healthy_env_runners"] = float(faults.get("num_healthy_workers", 0))
    return stats


def train(config: RLlibConfig, resume: bool = False, log: Callable[[str], None] = print) -> Path:
    """Train ``config.iterations`` iterations in all (counting those of a resumed checkpoint),
    checkpointing every ``checkpoint_every`` and at the end; return the last checkpoint.
    ``resume`` continues from the newest checkpoint of ``checkpoint_dir`` (its config must
    be the same run's, iterations and env runner settings aside)."""
    progress = {"iteration": 0, "env_steps": 0, "train_seconds": 0.0, "env_runner_restarts": 0}
    found = latest_checkpoint(config.checkpoint_dir) if resume else None
    if resume and found is None:
        raise ValueError(f"--resume: no checkpoint in {config.checkpoint_dir}")
    if found is not None:
        progress.update(read_progress(found))
    # a resumed run samples new deals: the env runners' seeds move on with the iteration
    algorithm = build_algorithm(dataclasses.replace(config, seed=config.seed + int(progress["iteration"])))
    try:
        if found is not None:
            algorithm.restore_from_path(str(found))
            log(f"resumed from {found} at iteration {progress['iteration']}")
        start = time.perf_counter() - float(progress["train_seconds"])
        path = None
        while progress["iteration"] < config.iterations:
            stats = episode_stats(algorithm.train())
            progress["iteration"] += 1
            progress["env_steps"] = int(stats.get("num_env_steps_sampled_lifetime", progress["env_steps"]))
            progress["env_runner_restarts"] = int(stats.get("env_runner_restarts", 0))
            progress["train_seconds"] = round(time.perf_counter() - start, 1)
            iteration = int(progress["iteration"])
            if config.pool_size and iteration % config.snapshot_every == 0:
                snapshot(
                    algorithm,
                    config,
                    [config.frozen_ids()[(iteration // config.snapshot_every - 1) % config.pool_size]],
                )
            shown = "  ".join(f"{key}={value:.4g}" for key, value in stats.items())
            log(f"iteration {iteration}/{config.iterations} ({progress['train_seconds']:.0f}s): {shown}")
            last = iteration == config.iterations
            if last or (config.checkpoint_every and iteration % config.checkpoint_every == 0):
                path = save_numbered(algorithm, config, {**progress, "network": config.network, "tier": config.tier})
                log(f"checkpoint: {path}")
        return path or Path(latest_checkpoint(config.checkpoint_dir) or config.checkpoint_dir)
    finally:
        algorithm.stop()

"""Environments for training: the env a config plays, with its features, vectorised."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym

from concentration_env.envs.features import CardFeatures, vec_card_features
from concentration_env.game.rules import Rules
from concentration_env.training.config import TrainConfig

# Episode cap (flips) for training and evaluation envs, per card: far above what even random
# play needs to clear a deal (about 26 flips per card on 52 cards), low enough that a policy
# stuck repeating one missed pair (a deterministic evaluation early in training, an unmasked
# learner flipping illegally) ends its episode soon. Such a game counts with the misses it made.
FLIPS_PER_CARD_CAP = 40


def episode_cap(rules: Rules) -> int:
    """The time limit (flips) of training and evaluation envs: :data:`FLIPS_PER_CARD_CAP` per card."""
    return FLIPS_PER_CARD_CAP * rules.num_cards


def seat_and_opponent(config: TrainConfig, rules: Rules, index: int) -> tuple[int, str]:
    """Where the agent sits in env ``index`` of a multi-player config, and who plays the
    other seats: the seats take turns, then the next of ``opponents``."""
    players = rules.num_players
    return index % players, config.opponents[(index // players) % len(config.opponents)]


def base_env(config: TrainConfig, rules: Rules, index: int = 0) -> gym.Env:
    """Env number ``index`` of the config's game, before feature wrappers: solitaire, or the
    versus env (see :func:`seat_and_opponent`)."""
    cap = episode_cap(rules)
    if rules.num_players == 1:
        return gym.make(
            "Concentration-v0", rules=rules, observation_mode=config.observation_mode, max_episode_steps=cap
        )
    seat, opponent = seat_and_opponent(config, rules, index)
    return gym.make(
        "ConcentrationVs-v0",
        rules=rules,
        seat=seat,
        opponents=opponent,
        observation_mode=config.observation_mode,
        max_episode_steps=cap,
    )


def env_factory(config: TrainConfig, rules: Rules, index: int = 0, monitor: bool = True) -> Callable[[], gym.Env]:
    """A function building env ``index``, fully wrapped (what SB3's vec envs take)."""

    def make() -> gym.Env:
        env = base_env(config, rules, index)
        if monitor:
            from stable_baselines3.common.monitor import Monitor

            env = Monitor(env)
        if config.features != "raw":
            env = CardFeatures(env, config.features)
        return env

    return make


def make_vec_env(config: TrainConfig, rules: Rules, num_envs: int, seed: int, kind: str | None = None) -> Any:
    """An SB3 VecEnv of ``num_envs`` games for a config, seeded with ``seed``."""
    kind = kind or config.vec_env
    venv: Any  # an SB3 VecEnv (SB3 is imported on demand)
    if kind == "native":
        from stable_baselines3.common.vec_env import VecMonitor

        from concentration_env.integrations.sb3 import make_sb3_vec_env

        versus = {}
        if rules.num_players > 1:
            seats, opponents = zip(*(seat_and_opponent(config, rules, index) for index in range(num_envs)))
            versus = {"seats": list(seats), "opponents": list(opponents), "end_stalled": config.end_stalled_games}
        venv = VecMonitor(
            make_sb3_vec_env(
                num_envs=num_envs,
                rules=rules,
                observation_mode=config.observation_mode,
                max_episode_steps=episode_cap(rules),
                **versus,
            )
        )
        if config.features != "raw":
            venv = vec_card_features(venv, rules, config.features)
    else:
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

        cls = SubprocVecEnv if kind == "subproc" else DummyVecEnv
        venv = cls([env_factory(config, rules, index) for index in range(num_envs)])
    venv.seed(seed)
    return venv

"""Environments for training: the env a config plays, with its features, vectorised."""

from __future__ import annotations

from typing import Any, Callable

import gymnasium as gym

from concentration_env.wrappers import CardFeatures, vec_card_features

# Episode cap (flips) for training and evaluation envs, per card: far above what even random
# play needs to clear a deal (about 26 flips per card on 52 cards), low enough that a policy
# stuck repeating one missed pair (a deterministic evaluation early in training, an unmasked
# learner flipping illegally) ends its episode soon. Such a game counts with the misses it made.
FLIPS_PER_CARD_CAP = 40


def base_env(config, rules, index: int = 0) -> gym.Env:
    """Env number ``index`` of the config's game, before feature wrappers: solitaire, or the
    versus env (the agent in seat ``index % 2``, the next of ``opponents`` in the other)."""
    if rules.num_players == 1:
        return gym.make(
            "Concentration-v0",
            rules=rules,
            observation_mode=config.observation_mode,
            max_episode_steps=FLIPS_PER_CARD_CAP * rules.num_cards,
        )
    seat = index % rules.num_players
    return gym.make(
        "ConcentrationVs-v0",
        rules=rules,
        seat=seat,
        opponents=config.opponents[(index // rules.num_players) % len(config.opponents)],
        observation_mode=config.observation_mode,
        max_episode_steps=FLIPS_PER_CARD_CAP * rules.num_cards,
    )


def env_factory(config, rules, index: int = 0, monitor: bool = True) -> Callable[[], gym.Env]:
    """A function building env ``index``, fully wrapped (what SB3's vec envs take)."""

    def make() -> gym.Env:
        env = base_env(config, rules, index)
        if monitor:
            from stable_baselines3.common.monitor import Monitor

            env = Monitor(env)
        if config.features == "card_features":
            env = CardFeatures(env)
        return env

    return make


def make_vec_env(config, rules, num_envs: int, seed: int, kind: str | None = None) -> Any:
    """An SB3 VecEnv of ``num_envs`` games for a config, seeded with ``seed``."""
    kind = kind or config.vec_env
    if kind == "native":
        from stable_baselines3.common.vec_env import VecMonitor

        from concentration_env.sb3 import make_sb3_vec_env

        venv = VecMonitor(make_sb3_vec_env(num_envs=num_envs, rules=rules, observation_mode=config.observation_mode,
                                           max_episode_steps=FLIPS_PER_CARD_CAP * rules.num_cards))
        if config.features == "card_features":
            venv = vec_card_features(venv, rules)
    else:
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

        cls = SubprocVecEnv if kind == "subproc" else DummyVecEnv
        venv = cls([env_factory(config, rules, index) for index in range(num_envs)])
    venv.seed(seed)
    return venv

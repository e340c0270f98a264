"""The learners a config can name, and how each is built, saved and loaded."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import Any

import gymnasium as gym

from concentration_env.game.checks import check_choice

# Constructor arguments the training script sets itself, so configs may not.
MANAGED = {"policy", "env", "policy_kwargs", "seed", "tensorboard_log", "verbose", "device", "_init_setup_model"}


SB3_CLASSES = {
    "maskable_ppo": ("sb3_contrib", "MaskablePPO"),
    "ppo": ("stable_baselines3", "PPO"),
    "dqn": ("stable_baselines3", "DQN"),
}


def sb3_class(algo: str) -> type[Any]:
    """The SB3 / sb3-contrib class for an algo name (imported on demand)."""
    check_choice("algo", algo, tuple(SB3_CLASSES))
    module, name = SB3_CLASSES[algo]
    return getattr(importlib.import_module(module), name)


def learner_arguments(algo: str) -> tuple[str, ...]:
    """The hyperparameter names a config may set for ``algo``."""
    if algo == "recurrent_ppo":
        from concentration_env.training.recurrent import SETTINGS

        return SETTINGS
    parameters = inspect.signature(sb3_class(algo).__init__).parameters
    return tuple(name for name in parameters if name not in MANAGED | {"self", "args", "kwargs"})


# ``config`` below is a TrainConfig, typed Any: config.py imports this module.
def policy_for(config: Any, observation_space: gym.spaces.Space) -> Any:
    """The SB3 policy (class or name) for a config's features and network."""
    if config.network == "per_card":
        from concentration_env.training.networks import PerCardMaskablePolicy

        return PerCardMaskablePolicy
    if config.network == "card_attention":
        from concentration_env.training.attention import CardAttentionPolicy

        return CardAttentionPolicy
    return "MultiInputPolicy" if config.features == "raw" else "MlpPolicy"


def build_sb3(config: Any, venv: Any, tensorboard_log: str | None) -> Any:
    """A fresh SB3 model for ``config`` on ``venv``."""
    cls = sb3_class(config.algo)
    return cls(
        policy_for(config, venv.observation_space),
        venv,
        policy_kwargs=dict(config.policy_kwargs),
        seed=config.seed,
        tensorboard_log=tensorboard_log,
        verbose=0,
        device="cpu",
        **config.hyperparameters,
    )


def load_sb3(algo: str, path: str | Path) -> Any:
    """Load a saved SB3 model of the given algo."""
    return sb3_class(algo).load(str(path), device="cpu")

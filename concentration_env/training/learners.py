"""The learners a config can name, and how each is built, saved and loaded."""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

from concentration_env.game.checks import check_choice

# Constructor arguments the training script sets itself, so configs may not.
MANAGED = {"policy", "env", "policy_kwargs", "seed", "tensorboard_log", "verbose", "device", "_init_setup_model"}


# Hyperparameters of an SB3 learner that this package reads itself instead of the SB3 class:
# policy_from, a saved model whose weights start the policy (network: card_attention).
OWN_SETTINGS = ("policy_from",)

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
    names = tuple(name for name in parameters if name not in MANAGED | {"self", "args", "kwargs"})
    return (*names, *OWN_SETTINGS) if algo == "maskable_ppo" else names


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


@dataclass(frozen=True)
class LinearDecay:
    """A learning rate held at ``start`` up to env step ``decay_from``, then falling in a
    straight line to ``final`` at ``total`` steps.

    SB3 calls a schedule with the progress remaining, ``1 - steps / total``; its total counts
    a resumed run's earlier steps too, so the step, and the rate, are the same on resume."""

    start: float
    final: float
    decay_from: int
    total: int

    def __call__(self, progress_remaining: float) -> float:
        step = (1.0 - progress_remaining) * self.total
        share = min(1.0, max(0.0, (step - self.decay_from) / (self.total - self.decay_from)))
        return self.start + (self.final - self.start) * share


def learning_rate(config: Any) -> float | LinearDecay | None:
    """The ``learning_rate`` SB3 takes for ``config``: its constant, its decay, or None (SB3's default)."""
    start = config.hyperparameters.get("learning_rate")
    if config.learning_rate_decay_from is None:
        return start
    return LinearDecay(start, config.learning_rate_final, config.learning_rate_decay_from, config.total_timesteps)


def use_learning_rate(model: Any, config: Any) -> None:
    """Give a loaded model the config's learning rate (a resumed run may decay where its start did not)."""
    rate = learning_rate(config)
    if rate is not None:
        model.learning_rate = rate
        model._setup_lr_schedule()


def build_sb3(config: Any, venv: Any, tensorboard_log: str | None) -> Any:
    """A fresh SB3 model for ``config`` on ``venv``."""
    cls = sb3_class(config.algo)
    hyperparameters = dict(config.hyperparameters)
    start = hyperparameters.pop("policy_from", None)
    if (rate := learning_rate(config)) is not None:
        hyperparameters["learning_rate"] = rate
    model = cls(
        policy_for(config, venv.observation_space),
        venv,
        policy_kwargs=dict(config.policy_kwargs),
        seed=config.seed,
        tensorboard_log=tensorboard_log,
        verbose=0,
        device="cpu",
        **hyperparameters,
    )
    if start is not None:  # only card_attention takes it (the config checks)
        model.policy.start_from(start)
    return model


def load_sb3(algo: str, path: str | Path) -> Any:
    """Load a saved SB3 model of the given algo."""
    return sb3_class(algo).load(str(path), device="cpu")

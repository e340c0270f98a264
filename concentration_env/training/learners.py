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
# policy_from, a saved MaskablePPO model whose weights start the policy (start_policy_from).
OWN_SETTINGS = ("policy_from",)
MAX_NAMED = 3  # differences a refused policy_from names before "and N more"

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
    if start is not None:  # maskable_ppo only (the config checks)
        start_policy_from(model.policy, start)
    return model


def start_policy_from(policy: Any, path: str | Path) -> None:
    """Copy every weight of the saved MaskablePPO model at ``path`` into ``policy``, to carry
    a trained model on under new settings (another opponent, learning rate or lambda). The
    saved policy's class, observation and action spaces and the shape of each weight must be
    this policy's; otherwise one ``ValueError`` names what differs and nothing is copied.
    A ``card_attention`` policy checks its own settings instead and also takes a model of
    another game of the same deck (:meth:`CardAttentionPolicy.start_from`)."""
    if hasattr(policy, "start_from"):
        policy.start_from(path)
        return
    source = load_sb3("maskable_ppo", path).policy
    if type(source) is not type(policy):
        differ = [f"policy {type(source).__name__} (here {type(policy).__name__})"]
    else:
        ours, theirs = policy.state_dict(), source.state_dict()
        differ = [
            f"{label} {mine} (here {here})"
            for label, mine, here in (
                ("observation space", source.observation_space, policy.observation_space),
                ("action space", source.action_space, policy.action_space),
            )
            if mine != here
        ]
        for name in sorted(set(ours) | set(theirs)):
            mine, here = (tuple(weights[name].shape) if name in weights else "none" for weights in (theirs, ours))
            if mine != here:
                differ.append(f"{name} {mine} (here {here})")
    if differ:
        shown = ", ".join(differ[:MAX_NAMED]) + (
            f" and {len(differ) - MAX_NAMED} more" if len(differ) > MAX_NAMED else ""
        )
        raise ValueError(f"policy_from {path}: the model's {shown} must match this policy")
    policy.load_state_dict(source.state_dict())


def load_sb3(algo: str, path: str | Path) -> Any:
    """Load a saved SB3 model of the given algo."""
    return sb3_class(algo).load(str(path), device="cpu")

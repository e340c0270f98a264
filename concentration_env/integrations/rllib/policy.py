"""A trained RLlib module playing one seat behind the baselines' policy protocol, loaded from
a checkpoint without starting Ray."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from concentration_env.game.rules import Rules, resolve_rules
from concentration_env.game.seats import seat_of
from concentration_env.integrations.rllib.config import RLlibConfig
from concentration_env.integrations.rllib.env import MASK_KEY, OBS_KEY, Encoding
from concentration_env.integrations.rllib.training import CONFIG_FILE, latest_checkpoint, require_ray


class RLlibPolicy:
    """A module of an RLlib checkpoint playing one seat, behind the baselines' protocol.

    ``RLlibPolicy(checkpoint, rules)`` loads the trained RLModule (no Ray cluster needed;
    ``checkpoint`` is a checkpoint folder or a run's ``checkpoint_dir``, whose newest
    checkpoint is used) and checks that ``rules`` (a ``Rules``, a preset name, or None for
    the rules it was trained on) give the observation it was trained on. ``act(observation,
    action_mask)`` takes an observation of any env of the package (the multi-player env's
    inner Dict or its whole ``{"observation", "action_mask"}``, or the solitaire env's) and
    returns a legal position: the most likely one, or with ``explore=True`` a sample from the
    masked distribution (greedy play of a weak policy can retry one mismatched pair forever,
    so cap the game length when playing it greedily). ``reset_batch``/``act_batch``/``keep``
    serve the baselines' batched harness (``baselines.evaluate.play``). ``seat`` (an index or
    agent name) picks that seat's module when the run trained one policy per seat.
    """

    def __init__(
        self, checkpoint: str | Path, rules: Rules | str | None = None, *, seat: int | str = 0, explore: bool = False
    ):
        require_ray()
        from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE
        from ray.rllib.core.rl_module.rl_module import RLModule

        found = latest_checkpoint(checkpoint)
        if found is None:
            raise ValueError(
                f"{Path(checkpoint).absolute()}: not a checkpoint of scripts/train_rllib.py (no {CONFIG_FILE})"
            )
        self.config = RLlibConfig.from_yaml(found / CONFIG_FILE)
        trained = self.config.game_rules()
        self.rules = trained if rules is None else resolve_rules(rules, num_players=trained.num_players)
        seat = seat_of(seat, trained.num_players, "seat")
        module_id = self.config.module_ids()[0 if self.config.policy == "shared" else seat]
        path = found / COMPONENT_LEARNER_GROUP / COMPONENT_LEARNER / COMPONENT_RL_MODULE / module_id
        self.module = RLModule.from_checkpoint(str(path))
        self.module.eval()
        self.encoding = Encoding(self.config.network, self.rules)
        shape, trained_shape = self.encoding.space.shape, self.module.observation_space[OBS_KEY].shape
        if self.config.network == "mlp" and shape != trained_shape:
            raise ValueError(
                f"rules {self.rules} give observations of size {shape[0]}, but the checkpoint was trained "
                f"on size {trained_shape[0]} (its rules: {trained})"
            )
        if shape[1:] != trained_shape[1:]:  # per-card networks play any deck size with the same columns
            raise ValueError(
                f"rules {self.rules} give card rows of shape {shape[1:]}, but it was trained on {trained_shape[1:]}"
            )
        self.name = f"rllib:{found.parent.name if found.name.startswith('iteration_') else found.name}"
        self.tier = self.config.tier
        self.explore = explore
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        """Start a game; ``seed`` seeds the sampling used with ``explore=True``."""
        self.reset_batch([seed])

    def reset_batch(self, seeds) -> None:
        """Start ``len(seeds)`` games at once (the policy keeps no memory; this seeds sampling)."""
        self._rng = np.random.default_rng([seed for seed in seeds if seed is not None] or None)

    def keep(self, rows: np.ndarray) -> None:
        """Drop finished games from the batch (the harness's call; this policy holds no
        per-game state, its choice depends on the observation alone)."""

    def act(self, observation: dict, action_mask: np.ndarray) -> int:
        """The position to flip."""
        if "observation" in observation:
            observation = observation["observation"]
        if not np.any(action_mask):
            raise ValueError("action_mask allows no flip; this seat is not on turn")
        batch = {key: np.asarray(observation[key])[None] for key in self.encoding.board}
        batch[MASK_KEY] = np.asarray(action_mask)[None]
        return int(self.act_batch(batch)[0])

    def logits(self, observations: dict) -> np.ndarray:
        """The module's masked logits for a batch of ``(B, n)`` observations with their mask."""
        import torch
        from ray.rllib.core.columns import Columns

        mask = np.asarray(observations[MASK_KEY], dtype=np.float32)
        encoded = self.encoding.batch({**observations, MASK_KEY: mask})
        batch = {Columns.OBS: {OBS_KEY: torch.from_numpy(encoded), MASK_KEY: torch.from_numpy(mask)}}
        with torch.no_grad():
            return self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].numpy()

    def act_batch(self, observations: dict) -> np.ndarray:
        """Positions to flip for a batch of ``(B, n)`` observations with their ``action_mask``
        (a row with no legal flip, a finished game, gets position 0)."""
        mask = np.asarray(observations[MASK_KEY], dtype=np.float32)
        logits = self.logits(observations)
        if self.explore:  # Gumbel-max: a sample from the softmax of the logits
            logits = logits + self._rng.gumbel(size=logits.shape)
        return np.where(mask > 0, logits, -np.inf).argmax(axis=1)

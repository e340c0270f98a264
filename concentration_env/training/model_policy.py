"""``ModelPolicy``: a saved model behind the policy protocol of ``baselines``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from concentration_env.envs.features import FEATURE_SETS
from concentration_env.game.core import compile_rules
from concentration_env.game.rules import Rules
from concentration_env.training.config import TrainConfig, config_from_mapping
from concentration_env.training.run_folder import final_model_path, read_run_config

BOARD_KEYS = ("cards", "face_up", "removed", "action_mask")
BACK_KEY = "back"  # checkerboard decks only: each card's back colour, which raw models read
SCORES_KEY = "scores"  # games of 2 or more players: count_lead_features reads the lead from them


def torch_index(rows: np.ndarray) -> Any:
    """A numpy row selection (indices or booleans) as a torch index."""
    import torch

    return torch.as_tensor(np.asarray(rows))


def plays_deterministically(config: TrainConfig) -> bool:
    """How a saved model plays by default, as its training evaluations played: SB3 models
    deterministically, the recurrent model sampled."""
    return config.algo != "recurrent_ppo"


class ModelPolicy:
    """A trained model playing like any baseline policy.

    ``ModelPolicy(path, rules)``: ``path`` is a run folder, a model folder under ``models/``
    or the model file inside one (its ``config.yaml`` must lie next to it); ``rules`` are the
    rules of the game it will play (default: those it was trained on), which must have the
    same deck and matching rule. ``reset(seed=None)`` starts a game (and clears a recurrent
    model's memory); ``act(observation, action_mask)`` returns a flip. Like the baselines it
    is batch-first too: ``reset_batch(seeds)``, ``act_batch(observations)`` and ``keep(rows)``
    play many games at once (what ``baselines.evaluate.play`` calls).

    A model trained on ``visible`` observations is only ever shown the cards face up now and
    the captured ones, even when it is handed perfect-memory observations (the harness plays
    in memory mode): it must remember the rest itself. By default SB3 models act
    deterministically and the recurrent model samples its flips (an argmax over an imperfect
    memory can repeat one missed pair forever); ``deterministic=True`` or ``False`` asks for
    the other way. Sampling is seeded by ``reset`` (for SB3 models through torch's global
    generator, which SB3 samples from). Masked learners only pick legal flips;
    unmasked ones (PPO, DQN) may pick an illegal one, which the rules then handle.
    """

    def __init__(self, path: str | Path, rules: Rules | None = None, deterministic: bool | None = None):
        path = Path(path)
        folder = path if path.is_dir() else path.parent
        model_file = final_model_path(folder) if path.is_dir() else path
        config = config_from_mapping(read_run_config(folder), source=str(folder / "config.yaml"))
        trained = config.resolved_rules
        rules = trained if rules is None else rules
        if rules.num_cards != trained.num_cards or rules.matching != trained.matching:
            raise ValueError(
                f"{folder}: the model was trained on {trained.num_cards} cards with matching="
                f"{trained.matching!r}; it cannot play {rules.num_cards} cards with matching={rules.matching!r}"
            )
        if config.algo == "recurrent_ppo":
            from concentration_env.training.recurrent import RecurrentActor

            model: Any = RecurrentActor.load(model_file)
        else:
            from concentration_env.training.learners import load_sb3

            model = load_sb3(config.algo, model_file)
        self._setup(model, config, rules, folder.name, deterministic)

    @classmethod
    def of_model(cls, model: Any, config: TrainConfig, rules: Rules, name: str = "in training") -> ModelPolicy:
        """The policy of a model in memory: an SB3 model, or a ``RecurrentPPO`` learner."""
        if config.algo == "recurrent_ppo":
            from concentration_env.training.recurrent import RecurrentActor

            model = RecurrentActor(model.net, model.num_cards)
        policy = cls.__new__(cls)
        policy._setup(model, config, rules, name)
        return policy

    def _setup(
        self, model: Any, config: TrainConfig, rules: Rules, name: str, deterministic: bool | None = None
    ) -> None:
        self.config, self.rules, self.name = config, rules, name
        self.game = compile_rules(rules)
        recurrent = config.algo == "recurrent_ppo"
        self.deterministic = plays_deterministically(config) if deterministic is None else bool(deterministic)
        self._actor = model if recurrent else None
        self._model = None if recurrent else model
        self.reset()

    @property
    def stationary(self) -> bool:
        """A deterministic model without memory flips the same way whenever it sees the same
        observation (:func:`concentration_env.game.policy.is_stationary`)."""
        return self.deterministic and self._actor is None

    # -- the protocol of baselines ----------------------------------------------------------
    def reset(self, seed: int | None = None) -> None:
        """Start a new game."""
        self.reset_batch([seed])

    def act(self, observation: Mapping[str, Any], action_mask: np.ndarray) -> int:
        """The model's flip for one game's observation."""
        batch = {key: np.asarray(value)[None] for key, value in observation.items() if key != "action_mask"}
        batch["action_mask"] = np.asarray(action_mask, dtype=np.int8)[None]
        return int(self.act_batch(batch)[0])

    def reset_batch(self, seeds: Sequence[int | None]) -> None:
        """Start ``len(seeds)`` games (a recurrent model's sampling is seeded by ``seeds[0]``)."""
        if self._actor is not None:
            self._actor.reset(len(seeds), seeds[0])
        elif not self.deterministic and seeds[0] is not None:
            import torch

            torch.manual_seed(seeds[0])

    def keep(self, rows: np.ndarray) -> None:
        """Keep only games ``rows`` of the batch (the harness drops finished games)."""
        if self._actor is not None:
            self._actor.memory = self._actor.memory[torch_index(rows)]

    def reset_rows(self, rows: np.ndarray, seeds: Sequence[int | None]) -> None:
        """Start new games in ``rows`` of the batch (a recurrent model forgets them)."""
        if self._actor is not None:
            fresh = self._actor.net.initial_state(len(rows), self._actor.num_cards)
            self._actor.memory[torch_index(rows)] = fresh

    def act_rows(self, observations: Mapping[str, np.ndarray], rows: np.ndarray) -> np.ndarray:
        """Flips for games ``rows`` of the batch only (``observations`` holds those games)."""
        if self._actor is None:
            return self.act_batch(observations)
        memory, index = self._actor.memory, torch_index(rows)
        self._actor.memory = memory[index]
        try:
            chosen = self.act_batch(observations)
            memory[index] = self._actor.memory
        finally:
            self._actor.memory = memory
        return chosen

    def act_batch(self, observations: Mapping[str, np.ndarray]) -> np.ndarray:
        """Flips for a batch of ``(B, n)`` observations."""
        board = {key: np.asarray(observations[key]) for key in BOARD_KEYS}
        for key in (BACK_KEY, SCORES_KEY):
            if key in observations:
                board[key] = np.asarray(observations[key])
        if self.config.observation_mode == "visible":
            shown = board["face_up"].astype(bool) | board["removed"].astype(bool)
            board["cards"] = np.where(shown, board["cards"], 0)
        if self._actor is not None:
            return self._actor.act_batch(board, self.deterministic)
        assert self._model is not None  # _setup keeps either a recurrent actor or an SB3 model
        if self.config.features != "raw":
            model_obs: Any = FEATURE_SETS[self.config.features](self.game, board)
        else:
            model_obs = {key: board.get(key, observations.get(key)) for key in self._model.observation_space.spaces}
            missing = sorted(key for key, value in model_obs.items() if value is None)
            if missing:
                raise ValueError(
                    f"model {self.name!r} observes {', '.join(missing)}, which these observations lack "
                    f"(they have {', '.join(observations)})"
                )
        kwargs = {"action_masks": board["action_mask"].astype(bool)} if self.config.masked else {}
        actions, _ = self._model.predict(model_obs, deterministic=self.deterministic, **kwargs)
        return np.asarray(actions, dtype=np.int64).reshape(-1)

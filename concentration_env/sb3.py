"""Stable-Baselines3 ``VecEnv`` over the batched core (needs the ``train`` extra).

``make_sb3_vec_env(num_envs, rules=...)`` returns a VecEnv that ``sb3_contrib.MaskablePPO``
(and any SB3 algorithm) trains on directly: it steps every game in one compiled call instead
of looping over single envs as ``DummyVecEnv`` does, and gives the same observations,
rewards, dones and infos as a ``DummyVecEnv`` of ``gym.make`` envs seeded alike (the tests
check it). ``env_method("action_masks")`` returns each game's legal flips.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from concentration_env.batch import GameBatch
from concentration_env.rules import Rules
from concentration_env.solitaire import MAX_EPISODE_STEPS
from concentration_env.spaces import board_space


class ConcentrationSB3VecEnv(VecEnv):
    """``num_envs`` solitaire games as one SB3 ``VecEnv`` (autoreset on done, SB3-style).

    On a step that ends a game, ``infos[i]["terminal_observation"]`` holds its last
    observation, ``infos[i]["TimeLimit.truncated"]`` says whether the time limit cut it
    short, and the returned observation is the next game's first. Attributes and methods are
    shared by all games: ``get_attr``/``set_attr`` read and write the adapter, and
    ``env_method`` calls it once (``"action_masks"`` gives each game's own mask).
    """

    def __init__(
        self,
        num_envs: int,
        rules: Rules | str | None = None,
        observation_mode: str = "memory",
        max_episode_steps: int | None = MAX_EPISODE_STEPS,
        **rule_fields: Any,
    ):
        self.batch = GameBatch(num_envs, rules, observation_mode, max_episode_steps, **rule_fields)
        self.rules = self.batch.rules
        self.game = self.batch.game
        self.render_mode = None
        super().__init__(self.batch.num_envs, board_space(self.game), spaces.Discrete(self.game.num_cards))
        self._actions: np.ndarray | None = None

    # -- the VecEnv API ----------------------------------------------------------------------
    def reset(self):
        seeds = [None if seed is None else int(seed) for seed in self._seeds]
        self.batch.reset(seed=seeds)
        self._reset_seeds()
        self._reset_options()
        obs = self.batch.observe()
        self.reset_infos = self._infos(obs)
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self):
        if self._actions is None:
            raise RuntimeError("step_wait() called without step_async(actions)")
        actions, self._actions = self._actions, None
        batch = self.batch
        outcome, rewards, truncated = batch.step(actions)
        terminated = outcome.ended
        dones = terminated | truncated
        obs = batch.observe()
        infos = self._infos(obs)
        for i in np.flatnonzero(outcome.acted & (outcome.second | ~outcome.legal)):
            infos[i]["matched"] = bool(outcome.matched[i])
        cut = (truncated & ~terminated).tolist()
        for info, flag in zip(infos, cut):
            info["TimeLimit.truncated"] = flag
        if dones.any():
            rows = np.flatnonzero(dones)
            for i in np.flatnonzero(terminated):
                infos[i]["won"] = bool(batch.state.removed[i].all())
            for i in rows:
                infos[i]["terminal_observation"] = {key: value[i] for key, value in obs.items()}
            batch.deal(rows)
            obs = batch.observe()
            fresh = self._infos(obs)
            for i in rows:
                self.reset_infos[i] = fresh[i]
        return obs, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        """Nothing to release: the games live in this process's arrays."""

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seeds for the next ``reset()``: game ``i`` gets ``seed + i`` (SB3's convention)."""
        return super().seed(seed)

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        value = getattr(self, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: Any = None, **method_kwargs) -> list[Any]:
        rows = list(self._get_indices(indices))
        if method_name == "action_masks":
            return list(self.action_masks()[rows])
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result for _ in rows]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def action_masks(self) -> np.ndarray:
        """(num_envs, num_cards) bool: the legal flips of every game."""
        return self.batch.action_masks()

    # -- helpers ---------------------------------------------------------------------------
    def _infos(self, obs: dict[str, np.ndarray]) -> list[dict[str, Any]]:
        """Each game's single-env info (action mask and counters), as a list of dicts."""
        counters = {key: values.tolist() for key, values in self.batch.counters().items()}
        masks = obs["action_mask"].copy()
        return [
            {"action_mask": mask, "mismatches": mismatches, "pairs": pairs, "turns": turns}
            for mask, mismatches, pairs, turns in zip(
                masks, counters["mismatches"], counters["pairs"], counters["turns"]
            )
        ]


def make_sb3_vec_env(num_envs: int, rules: Rules | str | None = None, **kwargs: Any) -> ConcentrationSB3VecEnv:
    """An SB3 VecEnv of ``num_envs`` games (``**kwargs``: ``observation_mode``,
    ``max_episode_steps`` and rule fields). Wrap it in SB3's ``VecMonitor`` to log episode
    returns and lengths."""
    return ConcentrationSB3VecEnv(num_envs, rules=rules, **kwargs)

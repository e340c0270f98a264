"""Stable-Baselines3 ``VecEnv`` over the batched core (needs the ``train`` extra).

``make_sb3_vec_env(num_envs, rules=...)`` returns a VecEnv that ``sb3_contrib.MaskablePPO``
(and any SB3 algorithm) trains on directly: it steps every game in one compiled call instead
of looping over single envs as ``DummyVecEnv`` does, and gives the same observations,
rewards, dones and infos as a ``DummyVecEnv`` of ``gym.make`` envs seeded alike (the tests
check it). ``env_method("action_masks")`` returns each game's legal flips.

For games of two or more players it is the batched ``ConcentrationVs-v0``: the learner holds
one seat of every game (``seats``) and baseline policies (``opponents``) the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from concentration_env.envs.opponents import resolve_opponents
from concentration_env.envs.policy_specs import DEFAULT_OPPONENT
from concentration_env.envs.solitaire import MAX_EPISODE_STEPS
from concentration_env.envs.spaces import board_space, versus_space
from concentration_env.game.batch import GameBatch, VersusBatch, check_num_envs
from concentration_env.game.rules import FIELDS, Rules, resolve_rules
from concentration_env.game.seats import agent_name, table_rules

VERSUS_ARGUMENTS = ("seats", "opponents", "first_player")  # arguments only the versus game takes


class BatchVecEnv(VecEnv):
    """What the batched SB3 VecEnvs share: autoreset on done (SB3-style), seeding, and
    attributes and methods shared by all games (``get_attr``/``set_attr`` read and write the
    adapter, ``env_method`` calls it once; ``"action_masks"`` gives each game's own mask).

    On a step that ends a game, ``infos[i]["terminal_observation"]`` holds its last
    observation, ``infos[i]["TimeLimit.truncated"]`` says whether the time limit cut it
    short, and the returned observation is the next game's first.
    """

    def __init__(self, batch: GameBatch | VersusBatch, observation_space: spaces.Dict):
        self.batch = batch
        self.rules = batch.rules
        self.game = batch.game
        self.render_mode = None
        super().__init__(batch.num_envs, observation_space, spaces.Discrete(self.game.num_cards))
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
        rewards, terminated, truncated, notes = self._advance(actions)
        dones = terminated | truncated
        obs = self.batch.observe()
        infos = self._infos(obs)
        for i, note in notes.items():
            infos[i].update(note)
        cut = (truncated & ~terminated).tolist()
        for info, flag in zip(infos, cut):
            info["TimeLimit.truncated"] = flag
        if dones.any():
            rows = np.flatnonzero(dones)
            for i in rows.tolist():
                infos[i]["terminal_observation"] = {key: value[i] for key, value in obs.items()}
            self.batch.deal(rows)
            obs = self.batch.observe()
            fresh = self._infos(obs)
            for i in rows.tolist():
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

    # -- what each game adapter supplies -----------------------------------------------------
    def _advance(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, dict]]:
        """Step every game: rewards, terminated, truncated, and extra info entries by game."""
        raise NotImplementedError

    def _infos(self, obs: dict[str, np.ndarray]) -> list[dict[str, Any]]:
        """Each game's single-env info, as a list of dicts."""
        raise NotImplementedError


class ConcentrationSB3VecEnv(BatchVecEnv):
    """``num_envs`` solitaire games as one SB3 ``VecEnv`` (see :class:`BatchVecEnv`)."""

    batch: GameBatch

    def __init__(
        self,
        num_envs: int,
        rules: Rules | str | None = None,
        observation_mode: str = "memory",
        max_episode_steps: int | None = MAX_EPISODE_STEPS,
        **rule_fields: Any,
    ):
        batch = GameBatch(num_envs, rules, observation_mode, max_episode_steps, **rule_fields)
        super().__init__(batch, board_space(batch.game))

    def _advance(self, actions):
        batch = self.batch
        outcome, rewards, truncated = batch.step(actions)
        terminated = outcome.ended
        notes = {int(i): {"matched": bool(outcome.matched[i])} for i in np.flatnonzero(outcome.turn_ended)}
        for i in np.flatnonzero(terminated):
            notes.setdefault(int(i), {})["won"] = bool(outcome.won[i])
        return rewards, terminated, truncated, notes

    def _infos(self, obs: dict[str, np.ndarray]) -> list[dict[str, Any]]:
        counters = {key: values.tolist() for key, values in self.batch.counters().items()}
        masks = obs["action_mask"].copy()
        return [
            {"action_mask": mask, "mismatches": mismatches, "pairs": pairs, "turns": turns}
            for mask, mismatches, pairs, turns in zip(
                masks, counters["mismatches"], counters["pairs"], counters["turns"]
            )
        ]


class ConcentrationVsSB3VecEnv(BatchVecEnv):
    """``num_envs`` games of ``ConcentrationVs-v0`` as one SB3 ``VecEnv`` (see
    :class:`BatchVecEnv` and :class:`concentration_env.game.batch.VersusBatch`): game ``i`` gives
    what ``gym.make("ConcentrationVs-v0", seat=seats[i], opponents=opponents[i])`` gives.
    ``**kwargs`` are :class:`VersusBatch`'s (``num_players``, ``seats``, ``opponents``,
    ``first_player``, ``observation_mode`` and rule fields)."""

    batch: VersusBatch

    def __init__(
        self,
        num_envs: int,
        rules: Rules | str | None = None,
        max_episode_steps: int | None = MAX_EPISODE_STEPS,
        **kwargs: Any,
    ):
        num_players = kwargs.pop("num_players", None)
        rule_fields = {key: kwargs.pop(key) for key in list(kwargs) if key in FIELDS}
        table = table_rules(rules, num_players, **rule_fields)
        opponents = resolve_opponents(kwargs.pop("opponents", DEFAULT_OPPONENT), table, check_num_envs(num_envs))
        batch = VersusBatch(num_envs, table, opponents=opponents, max_episode_steps=max_episode_steps, **kwargs)
        super().__init__(batch, versus_space(batch.game, batch.rules.num_players))
        self.agents = [agent_name(int(seat)) for seat in batch.seats]

    def _advance(self, actions):
        rewards, terminated, truncated = self.batch.step(actions)
        notes = {}
        if terminated.any():
            winners = self.batch.winners()
            notes = {int(i): {"winners": winners[i]} for i in np.flatnonzero(terminated)}
        return rewards, terminated, truncated, notes

    def _infos(self, obs: dict[str, np.ndarray]) -> list[dict[str, Any]]:
        # Fixed-shape entries in seat order, as the single env gives (winners: all False
        # until a game ends; ``_advance`` fills in those that did).
        masks = obs["action_mask"].copy()
        scores = self.batch.require_reset().scores.copy()
        winners = np.zeros(scores.shape, dtype=bool)
        return [
            {"action_mask": mask, "winners": won, "scores": points, "agent": agent}
            for mask, won, points, agent in zip(masks, winners, scores, self.agents)
        ]


def make_sb3_vec_env(num_envs: int, rules: Rules | str | None = None, **kwargs: Any) -> BatchVecEnv:
    """An SB3 VecEnv of ``num_envs`` games. Solitaire (``**kwargs``: ``observation_mode``,
    ``max_episode_steps`` and rule fields), or, for two or more players or when ``seats``,
    ``opponents`` or ``first_player`` is given, the batched ``ConcentrationVs-v0`` (those
    arguments as in :class:`ConcentrationVsSB3VecEnv`). Wrap it in SB3's ``VecMonitor`` to
    log episode returns and lengths."""
    rule_fields = {key: value for key, value in kwargs.items() if key in FIELDS}
    if any(key in kwargs for key in VERSUS_ARGUMENTS) or resolve_rules(rules, **rule_fields).num_players > 1:
        return ConcentrationVsSB3VecEnv(num_envs, rules=rules, **kwargs)
    return ConcentrationSB3VecEnv(num_envs, rules=rules, **kwargs)

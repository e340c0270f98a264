"""Many solitaire games stepped together on the one core: the engine of the batched adapters.

:class:`GameBatch` holds ``num_envs`` games in one :class:`concentration_env.core.State` and
gives each game its own random generator, seeded the way Gymnasium seeds a list of single
envs (game ``i`` gets ``seed + i``). Game ``i`` therefore deals and plays exactly like a
``ConcentrationEnv`` reset with that seed, which the tests check flip by flip. The native
Gymnasium vector env (:mod:`concentration_env.vector`) and the Stable-Baselines3 VecEnv
(:mod:`concentration_env.sb3`) are thin adapters over it.

Stepping is one compiled call for the whole batch; the only Python loop is over the games
being dealt a new layout (a finished game reshuffles with its own generator).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium.utils import seeding

from concentration_env import core
from concentration_env.rules import Rules, resolve_rules
from concentration_env.solitaire import check_observation_mode

INFO_COUNTERS = ("mismatches", "pairs", "turns")


def check_num_envs(num_envs: Any) -> int:
    """Validate a number of games; a clear error otherwise."""
    if not isinstance(num_envs, (int, np.integer)) or isinstance(num_envs, bool) or num_envs < 1:
        raise ValueError(f"invalid num_envs={num_envs!r}; allowed: an int >= 1")
    return int(num_envs)


def check_max_episode_steps(steps: Any) -> int | None:
    """Validate a time limit in flips (None for no limit)."""
    if steps is not None and (not isinstance(steps, (int, np.integer)) or isinstance(steps, bool) or steps < 1):
        raise ValueError(f"invalid max_episode_steps={steps!r}; allowed: None or an int >= 1")
    return None if steps is None else int(steps)


class GameBatch:
    """``num_envs`` solitaire games on one core state, each with its own generator."""

    def __init__(
        self,
        num_envs: int,
        rules: Rules | str | None = None,
        observation_mode: str = "memory",
        max_episode_steps: int | None = None,
        **rule_fields: Any,
    ):
        self.num_envs = check_num_envs(num_envs)
        self.rules = resolve_rules(rules, **rule_fields)
        if self.rules.num_players != 1:
            raise ValueError(
                f"invalid rules: num_players={self.rules.num_players}; allowed: 1 for the batched solitaire envs"
            )
        self.memory = check_observation_mode(observation_mode)
        self.observation_mode = observation_mode
        self.max_episode_steps = check_max_episode_steps(max_episode_steps)
        self.game = core.compile_rules(self.rules)
        self.rngs: list[np.random.Generator | None] = [None] * self.num_envs
        self.state: core.State | None = None
        self.elapsed = np.zeros(self.num_envs, dtype=np.int64)  # flips this episode, per game

    # -- seeding and dealing ---------------------------------------------------------------
    def seed(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        """Reseed the games: an int seeds game ``i`` with ``seed + i``; a list gives each
        game its own seed (None keeps that game's generator going, as a single env's
        ``reset(seed=None)`` does). Returns the seeds used."""
        if seed is None:
            seeds = [None] * self.num_envs
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"got {len(seeds)} seeds for num_envs={self.num_envs}; pass one per game or an int")
        self.rngs = [rng if s is None else seeding.np_random(s)[0] for s, rng in zip(seeds, self.rngs)]
        return seeds

    def deal(self, rows: np.ndarray) -> None:
        """Start new games in ``rows`` (indices), each shuffled by its own generator."""
        for i in rows:
            if self.rngs[i] is None:  # first reset without a seed, as a single env would
                self.rngs[i] = seeding.np_random()[0]
        faces = np.stack([core.deal(self.game, self.rngs[i]) for i in rows])
        fresh = core.new_state(self.game, faces)
        if self.state is None:
            self.state = fresh
        else:
            self.state.assign(fresh, rows)
        self.elapsed[rows] = 0

    def reset(self, seed: int | Sequence[int | None] | None = None, mask: np.ndarray | None = None) -> None:
        """Deal new games: all of them, or those where the bool ``mask`` is True."""
        if seed is not None:
            self.seed(seed)
        if mask is None:
            rows = np.arange(self.num_envs)
        else:
            mask = np.asarray(mask)
            if mask.shape != (self.num_envs,) or mask.dtype != np.bool_:
                raise ValueError(f"reset mask must be a bool array of shape ({self.num_envs},); got {mask.dtype} {mask.shape}")
            if self.state is None and not mask.all():
                raise RuntimeError("the first reset must deal every game; call reset() without a mask")
            rows = np.flatnonzero(mask)
        self.deal(rows)

    # -- playing ---------------------------------------------------------------------------
    def require_reset(self) -> core.State:
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        return self.state

    def step(self, actions: Any, skip: np.ndarray | None = None) -> tuple[core.Outcome, np.ndarray, np.ndarray]:
        """Flip ``actions[i]`` in every game (games where ``skip`` is True sit this one out).
        Returns the core outcome, rewards (float64) and time-limit truncations."""
        state = self.require_reset()
        actions = self.check_actions(actions)
        if skip is not None and skip.any():
            actions = np.where(skip, 0, actions)  # their actions are ignored, as Gymnasium does
            state.done |= skip
        outcome = core.step(self.game, state, actions)
        self.elapsed += outcome.acted
        truncated = outcome.acted.copy()
        if self.max_episode_steps is None:
            truncated[:] = False
        else:
            truncated &= self.elapsed >= self.max_episode_steps
        rewards = np.where(outcome.missed, -1.0, 0.0)
        return outcome, rewards, truncated

    def check_actions(self, actions: Any) -> np.ndarray:
        """One integer position per game, as an array; a clear error otherwise."""
        array = np.asarray(actions)
        if array.shape != (self.num_envs,):
            raise ValueError(
                f"actions must have shape ({self.num_envs},): one flip position 0..{self.game.num_cards - 1} "
                f"per game; got shape {array.shape}"
            )
        if array.dtype.kind not in "iu":
            raise TypeError(f"actions must be integer flip positions, got dtype {array.dtype}")
        return array.astype(np.intp, copy=False)

    def observe(self) -> dict[str, np.ndarray]:
        """The batched observation, each array (num_envs, num_cards)."""
        return core.observe(self.game, self.require_reset(), self.memory)

    def counters(self) -> dict[str, np.ndarray]:
        """Per-game int64 ``mismatches``, ``pairs`` and ``turns`` (the single env's info counters)."""
        state = self.require_reset()
        turns = state.turns.astype(np.int64)
        mismatches = state.mismatches.astype(np.int64)
        # every completed turn ends in a capture or a miss
        return {"mismatches": mismatches, "pairs": turns - mismatches, "turns": turns}

    def action_masks(self) -> np.ndarray:
        """(num_envs, num_cards) bool: legal flips of every game."""
        return core.legal_mask(self.require_reset())

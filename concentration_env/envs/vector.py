"""Native Gymnasium vector env: thousands of solitaire games stepped with array operations."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from concentration_env.envs.spaces import board_space
from concentration_env.game.batch import GameBatch
from concentration_env.game.rules import Rules

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)


def check_autoreset_mode(mode: str | AutoresetMode) -> AutoresetMode:
    """Validate an autoreset mode (the enum or its value)."""
    try:
        mode = AutoresetMode(mode)
    except ValueError:
        pass  # not a mode's value: refused below
    if not isinstance(mode, AutoresetMode) or mode not in AUTORESET_MODES:
        allowed = " | ".join(repr(m.value) for m in AUTORESET_MODES)
        raise ValueError(f"invalid autoreset_mode; allowed: {allowed} (or gymnasium.vector.AutoresetMode members)")
    return mode


def put_info(infos: dict[str, Any], key: str, values: np.ndarray, present: np.ndarray) -> None:
    """Add one info key in Gymnasium's vector layout (values plus a ``_key`` mask), if any game has it."""
    if present.all():
        infos[key], infos["_" + key] = values.copy(), present.copy()
    elif present.any():
        rows = present.reshape(present.shape + (1,) * (values.ndim - 1))
        infos[key], infos["_" + key] = np.where(rows, values, np.zeros_like(values)), present.copy()


class BatchVectorEnv(VectorEnv):
    """What the native vector envs share: Gymnasium's autoreset modes and vector info layout
    over a batched engine (``self.batch``: ``reset(seed, mask)``, ``deal(rows)``,
    ``observe()``, ``action_masks()``). Each env supplies ``_advance`` (one step of every game,
    with the games in ``skip`` sitting it out) and ``_infos``, and may add ``_add_outcome``."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}
    batch: Any

    def _setup(self, single_observation_space: spaces.Dict, autoreset_mode: str | AutoresetMode) -> None:
        """The attributes and spaces of a vector env over ``self.batch``."""
        self.num_envs = self.batch.num_envs
        self.rules = self.batch.rules
        self.game = self.batch.game
        self.autoreset_mode = check_autoreset_mode(autoreset_mode)
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.render_mode = None
        self.single_observation_space = single_observation_space
        self.single_action_space = spaces.Discrete(self.game.num_cards)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._pending = np.zeros(self.num_envs, dtype=bool)  # NextStep: games to reset on the next step

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None):
        """Deal every game (or those in ``options["reset_mask"]``); seeds as in ``SyncVectorEnv``."""
        mask = None if options is None else options.get("reset_mask")
        self.batch.reset(seed, mask)
        rows = np.ones(self.num_envs, dtype=bool) if mask is None else np.asarray(mask)
        self._pending[rows] = False
        obs = self.batch.observe()
        return obs, self._infos(obs, rows)

    def step(self, actions):
        batch = self.batch
        every = np.ones(self.num_envs, dtype=bool)
        next_step = self.autoreset_mode is AutoresetMode.NEXT_STEP
        pending = self._pending
        rewards, terminated, truncated, outcome = self._advance(actions, pending if next_step else None)
        ended = terminated | truncated
        if next_step:
            if pending.any():
                batch.deal(np.flatnonzero(pending))
            self._pending = ended
            obs = batch.observe()
            infos = self._infos(obs, every)
            self._add_outcome(infos, every, outcome)
            return obs, rewards, terminated, truncated, infos
        obs = batch.observe()
        if not ended.any():
            infos = self._infos(obs, every)
            self._add_outcome(infos, every, outcome)
            return obs, rewards, terminated, truncated, infos
        # SameStep: report the finished games' last observation and info, then deal anew.
        rows = np.flatnonzero(ended)
        final_obs = np.full(self.num_envs, None, dtype=object)
        for i in rows:
            final_obs[i] = {key: value[i] for key, value in obs.items()}
        final_info = self._infos(obs, ended)
        self._add_outcome(final_info, ended, outcome)
        batch.deal(rows)
        obs = batch.observe()
        infos = self._infos(obs, every)
        self._add_outcome(infos, ~ended, outcome)
        infos.update(final_obs=final_obs, _final_obs=ended, final_info=final_info, _final_info=ended.copy())
        return obs, rewards, terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, num_cards) bool: the legal flips of every game (for masked policies)."""
        return self.batch.action_masks()

    # -- what each env supplies ------------------------------------------------------------------
    def _advance(self, actions: Any, skip: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any]:
        """Step every game but those in ``skip``: rewards, terminated, truncated and what
        ``_add_outcome`` reads."""
        raise NotImplementedError

    def _infos(self, obs: dict[str, np.ndarray], rows: np.ndarray) -> dict[str, Any]:
        """The infos of the games in ``rows`` that the state alone gives."""
        raise NotImplementedError

    def _add_outcome(self, infos: dict[str, Any], rows: np.ndarray, outcome: Any) -> None:
        """Add, for the games in ``rows``, the infos that only the step's outcome gives (by
        default none: every info comes from the state)."""


class ConcentrationVectorEnv(BatchVectorEnv):
    """Solitaire Concentration, ``num_envs`` games at once on the batched core.

    ## Description
    The same game as :class:`concentration_env.envs.solitaire.ConcentrationEnv` (see its page
    for the rules, rewards and observations), played as a Gymnasium 1.x ``VectorEnv``: one
    compiled call flips a card in every game, with no Python loop over games. Game ``i``
    behaves exactly like a single env in a ``SyncVectorEnv`` (same seeds, same
    trajectories, same infos), only much faster.

    ## Action Space
    ``MultiDiscrete([num_cards] * num_envs)``: one flip position per game.

    ## Observation Space
    The single env's ``Dict`` batched: ``cards`` (int16), ``face_up``, ``removed``,
    ``action_mask`` (int8) and, for checkerboard backs, ``back``, each of shape
    ``(num_envs, num_cards)``.

    ## Autoreset
    ``autoreset_mode="NextStep"`` (the default, Gymnasium's default): when a game
    terminates or is truncated, the next ``step`` resets it, ignores its action, and
    returns its first observation with reward 0 and ``terminated = truncated = False``.
    ``"SameStep"``: the game is reset inside the step that ended it; the observation is
    the new game's, and ``infos["final_obs"]`` / ``infos["final_info"]`` hold the last
    observation and info of the finished game (masked by ``infos["_final_obs"]``).

    ## Information
    Gymnasium's vector layout: every key has a ``_key`` bool mask. ``action_mask``
    ``(num_envs, num_cards)`` int8, ``mismatches``, ``pairs``, ``turns``; ``matched`` after a
    flip that ended a turn; ``won`` when a game ends. ``action_masks()`` returns the legal
    flips as bool ``(num_envs, num_cards)``.

    ## Arguments
    ``gym.make_vec("Concentration-v0", num_envs=4096, rules=None, observation_mode="memory",
    autoreset_mode="NextStep", **rule_fields)``; ``max_episode_steps`` comes from the
    registered id (10,000 flips) unless given.

    ## Version History
    - v0: initial release.
    """

    def __init__(
        self,
        num_envs: int = 1,
        rules: Rules | str | None = None,
        observation_mode: str = "memory",
        max_episode_steps: int | None = None,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        render_mode: None = None,
        **rule_fields: Any,
    ):
        if render_mode is not None:
            raise ValueError(f"invalid render_mode={render_mode!r}; the vector env does not render (allowed: None)")
        self.batch = GameBatch(num_envs, rules, observation_mode, max_episode_steps, **rule_fields)
        self._setup(board_space(self.batch.game), autoreset_mode)

    def _advance(self, actions, skip):
        outcome, rewards, truncated = self.batch.step(actions, skip=skip)
        return rewards, outcome.ended.copy(), truncated, outcome

    # -- infos (the single env's info keys, in Gymnasium's vector layout) ----------------------
    def _infos(self, obs: dict[str, np.ndarray], rows: np.ndarray) -> dict[str, Any]:
        """``action_mask`` and the counters of the games in ``rows``."""
        infos: dict[str, Any] = {}
        put_info(infos, "action_mask", obs["action_mask"], rows)
        for key, values in self.batch.counters().items():
            put_info(infos, key, values, rows)
        return infos

    def _add_outcome(self, infos: dict[str, Any], rows: np.ndarray, outcome) -> None:
        """``matched`` for flips that ended a turn and ``won`` for games that ended, in ``rows``."""
        put_info(infos, "matched", outcome.matched, rows & outcome.turn_ended)
        ended = rows & outcome.ended
        if ended.any():
            put_info(infos, "won", outcome.won, ended)

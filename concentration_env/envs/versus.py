"""Gymnasium adapter: the learner holds one seat of a multi-player game, policies the rest."""

from __future__ import annotations

from typing import Any, cast

import gymnasium as gym
import numpy as np

from concentration_env.envs.multiplayer import raw_env
from concentration_env.envs.opponents import play_turns, resolve_policy
from concentration_env.envs.policy_specs import DEFAULT_OPPONENT
from concentration_env.envs.spaces import OBSERVATION_FORMATS, box_space, flat_space
from concentration_env.envs.table import RENDER_MODES
from concentration_env.game.checks import check_choice, check_seed
from concentration_env.game.policy import Policy
from concentration_env.game.rules import Rules
from concentration_env.game.seats import MAX_REDEALS, SEED_RANGE, agent_name, no_game_for_the_learner, seat_of


class VersusEnv(gym.Env):
    """Concentration against opponents: one learner seat, the other seats played by policies.

    ## Description
    The multi-player game of :mod:`concentration_env.concentration_v0` seen by one player.
    Each ``step`` is one of the learner's flips; the opponents' flips that follow (until
    it is the learner's turn again or the game ends) are played inside the same step by
    the opponent policies. This is the env the training scripts use for multi-player play.

    ## Action Space
    ``Discrete(num_cards)``: flip the card at a position (row-major over ``rules.shape``).

    ## Observation Space
    A flat ``Dict`` (Stable-Baselines3 takes no nested ones): the solitaire env's ``cards``,
    ``face_up``, ``removed``, ``action_mask`` (int8), ``back`` for checkerboard deals, and
    ``scores`` (every seat's points, the learner first). ``observation_mode`` is as in
    the other envs; the learner sees every opponent flip. With ``observation_format="box"``
    it is ``{"observation": Box float32, "action_mask": Box int8}``, the flat layout of
    ``concentration_v0`` (:func:`concentration_env.envs.spaces.box_layout`, also
    ``env.unwrapped.box_layout()``); with ``observation_format="flat"`` it is that float32
    ``Box`` alone, the legal flips in ``info["action_mask"]`` and ``env.action_masks()``.
    The opponents read the Dict in every format.

    ## Rewards
    The learner's reward under ``reward_mode``: ``"pairs"`` (default) the points of the
    pairs it captures; ``"margin"`` those points minus an equal share of every opponent
    capture (in a two-player game the return is the final pair margin); ``"win_loss"``
    +1 / -1 at the end (0 when every seat shares the win). What the learner earns from
    the opponents' flips before its first one (under ``"margin"``, minus its share of
    their captures) is paid with the reward of its first step, so the return covers the
    whole game.

    ## Starting State
    A fresh deal, after the opponents seated before the learner have played their turns.
    A deal that the opponents clear before the learner's first flip (possible only on tiny
    decks) is replaced by the next deal from the same generator; after ``MAX_REDEALS`` such
    deals in a row ``reset`` raises ``RuntimeError`` (the deck is too small to play).

    ## Episode End
    ``terminated`` when the game ends; ``info["winners"]`` then marks the winners. Registered as
    ``ConcentrationVs-v0`` with truncation after 10,000 learner flips. ``max_turns``
    truncates a game still running after that many turns of the table (all seats'),
    scored as it stands, as in ``concentration_v0``: ``truncated`` is True and
    ``info["winners"]`` marks the winners. Either limit ends games that would otherwise go on
    forever, such as an optimal learner against an optimal opponent in a stalled position.

    ## Information
    Every ``info``, from ``reset`` on, holds the same fixed-shape entries: ``action_mask``
    (int8), ``winners`` (bool, one per seat in seat order; all False until the game ends,
    then True for each winner, several on a shared win), ``scores`` (int32, every seat's
    points in seat order) and ``agent`` (the learner's name). ``env.unwrapped.winner_names()``
    and ``env.unwrapped.scores_by_name()`` give the same by agent name;
    ``env.action_masks()`` returns the legal flips as booleans (for sb3-contrib's
    ``MaskablePPO``).

    ## Arguments
    ``gym.make("ConcentrationVs-v0", rules=None, num_players=None, seat=0,
    opponents="greedy", first_player=0, observation_mode="memory", render_mode=None,
    table_shape="grid", max_turns=None, observation_format="dict", **rule_fields)``

    - ``seat``: the learner's seat (index or agent name).
    - ``opponents``: a policy name for ``baselines.make_policy``, a saved model's file
      (``.zip``/``.pt`` of this package's training runs), or a policy object
      (``reset(seed)``, ``act(observation, action_mask)``), used for every other seat (a
      name builds one policy per seat), or a sequence with one per other seat in seat
      order. Opponents are reseeded from the env's generator on every reset.
    - the rest as in ``concentration_v0``; ``reset(options={"first_player": ...})``
      changes who starts one game (the opponents play until the learner is on turn).

    ## Vectorised
    ``gym.make_vec("ConcentrationVs-v0", num_envs, seats=..., opponents=...)`` (the native
    :class:`concentration_env.envs.versus_vector.VersusVectorEnv`) and, for Stable-Baselines3,
    ``concentration_env.integrations.sb3.make_sb3_vec_env(num_envs, seats=..., opponents=...)``
    play many of these games on the batched core (:class:`concentration_env.game.batch.VersusBatch`),
    game for game the same as single envs seeded alike.

    ## Version History
    - v0: initial release.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}

    def __init__(
        self,
        rules: Rules | str | None = None,
        num_players: int | None = None,
        seat: int | str = 0,
        opponents: Policy | str | list[Policy | str] | tuple[Policy | str, ...] = DEFAULT_OPPONENT,
        first_player: int | str = 0,
        observation_mode: str = "memory",
        render_mode: str | None = None,
        table_shape: str = "grid",
        max_turns: int | None = None,
        observation_format: str = "dict",
        **rule_fields: Any,
    ):
        self.observation_format = check_choice("observation_format", observation_format, OBSERVATION_FORMATS)
        # The table keeps the Dict format: the opponent policies read it.
        self._table = raw_env(
            rules, num_players, first_player, observation_mode, render_mode, table_shape, max_turns, **rule_fields
        )
        self.rules = self._table.rules
        self.game = self._table.game
        self.render_mode = render_mode
        self.observation_mode = observation_mode
        players = self.rules.num_players
        self.seat = seat_of(seat, players, field="seat")
        self.agent = agent_name(self.seat)
        others = [s for s in range(players) if s != self.seat]
        if not isinstance(opponents, (list, tuple)):
            opponents = [opponents] * len(others)
        if len(opponents) != len(others):
            raise ValueError(
                f"invalid opponents: {len(opponents)} given; allowed: one policy (or name) for all, "
                f"or one for each of the {len(others)} other seats"
            )
        self.opponents = {s: resolve_policy(p, self.rules) for s, p in zip(others, opponents)}
        self.observation_space: gym.spaces.Space
        if observation_format == "flat":
            self.observation_space = flat_space(self._table.box_layout())
        elif observation_format == "box":
            self.observation_space = box_space(self._table.box_layout(), self._table.num_cards)
        else:
            table_space = cast(gym.spaces.Dict, self._table.observation_space(self.agent))
            self.observation_space = gym.spaces.Dict(
                {**cast(gym.spaces.Dict, table_space["observation"]).spaces, "action_mask": table_space["action_mask"]}
            )
        self.action_space = self._table.action_space(self.agent)
        self._before_first_flip = 0.0  # the learner's reward from the opponents' flips before its first

    @property
    def layout(self) -> tuple:
        """The dealt cards in position order (a god view for tests and debugging)."""
        return self._table.layout

    def scores_by_name(self) -> dict[str, int]:
        """Every seat's points so far, by agent name."""
        return self._table.scores_by_name()

    def winner_names(self) -> list[str]:
        """The winners' agent names once the game is over, else empty."""
        return self._table.winner_names()

    def box_layout(self) -> list[tuple[str, int, int]]:
        """Where each plane lies in the flat vector of ``observation_format="box"`` and
        ``"flat"`` (:func:`concentration_env.envs.spaces.box_layout`)."""
        return self._table.box_layout()

    def action_masks(self) -> np.ndarray:
        """Legal flips as booleans (the method sb3-contrib's MaskablePPO calls)."""
        return self._table.observe(self.agent)["action_mask"].astype(bool)

    # -- Gymnasium API ---------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        seed = check_seed(seed)
        super().reset(seed=seed)
        self._table.reset(seed=seed, options=options)
        for attempt in range(MAX_REDEALS):
            if attempt:
                # The opponents cleared the table before the learner's first flip (possible
                # on tiny decks): such a deal is no game for the learner, so deal again.
                self._table.reset(options=options)
            for policy in self.opponents.values():
                policy.reset(seed=int(self.np_random.integers(SEED_RANGE)))
            self._before_first_flip = play_turns(self._table, self.opponents, self.agent)
            if not (self._table.terminations[self.agent] or self._table.truncations[self.agent]):
                return self._observe()
        raise no_game_for_the_learner(self.seat)

    def step(self, action):
        table = self._table
        table._require_reset()
        if table.terminations[self.agent] or table.truncations[self.agent]:
            raise RuntimeError("the episode is over; call reset() before step()")
        table.step(action)
        reward = self._before_first_flip + table.rewards[self.agent] + play_turns(table, self.opponents, self.agent)
        self._before_first_flip = 0.0
        observation, info = self._observe()
        return observation, float(reward), table.terminations[self.agent], table.truncations[self.agent], info

    def render(self):
        return self._table.render()

    def close(self):
        self._table.close()

    # -- helpers -------------------------------------------------------------------------
    def _observe(self) -> tuple[dict[str, np.ndarray] | np.ndarray, dict[str, Any]]:
        """The learner's observation in its format, and its info."""
        observed = cast(dict[str, Any], self._table.observe(self.agent))  # the table's own format is "dict"
        mask = observed["action_mask"]
        info = {"action_mask": mask.copy(), **self._table.infos[self.agent], "agent": self.agent}
        if self.observation_format == "flat":
            return self._table.to_box(observed["observation"]), info
        if self.observation_format == "box":
            return {"observation": self._table.to_box(observed["observation"]), "action_mask": mask}, info
        return {**observed["observation"], "action_mask": mask}, info

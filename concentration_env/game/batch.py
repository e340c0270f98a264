"""Many games stepped together on the one core: the engines of the batched adapters.

:class:`GameBatch` holds ``num_envs`` games in one :class:`concentration_env.game.core.State` and
gives each game its own random generator, seeded the way Gymnasium seeds a list of single
envs (game ``i`` gets ``seed + i``). Game ``i`` therefore deals and plays exactly like a
``ConcentrationEnv`` reset with that seed, which the tests check flip by flip. The native
Gymnasium vector env (:mod:`concentration_env.envs.vector`) and the Stable-Baselines3 VecEnv
(:mod:`concentration_env.integrations.sb3`) are thin adapters over it.

Stepping is one compiled call for the whole batch; the only Python loop is over the games
dealt a new layout (a finished game reshuffles with its own generator).

:class:`VersusBatch` does the same for the play-against-opponents game
(``ConcentrationVs-v0``, :mod:`concentration_env.envs.versus`): the learner holds one seat of
every game and batched policies play the others, on the core without a Python env per game.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from concentration_env.game import core, scoring
from concentration_env.game.checks import check_bool, check_int
from concentration_env.game.passes import Passes
from concentration_env.game.policy import BatchPolicy
from concentration_env.game.rules import Rules, resolve_rules
from concentration_env.game.seats import (
    MAX_REDEALS,
    SEED_RANGE,
    agent_name,
    check_observation_mode,
    no_game_for_the_learner,
    seat_of,
    table_rules,
)
from concentration_env.game.seeding import fill_generators, reseed


def check_num_envs(num_envs: Any) -> int:
    """Validate a number of games; a clear error otherwise."""
    return check_int("num_envs", num_envs, 1, numpy=True)


def per_game(value: Any, num_envs: int, field: str) -> list:
    """One value for every game, or a sequence with one per game; a clear error otherwise."""
    if isinstance(value, (list, tuple, np.ndarray)):
        if len(value) != num_envs:
            raise ValueError(
                f"invalid {field}: {len(value)} given; allowed: one value for all games or one per game ({num_envs})"
            )
        return list(value)
    return [value] * num_envs


def step_running(game: core.Game, state: core.State, actions: np.ndarray, sit_out: np.ndarray) -> core.Outcome:
    """``core.step`` with the games where ``sit_out`` is True left as they are (marked done
    for the flip only, so a rejected flip leaves every game as it was)."""
    sit_out = sit_out & ~state.done
    state.done |= sit_out
    try:
        return core.step(game, state, actions)
    finally:
        state.done &= ~sit_out


def step_some(game: core.Game, state: core.State, actions: np.ndarray, skip: np.ndarray | None) -> core.Outcome:
    """``core.step`` with the games where ``skip`` is True (if any) sitting it out, their
    actions ignored as Gymnasium ignores those of games it resets."""
    if skip is None or not skip.any():
        return core.step(game, state, actions)
    return step_running(game, state, np.where(skip, 0, actions), skip)


def batch_actions(game: core.Game, actions: Any, num_envs: int) -> np.ndarray:
    """One integer position per game, as an array; a clear error otherwise."""
    array = np.asarray(actions)
    if array.shape != (num_envs,):
        raise ValueError(
            f"actions must have shape ({num_envs},): one flip position 0..{game.num_cards - 1} "
            f"per game; got shape {array.shape}"
        )
    return core.as_positions(game, array)


def check_max_episode_steps(steps: Any) -> int | None:
    """Validate a time limit in flips (None for no limit)."""
    return check_int("max_episode_steps", steps, 1, optional=True, numpy=True)


class Batch:
    """What both engines share: ``num_envs`` games on one core state (None before the first
    deal), dealt by ``deal(rows)`` and reseeded by ``seed(seed)``."""

    num_envs: int
    state: core.State | None

    def seed(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        """Reseed the games' generators; returns the seeds used."""
        raise NotImplementedError

    def deal(self, rows: np.ndarray) -> None:
        """Start new games in ``rows``."""
        raise NotImplementedError

    def reset(self, seed: int | Sequence[int | None] | None = None, mask: np.ndarray | None = None) -> None:
        """Deal new games: all of them, or those where the bool ``mask`` is True (only once
        every game has been dealt)."""
        if mask is None:
            rows = np.arange(self.num_envs)
        else:
            mask = np.asarray(mask)
            if mask.shape != (self.num_envs,) or mask.dtype != np.bool_:
                raise ValueError(
                    f"reset mask must be a bool array of shape ({self.num_envs},); got {mask.dtype} {mask.shape}"
                )
            if self.state is None and not mask.all():
                raise RuntimeError("the first reset must deal every game; call reset() without a mask")
            rows = np.flatnonzero(mask)
        if seed is not None:  # after the mask is checked, so a bad mask reseeds nothing
            self.seed(seed)
        self.deal(rows)

    def require_reset(self) -> core.State:
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        return self.state


class GameBatch(Batch):
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
        """Reseed the games (see :func:`reseed`); returns the seeds used."""
        seeds, self.rngs = reseed(seed, self.rngs)
        return seeds

    def deal(self, rows: np.ndarray) -> None:
        """Start new games in ``rows`` (indices), each shuffled by its own generator."""
        if not len(rows):
            return  # a reset mask of all False deals nothing
        fill_generators(self.rngs, rows)
        faces = np.stack([core.deal(self.game, self.rngs[i]) for i in rows])
        fresh = core.new_state(self.game, faces)
        if self.state is None:
            self.state = fresh
        else:
            self.state.assign(fresh, rows)
        self.elapsed[rows] = 0

    # -- playing ---------------------------------------------------------------------------
    def step(self, actions: Any, skip: np.ndarray | None = None) -> tuple[core.Outcome, np.ndarray, np.ndarray]:
        """Flip ``actions[i]`` in every game (games where ``skip`` is True sit this one out).
        Returns the core outcome, rewards (float64) and time-limit truncations."""
        state = self.require_reset()
        actions = batch_actions(self.game, actions, self.num_envs)
        outcome = step_some(self.game, state, actions, skip)
        self.elapsed += outcome.acted
        truncated = outcome.acted.copy()
        if self.max_episode_steps is None:
            truncated[:] = False
        else:
            truncated &= self.elapsed >= self.max_episode_steps
        return outcome, outcome.solitaire_reward, truncated

    def observe(self) -> dict[str, np.ndarray]:
        """The batched observation, each array (num_envs, num_cards)."""
        return core.observe(self.game, self.require_reset(), self.memory)

    def counters(self) -> dict[str, np.ndarray]:
        """Per-game int64 ``mismatches``, ``pairs`` and ``turns`` (the single env's info counters)."""
        return core.counters(self.require_reset())

    def action_masks(self) -> np.ndarray:
        """(num_envs, num_cards) bool: legal flips of every game."""
        return core.legal_mask(self.require_reset())


class VersusBatch(Batch):
    """``num_envs`` multi-player games: the learner holds seat ``seats[i]`` of game ``i`` and
    the batched policy ``opponents[i]`` plays every other seat of it. Opponents are policy
    objects with the batched methods of :class:`concentration_env.game.policy.BatchPolicy`
    (the baselines have them; the adapters build them from names or saved models' files);
    one object may serve many games.

    Game ``i`` plays exactly like ``VersusEnv(seat=seats[i], opponents=opponents[i])`` reset
    with seed ``seed + i``: it deals from one generator and reseeds its opponents from a
    second one seeded alike, and a deal the opponents clear before the learner's first flip
    is replaced by the next one. Between two of the learner's flips the opponents play
    their turns, one compiled step per flip for every game where an opponent is on turn.
    Opponents that draw random numbers while they play (``random``, ``forgetful``) draw them
    from one stream for the whole batch, so only their distribution matches single envs.
    As in the single env, what a learner earns from the opponents' flips before its first
    flip of a game is paid with the reward of that first flip.

    ``end_stalled=True`` ends a game once every seat has passed in a row (a turn that
    captures nothing and shows no card nobody had seen), terminated and scored as it stands:
    the position is back where it was, and the evaluation harness
    (:mod:`baselines.evaluate`) and the exact DP score such a stalled game the same way. It
    lets a learner be paid for the stall it chooses (by default such a game runs on to
    ``max_episode_steps``, where it is truncated).
    """

    def __init__(
        self,
        num_envs: int,
        rules: Rules | str | None = None,
        num_players: int | None = None,
        seats: int | str | Sequence[int | str] = 0,
        opponents: BatchPolicy | Sequence[BatchPolicy] | None = None,
        first_player: int | str = 0,
        observation_mode: str = "memory",
        max_episode_steps: int | None = None,
        end_stalled: bool = False,
        **rule_fields: Any,
    ):
        self.num_envs = check_num_envs(num_envs)
        self.rules = table_rules(rules, num_players, **rule_fields)
        self.end_stalled = check_bool("end_stalled", end_stalled)
        self.game = core.compile_rules(self.rules)
        players = self.rules.num_players
        self.memory = check_observation_mode(observation_mode)
        self.observation_mode = observation_mode
        self.max_episode_steps = check_max_episode_steps(max_episode_steps)
        self.first_player = seat_of(first_player, players)
        self.seats = np.array(
            [seat_of(s, players, "seats") for s in per_game(seats, self.num_envs, "seats")], dtype=np.int32
        )
        if opponents is None:
            raise ValueError("VersusBatch needs opponents: a batched policy object, or one per game")
        chosen = per_game(opponents, self.num_envs, "opponents")
        for policy in chosen:
            if not isinstance(policy, BatchPolicy):
                raise ValueError(
                    f"invalid opponents entry {policy!r}; allowed: policy objects with reset_batch(), "
                    "reset_rows() and act_rows() (build them from names with "
                    "concentration_env.envs.opponents.resolve_opponents)"
                )
        # One batched policy object per distinct opponent, with a row for every seat of every
        # game (row game * players + seat), so that each seat keeps its own memory and seed.
        self.policies: list[BatchPolicy] = []
        for policy in chosen:
            if not any(policy is known for known in self.policies):
                self.policies.append(policy)
        self.kind = np.array([next(k for k, known in enumerate(self.policies) if known is policy) for policy in chosen])
        self.next_kind = self.kind.copy()  # who plays each game from its next deal on (set_opponents)
        for policy in self.policies:
            policy.reset_batch([None] * (self.num_envs * players))  # each row is reseeded when dealt
        self.deal_rngs: list[np.random.Generator | None] = [None] * self.num_envs
        self.seat_rngs: list[np.random.Generator | None] = [None] * self.num_envs
        self.state: core.State | None = None
        self.elapsed = np.zeros(self.num_envs, dtype=np.int64)  # the learner's flips this episode
        self.before_first_flip = np.zeros(self.num_envs)  # rewards waiting for each learner's first flip
        self.passes = Passes(self.num_envs)

    def set_opponents(self, games: Any, policy: BatchPolicy) -> None:
        """Let ``policy`` play the other seats of ``games`` (indices) from each one's next deal on,
        so an episode keeps one opponent throughout; policies no game meets again are dropped here."""
        rows = np.asarray(games, dtype=np.intp).reshape(-1)
        if not isinstance(policy, BatchPolicy) or (rows.size and not 0 <= rows.min() <= rows.max() < self.num_envs):
            raise ValueError(
                f"invalid set_opponents({games!r}, {policy!r}): need games < {self.num_envs}, a BatchPolicy"
            )
        if not any(policy is known for known in self.policies):
            policy.reset_batch([None] * (self.num_envs * self.rules.num_players))
            self.policies.append(policy)
        self.next_kind[rows] = next(k for k, known in enumerate(self.policies) if known is policy)
        used = np.union1d(self.kind, self.next_kind)
        self.policies = [self.policies[k] for k in used]
        self.kind, self.next_kind = np.searchsorted(used, self.kind), np.searchsorted(used, self.next_kind)

    # -- seeding and dealing ---------------------------------------------------------------
    def seed(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        """Reseed the games (see :func:`reseed`): the deal and the opponents' seeds of game
        ``i`` come from two generators seeded alike. Returns the seeds used."""
        seeds, self.deal_rngs = reseed(seed, self.deal_rngs)
        _, self.seat_rngs = reseed(seeds, self.seat_rngs)
        return seeds

    def deal(self, rows: np.ndarray) -> None:
        """Start new games in ``rows`` and let the opponents play up to each learner's turn."""
        rows = np.asarray(rows, dtype=np.intp)
        fill_generators(self.deal_rngs, rows)
        fill_generators(self.seat_rngs, rows)
        for _ in range(MAX_REDEALS):
            if not rows.size:
                return
            faces = np.stack([core.deal(self.game, self.deal_rngs[i]) for i in rows])
            fresh = core.new_state(self.game, faces, self.first_player)
            if self.state is None:
                self.state = fresh
            else:
                self.state.assign(fresh, rows)
            self.elapsed[rows] = 0
            self.passes.start(rows, self.state)
            self.kind[rows] = self.next_kind[rows]
            self._reseed_opponents(rows)
            self.before_first_flip[rows] = self.play_opponents()[rows]
            # A deal the opponents cleared before the learner's first flip is no game for it.
            rows = rows[self.state.done[rows]]
        if rows.size:
            raise no_game_for_the_learner(int(self.seats[rows[0]]))

    def _reseed_opponents(self, rows: np.ndarray) -> None:
        """Reseed the opponents of games ``rows``, seat by seat, from each game's generator."""
        players = self.rules.num_players
        chosen: list[tuple[list, list]] = [([], []) for _ in self.policies]
        for i in rows:
            policy_rows, seeds = chosen[self.kind[i]]
            for seat in range(players):
                if seat != self.seats[i]:
                    policy_rows.append(i * players + seat)
                    seeds.append(int(self.seat_rngs[i].integers(SEED_RANGE)))
        for policy, (policy_rows, seeds) in zip(self.policies, chosen):
            if policy_rows:
                policy.reset_rows(np.array(policy_rows), seeds)

    # -- playing ---------------------------------------------------------------------------
    def step(self, actions: Any, skip: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The learners flip ``actions[i]`` (games where ``skip`` is True sit this one out);
        then the opponents play their turns. Returns each learner's reward (float64), whether
        its game ended and whether its time ran out."""
        state = self.require_reset()
        skip = np.zeros(self.num_envs, dtype=bool) if skip is None else skip
        if (state.done & ~skip).any():
            over = np.flatnonzero(state.done & ~skip).tolist()
            raise RuntimeError(f"games {over} are over; deal them before step()")
        outcome = step_some(self.game, state, batch_actions(self.game, actions, self.num_envs), skip)
        self._end_stalled_games(outcome)
        rewards = self.before_first_flip + self._learner_rewards(outcome) + self.play_opponents()
        self.before_first_flip[:] = 0.0
        self.elapsed += ~skip
        terminated = state.done & ~skip
        if self.rules.reward_mode == "win_loss" and terminated.any():
            final = scoring.win_loss_rewards(scoring.winners(self.game, state))
            rewards += np.where(terminated, final[np.arange(self.num_envs), self.seats], 0)
        truncated = np.zeros(self.num_envs, dtype=bool)
        if self.max_episode_steps is not None:
            truncated = ~terminated & ~skip & (self.elapsed >= self.max_episode_steps)
        return rewards, terminated, truncated

    def play_opponents(self) -> np.ndarray:
        """Let the opponents flip until every running game waits for its learner; returns what
        each learner earned meanwhile."""
        state = self.require_reset()
        earned = np.zeros(self.num_envs)
        while True:
            moving = ~state.done & (state.player != self.seats)
            if not moving.any():
                return earned
            observation = core.observe(self.game, state, self.memory)
            actions = np.zeros(self.num_envs, dtype=np.intp)
            for kind, policy in enumerate(self.policies):
                games = np.flatnonzero(moving & (self.kind == kind))
                if games.size:
                    seen = {key: value[games] for key, value in observation.items()}
                    seen["scores"] = scoring.scores_seen_by(state.scores[games], state.player[games])
                    chosen = np.asarray(policy.act_rows(seen, games * self.rules.num_players + state.player[games]))
                    if chosen.shape != games.shape or chosen.dtype.kind not in "iu":
                        raise ValueError(
                            f"opponent {policy!r} returned {chosen!r} for games {games.tolist()}; "
                            f"expected one integer flip position per game"
                        )
                    actions[games] = chosen
            try:  # games waiting for their learner sit this flip out
                outcome = step_running(self.game, state, actions, ~moving)
            except ValueError as error:
                raise self._opponent_error(actions, moving, error) from None
            self._end_stalled_games(outcome)
            earned += self._learner_rewards(outcome)

    def _end_stalled_games(self, outcome: core.Outcome) -> None:
        """With ``end_stalled``, end the games where every seat has passed in a row."""
        if self.end_stalled:
            state = self.require_reset()
            self.passes.note(state, outcome)
            state.done |= self.passes.in_a_row >= self.rules.num_players

    def _opponent_error(self, actions: np.ndarray, moving: np.ndarray, error: ValueError) -> ValueError:
        """The core's rejection of an opponent's flip, saying which opponent made it."""
        state = self.require_reset()
        n = self.game.num_cards
        legal = core.legal_mask(state)[np.arange(self.num_envs), np.clip(actions, 0, n - 1)]
        game = int(np.flatnonzero(moving & ((actions < 0) | (actions >= n) | ~legal))[0])
        seat = int(state.player[game])
        return ValueError(
            f"the opponent in seat {seat} ({agent_name(seat)}) of game {game}, policy "
            f"{self.policies[self.kind[game]]!r}, played {int(actions[game])}: {error}"
        )

    def _learner_rewards(self, outcome: core.Outcome) -> np.ndarray:
        """What each learner earns from one flip per game under the rules' reward mode."""
        shares = scoring.capture_rewards(self.rules.reward_mode, outcome.mover, outcome.gained, self.rules.num_players)
        return shares[np.arange(self.num_envs), self.seats]

    # -- what the learners see -------------------------------------------------------------
    def observe(self) -> dict[str, np.ndarray]:
        """Each learner's observation, arrays (num_envs, ...): the board, its legal flips and
        ``scores`` with its own seat first."""
        state = self.require_reset()
        observation = core.observe(self.game, state, self.memory)
        observation["scores"] = scoring.scores_seen_by(state.scores, self.seats)
        return observation

    def action_masks(self) -> np.ndarray:
        """(num_envs, num_cards) bool: each learner's legal flips."""
        return core.legal_mask(self.require_reset())

    def winners(self) -> np.ndarray:
        """(num_envs, P) bool: every game's winners in seat order under the rules' tie-break."""
        return scoring.winners(self.game, self.require_reset())

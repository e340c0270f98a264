"""Sessions: a series of multi-player games with the first player rotating.

Each game is dealt from its own seed (``seed + game number``) and led by the next seat in
turn (game 0 by ``player_0``, game 1 by ``player_1``, ...), so over a session each seat
leads equally often. The session keeps every game's points; its winner has the most points
in total, and a tie goes to the tied seat that outscored the other tied seats in the most
games (head to head). See :func:`concentration_env.game.scoring.session_winners`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from concentration_env.envs.multiplayer import raw_env
from concentration_env.envs.opponents import play_turns, resolve_policy
from concentration_env.game import scoring
from concentration_env.game.checks import check_int
from concentration_env.game.policy import Policy
from concentration_env.game.rules import Rules
from concentration_env.game.seats import table_rules, turn_cap


@dataclass
class SessionResult:
    """The record of a session so far."""

    agents: list[str]
    points: list[list[int]] = field(default_factory=list)  # per game, per seat
    first_players: list[str] = field(default_factory=list)
    game_winners: list[list[str]] = field(default_factory=list)
    truncated: list[bool] = field(default_factory=list)  # per game: stopped at the turn cap

    @property
    def totals(self) -> dict[str, int]:
        """Cumulative points per agent."""
        sums = np.sum(self.points, axis=0) if self.points else np.zeros(len(self.agents), dtype=int)
        return {agent: int(total) for agent, total in zip(self.agents, sums)}

    @property
    def winners(self) -> list[str]:
        """The session's winners (empty before the first game)."""
        if not self.points:
            return []
        won = scoring.session_winners(np.array(self.points))
        return [agent for agent, w in zip(self.agents, won) if w]


class Session:
    """Plays a series of games of the multi-player env between given policies.

    ``players``: one policy (or ``baselines`` policy name) per seat, seat 0 first. The
    other arguments build the env as ``concentration_v0.raw_env`` (``num_players`` is the
    number of players given). ``play(games, seed)`` plays more games and returns the
    :class:`SessionResult`; calling it again continues the session and the rotation.
    A game still running after ``max_turns`` turns (default
    :data:`~concentration_env.game.seats.TURNS_PER_CARD_CAP` per card) is truncated and counts
    as it stands (``SessionResult.truncated`` marks it): two optimal players, for one, repeat
    a stalled position forever.
    """

    def __init__(
        self,
        players: Sequence[Policy | str],
        rules: Rules | str | None = None,
        observation_mode: str = "memory",
        max_turns: int | None = None,
        **rule_fields: Any,
    ):
        if isinstance(players, (str, Policy)) or len(players) < 2:
            raise ValueError(
                f"invalid players={players!r}; allowed: a sequence of two or more policies or names, one per seat"
            )
        rules = table_rules(rules, len(players), **rule_fields)
        cap = turn_cap(rules.num_cards, max_turns)
        self.env = raw_env(rules, observation_mode=observation_mode, max_turns=cap)
        self.players = {seat: resolve_policy(p, self.env.rules) for seat, p in enumerate(players)}
        self.result = SessionResult(list(self.env.possible_agents))

    def play(self, games: int, seed: int | None = None) -> SessionResult:
        """Play ``games`` more games; game ``g`` of this call is dealt from ``seed + g``."""
        check_int("games", games, 1)
        env, result = self.env, self.result
        for game in range(games):
            game_seed = None if seed is None else seed + game
            first = len(result.points) % len(self.players)
            env.reset(seed=game_seed, options={"first_player": first})
            for offset, policy in self.players.items():
                policy.reset(seed=None if game_seed is None else game_seed + offset)
            play_turns(env, self.players, env.possible_agents[0])
            result.points.append(list(env.scores_by_name().values()))
            result.first_players.append(env.possible_agents[first])
            result.game_winners.append(env.winner_names())
            result.truncated.append(all(env.truncations.values()))
        return result

"""One game between seats (people, bots, saved models), over the package's envs.

``SeatedGame`` drives the solitaire Gymnasium env or the multi-player PettingZoo env through
their public APIs only (the game itself lives in the core): whose turn it is, what that
seat observes, one flip at a time, the env's own rendering, and the result. The terminal
game (``concentration_env.play.terminal``) and the GIF recorder (``concentration_env.play.gif``)
are built on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from concentration_env.envs.solitaire import ConcentrationEnv
from concentration_env.game.cards import Card
from concentration_env.game.policy import Policy, is_stationary
from concentration_env.game.rules import Rules
from concentration_env.game.seats import turn_cap


@dataclass(frozen=True)
class PlayedFlip:
    """What one flip did."""

    seat: int
    position: int
    card: Card
    legal: bool
    ends_turn: bool
    matched: bool


@dataclass(frozen=True)
class Result:
    """How a game ended: points per seat, the winning seats, and a one-line summary."""

    scores: tuple[int, ...]
    winners: tuple[int, ...]
    summary: str


class SeatedGame:
    """A game of ``rules`` at ``rules.num_players`` seats: the solitaire env for one seat,
    the multi-player AEC env for more. ``render_mode`` is the env's (``"ansi"`` or
    ``"rgb_array"``). A multi-player game still running after ``max_turns`` turns (default
    :data:`~concentration_env.game.seats.TURNS_PER_CARD_CAP` per card) is truncated, scored
    as it stands."""

    def __init__(
        self,
        rules: Rules,
        render_mode: str = "ansi",
        *,
        table_shape: str = "grid",
        observation_mode: str = "memory",
        seed: int | None = None,
        max_turns: int | None = None,
    ):
        self.rules = rules
        self.table_shape = table_shape
        options: dict[str, Any] = dict(
            rules=rules, observation_mode=observation_mode, render_mode=render_mode, table_shape=table_shape
        )
        # The solitaire env for one seat, else the AEC env: every method branches on ``solitaire``.
        self.env: Any
        if rules.num_players == 1:
            self.env = ConcentrationEnv(**options)
            self._observation, self._info = self.env.reset(seed=seed)
            self._over = False
        else:
            from concentration_env.envs.multiplayer import raw_env

            self.env = raw_env(**options, max_turns=turn_cap(rules.num_cards, max_turns))
            self.env.reset(seed=seed)
        self.num_players = rules.num_players

    # -- state -------------------------------------------------------------------------
    @property
    def solitaire(self) -> bool:
        return self.num_players == 1

    @property
    def over(self) -> bool:
        """Whether the game has ended."""
        if self.solitaire:
            return self._over
        return all(self.env.terminations.values()) or all(self.env.truncations.values())

    @property
    def to_move(self) -> int:
        """The seat to move."""
        return 0 if self.solitaire else self.env.agents.index(self.env.agent_selection)

    @property
    def scores(self) -> tuple[int, ...]:
        """Points per seat so far (pairs captured in solitaire)."""
        if self.solitaire:
            return (self._info["pairs"],)
        return tuple(self.env.scores_by_name().values())

    def observe(self) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """What the seat to move sees, and its legal flips (int8)."""
        if self.solitaire:
            return self._observation, self._observation["action_mask"]
        observed = self.env.observe(self.env.agent_selection)
        return observed["observation"], observed["action_mask"]

    def render(self):
        """The env's rendering of the table (text or picture)."""
        return self.env.render()

    # -- play --------------------------------------------------------------------------
    def flip(self, position: int) -> PlayedFlip:
        """Flip ``position`` for the seat to move."""
        if self.over:
            raise RuntimeError("the game is over")
        seat, card = self.to_move, self.env.unwrapped.layout[position]
        legal = bool(self.observe()[1][position])
        if self.solitaire:
            self._observation, _, terminated, truncated, self._info = self.env.step(position)
            self._over = terminated or truncated
            # the env reports ``matched`` on exactly the flips that end a turn
            ends_turn, matched = "matched" in self._info, bool(self._info.get("matched"))
        else:
            self.env.step(position)
            flip = self.env.last_flip
            ends_turn, matched = flip.turn_ended, flip.matched
        return PlayedFlip(seat, position, card, legal, ends_turn, matched)

    def result(self) -> Result:
        """Scores, winners and a summary (of the game so far if it has not ended)."""
        if self.solitaire:
            info = self._info
            if info.get("won"):
                summary = f"cleared the table in {info['turns']} turns with {info['mismatches']} unsuccessful pairs"
            elif self.over:
                summary = f"out of chips after {info['turns']} turns: {info['pairs']} of {self.rules.num_pairs} pairs"
            else:
                summary = f"{info['pairs']} of {self.rules.num_pairs} pairs in {info['turns']} turns"
            return Result(self.scores, (0,) if info.get("won") else (), summary)
        agents = self.env.possible_agents
        winners = tuple(agents.index(a) for a in self.env.winner_names())
        summary = ", ".join(f"{agent} {score}" for agent, score in zip(agents, self.scores))
        if all(self.env.truncations.values()):
            summary += f" (stopped unfinished after {self.env.unwrapped._state.turns[0]} turns, scored as it stands)"
        return Result(self.scores, winners, summary)

    def stop(self) -> None:
        """End an unfinished multi-player game now, scored as it stands."""
        self.env.truncate()

    def close(self) -> None:
        self.env.close()


def play_out(match: SeatedGame, bots: Sequence[Policy], max_flips: int | None = None, on_flip=None) -> Result:
    """Let ``bots[seat]`` play every seat until the game ends (or ``max_flips``);
    ``on_flip(flip)`` is called after each flip.

    When every bot is stationary (:func:`concentration_env.game.policy.is_stationary`:
    greedy, safe_first, optimal) and every seat in a row has ended its turn on a miss without
    showing a new card, the position would come round forever (two optimal players do this
    on purpose): the game stops there, scored as it stands, as the evaluation harness and the
    turn cap score it."""
    stall_after = len(bots) if match.num_players > 1 and all(is_stationary(bot) for bot in bots) else None
    flips, passes, seen, shown_new = 0, 0, set(), False
    while not match.over and (max_flips is None or flips < max_flips):
        observation, mask = match.observe()
        flip = match.flip(int(bots[match.to_move].act(observation, mask)))
        flips += 1
        shown_new |= flip.position not in seen
        seen.add(flip.position)
        if flip.ends_turn:
            passes = 0 if flip.matched or shown_new else passes + 1
            shown_new = False
        if on_flip is not None:
            on_flip(flip)
        if stall_after is not None and passes >= stall_after and not match.over:
            match.stop()
    return match.result()

"""Passes: a turn that captures nothing and shows no card that had not been seen before.

Once every seat has passed in a row the position is back where it was. Two optimal players
do this on purpose where revealing a card only helps the other (the DP scores such a stalled
game as it stands, the remaining pairs shared); the evaluation harness
(:mod:`baselines.evaluate`) and the batched versus game (``end_stalled``) stop a game there.
"""

from __future__ import annotations

import numpy as np

from concentration_env.game.state import State
from concentration_env.game.step import Outcome


class Passes:
    """Per game of a batch: how many turns in a row passed (:attr:`in_a_row`)."""

    def __init__(self, games: int):
        self.in_a_row = np.zeros(games, dtype=np.int64)
        self.seen_at_turn_start = np.zeros(games, dtype=np.int64)  # cards seen when the turn began

    def start(self, rows: np.ndarray, state: State) -> None:
        """Games ``rows`` begin afresh from ``state`` (the whole batch's)."""
        self.in_a_row[rows] = 0
        self.seen_at_turn_start[rows] = state.seen[rows].sum(axis=1)

    def note(self, state: State, outcome: Outcome) -> np.ndarray:
        """Count the flip that led to ``state``; returns which games' turns it ended with a pass."""
        seen = state.seen.sum(axis=1)
        ended = outcome.turn_ended
        passed = ended & outcome.missed & (seen == self.seen_at_turn_start)
        self.in_a_row = np.where(ended, np.where(passed, self.in_a_row + 1, 0), self.in_a_row)
        self.seen_at_turn_start = np.where(ended, seen, self.seen_at_turn_start)
        return passed

    def keep(self, rows: np.ndarray) -> None:
        """Keep only games ``rows`` (an index or mask), in that order."""
        self.in_a_row, self.seen_at_turn_start = self.in_a_row[rows], self.seen_at_turn_start[rows]

"""Round-robin crosstables of agents and baselines, and Bradley-Terry ratings fitted to them.

Every pairing plays the same seeded deals (deal ``g`` seeded ``seed + g``, as
``baselines.evaluate.play`` deals them) once per seat: with ``P`` players, the row entrant
sits in seat ``s`` and the column entrant plays every other seat, for ``s = 0 .. P - 1``. A
game's *win share* for the row entrant is 1 when it alone has the most pairs, ``1 / k`` when
it ties for the most with ``k - 1`` other seats (a 2-player tie counts half) and 0 otherwise;
its *margin* is its pairs minus the best other seat's. A game stopped unfinished (stalled or
at the turn cap, see :mod:`baselines.evaluate`) counts as it stands. With 2 players the cell
``(j, i)`` is the mirror of ``(i, j)`` (the same games); with 3 or more both are played.

Ratings (:func:`bradley_terry`) come from the pairwise wins ``w[i, j] = N (s[i, j] + 1 - s[j, i])``
(``N`` games per cell, ``s`` the win shares), which count each game of either cell once
for the pair, so the unequal fair share of a lone seat at a table of 3 or 4 cancels out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from concentration_env.game.rules import Rules

ELO_SCALE = 400 / math.log(10)  # Elo points per natural-log unit of strength
ELO_MEAN = 1500.0  # the ratings' mean
PRIOR_GAMES = 1.0  # one virtual game per pair, split evenly, keeps every strength finite
BT_ITERATIONS = 10_000
BT_TOLERANCE = 1e-10


@dataclass(frozen=True)
class Entrant:
    """A crosstable entry: its name, tier (``raw``, ``engineered`` or ``baseline``) and a
    function building a fresh player for one seat (stateful players must not share seats)."""

    name: str
    tier: str
    make: Callable[[], Any]  # a HarnessPolicy (a baseline or a ModelPolicy)


def game_outcomes(scores: np.ndarray, seat: int) -> tuple[np.ndarray, np.ndarray]:
    """Per game (rows of ``scores``, pairs in seat order): ``seat``'s win share and its margin
    over the best other seat (see the module docstring)."""
    scores = np.asarray(scores)
    top = scores == scores.max(axis=1, keepdims=True)
    share = np.where(top[:, seat], 1.0 / top.sum(axis=1), 0.0)
    margin = scores[:, seat] - np.delete(scores, seat, axis=1).max(axis=1)
    return share, margin.astype(float)


def seat_games(
    rules: Rules, agent: Entrant, opponent: Entrant, games: int, seed: int, max_turns: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``agent``'s win shares and margins, ``(P, games)`` arrays: row ``s`` has the agent in
    seat ``s`` and ``opponent`` in every other seat, on deals ``seed .. seed + games - 1``."""
    from baselines.evaluate import play

    players = rules.num_players
    shares, margins = np.empty((players, games)), np.empty((players, games))
    for seat in range(players):
        policies = [agent.make() if s == seat else opponent.make() for s in range(players)]
        result = play(rules, policies, games, seed, max_turns=max_turns)
        shares[seat], margins[seat] = game_outcomes(result.scores, seat)
    return shares, margins


def win_share(rules: Rules, agent: Entrant, opponent: Entrant, games: int, seed: int, max_turns: int | None = None):
    """``agent``'s mean win share over every seat against ``opponent`` (see :func:`seat_games`)."""
    return float(seat_games(rules, agent, opponent, games, seed, max_turns)[0].mean())


def _ci95(samples: np.ndarray) -> float:
    from baselines.evaluate import estimate

    return estimate(samples.reshape(-1)).ci95


@dataclass
class Crosstable:
    """The results of :func:`crosstable`: ``share[i, j]`` and ``margin[i, j]`` are the row
    entrant ``i``'s mean win share and margin against ``j`` (NaN on the diagonal), with 95%
    confidence half-widths; ``ratings`` are Elo-scale Bradley-Terry ratings."""

    rules: Rules
    names: list[str]
    tiers: list[str]
    games: int  # deals per seat per pairing
    seed: int
    share: np.ndarray
    share_ci95: np.ndarray
    margin: np.ndarray
    margin_ci95: np.ndarray
    ratings: np.ndarray

    @property
    def games_per_cell(self) -> int:
        return self.games * self.rules.num_players

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (NaN on the diagonal becomes None)."""

        def matrix(values: np.ndarray) -> list:
            return [[None if math.isnan(v) else round(float(v), 4) for v in row] for row in values]

        return {
            "players": self.rules.num_players,
            "num_cards": self.rules.num_cards,
            "turn_policy": self.rules.turn_policy,
            "games_per_seat": self.games,
            "games_per_cell": self.games_per_cell,
            "seed": self.seed,
            "entrants": [
                {"name": n, "tier": t, "rating": round(float(r), 1)}
                for n, t, r in zip(self.names, self.tiers, self.ratings)
            ],
            "win_share": matrix(self.share),
            "win_share_ci95": matrix(self.share_ci95),
            "margin": matrix(self.margin),
            "margin_ci95": matrix(self.margin_ci95),
        }


def crosstable(
    rules: Rules, entrants: Sequence[Entrant], games: int, seed: int = 0, max_turns: int | None = None
) -> Crosstable:
    """Play every ordered pairing of ``entrants`` (see the module docstring) and fit ratings."""
    if len(entrants) < 2:
        raise ValueError(f"a crosstable needs at least 2 entrants, got {len(entrants)}")
    names = [e.name for e in entrants]
    if len(set(names)) != len(names):
        raise ValueError(f"entrants' names must differ, got {names}")
    n = len(entrants)
    values = {key: np.full((n, n), np.nan) for key in ("share", "share_ci95", "margin", "margin_ci95")}
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            if rules.num_players == 2 and j < i:  # the mirror of a pairing already played
                values["share"][i, j] = 1.0 - values["share"][j, i]
                values["margin"][i, j] = -values["margin"][j, i]
                values["share_ci95"][i, j], values["margin_ci95"][i, j] = (
                    values["share_ci95"][j, i],
                    values["margin_ci95"][j, i],
                )
                continue
            shares, margins = seat_games(rules, entrants[i], entrants[j], games, seed, max_turns)
            values["share"][i, j], values["share_ci95"][i, j] = shares.mean(), _ci95(shares)
            values["margin"][i, j], values["margin_ci95"][i, j] = margins.mean(), _ci95(margins)
    per_cell = games * rules.num_players
    ratings = elo(bradley_terry(pairwise_wins(values["share"], per_cell)))
    return Crosstable(rules, names, [e.tier for e in entrants], games, seed, ratings=ratings, **values)


def pairwise_wins(share: np.ndarray, games_per_cell: int) -> np.ndarray:
    """``w[i, j]``: games of the pair ``i, j`` that ``i`` won (see the module docstring), plus
    half of :data:`PRIOR_GAMES` each way; the diagonal is 0."""
    share = np.nan_to_num(np.asarray(share, dtype=float), nan=0.0)
    wins = games_per_cell * (share + 1.0 - share.T) + PRIOR_GAMES / 2
    np.fill_diagonal(wins, 0.0)
    return wins


def bradley_terry(wins: np.ndarray) -> np.ndarray:
    """Bradley-Terry strengths ``p`` (``P(i beats j) = p_i / (p_i + p_j)``) maximising the
    likelihood of ``wins[i, j]`` (``i``'s wins over ``j``), by the MM algorithm (Hunter 2004):
    ``p_i <- W_i / sum_{j != i} n_ij / (p_i + p_j)`` with ``W_i = sum_j wins[i, j]`` and
    ``n_ij = wins[i, j] + wins[j, i]``, then rescaled to geometric mean 1; it repeats until no
    strength moves by more than a relative :data:`BT_TOLERANCE`. Every pair needs games."""
    wins = np.asarray(wins, dtype=float)
    n = len(wins)
    if wins.shape != (n, n) or (wins < 0).any():
        raise ValueError(f"wins must be a square array of counts >= 0, got shape {wins.shape}")
    games = wins + wins.T
    np.fill_diagonal(games, 0.0)
    total = wins.sum(axis=1)
    if (total <= 0).any():
        raise ValueError("every entrant needs a win (a prior game keeps them finite: see pairwise_wins)")
    strength = np.ones(n)
    for _ in range(BT_ITERATIONS):
        fresh = total / (games / (strength[:, None] + strength[None, :])).sum(axis=1)
        fresh /= math.exp(np.log(fresh).mean())
        converged = np.abs(fresh - strength).max() <= BT_TOLERANCE * fresh.max()
        strength = fresh
        if converged:
            break
    return strength


def elo(strength: np.ndarray) -> np.ndarray:
    """Bradley-Terry strengths on an Elo-like scale: ``400 log10 p_i``, shifted to mean
    :data:`ELO_MEAN`, so a 400-point gap means 10:1 odds."""
    rating = ELO_SCALE * np.log(np.asarray(strength, dtype=float))
    return rating - rating.mean() + ELO_MEAN

"""Evaluating agents on seeded deals with the evaluation harness of ``baselines``.

Games are played batch-first by ``baselines.evaluate.play`` (deal ``g`` seeded ``seed + g``,
as ``env.reset(seed=seed + g)`` deals it), so a model is called once per flip for all games
at once. The same functions serve the evaluations during training (``eval.csv``) and the
benchmark tables.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from concentration_env.game.rules import Rules
from concentration_env.training.config import TrainConfig
from concentration_env.training.crosstable import Entrant, game_outcomes, seat_games

if TYPE_CHECKING:
    from baselines.evaluate import HarnessPolicy

# During training a game still running after this many turns per card is stuck: a
# deterministic policy early in training can repeat one missed pair forever (optimal play
# needs under one turn per card). Benchmarks use the harness's own, far larger, cap.
EVAL_TURNS_PER_CARD = 10


def training_cap(rules: Rules) -> int:
    """The turn cap of evaluations during training."""
    return EVAL_TURNS_PER_CARD * rules.num_cards


def solitaire_stats(
    rules: Rules, policy: HarnessPolicy, games: int, seed: int, max_turns: int | None = None
) -> dict[str, Any]:
    """Moves and unsuccessful pairs per game (mean and 95% CI) and the share of deals cleared
    (a game stopped at ``max_turns`` counts with the turns it took; ``capped`` says how many were)."""
    from baselines.evaluate import estimate, play

    result = play(rules, [policy], games, seed, max_turns=max_turns)
    moves, misses = estimate(result.turns), estimate(result.mismatches)
    return {
        "games": games,
        "moves": moves.mean,
        "moves_ci95": moves.ci95,
        "misses": misses.mean,
        "misses_ci95": misses.ci95,
        "cleared": float(result.cleared.mean()),
        "capped": int(result.capped.sum()),
    }


def duel_stats(
    rules: Rules, policy: HarnessPolicy, opponent: HarnessPolicy, games: int, seed: int, max_turns: int | None = None
) -> dict[str, Any]:
    """Win rate (ties count half) and pair margin against ``opponent``, ``games`` deals in each
    seat: per seat (``win_first``, ``win_second``, ``margin_first``, ...) and over both. A game
    stopped at ``max_turns`` or stalled counts as it stands; ``capped`` and ``stalled`` say how
    many were (see :mod:`baselines.evaluate`)."""
    from baselines.evaluate import estimate, play

    stats: dict[str, Any] = {"games": 2 * games, "opponent": opponent.name, "capped": 0, "stalled": 0}
    wins, margins = [], []
    for seat, name in enumerate(("first", "second")):
        seats = [policy, opponent] if seat == 0 else [opponent, policy]
        result = play(rules, seats, games, seed, max_turns=max_turns)
        stats["capped"] += int(result.capped.sum())
        stats["stalled"] += int(result.stalled.sum())
        win, margin = game_outcomes(result.scores, seat)
        stats[f"win_{name}"], stats[f"margin_{name}"] = float(win.mean()), float(margin.mean())
        wins.append(win)
        margins.append(margin)
    overall_win, overall_margin = estimate(np.concatenate(wins)), estimate(np.concatenate(margins))
    stats.update(
        win=overall_win.mean, win_ci95=overall_win.ci95, margin=overall_margin.mean, margin_ci95=overall_margin.ci95
    )
    return stats


def agent_stats(config: TrainConfig, rules: Rules, policy: HarnessPolicy, games: int, seed: int) -> dict[str, Any]:
    """What ``eval.csv`` records for a config: solitaire stats, or duel stats against the
    config's first opponent (capped at :func:`training_cap` turns)."""
    if rules.num_players == 1:
        return solitaire_stats(rules, policy, games, seed, training_cap(rules))
    from concentration_env.envs.opponents import resolve_policy

    if rules.num_players > 2:
        return table_stats(rules, policy, config.opponents[0], max(1, games // rules.num_players), seed)
    # A config names its opponents, so this is a baseline or a saved model: both harness policies.
    opponent = cast("HarnessPolicy", resolve_policy(config.opponents[0], rules))
    return duel_stats(rules, policy, opponent, max(1, games // 2), seed, training_cap(rules))


def table_stats(rules: Rules, policy: HarnessPolicy, opponent: str, games: int, seed: int) -> dict[str, Any]:
    """Win share and margin over the best other seat (:mod:`concentration_env.training.crosstable`)
    with ``policy`` in each seat in turn and a fresh ``opponent`` in every other, ``games``
    deals per seat (capped at :func:`training_cap` turns)."""
    from baselines.evaluate import estimate
    from concentration_env.envs.opponents import resolve_policy

    agent, others = (
        Entrant("agent", "", lambda: policy),
        Entrant(opponent, "", partial(resolve_policy, opponent, rules)),
    )
    shares, margins = seat_games(rules, agent, others, games, seed, training_cap(rules))
    win, margin = estimate(shares.reshape(-1)), estimate(margins.reshape(-1))
    return {"games": shares.size, "win": win.mean, "win_ci95": win.ci95, "margin": margin.mean, "opponent": opponent}

"""The decision that separates the exact two-player optimum from greedy play, probed.

After a first card nobody had seen that pairs with no known card, a player turns either an unknown card
(which may pair, or show the opponent a new face) or a known card on purpose (a sure miss
that shows nothing new). The exact optimum (:class:`baselines.optimal_policy.OptimalPolicy`)
makes this choice by the parity of public counts (``concentration_env.envs.features``:
unseen pairs, lone known cards); greedy always turns an unknown card and safe_first always a
known one. :func:`second_flip_decisions` plays an agent against itself on seeded deals and,
at every such decision, asks the optimum what it would flip from the same observation;
:func:`decision_table` reports how often each turns a known card and how often they agree,
by the parity of the two counts. ``scripts/probe_decisions.py`` is its command line.

:class:`OptimumAt` and :func:`gap_table` measure what an agent's departures from the optimum
cost: the agent plays against the optimum while the optimum's own flip replaces the agent's at
its first flips, at the second flips probed above, or at both, and each variant's win share
and pair margin against the optimum show which decisions hold the gap
(``scripts/probe_gap.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from concentration_env.envs.features import (
    FEATURE_COLUMN,
    NUM_CARD_FEATURES,
    card_features,
    count_features,
    count_width,
)
from concentration_env.game import core
from concentration_env.game.policy import is_stationary
from concentration_env.game.rules import Rules
from concentration_env.game.scoring import scores_seen_by
from concentration_env.training.crosstable_report import ProbeCommand

# A 52-card game between sound players ends in well under this many turns; a pair of
# players that pass forever (two known cards each turn) is cut off here.
PROBE_MAX_TURNS = 300


def after_lone_new_card(features: np.ndarray, first_was_unknown: np.ndarray) -> np.ndarray:
    """(B,) bool from a batch of :func:`card_features` (or a set that starts with them): a
    second flip after a first card nobody had seen that pairs with no known card."""
    mid_turn = features[:, 0, FEATURE_COLUMN["mid_turn"]] > 0
    return mid_turn & first_was_unknown & (features[:, 0, FEATURE_COLUMN["match_known"]] == 0)


@dataclass(frozen=True)
class Decisions:
    """One row per probed decision: the two counts after the first flip and what was turned."""

    unseen_pairs: np.ndarray  # (D,) unseen pairs on the table, the first card face up
    lone_known: np.ndarray  # (D,) lone known cards on the table, the first card among them
    agent_known: np.ndarray  # (D,) bool: the agent turned a known card
    optimum_known: np.ndarray  # (D,) bool: the optimum would have turned a known card


def second_flip_decisions(rules: Rules, agent, games: int, seed: int) -> Decisions:
    """Play ``agent`` (a batch policy, :mod:`baselines.base`) in every seat of ``games`` deals
    (seeds ``seed ..``) and record each second flip whose first card was unknown before the
    turn and pairs with no known card, where both an unknown and a known card could be turned."""
    from baselines.evaluate import seeded_games
    from baselines.optimal_policy import OptimalPolicy

    if rules.num_players != 2:
        raise ValueError(f"num_players={rules.num_players}: the exact optimum plays 2-player games only")
    optimum = OptimalPolicy(rules)
    game, state = seeded_games(rules, games, seed, agent, optimum)
    width = count_width(game)
    first_was_unknown = np.zeros(games, dtype=bool)  # this turn's first card was a face nobody had seen
    rows: list[tuple[np.ndarray, ...]] = []
    while True:
        state.done |= state.turns >= PROBE_MAX_TURNS
        if state.done.all():
            break
        observation = core.observe(game, state, memory=True)
        observation["scores"] = scores_seen_by(state.scores, state.player)
        chosen, best = agent.act_batch(observation), optimum.act_batch(observation)
        features = count_features(game, observation)
        legal = features[..., FEATURE_COLUMN["legal"]] > 0
        unknown = features[..., FEATURE_COLUMN["unknown"]] > 0
        known = features[..., FEATURE_COLUMN["known"]] > 0
        mid_turn = features[:, 0, FEATURE_COLUMN["mid_turn"]] > 0
        probed = (
            ~state.done
            & after_lone_new_card(features, first_was_unknown)
            & (legal & unknown).any(axis=1)
            & (legal & known).any(axis=1)
        )
        if probed.any():
            counts = features[probed, 0, NUM_CARD_FEATURES:].reshape(-1, 2, width).argmax(axis=2)
            picked = np.flatnonzero(probed)
            rows.append((counts[:, 0], counts[:, 1], known[picked, chosen[picked]], known[picked, best[picked]]))
        first_was_unknown = np.where(mid_turn, first_was_unknown, unknown[np.arange(games), chosen])
        core.step(game, state, chosen)
    if not rows:
        return Decisions(*(np.zeros(0, dtype=dtype) for dtype in (np.int64, np.int64, bool, bool)))
    return Decisions(*(np.concatenate(column) for column in zip(*rows)))


def decision_table(decisions: Decisions) -> str:
    """Markdown: per parity of the two counts, the decisions probed, how often the optimum and
    the agent turn a known card, and how often the agent does what the optimum would."""
    lines = [
        "| unseen pairs | lone known | decisions | optimum turns a known card | agent turns a known card | agent = optimum |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for unseen_parity in (0, 1):
        for lone_parity in (0, 1):
            rows = (decisions.unseen_pairs % 2 == unseen_parity) & (decisions.lone_known % 2 == lone_parity)
            n = int(rows.sum())
            if n == 0:
                continue
            optimum, agent = decisions.optimum_known[rows], decisions.agent_known[rows]
            lines.append(
                f"| {'even' if unseen_parity == 0 else 'odd'} | {'even' if lone_parity == 0 else 'odd'} | {n} "
                f"| {optimum.mean():.3f} | {agent.mean():.3f} | {(optimum == agent).mean():.3f} |"
            )
    total = len(decisions.agent_known)
    agree = float((decisions.agent_known == decisions.optimum_known).mean()) if total else float("nan")
    lines.append(f"\nAll {total} decisions: the agent does what the optimum would in {agree:.3f} of them.")
    return "\n".join(lines) + "\n"


class OptimumAt:
    """A harness policy: ``agent`` plays, and at the decisions chosen the exact optimum's flip
    replaces its own: ``first`` (every first flip of a turn), ``second`` (every second flip
    after a first card unknown before the turn that pairs with no known card). Counts the
    decisions taken over (``taken``) and those where one would turn an unknown card and the
    other a known one (``changed``; two known cards, as in a stall, count as the same kind)."""

    name = "optimum_at"

    def __init__(self, agent, rules: Rules, first: bool, second: bool):
        from baselines.optimal_policy import OptimalPolicy

        self.agent, self.optimum = agent, OptimalPolicy(rules)
        self.game = core.compile_rules(rules)
        self.first, self.second = first, second
        self.taken = self.changed = 0
        self.first_was_unknown = np.zeros(0, dtype=bool)

    @property
    def stationary(self) -> bool:
        return is_stationary(self.agent)

    def reset_batch(self, seeds) -> None:
        self.agent.reset_batch(seeds)
        self.optimum.reset_batch(seeds)
        self.first_was_unknown = np.zeros(len(seeds), dtype=bool)

    def keep(self, rows: np.ndarray) -> None:
        self.agent.keep(rows)
        self.optimum.keep(rows)
        self.first_was_unknown = self.first_was_unknown[rows]

    def act_batch(self, observations) -> np.ndarray:
        own, best = self.agent.act_batch(observations), self.optimum.act_batch(observations)
        features = card_features(self.game, observations)
        mid_turn = features[:, 0, FEATURE_COLUMN["mid_turn"]] > 0
        taken = (~mid_turn & self.first) | (after_lone_new_card(features, self.first_was_unknown) & self.second)
        unknown = features[..., FEATURE_COLUMN["unknown"]] > 0
        rows = np.arange(len(own))
        self.taken += int(taken.sum())
        self.changed += int((taken & (unknown[rows, own] != unknown[rows, best])).sum())
        chosen = np.where(taken, best, own)
        self.first_was_unknown = np.where(mid_turn, self.first_was_unknown, unknown[rows, chosen])
        return chosen


# (label, the optimum takes the first flips, the probed second flips)
SUBSTITUTIONS = (
    ("nothing", False, False),
    ("first flips", True, False),
    ("second flips", False, True),
    ("both", True, True),
)


def _same(player: OptimumAt) -> OptimumAt:
    return player


def gap_table(rules: Rules, agent, games: int, seed: int) -> str:
    """Markdown: for each of :data:`SUBSTITUTIONS`, the agent with the optimum at those
    decisions against the optimum over both seats of ``games`` deals: decisions taken over,
    how many changed kind (unknown against known card), win share and pair margin with 95% intervals."""
    from baselines.evaluate import estimate
    from baselines.optimal_policy import OptimalPolicy
    from concentration_env.training.crosstable import Entrant, seat_games

    optimum = Entrant("optimal", "baseline", lambda: OptimalPolicy(rules))
    lines = [
        "| the optimum decides | decisions taken over | changed (unknown / known) | win share against optimal | pair margin |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, first, second in SUBSTITUTIONS:
        player = OptimumAt(agent, rules, first, second)  # one player for both seats: its counts add up
        shares, margins = seat_games(rules, Entrant(label, "probe", partial(_same, player)), optimum, games, seed)
        share, margin = estimate(shares.ravel()), estimate(margins.ravel())
        lines.append(
            f"| {label} | {player.taken} | {player.changed} | {share.mean:.3f} ± {share.ci95:.3f} "
            f"| {margin.mean:+.2f} ± {margin.ci95:.2f} |"
        )
    return "\n".join(lines) + "\n"


def _decision_table(rules: Rules, agent, games: int, seed: int) -> str:
    return decision_table(second_flip_decisions(rules, agent, games, seed))


# ``scripts/probe_decisions.py``: print the decision table of one agent; 2 and one line on bad input.
# ProbeCommand(prog, description, players, default games, default seed, a --set example, table)
main = ProbeCommand(
    "probe_decisions.py",
    "How often an agent's second flips agree with the exact 2-player optimum's.",
    2,
    500,
    1_000_000,
    "turn_policy=one_flip",
    _decision_table,
).main


# ``scripts/probe_gap.py``: the agent with the optimum at some of its decisions, against the optimum.
gap_main = ProbeCommand(
    "probe_gap.py",
    "Where an agent's gap to the exact 2-player optimum lies: the optimum takes over some of its decisions.",
    2,
    500,
    1_000_000,
    "turn_policy=one_flip",
    gap_table,
).main

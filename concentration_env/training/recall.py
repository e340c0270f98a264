"""Does a solitaire agent find a partner it has seen? A probe of memory, decision by decision.

In the one-player game the costly error of an imperfect memory is a second flip that misses a
known partner: the first card's partner has been shown before, and the agent turns some other
card. :func:`partner_recall` plays an agent on seeded deals through the harness
(:func:`baselines.evaluate.play`) and, at every second flip whose first card has a partner
known to a perfect memory, records whether the agent turned a partner, how many cards of
known face lay on the table besides the first card (the memory's load), and whether the first
card was new (unseen before this turn: matching it takes a lookup in memory) or known (the
turn captures a pair known before it began), and how many unseen cards were left.
:func:`recall_table` reports the share found by load and by those splits. Greedy with
perfect memory finds every one; ``forgetful`` finds fewer as its capacity shrinks; a
visible-mode learner shows where its memory gives out.
``scripts/probe_recall.py`` is its command line.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from concentration_env.envs.features import FEATURE_COLUMN, card_features
from concentration_env.game import core
from concentration_env.game.policy import is_stationary
from concentration_env.game.rules import Rules
from concentration_env.training.crosstable_report import ProbeCommand

LOAD_BANDS = (0, 8, 16, 24, 32)  # lower edges of the load bands of the table (cards of known face)


@dataclass(frozen=True)
class PartnerRecall:
    """One row per second flip whose first card had a known partner."""

    load: np.ndarray  # (D,) cards of known face on the table, the first card not counted
    found: np.ndarray  # (D,) bool: the agent turned a partner of the first card
    first_new: np.ndarray  # (D,) bool: the first card had not been seen before this turn
    unseen_left: np.ndarray  # (D,) cards never shown still on the table


class _Recorder:
    """A harness policy that plays ``agent`` and records every probed second flip."""

    def __init__(self, agent, rules: Rules):
        self.agent, self.game, self.name = agent, core.compile_rules(rules), agent.name
        self.rows: list[tuple[np.ndarray, ...]] = []
        self.first_new = np.zeros(0, dtype=bool)  # per game: this turn's first card was unseen

    @property
    def stationary(self) -> bool:
        return is_stationary(self.agent)

    def reset_batch(self, seeds: Sequence[int | None]) -> None:
        self.agent.reset_batch(seeds)
        self.first_new = np.zeros(len(seeds), dtype=bool)

    def keep(self, rows: np.ndarray) -> None:
        self.agent.keep(rows)
        self.first_new = self.first_new[rows]

    def act_batch(self, observations: Mapping[str, np.ndarray]) -> np.ndarray:
        chosen = np.asarray(self.agent.act_batch(observations))
        features = card_features(self.game, dict(observations))
        partner_known = features[:, 0, FEATURE_COLUMN["match_known"]] > 0
        if partner_known.any():
            picked = np.flatnonzero(partner_known)
            load = features[picked, :, FEATURE_COLUMN["known"]].sum(axis=1).astype(np.int64)
            found = features[picked, chosen[picked], FEATURE_COLUMN["matches_first"]] > 0
            unseen_left = features[picked, :, FEATURE_COLUMN["unknown"]].sum(axis=1).astype(np.int64)
            self.rows.append((load, found, self.first_new[picked], unseen_left))
        mid_turn = features[:, 0, FEATURE_COLUMN["mid_turn"]] > 0
        turned_unknown = features[np.arange(len(chosen)), chosen, FEATURE_COLUMN["unknown"]] > 0
        self.first_new = np.where(mid_turn, self.first_new, turned_unknown)
        return chosen


def partner_recall(rules: Rules, agent, games: int, seed: int) -> PartnerRecall:
    """Play ``agent`` (a harness policy) alone on ``games`` deals seeded ``seed ..`` and record
    each second flip whose first card's partner had been shown (perfect memory's view)."""
    from baselines.evaluate import play

    if rules.num_players != 1:
        raise ValueError(f"num_players={rules.num_players}: the recall probe plays the one-player game")
    recorder = _Recorder(agent, rules)
    play(rules, [recorder], games=games, seed=seed)
    if not recorder.rows:
        none, never = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
        return PartnerRecall(none, never, never, none)
    load, found, first_new, unseen_left = (np.concatenate(column) for column in zip(*recorder.rows))
    return PartnerRecall(load, found, first_new, unseen_left)


def recall_table(recall: PartnerRecall, games: int) -> str:
    """Markdown: per band of the memory's load, the probed second flips (per game) and the
    share in which the agent turned the known partner, over all of them and split by whether
    the first card was new this turn or known before it; the known ones split again by
    whether unseen cards were left on the table."""
    lines = [
        "| cards of known face | second flips per game | partner found | first card new: found (flips) "
        "| first card known: found (flips) |",
        "|---|---:|---:|---:|---:|",
    ]
    edges = (*LOAD_BANDS, np.iinfo(np.int64).max)
    for low, high in itertools.pairwise(edges):
        rows = (recall.load >= low) & (recall.load < high)
        if rows.any():
            band = f"{low}+" if high == edges[-1] else f"{low}-{high - 1}"
            split = [_share(recall.found[rows & (recall.first_new == new)]) for new in (True, False)]
            lines.append(f"| {band} | {rows.sum() / games:.2f} | {_share(recall.found[rows])} | {' | '.join(split)} |")
    total = len(recall.found)
    new, known = (_share(recall.found[recall.first_new == flag]) for flag in (True, False))
    known_first = ~recall.first_new
    while_unseen, at_the_end = (
        _share(recall.found[known_first & ((recall.unseen_left > 0) == left)]) for left in (True, False)
    )
    lines.append(
        f"\nAll {total} such second flips ({total / games:.2f} per game): partner found in "
        f"{_share(recall.found)}; after a new first card {new}, after a known one {known} "
        f"({while_unseen} while unseen cards remained, {at_the_end} once none did)."
    )
    return "\n".join(lines) + "\n"


def _share(found: np.ndarray) -> str:
    """The share found, with the count behind it when it is a part (``nan`` for none)."""
    return f"{found.mean():.3f} ({len(found)})" if len(found) else "nan (0)"


def _recall_table(rules: Rules, agent, games: int, seed: int) -> str:
    return recall_table(partner_recall(rules, agent, games, seed), games)


# ``scripts/probe_recall.py``: print the recall table of one agent; 2 and one line on bad input.
# ProbeCommand(prog, description, players, default games, default seed, a --set example, table)
main = ProbeCommand(
    "probe_recall.py",
    "How often a solitaire agent turns a partner it has seen, by how many faces it must remember.",
    1,
    200,
    5_000_000,
    "matching=rank",
    _recall_table,
).main

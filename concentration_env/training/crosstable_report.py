"""The crosstable's files and command line (``scripts/crosstable.py``).

``write_crosstable(table, folder)`` writes ``crosstable.md`` (ratings, win shares and
margins with 95% intervals), ``crosstable.json`` and ``crosstable.png`` (the win-share
matrix and the ratings).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from concentration_env.game.rules import Rules
from concentration_env.training.crosstable import ELO_MEAN, Crosstable, Entrant, crosstable


def markdown(table: Crosstable, seconds: float | None = None) -> str:
    """The crosstable as Markdown: ratings, then the win-share and margin matrices."""
    rules = table.rules
    order = np.argsort(-table.ratings)
    fair = 1 / rules.num_players
    lines = [
        f"# Crosstable: {rules.num_players} players, {rules.num_cards} cards, {rules.turn_policy}",
        "",
        f"{table.games} seeded deals (seeds {table.seed}..{table.seed + table.games - 1}) per pairing and seat: "
        f"{table.games_per_cell} games per cell. Row against column: the row entrant in one seat, the column "
        f"entrant in every other seat, every seat in turn. Win share: 1 for the most pairs, split on a tie "
        f"(fair share {fair:.2f}); margin: the row's pairs minus the best other seat's. ± is a 95% interval."
        + (f" Played in {seconds:.0f} s." if seconds is not None else ""),
        "",
        f"Ratings: Bradley-Terry fitted to the pairwise wins by the MM algorithm, Elo scale (mean {ELO_MEAN:.0f};"
        " 400 points = 10:1 odds).",
        "",
        "| rank | entrant | tier | rating | mean win share |",
        "|---:|---|---|---:|---:|",
    ]
    for rank, i in enumerate(order, 1):
        mean = np.nanmean(table.share[i])
        lines.append(f"| {rank} | {table.names[i]} | {table.tiers[i]} | {table.ratings[i]:.0f} | {mean:.3f} |")
    for title, values, cis, digits in (
        ("Win share (row vs column)", table.share, table.share_ci95, 3),
        ("Pair margin (row vs column)", table.margin, table.margin_ci95, 2),
    ):
        names = [table.names[i] for i in order]
        lines += ["", f"## {title}", "", "| | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
        for i in order:
            cells = ["—" if i == j else f"{values[i, j]:.{digits}f} ± {cis[i, j]:.{digits}f}" for j in order]
            lines.append(f"| **{table.names[i]}** | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def chart(table: Crosstable, path: Path) -> Path:
    """The win-share matrix as a heat map beside the ratings as bars; returns ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = np.argsort(-table.ratings)
    names = [table.names[i] for i in order]
    share = table.share[np.ix_(order, order)]
    size = len(names)
    figure, (left, right) = plt.subplots(
        1, 2, figsize=(5 + 1.1 * size, 0.6 * size + 2.5), gridspec_kw={"width_ratios": [size, 3]}
    )
    image = left.imshow(share, vmin=0, vmax=1, cmap="RdBu")
    for (i, j), value in np.ndenumerate(share):
        if not math.isnan(value):
            left.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=9)
    left.set_xticks(range(size), names, rotation=30, ha="right")
    left.set_yticks(range(size), names)
    left.set_title("win share, row vs column")
    figure.colorbar(image, ax=left, fraction=0.046)
    right.barh(range(size), table.ratings[order] - ELO_MEAN, left=ELO_MEAN, color="tab:blue")
    right.set_yticks(range(size), names)
    right.invert_yaxis()
    right.axvline(ELO_MEAN, color="grey", linewidth=0.8)
    right.set_title("Bradley-Terry rating")
    rules = table.rules
    figure.suptitle(
        f"{rules.num_players} players, {rules.num_cards} cards, {rules.turn_policy}: {table.games_per_cell} games per cell"
    )
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def write_crosstable(table: Crosstable, folder: str | Path, seconds: float | None = None) -> Path:
    """Write the Markdown, JSON and PNG of ``table`` into ``folder``; returns the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "crosstable.md").write_text(markdown(table, seconds))
    data = table.to_dict() | ({"seconds": round(seconds, 1)} if seconds is not None else {})
    (folder / "crosstable.json").write_text(json.dumps(data, indent=2) + "\n")
    chart(table, folder / "crosstable.png")
    return folder


def entrants(agents: list[str], baselines: list[str], rules: Rules) -> list[Entrant]:
    """Entrants for saved models (run or model folders, or model files) and baseline names;
    ``ValueError`` naming the one that cannot play ``rules``."""
    from baselines.policies import POLICIES, make_policy
    from concentration_env.envs.opponents import load_model_policy
    from concentration_env.training.model_policy import ModelPolicy
    from concentration_env.training.run_folder import final_model_path

    chosen = []
    for given in agents:
        try:
            path = str(final_model_path(given)) if Path(given).is_dir() else given
        except FileNotFoundError as error:
            raise ValueError(str(error)) from None
        policy = load_model_policy(path, rules)  # loaded once here to check it and read its tier
        tier = policy.config.tier if isinstance(policy, ModelPolicy) else "unknown"
        chosen.append(Entrant(Path(path).parent.name, tier, partial(load_model_policy, path, rules)))
    for name in baselines:
        if name not in POLICIES:
            raise ValueError(f"unknown baseline {name!r}; allowed: {', '.join(POLICIES)}")
        if name == "optimal" and rules.num_players > 2:  # the DP solves solitaire and two players
            raise ValueError("baseline 'optimal' plays 1- and 2-player games only")
        chosen.append(Entrant(name, "baseline", partial(make_policy, name, rules)))
    return chosen


def agent_from_argument(given: str, rules: Rules) -> Any:
    """The one agent a probe's command line names: a baseline by name, else a saved model."""
    from baselines.policies import POLICIES

    chosen = entrants([], [given], rules) if given in POLICIES else entrants([given], [], rules)
    return chosen[0].make()


@dataclass(frozen=True)
class ProbeCommand:
    """A probe's command line: ``PROG AGENT [--rules] [--set] [--games] [--seed]``, whose
    ``table(rules, agent, games, seed)`` plays the probe and returns the Markdown it prints."""

    prog: str
    description: str
    players: int
    games: int
    seed: int
    set_example: str
    table: Callable[[Rules, Any, int, int], str]

    def main(self, argv: list[str] | None = None) -> int:
        """Print the probe's table for one agent; 2 and one line on bad input."""
        parser = argparse.ArgumentParser(prog=self.prog, description=self.description)
        parser.add_argument("agent", help="a saved model (model or run folder, or model file) or a baseline name")
        parser.add_argument("--rules", default="standard", help="a rules preset (default: standard)")
        parser.add_argument(
            "--set",
            nargs="*",
            action="extend",
            default=[],
            metavar="FIELD=VALUE",
            help=f"rule fields, e.g. {self.set_example}",
        )
        parser.add_argument("--games", type=int, default=self.games, help="seeded deals")
        parser.add_argument("--seed", type=int, default=self.seed)
        args = parser.parse_args(argv)
        try:
            rules = rules_from_arguments(args.games, args.seed, args.rules, args.set, self.players)
            text = self.table(rules, agent_from_argument(args.agent, rules), args.games, args.seed)
        except ValueError as error:
            print(f"{self.prog}: error: {error}", file=sys.stderr)
            return 2
        print(text, end="")
        return 0


def rules_from_arguments(games: int, seed: int, preset: str, overrides: list[str], players: int) -> Rules:
    """The rules of a command line's ``--rules`` preset and ``--set field=value`` overrides,
    after checking ``--games`` and ``--seed``; ``ValueError`` naming the bad one."""
    from concentration_env.game.checks import check_int
    from concentration_env.game.overrides import parse_override
    from concentration_env.game.rules import resolve_rules

    check_int("--games", games, 1)
    check_int("--seed", seed, 0)
    fields = {}
    for text in overrides:
        keys, value = parse_override(text, "field=value")
        fields[".".join(keys)] = value
    return resolve_rules(preset, **{**fields, "num_players": players})


def main(argv: list[str] | None = None) -> int:
    """``scripts/crosstable.py``: play the crosstable and write its files; 2 on bad input."""
    parser = argparse.ArgumentParser(
        prog="crosstable.py", description="Round-robin crosstable of agents and baselines."
    )
    parser.add_argument("--agents", nargs="*", default=[], help="saved models: model or run folders, or model files")
    parser.add_argument("--baselines", nargs="*", default=["greedy", "safe_first"], help="baseline names")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--rules", default="standard", help="a rules preset (default: standard)")
    parser.add_argument(
        "--set",
        nargs="*",
        action="extend",
        default=[],
        metavar="FIELD=VALUE",
        help="rule fields, e.g. turn_policy=one_flip",
    )
    parser.add_argument("--games", type=int, default=1000, help="deals per pairing and seat")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="benchmarks/crosstable", help="output folder")
    args = parser.parse_args(argv)
    try:
        rules = rules_from_arguments(args.games, args.seed, args.rules, args.set, args.players)
        if rules.num_players < 2:
            raise ValueError(f"--players {args.players}: a crosstable needs 2 or more players")
        field = entrants(args.agents, args.baselines, rules)
        began = time.perf_counter()
        table = crosstable(rules, field, args.games, args.seed)
        folder = write_crosstable(table, args.out, time.perf_counter() - began)
    except ValueError as error:
        print(f"crosstable.py: error: {error}", file=sys.stderr)
        return 2
    print(f"crosstable: {folder / 'crosstable.md'}")
    return 0

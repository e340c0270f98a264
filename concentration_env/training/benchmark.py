"""Benchmark saved models against the baselines on the same seeded deals.

A benchmark config (``configs/benchmark/*.yaml``) lists solitaire and duel sections::

    games: 2000            # games per row
    seed: 100000           # deal g is seeded seed + g, for every agent alike
    output: benchmarks/headline
    solitaire:
      - rules: standard
        models: [models/solitaire_ppo]
        baselines: [random, greedy, optimal]
    duel:
      - rules: {num_players: 2}
        models: [models/duel2p_ppo]
        opponents: [random, greedy, optimal]

Games are played by ``baselines.evaluate.play`` (the evaluation harness; see
``concentration_env.training.evaluation``), models through :class:`ModelPolicy`. Solitaire rows give mean moves and unsuccessful pairs with 95%
confidence intervals next to the exact optimum of ``baselines.optimal``; duel rows give the
model's win rate (ties count half) and mean pair margin against each opponent, in each seat
and over both. The output folder gets ``benchmark.md`` (the tables), ``benchmark.json`` and
one PNG bar chart per section.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from concentration_env.game.checks import check_int
from concentration_env.game.overrides import apply_overrides
from concentration_env.game.rules import load_yaml_mapping
from concentration_env.training.config import rules_from_config
from concentration_env.training.evaluation import duel_stats, solitaire_stats

TOP_KEYS = ("games", "seed", "output", "solitaire", "duel")
SOLITAIRE_KEYS = ("rules", "models", "baselines")
DUEL_KEYS = ("rules", "models", "opponents")


@dataclass
class Row:
    """One line of a results table."""

    section: str
    rules: str
    agent: str
    values: dict[str, Any]
    tier: str = "baseline"  # a model's tier (raw or engineered), or "baseline"


def _fail(source: str, key: str, why: str) -> NoReturn:
    raise ValueError(f"{source}: key {key!r}: {why}")


def load_benchmark_config(path: str | Path, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Read and validate a benchmark config; errors name the file and the key."""
    source = str(path)
    if not Path(path).is_file():
        raise ValueError(f"{source}: no such benchmark config file")
    data = {**load_yaml_mapping(Path(path)), **(overrides or {})}
    unknown = sorted(set(data) - set(TOP_KEYS))
    if unknown:
        raise ValueError(f"{source}: unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(TOP_KEYS)}")
    config: dict[str, Any] = {
        "games": 1000,
        "seed": 100_000,
        "output": "benchmarks/latest",
        "solitaire": [],
        "duel": [],
    }
    config.update(data)
    for key, minimum in (("games", 1), ("seed", 0)):
        try:
            config[key] = check_int(key, config[key], minimum, whole_floats=True)
        except ValueError as error:
            _fail(source, key, str(error))
    for section, keys in (("solitaire", SOLITAIRE_KEYS), ("duel", DUEL_KEYS)):
        entries = config[section] or []
        if not isinstance(entries, list):
            _fail(source, section, "expected a list of entries")
        for index, entry in enumerate(entries):
            where = f"{section}[{index}]"
            if not isinstance(entry, Mapping):
                _fail(source, where, "expected a mapping")
            bad = sorted(set(entry) - set(keys))
            if bad:
                _fail(source, where, f"unknown key(s) {', '.join(map(repr, bad))}; allowed: {', '.join(keys)}")
            try:
                rules = rules_from_config(entry.get("rules", "standard"))
            except ValueError as error:
                _fail(source, f"{where}.rules", str(error))
            if (rules.num_players == 1) != (section == "solitaire"):
                _fail(
                    source, f"{where}.rules", f"{section} needs {'1 player' if section == 'solitaire' else '2 players'}"
                )
            for list_key in keys[1:]:
                names = entry.get(list_key, [])
                if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                    _fail(source, f"{where}.{list_key}", "expected a list of names")
            for model in entry.get("models", []):
                if not Path(model).exists():
                    _fail(source, f"{where}.models", f"no model at {model}")
            if section == "duel" and not entry.get("models"):
                _fail(
                    source, f"{where}.models", "a duel entry needs at least one model (its rows are model vs opponent)"
                )
            _check_baselines(source, where, keys[2], entry.get(keys[2], []), rules)
    _check_output(source, config["output"])
    return config


def _check_baselines(source: str, where: str, key: str, names: list[str], rules) -> None:
    """Every baseline name is known, and the DP can solve the rules when ``optimal`` plays."""
    from baselines.optimal import check_solvable
    from baselines.policies import POLICIES

    for name in names:
        if name not in POLICIES:
            _fail(source, f"{where}.{key}", f"unknown baseline {name!r}; allowed: {', '.join(sorted(POLICIES))}")
        if name == "optimal":
            try:
                check_solvable(rules, rules.num_players)
            except ValueError as error:
                _fail(source, f"{where}.{key}", f"'optimal' cannot play these rules: {error}")


def _check_output(source: str, output: Any) -> None:
    """The output folder: a path that is, or can become, a writable folder."""
    if not isinstance(output, str) or not output:
        _fail(source, "output", f"expected a folder path, got {output!r}")
    path = Path(output)
    if path.exists() and not path.is_dir():
        _fail(source, "output", f"{output!r} is not a folder")
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not os.access(existing, os.W_OK | os.X_OK):
        _fail(source, "output", f"{str(existing)!r} is not writable")


def _rules_label(rules) -> str:
    label = (
        f"{rules.num_cards} cards, {rules.matching}" if rules.deck == "standard" else f"{rules.num_pairs} picture pairs"
    )
    return label + (f", {rules.num_players} players" if rules.num_players > 1 else "")


def _policies(entry: dict, rules, key: str):
    from baselines import make_policy
    from concentration_env.training.model_policy import ModelPolicy

    models = [ModelPolicy(path, rules) for path in entry.get("models", [])]
    return models, [make_policy(name, rules) for name in entry.get(key, [])]


def _tier(policy: Any) -> str:
    """A model's tier from its training config; a baseline policy is a baseline."""
    config = getattr(policy, "config", None)
    return "baseline" if config is None else config.tier


def solitaire_rows(entry: dict, games: int, seed: int) -> list[Row]:
    """Every model and baseline of one solitaire entry on the same deals."""
    from baselines.evaluate import exact_value

    rules = rules_from_config(entry.get("rules", "standard"))
    models, baselines = _policies(entry, rules, "baselines")
    optimum = exact_value(rules, ["optimal"])
    rows = []
    for policy in models + baselines:
        values = solitaire_stats(rules, policy, games, seed)
        values.update(optimum=optimum, gap_pct=None if optimum is None else 100.0 * (values["moves"] / optimum - 1.0))
        rows.append(Row("solitaire", _rules_label(rules), policy.name, values, _tier(policy)))
    return rows


def duel_rows(entry: dict, games: int, seed: int) -> list[Row]:
    """Each model against each opponent, ``games`` deals in each seat."""
    rules = rules_from_config(entry.get("rules", {"num_players": 2}))
    models, opponents = _policies(entry, rules, "opponents")
    return [
        Row("duel", _rules_label(rules), model.name, duel_stats(rules, model, opponent, games, seed), _tier(model))
        for model in models
        for opponent in opponents
    ]


def markdown(rows: list[Row], games: int, seed: int) -> str:
    """The benchmark tables in Markdown."""
    lines = [
        f"Games per row: {games} (duel: {games} in each seat), deals seeded {seed}..{seed + games - 1}, "
        "the same for every agent.",
        "",
    ]
    solo = [r for r in rows if r.section == "solitaire"]
    if solo:
        lines += [
            "| game | agent | tier | moves (95% CI) | unsuccessful pairs (95% CI) | exact optimum | vs optimum "
            "| deals cleared |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in solo:
            v = r.values
            optimum = "n/a" if v["optimum"] is None else f"{v['optimum']:.2f}"
            gap = "n/a" if v["gap_pct"] is None else f"{v['gap_pct']:+.1f}%"
            lines.append(
                f"| {r.rules} | {r.agent} | {r.tier} | {v['moves']:.2f} ± {v['moves_ci95']:.2f} | "
                f"{v['misses']:.2f} ± {v['misses_ci95']:.2f} | {optimum} | {gap} | {v['cleared']:.1%} |"
            )
        lines.append("")
    duel = [r for r in rows if r.section == "duel"]
    if duel:
        lines += [
            "| game | agent | tier | opponent | win rate, both seats (ties ½) | seat 1 | seat 2 "
            "| pair margin (95% CI) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in duel:
            v = r.values
            lines.append(
                f"| {r.rules} | {r.agent} | {r.tier} | {v['opponent']} | {v['win']:.3f} ± {v['win_ci95']:.3f} | "
                f"{v['win_first']:.3f} | {v['win_second']:.3f} | {v['margin']:+.2f} ± {v['margin_ci95']:.2f} |"
            )
        lines.append("")
    return "\n".join(lines)


def bar_charts(rows: list[Row], output: Path) -> list[Path]:
    """One PNG per section: solitaire moves (with the optimum), duel win rates."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    solo = [r for r in rows if r.section == "solitaire"]
    games = sorted({r.rules for r in solo})
    if games:
        fig, axes = plt.subplots(1, len(games), figsize=(5 * len(games), 4), squeeze=False)
        for ax, game in zip(axes[0], games):
            group = [r for r in solo if r.rules == game]
            ax.bar(
                [r.agent for r in group],
                [r.values["moves"] for r in group],
                yerr=[r.values["moves_ci95"] for r in group],
                color="tab:blue",
                capsize=4,
            )
            if group[0].values["optimum"] is not None:
                ax.axhline(group[0].values["optimum"], color="tab:green", linestyle="--", label="exact optimum")
                ax.legend()
            ax.set_title(game)
            ax.set_ylabel("moves per game (lower is better)")
            ax.tick_params(axis="x", rotation=30)
        fig.tight_layout()
        paths.append(output / "solitaire.png")
        fig.savefig(paths[-1], dpi=100)
        plt.close(fig)
    duel = [r for r in rows if r.section == "duel"]
    if duel:
        fig, ax = plt.subplots(figsize=(6, 4))
        labels = [f"{r.agent}\nvs {r.values['opponent']}" for r in duel]
        ax.bar(
            labels,
            [r.values["win"] for r in duel],
            yerr=[r.values["win_ci95"] for r in duel],
            color="tab:purple",
            capsize=4,
        )
        ax.axhline(0.5, color="grey", linestyle="--", label="even")
        ax.set_ylabel("win rate over both seats (ties count half)")
        ax.set_ylim(0, 1)
        ax.legend()
        fig.tight_layout()
        paths.append(output / "duel.png")
        fig.savefig(paths[-1], dpi=100)
        plt.close(fig)
    return paths


def run_benchmark(config: dict[str, Any]) -> tuple[str, Path]:
    """Play every row of a validated config; write the tables and charts; return the Markdown."""
    import torch

    from concentration_env.training.run import TORCH_THREADS

    torch.set_num_threads(TORCH_THREADS)
    games, seed = config["games"], config["seed"]
    rows = []
    for entry in config["solitaire"]:
        rows += solitaire_rows(entry, games, seed)
    for entry in config["duel"]:
        rows += duel_rows(entry, games, seed)
    output = Path(config["output"])
    output.mkdir(parents=True, exist_ok=True)
    text = markdown(rows, games, seed)
    (output / "benchmark.md").write_text(text)
    (output / "benchmark.json").write_text(json.dumps([r.__dict__ for r in rows], indent=2) + "\n")
    bar_charts(rows, output)
    return text, output


def main(argv: list[str] | None = None) -> int:
    """``concentration-benchmark --config configs/benchmark/headline.yaml``."""
    parser = argparse.ArgumentParser(prog="concentration-benchmark", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", required=True, help="a YAML file under configs/benchmark/")
    parser.add_argument("--games", type=int, help="override games per row")
    parser.add_argument("--output", help="override the output folder")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a top-level key")
    args = parser.parse_args(argv)
    overrides = {k: v for k, v in (("games", args.games), ("output", args.output)) if v is not None}
    try:
        config = load_benchmark_config(args.config, apply_overrides(overrides, args.set))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    text, output = run_benchmark(config)
    print(text)
    print(f"written to {output}/ (benchmark.md, benchmark.json, PNG charts)")
    return 0

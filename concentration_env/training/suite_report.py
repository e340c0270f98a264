"""The learner suite's report: the Markdown tables, ``suite.json`` and the learning curves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from concentration_env.training.suite_config import Suite

DASH = "—"  # a learner that does not apply to a variant's mode


def _figure(moves: float, half: float | None, optimum: float | None) -> str:
    interval = "" if half is None else f" ± {half:.2f}"
    ratio = "" if optimum is None else f" ({moves / optimum:.3f})"
    return f"{moves:.2f}{interval}{ratio}"


def _seeds_note(row: dict[str, Any], suite: Suite) -> str:
    """Empty when every seed of the suite is trained, else how many are."""
    trained = len(row["seeds"])
    return "" if trained == len(suite.seeds) else f" [{trained} of {len(suite.seeds)} seeds]"


def _difference(paired: dict[str, Any] | None) -> str:
    if paired is None:
        return "n/a"
    interval = "" if paired["ci95"] is None else f" ± {paired['ci95']:.2f}"
    return f"{paired['mean']:+.2f}{interval}"


def _learner_cell(row: dict[str, Any] | None, optimum: float | None, suite: Suite) -> str:
    if row is None:
        return DASH
    if row["status"] != "ok":
        return row["status"]
    play = row["plays"][row["play"]]
    return _figure(play["moves"], play["ci95"], optimum) + _seeds_note(row, suite)


def _main_table(suite: Suite, results: list[dict[str, Any]]) -> list[str]:
    baselines = [b.label for b in suite.baselines]
    learners = list(suite.learners.values())
    header = ["variant", "mode", "optimum"] + baselines + [f"{lr.label} [{lr.tier}]" for lr in learners]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for variant in results:
        optimum = variant["optimum"]
        cells = [variant["label"], variant["mode"], DASH if optimum is None else f"{optimum:.2f}"]
        if variant["mode"] == "visible" and optimum is not None:
            cells[2] += " (perfect memory)"
        cells += [_figure(b["moves"], b["ci95"], optimum) for b in variant["baselines"]]
        cells += [_learner_cell(variant["learners"].get(lr.name), optimum, suite) for lr in learners]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _detail_table(suite: Suite, results: list[dict[str, Any]]) -> list[str]:
    header = [
        "variant",
        "learner",
        "tier",
        "algo",
        "gamma",
        "lambda",
        "model",
        "seeds",
        "env steps / seed",
        "wall s / seed",
        "deterministic moves (ratio)",
        "capped",
        "sampled moves (ratio)",
        "capped",
        "selected model: moves (ratio)",
        "capped",
        "selected at env steps",
        "paired vs optimal",
        "paired vs greedy",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for variant in results:
        optimum = variant["optimum"]
        for row in variant["learners"].values():
            cells = [variant["label"], row["label"], row["tier"]]
            if row["status"] != "ok":
                lines.append("| " + " | ".join(cells + [row["status"]] + [""] * (len(header) - 4)) + " |")
                continue
            steps, walls = row["env_steps"], row["wall_seconds"]
            cells += [
                row["algo"],
                "n/a" if row["gamma"] is None else f"{row['gamma']:g}",
                "n/a" if row["gae_lambda"] is None else f"{row['gae_lambda']:g}",
                row["model"] + _restarts_note(row),
                ", ".join(map(str, row["seeds"])) + _seeds_note(row, suite),
                f"{sum(steps) / len(steps):.0f}",
                f"{sum(walls) / len(walls):.0f}",
            ]
            for play in ("deterministic", "sampled"):
                figures = row["plays"][play]
                cells += [_figure(figures["moves"], figures["ci95"], optimum), f"{figures['capped_share']:.1%}"]
            cells += _selected_cells(row["selected"], optimum)
            paired = row["plays"][row["play"]]["paired"]
            cells += [_difference(paired.get(name)) for name in ("optimal", "greedy")]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def _restarts_note(row: dict[str, Any]) -> str:
    """Which seeds' runs restarted (their config's ``restart``: a selection on the runs' own
    evaluation deals), after the model cell; nothing when none did."""
    restarted = [f"{seed}: {count}" for seed, count in zip(row["seeds"], row.get("restarts", [])) if count]
    return f" (restarts, seed: count; {', '.join(restarted)})" if restarted else ""


def _selected_cells(selected: dict[str, Any], optimum: float | None) -> list[str]:
    """The selected models' figures, or why they are missing (a run trained before the selected
    model was saved, whose final model is not its best evaluation)."""
    if selected["missing"]:
        return [f"not kept (seed {', '.join(map(str, selected['missing']))})", "", ""]
    figure = _figure(selected["moves"], selected["ci95"], optimum)
    return [figure, f"{selected['capped_share']:.1%}", ", ".join(f"{steps:,}" for steps in selected["steps"])]


def _notes(suite: Suite, results: list[dict[str, Any]], trained: float | None) -> list[str]:
    seeds = ", ".join(map(str, suite.seeds))
    own = [f"{lr.label} {lr.budget:,}" for lr in suite.learners.values() if lr.budget not in (None, suite.budget)]
    own += [
        f"{suite.learners[name].label} on {variant.label} {extension.steps:,}, resumed past its budget"
        + (f" with {', '.join(extension.overrides)}" if extension.overrides else "")
        for variant in suite.variants
        for name, extension in variant.extend.items()
    ]
    own += [
        f"{suite.learners[name].label} on {variant.label} with {', '.join(overrides)}"
        for variant in suite.variants
        for name, overrides in variant.overrides.items()
    ]
    budgets = f" ({', '.join(own)})" if own else ""
    lines = [
        f"Learners: {len(suite.seeds)} seed(s) ({seeds}), {suite.budget:,} env steps each per variant{budgets}. "
        f"Every model and baseline plays the same {suite.eval_games} deals, seeded {suite.eval_seed}.."
        f"{suite.eval_seed + suite.eval_games - 1} (training never evaluates on these: its deals are seeded "
        "seed + 10,000 + g).",
        "",
        "Figures are mean moves per game (lower is better) with a 95% interval and, in brackets, the ratio "
        "to the optimum. Learners: the mean over seeds of each seed's mean, with a t-interval over the seed "
        "means (none for one seed), played as the learner's `play` says (the second table has both ways); "
        "baselines: one run with a normal interval over the deals. Games still running at the harness's "
        "turn cap count with the turns they took (`capped`: their share). `paired vs optimal` and "
        "`paired vs greedy`: the learner's moves (played as its `play` says) minus those of the "
        "perfect-memory optimal or greedy player on the same deals, the mean over seeds with a "
        "t-interval over the seeds' means (one seed: a normal interval over its deals). Every seed "
        "plays the same deals, so an interval over seeds shows how far the seeds differ, not the spread "
        "from deal to deal (about the baselines' intervals): seeds that play alike get a near-zero one.",
        "",
        "Model: the main figures are each run's final model. `selected model`: the model at the best of the "
        "run's evaluations during training (fewest moves on its config's `eval_episodes` deals, seeded seed + 10,000 + g, a "
        "tie going to the later one), played as those evaluations play (SB3 models deterministically, the "
        "recurrent one sampled), so it is chosen on deals disjoint from the ones shown here; `selected at`: "
        "its env steps per seed (the final step when the final model is the best). `not kept`: a run "
        "trained before runs saved their selected model, whose best evaluation is not its final one. "
        "`restarts`: a run whose config has a `restart` check sets aside an attempt whose evaluation at the "
        "check's step is above its bound and starts again with a new seed (a selection on the run's own "
        "evaluation deals); its env steps and wall time count the attempts set aside.",
        "",
        "Tiers: *raw* networks see the env's observation only; *engineered* ones get hand-made per-card "
        "features or a built-in card memory. Baselines see every card ever shown (perfect memory); "
        "`forgetful(capacity=k, forget=0)` remembers only the k most recently seen cards, a scale "
        "between random and perfect memory for visible mode. `defer_pairs` is greedy leaving known pairs "
        "on the table while unknown cards remain (the rule behind most of optimal's edge under rank matching).",
        *(
            f"`{lr.label}` starts each run from the selected model of `{suite.learners[lr.start_from].label}` on "
            "the memory-mode row with the same rules and seed (a curriculum); its env steps and wall time are "
            "its own leg's only, so add that learner's."
            for lr in suite.learners.values()
            if lr.start_from is not None
        ),
        "",
        "Optimum: the exact expectation of optimal play from the DP (`baselines.optimal`). Visible mode "
        "has no exact optimum in the DP: its rows show the perfect-memory optimum as the reference, "
        "which no player of visible mode can beat.",
        "",
        f"`{DASH}`: the learner does not play this mode; `not trained`: none of its models are under "
        f"`{suite.models}/` (train with `--train`); `[k of n seeds]`: only k of its seeds are trained "
        "yet, and the figure is over those; `learner not available in this build`: its config "
        "does not load here.",
    ]
    cells = [(v, row) for v in results for row in v["learners"].values()]
    played = [f"{row['label']} on {v['label']} ({v['mode']})" for v, row in cells if not row.get("carried")]
    if len(played) < len(cells):
        lines += [
            "",
            f"This run played {len(played)} of the {len(cells)} learner cells again (`--only`): "
            f"{'; '.join(played) or 'none'}. The "
            "others, and the baselines of variants with none of those cells, are carried from the previous "
            "`suite.json` (the same models on the same deals).",
        ]
    runs = [w for v in results for row in v["learners"].values() if row["status"] == "ok" for w in row["wall_seconds"]]
    if runs:
        lines += ["", f"Training the {len(runs)} runs shown took {sum(runs):.0f} s in all (their `training.json`)."]
    if trained is not None:
        lines += ["", f"Training (this command) took {trained:.0f} s of wall time."]
    unavailable = {lr.name: lr.unavailable for lr in suite.learners.values() if lr.unavailable}
    for name, why in unavailable.items():
        lines += ["", f"- `{name}` not available: {why}"]
    return lines


def markdown(suite: Suite, results: list[dict[str, Any]], trained: float | None = None) -> str:
    """The suite's tables and notes in Markdown."""
    return "\n".join(
        [f"# Learner suite ({suite.source})", ""]
        + _main_table(suite, results)
        + ["", "## Per learner", ""]
        + _detail_table(suite, results)
        + [""]
        + _notes(suite, results, trained)
        + [""]
    )


def learning_curves(suite: Suite, results: list[dict[str, Any]]) -> list[Path]:
    """One PNG per variant: each learner's evaluations during training (mean over seeds, the
    seeds' range shaded) with the baselines and the optimum as horizontal lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from concentration_env.training.run_folder import read_eval_csv

    paths = []
    for variant in results:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for row in variant["learners"].values():
            if row["status"] != "ok":
                continue
            curves = [read_eval_csv(Path(folder) / "eval.csv") for folder in row["folders"]]
            steps = curves[0]["timesteps"]
            moves = np.stack([np.interp(steps, c["timesteps"], c["moves"]) for c in curves])
            (line,) = ax.plot(steps, moves.mean(axis=0), marker="o", label=f"{row['label']} [{row['tier']}]")
            ax.fill_between(steps, moves.min(axis=0), moves.max(axis=0), color=line.get_color(), alpha=0.2)
        colours = plt.get_cmap("tab10")
        for index, baseline in enumerate(variant["baselines"]):
            level = baseline["moves"]
            ax.axhline(level, linestyle=":", color=colours(index % 10), label=f"{baseline['label']}: {level:.2f}")
        if variant["optimum"] is not None:
            reference = "perfect-memory optimum" if variant["mode"] == "visible" else "exact optimum"
            ax.axhline(
                variant["optimum"], color="black", linestyle="--", label=f"{reference}: {variant['optimum']:.2f}"
            )
        ax.set_xlabel("env steps (flips)")
        ax.set_ylabel("moves per game during training (lower is better)")
        if variant["optimum"] is not None:
            # Random play lies 4 to 16 times above the optimum; the learners' differences are a few
            # percent, so the axis shows up to 1.35x the optimum and earlier evaluations run off the top.
            ax.set_ylim(0.97 * variant["optimum"], 1.35 * variant["optimum"])
            ax.set_ylabel("moves per game (lower is better, to 1.35x opt.)")
        ax.set_title(f"{variant['label']} ({variant['mode']} mode), seeds shaded")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper right")
        fig.tight_layout()
        paths.append(suite.output / f"curve_{variant['name']}.png")
        fig.savefig(paths[-1], dpi=100)
        plt.close(fig)
    return paths


def write_report(suite: Suite, results: list[dict[str, Any]], trained: float | None = None) -> str:
    """Write ``suite.md``, ``suite.json`` and the curves to the output folder; returns the Markdown."""
    suite.output.mkdir(parents=True, exist_ok=True)
    text = markdown(suite, results, trained)
    (suite.output / "suite.md").write_text(text)
    (suite.output / "suite.json").write_text(json.dumps(results, indent=2) + "\n")
    learning_curves(suite, results)
    return text

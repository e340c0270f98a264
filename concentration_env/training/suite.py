"""The learner suite: where each kind of learner stands, raw and engineered, on every variant.

``python scripts/benchmark.py --config configs/benchmark/suite.yaml`` evaluates the models
committed under ``models/suite/<variant>/<learner>/seed<k>/`` next to the baselines and the
exact optimum and writes ``suite.md``, ``suite.json`` and one learning-curve PNG per variant
to the suite's output folder; ``--train`` first trains every learner anew (each with the
training entry, :func:`concentration_env.training.run.train`) and says how long that took.
Rows whose models are missing read "not trained", learners whose config does not load in this
build "learner not available in this build": nothing is filled in.

Evaluation deals are seeded ``eval_seed + g`` for ``g < eval_games``, the same deals for every
model and baseline; :func:`.suite_config.load_suite` checks that they lie above every deal the
training runs evaluate on (``seed + 10_000 + g``). Each model plays them deterministically
and sampled (games still running at the harness's turn cap count with the turns they took,
and their share is reported), and its run's selected model (the best of its evaluations during
training, on the training run's own deals; :func:`.run_folder.selected_model`) plays them as
those evaluations did (SB3 models deterministically, recurrent ones sampled); a learner's figure is the mean over its seeds' means with a 95%
t-interval over those means. The config format is in :mod:`.suite_config`, the tables and
plots in :mod:`.suite_report`.
"""

from __future__ import annotations

import argparse
import inspect
import json
import shlex
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from concentration_env.game.overrides import apply_overrides
from concentration_env.game.rules import load_yaml_mapping
from concentration_env.training.config import TrainConfig
from concentration_env.training.evaluation import solitaire_stats
from concentration_env.training.suite_config import PLAYS, Learner, Suite, Variant, load_suite

NOT_TRAINED = "not trained"
NOT_AVAILABLE = "learner not available in this build"
MODEL = "final"  # the main figures are each run's final model; the selected one is reported beside them
# Two-sided 95% Student t quantiles by degrees of freedom (no scipy in the train extra).
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}
Z95 = 1.960
PAIRED = ("optimal", "greedy")  # every learner's moves minus theirs on the same deals


def t_interval(values: list[float]) -> tuple[float, float | None]:
    """Mean and 95% t half-width of ``values`` (None for a single value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, None
    spread = (sum((v - mean) ** 2 for v in values) / (n - 1)) ** 0.5
    return mean, T95.get(n - 1, Z95) * spread / n**0.5


def is_suite_config(argv: list[str]) -> bool:
    """Whether the ``--config`` of a benchmark command line is a suite (it has ``variants``)."""
    path = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--config"), None)
    path = path or next((a.split("=", 1)[1] for a in argv if a.startswith("--config=")), None)
    try:
        return path is not None and "variants" in load_yaml_mapping(Path(path))
    except ValueError:
        return False  # the benchmark's own loading reports the bad file


# -- training ---------------------------------------------------------------------------------
def _flow_yaml(value: Any) -> str:
    """``value`` as one line of YAML (a preset name stays bare: no document-end marker)."""
    return value if isinstance(value, str) else yaml.safe_dump(value, default_flow_style=True).strip()


def train_command(suite: Suite, variant: Variant, learner: Learner, seed: int) -> str:
    """The ``scripts/train.py`` command that trains one run of the suite on its own."""
    config = suite.train_config(variant, learner, seed)
    # train_config put the start_from learner's model there (the learner's own config may name another).
    starts = [f"hyperparameters.policy_from={config.hyperparameters['policy_from']}"] if learner.start_from else []
    sets = (
        list(learner.overrides)
        + list(variant.overrides.get(learner.name, ()))
        + starts
        + [
            f"rules={_flow_yaml(variant.rules_entry)}",
            f"observation_mode={config.observation_mode}",
            f"total_timesteps={config.total_timesteps}",
            f"seed={seed}",
            f"eval_freq={config.eval_freq}",
            f"checkpoint_freq={config.checkpoint_freq}",
        ]
    )
    folder = suite.model_dir(variant, learner, seed)
    command = f"python scripts/train.py --config {learner.config} --set {shlex.join(sets)} --run-dir {folder}"
    if learner.name in variant.extend:
        extension = variant.extend[learner.name]
        later = shlex.join([f"total_timesteps={extension.steps}", *extension.overrides])
        command += f"\npython scripts/train.py --resume {folder} --set {later}"
    return command


def select_runs(suite: Suite, only: list[str]) -> set[tuple[str, str, int]]:
    """The (variant, learner, seed) runs that ``--only VARIANT[/LEARNER[/SEED]]`` entries name
    (every run when ``only`` is empty); an entry naming no run of the suite is a ``ValueError``."""
    runs = {(v.name, name, seed) for v in suite.variants for name in v.learners for seed in suite.seeds}
    chosen: set[tuple[str, str, int]] = set() if only else runs
    for entry in only:
        variant, learner, seed = ([*entry.split("/", 2), "", ""])[:3]
        picked = {(v, lr, k) for v, lr, k in runs if v == variant and learner in ("", lr) and seed in ("", str(k))}
        if not picked:
            variants = ", ".join(v.name for v in suite.variants)
            seeds = ", ".join(map(str, suite.seeds))
            raise ValueError(
                f"--only {entry!r} names no run of {suite.source}; allowed: VARIANT[/LEARNER[/SEED]] with "
                f"VARIANT one of {variants}, LEARNER one of its learners and SEED one of {seeds}"
            )
        chosen |= picked
    return chosen


def train_suite(suite: Suite, runs: set[tuple[str, str, int]] | None = None) -> float:
    """Train every available learner on its variants and seeds into the models folder
    (replacing what is there), or only the ``(variant, learner, seed)`` runs given; returns
    the wall time in seconds."""
    from concentration_env.training.run import train

    began = time.perf_counter()
    for variant in suite.variants:
        for learner in (suite.learners[name] for name in variant.learners):
            seeds = [k for k in suite.seeds if runs is None or (variant.name, learner.name, k) in runs]
            if seeds and learner.unavailable is not None:
                print(f"skip {learner.name} on {variant.name}: {NOT_AVAILABLE} ({learner.unavailable})")
                continue
            for seed in seeds:
                folder = suite.model_dir(variant, learner, seed)
                if folder.exists():
                    shutil.rmtree(folder)
                config = suite.train_config(variant, learner, seed)
                segments = [config]
                if learner.name in variant.extend:  # carried on from the final model of the budget
                    segments.append(suite.extension_config(variant, learner, seed))
                for index, segment in enumerate(segments):
                    train(segment, f"{variant.name}-{learner.name}", folder, progress_bar=False, resume=index > 0)
                    for attempt in (folder, *folder.glob("restarts/attempt_*")):
                        for bulky in ("tb", "checkpoints"):  # logs and intermediate saves stay out of the repo
                            shutil.rmtree(attempt / bulky, ignore_errors=True)
                    summary = json.loads((folder / "training.json").read_text())
                    if summary["interrupted"]:  # Ctrl-C or SIGTERM stops the suite, not only this run
                        print(f"interrupted: {folder} holds a partial run; the suite stops here", flush=True)
                        return time.perf_counter() - began
                _write_readme(suite, variant, learner, seed, folder)
                print(f"trained {learner.name} on {variant.name}, seed {seed}: {summary['wall_seconds']} s", flush=True)
    return time.perf_counter() - began


def _completed(folder: Path) -> bool:
    """Whether a run folder holds a run that trained its whole budget (not an interrupted one)."""
    summary = folder / "training.json"
    return summary.is_file() and not json.loads(summary.read_text())["interrupted"]


def _write_readme(suite: Suite, variant: Variant, learner: Learner, seed: int, folder: Path) -> None:
    summary = json.loads((folder / "training.json").read_text())
    commands = "\n".join("    " + line for line in train_command(suite, variant, learner, seed).splitlines())
    segments = summary.get("segments", [])
    resumed = (
        " in segments, each resumed from the last one's final model: "
        + ", ".join(f"{part['from']:,} to {part['to']:,} steps in {part['wall_seconds']} s" for part in segments)
        if len(segments) > 1
        else ""
    )
    curriculum = ""
    if learner.start_from is not None:
        settings = suite.train_config(variant, learner, seed).hyperparameters
        start, frozen = settings["policy_from"], settings.get("policy_frozen_steps", 0)
        curriculum = (
            f"\nCurriculum: the network's policy and value trunks start from `{start}`, the selected model of "
            f"{learner.start_from} on the memory-mode variant with these rules, seed {seed} (its folder's README "
            f"says how it was trained), and stay frozen for the first {frozen} env steps of this run. Count both "
            "legs against a training budget.\n"
        )
    (folder / "README.md").write_text(
        f"# {learner.label} ({learner.tier}) on {variant.label}, seed {seed}\n\n"
        f"One run of the learner suite `{suite.source}`; the suite's main figures are the {MODEL} model of "
        f"the run, and it also reports the selected model (`selected_model`, the best row of `eval.csv`: "
        f"{summary.get('selected_timesteps')} env steps).\n\n"
        f"The whole suite: `python scripts/benchmark.py --config {suite.source} --train`\n\n"
        f"This run alone:\n\n{commands}\n\n"
        f"Config: `config.yaml` (the resolved training config). Training took {summary['timesteps']} env steps "
        f"in {summary['wall_seconds']} s{resumed} ({summary['steps_per_second']} steps/s"
        f"{' in the last segment' if resumed else ''}, one torch thread); "
        "`eval.csv` holds the evaluations during training, `training.json` the timings.\n"
        f"{curriculum}{_restarts_text(summary)}"
    )


def _restarts_text(summary: dict[str, Any]) -> str:
    """What a run's README says of the attempts it set aside (nothing for a run without)."""
    count = summary.get("restarts", 0)
    if not count:
        return ""
    return (
        f"\nRestarts: {count} attempt(s) failed the config's `restart` check and were set aside "
        f"(`restarts.json`, `restarts/`); the model is that of the attempt with seed {summary['seed']}. "
        f"The env steps above are this attempt's and the wall time counts every attempt; with the attempts "
        f"set aside the run took {summary['env_steps_with_restarts']} env steps.\n"
    )


# -- evaluation -------------------------------------------------------------------------------
def discount(config: TrainConfig) -> tuple[float | None, float | None]:
    """The (gamma, GAE lambda) a config trains with: its own or the learner's defaults."""
    if config.algo == "recurrent_ppo":
        from concentration_env.training.recurrent import RecurrentPPOSettings

        defaults: dict[str, Any] = {"gamma": RecurrentPPOSettings.gamma, "gae_lambda": RecurrentPPOSettings.gae_lambda}
    else:
        from concentration_env.training.learners import sb3_class

        parameters = inspect.signature(sb3_class(config.algo).__init__).parameters
        defaults = {k: parameters[k].default for k in ("gamma", "gae_lambda") if k in parameters}
    values = {**defaults, **config.hyperparameters}
    return values.get("gamma"), values.get("gae_lambda")


def evaluate_baselines(suite: Suite, variant: Variant) -> list[dict[str, Any]]:
    """Every baseline on the evaluation deals (with perfect-memory observations)."""
    from baselines import make_policy

    rows = []
    for baseline in suite.baselines:
        policy = make_policy(baseline.policy, variant.rules, **baseline.kwargs)
        stats = solitaire_stats(variant.rules, policy, suite.eval_games, suite.eval_seed)
        rows.append(
            {"label": baseline.label, "moves": stats["moves"], "ci95": stats["moves_ci95"], "capped": stats["capped"]}
        )
    return rows


def reference_turns(suite: Suite, variant: Variant) -> dict[str, np.ndarray]:
    """Per-deal moves of the perfect-memory players every learner is paired against on the
    evaluation deals (optimal only where the DP solves the rules)."""
    from baselines import make_policy
    from baselines.evaluate import play
    from baselines.optimal import check_solvable

    names = list(PAIRED)
    try:
        check_solvable(variant.rules, variant.rules.num_players)
    except ValueError:
        names.remove("optimal")
    games, seed = suite.eval_games, suite.eval_seed
    return {name: play(variant.rules, [make_policy(name, variant.rules)], games, seed).turns for name in names}


def _paired(differences: list[np.ndarray]) -> dict[str, float | None]:
    """Mean over seeds of each seed's mean paired difference, with a t-interval over the seed
    means; for one seed, a normal interval over its deals."""
    from baselines.evaluate import estimate

    if len(differences) == 1:
        one = estimate(differences[0])
        return {"mean": one.mean, "ci95": one.ci95}
    mean, half = t_interval([float(d.mean()) for d in differences])
    return {"mean": mean, "ci95": half}


def _figures(results: list[Any], references: dict[str, np.ndarray] | None) -> dict[str, Any]:
    """Mean moves over seeds with a t-interval, each seed's mean, the capped share and the
    paired differences, from each seed's games on the evaluation deals."""
    moves = [float(r.turns.mean()) for r in results]
    mean, half = t_interval(moves)
    capped = sum(int(r.capped.sum()) for r in results) / sum(len(r.turns) for r in results)
    paired = {name: _paired([r.turns - turns for r in results]) for name, turns in (references or {}).items()}
    return {"moves": mean, "ci95": half, "seed_moves": moves, "capped_share": capped, "paired": paired}


def evaluate_learner(
    suite: Suite, variant: Variant, learner: Learner, references: dict[str, np.ndarray] | None = None
) -> dict[str, Any]:
    """One learner's seeds on the evaluation deals, played both ways, or its status; with
    ``references`` (per-deal moves, :func:`reference_turns`) the paired differences too."""
    from baselines.evaluate import play as play_games
    from concentration_env.training.config import config_from_mapping
    from concentration_env.training.model_policy import ModelPolicy, plays_deterministically
    from concentration_env.training.run_folder import read_run_config, selected_model

    row: dict[str, Any] = {"name": learner.name, "label": learner.label, "tier": learner.tier, "play": learner.play}
    if learner.unavailable is not None:
        return {**row, "status": NOT_AVAILABLE, "why": learner.unavailable}
    every = {seed: suite.model_dir(variant, learner, seed) for seed in suite.seeds}
    trained = [seed for seed, folder in every.items() if _completed(folder)]
    missing = [str(folder) for seed, folder in every.items() if seed not in trained]
    if not trained:
        return {**row, "status": NOT_TRAINED, "missing": missing}
    folders = [every[seed] for seed in trained]
    config = config_from_mapping(read_run_config(folders[0]), source=str(folders[0] / "config.yaml"))
    summaries = [json.loads((f / "training.json").read_text()) for f in folders]
    deals = (suite.eval_games, suite.eval_seed)

    def games(model: Path, deterministic: bool | None) -> Any:
        return play_games(variant.rules, [ModelPolicy(model, variant.rules, deterministic)], *deals)

    played = {play: [games(f, play == "deterministic") for f in folders] for play in PLAYS}
    plays = {play: _figures(results, references) for play, results in played.items()}
    selections = {seed: selected_model(every[seed]) for seed in trained}
    unkept = [seed for seed, found in selections.items() if found is None]
    selected: dict[str, Any] = {"missing": unkept}
    if not unkept:  # played as training evaluated it, the way ModelPolicy plays by default
        chosen = [found for found in selections.values() if found is not None]
        own = PLAYS[0] if plays_deterministically(config) else PLAYS[1]
        results = [  # a selected final model has played these games already
            played[own][k] if steps == summaries[k]["timesteps"] else games(path, None)
            for k, (path, steps) in enumerate(chosen)
        ]
        selected.update(_figures(results, references), steps=[steps for _, steps in chosen])
    gamma, lam = discount(config)
    return {
        **row,
        "status": "ok",
        "plays": plays,
        "algo": config.algo,
        "gamma": gamma,
        "gae_lambda": lam,
        # a run's cost: its model's env steps and those of attempts it set aside (restart in its config)
        "env_steps": [s.get("env_steps_with_restarts", s["timesteps"]) for s in summaries],
        "restarts": [s.get("restarts", 0) for s in summaries],
        "wall_seconds": [s["wall_seconds"] for s in summaries],
        "model": MODEL,
        "selected": selected,
        "seeds": trained,
        "missing": missing,
        "folders": [str(f) for f in folders],
    }


def previous_results(suite: Suite) -> dict[str, dict[str, Any]]:
    """The variants of the ``suite.json`` already in the output folder that were played on this
    suite's deals, by name (none when there is no such file). Files written before variants
    recorded their deals count as played on the suite's own."""
    path = suite.output / "suite.json"
    if not path.is_file():
        return {}
    deals = [suite.eval_games, suite.eval_seed]
    return {v["name"]: v for v in json.loads(path.read_text()) if v.get("deals", deals) == deals}


def evaluate_suite(suite: Suite, cells: set[tuple[str, str]] | None = None) -> list[dict[str, Any]]:
    """Per variant: the optimum, the baselines and every learner (JSON-ready).

    With ``cells`` (``(variant, learner)`` pairs) only those learners are played again; every
    other learner's row, and a whole variant none of whose cells is named, is carried from the
    ``suite.json`` already in the output folder (:func:`previous_results`), marked
    ``"carried": true``; what that file lacks is played."""
    import torch

    from baselines.evaluate import exact_value
    from concentration_env.training.run import TORCH_THREADS

    torch.set_num_threads(TORCH_THREADS)
    previous = previous_results(suite) if cells is not None else {}
    results = []
    for variant in suite.variants:
        old = previous.get(variant.name, {"learners": {}})
        fresh = [
            name
            for name in variant.learners
            if cells is None or (variant.name, name) in cells or name not in old["learners"]
        ]
        if not fresh and "baselines" in old:
            carried = {name: {**old["learners"][name], "carried": True} for name in variant.learners}
            results.append({**old, "deals": [suite.eval_games, suite.eval_seed], "learners": carried})
            continue
        references = reference_turns(suite, variant)
        results.append(
            {
                "name": variant.name,
                "label": variant.label,
                "mode": variant.mode,
                "deals": [suite.eval_games, suite.eval_seed],
                "optimum": exact_value(variant.rules, ["optimal"]),
                "baselines": evaluate_baselines(suite, variant),
                "learners": {
                    name: evaluate_learner(suite, variant, suite.learners[name], references)
                    if name in fresh
                    else {**old["learners"][name], "carried": True}
                    for name in variant.learners
                },
            }
        )
    return results


def main(argv: list[str] | None = None) -> int:
    """``python scripts/benchmark.py --config configs/benchmark/suite.yaml [--train [--only VARIANT[/LEARNER[/SEED]]]]``."""
    from concentration_env.training.suite_report import write_report

    parser = argparse.ArgumentParser(prog="concentration-benchmark", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", required=True, help="a suite config, e.g. configs/benchmark/suite.yaml")
    parser.add_argument("--train", action="store_true", help="train every learner anew before evaluating")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="VARIANT[/LEARNER[/SEED]]",
        help="(re)train with --train, and play, only these runs (repeatable); the table still shows every "
        "cell, the others carried from the suite.json already in the output folder",
    )
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a top-level key")
    args = parser.parse_args(argv)
    try:
        suite = load_suite(args.config, apply_overrides({}, args.set), train=args.train)
        runs = select_runs(suite, args.only) if args.only else None
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    trained = train_suite(suite, runs) if args.train else None
    if trained is not None:
        print(f"training the suite took {trained:.0f} s")
    cells = None if runs is None else {(variant, learner) for variant, learner, _ in runs}
    text = write_report(suite, evaluate_suite(suite, cells), trained)
    print(text)
    print(f"written to {suite.output}/ (suite.md, suite.json, curve_<variant>.png)")
    return 0

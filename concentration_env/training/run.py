"""One training run: build the envs and learner of a config, train, and fill the run folder
(its files: :mod:`concentration_env.training.run_folder`).

Ctrl-C stops training and still saves the model and the run files.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml

from concentration_env.game.rules import Rules
from concentration_env.training.config import TrainConfig
from concentration_env.training.evaluation import agent_stats
from concentration_env.training.restart import (
    RESTARTS_FILE,
    RESTARTS_FOLDER,
    RestartDue,
    attempt_seed,
    read_restarts,
    set_aside,
)
from concentration_env.training.run_folder import (
    EVAL_COLUMNS,
    SELECTED_MODEL,
    best_row,
    eval_rows,
    eval_score,
    keep_best_at_resume,
    latest_model,
    new_run_dir,
    read_eval_csv,
)

if TYPE_CHECKING:
    from concentration_env.training.model_policy import ModelPolicy

TORCH_THREADS = 1  # on a small shared CPU one thread per process beats contention between them
EVAL_SEED_OFFSET = 10_000  # evaluation deals are seeded apart from the training envs' seeds


class EvalLog:
    """Evaluates the agent on the same seeded deals each time and appends a row to ``eval.csv``
    (solitaire: moves, misses, cleared; duel: win rate and margin against the first opponent).

    It also keeps the run's selected model: whenever a row is the best so far (a tie goes to
    the later row; :func:`.run_folder.eval_score`), ``keep`` saves the model evaluated into
    the run folder as ``selected_model`` and ``selected`` holds its env steps.

    With the config's ``restart`` and tries left (``can_restart``), the first row at or after
    its step raises :class:`.restart.RestartDue` when its moves are above the bound. The deals
    come from the config's seed, so every attempt of a run is evaluated on the same ones."""

    def __init__(
        self, path: Path, config: TrainConfig, rules: Rules, append: bool = False, can_restart: bool = False
    ) -> None:
        self.path, self.config, self.rules = path, config, rules
        self.seed = config.seed + EVAL_SEED_OFFSET
        self.last: int | None = None  # timesteps of the last evaluation
        self.best: float | None = None  # the score of the selected model's row
        self.selected: int | None = None  # the env steps of the selected model
        self.check = config.restart if can_restart else None  # None once read (or with nothing to check)
        if append and path.is_file():  # a resumed run adds to the rows it has
            rows = eval_rows(read_eval_csv(path))
            self.last = int(rows[-1]["timesteps"]) if rows else None  # the model resumed from is evaluated
            best = best_row(rows)
            if best is not None:
                self.best, self.selected = eval_score(rows[best]), int(rows[best]["timesteps"])
            if self.check is not None and any(row["timesteps"] >= self.check.at for row in rows):
                self.check = None  # the attempt passed its check before it was stopped
        else:
            with path.open("w", newline="") as handle:
                csv.writer(handle).writerow(EVAL_COLUMNS)

    def evaluate(self, timesteps: int, policy: ModelPolicy, keep: Callable[[Path], None]) -> dict[str, float]:
        """Evaluate ``policy`` (a ``ModelPolicy`` of the model in training), log the row, and
        ``keep(path)`` the model (its save, to ``path`` without suffix) when the row is the best so far."""
        stats = agent_stats(self.config, self.rules, policy, self.config.eval_episodes, self.seed)
        row = {column: stats.get(column, float("nan")) for column in EVAL_COLUMNS}
        row["timesteps"] = timesteps
        with self.path.open("a", newline="") as handle:
            csv.writer(handle).writerow([row[c] for c in EVAL_COLUMNS])
        self.last = timesteps
        score = eval_score(row)
        if self.best is None or score <= self.best:
            keep(self.path.parent / SELECTED_MODEL)
            self.best, self.selected = score, timesteps
        if self.check is not None and timesteps >= self.check.at:
            bound, self.check = self.check.moves_above, None
            if row["moves"] > bound:
                raise RestartDue(timesteps, float(row["moves"]))
        return row

    def finish(self, timesteps: int, policy: ModelPolicy, keep: Callable[[Path], None]) -> None:
        """Evaluate the final model unless the last row already did."""
        if self.last != timesteps:
            self.evaluate(timesteps, policy, keep)


def tier_comment(config: TrainConfig) -> str:
    """The header of a run's ``config.yaml`` naming its tier (a comment: the tier follows
    from the keys, so it is not one of them)."""
    why = "; ".join(config.engineered_by) or "the network's input is the env's observation only"
    return f"# tier: {config.tier} ({why})\n"


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def train(
    config: TrainConfig,
    config_name: str = "run",
    run_dir: str | Path | None = None,
    progress_bar: bool = True,
    resume: bool = False,
) -> Path:
    """Train ``config``; returns the run folder. Ctrl-C (or SIGTERM, e.g. from a batch
    system) stops training early and still saves the model and the run files. ``resume``
    carries on in ``run_dir`` from its latest saved model (:func:`latest_model`) and its
    league's pool, up to ``total_timesteps`` in all. With the config's ``restart``, an attempt
    that fails its check is set aside and the next one starts (:mod:`.restart`)."""
    if resume and run_dir is None:
        raise ValueError("resume needs the run folder of the run to carry on")
    run_dir = Path(run_dir) if run_dir is not None else new_run_dir(config_name)
    latest = latest_model(run_dir) if resume else None
    restarts = read_restarts(run_dir) if resume else []
    if resume and latest is None and not restarts:  # checked before anything in the folder changes
        raise ValueError(f"--resume {str(run_dir)!r}: no saved model to resume from")
    if latest is not None and config.algo == "recurrent_ppo":
        from concentration_env.training.recurrent import RecurrentPPOSettings, check_resumable

        check_resumable(latest[0], RecurrentPPOSettings(**config.hyperparameters))
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(_config_text(config))
    if not resume and (run_dir / RESTARTS_FILE).is_file():  # a new run: the old run's attempts are not its own
        (run_dir / RESTARTS_FILE).unlink()
        shutil.rmtree(run_dir / RESTARTS_FOLDER, ignore_errors=True)
    while True:
        attempt = len(restarts)
        attempt_config = dataclasses.replace(config, seed=attempt_seed(config.seed, attempt))
        can_restart = config.restart is not None and attempt < config.restart.tries
        log = EvalLog(run_dir / "eval.csv", config, config.resolved_rules, append=resume, can_restart=can_restart)
        start = 0 if latest is None else latest[1]
        earlier = _segments_before(run_dir, start) if resume else []
        began = time.perf_counter()
        try:
            steps, interrupted = _train_attempt(attempt_config, log.rules, run_dir, log, progress_bar, resume)
        except RestartDue as due:
            wall = sum(segment["wall_seconds"] for segment in earlier) + time.perf_counter() - began
            record = {
                "attempt": attempt,
                "seed": attempt_config.seed,
                "timesteps": due.timesteps,
                "moves": due.moves,
                "moves_above": config.restart.moves_above,  # type: ignore[union-attr]  # set, or nothing raises
                "wall_seconds": round(wall, 1),
            }
            restarts.append(set_aside(run_dir, record, _config_text(attempt_config)))
            print(f"attempt {attempt} (seed {attempt_config.seed}): {due}; restarting with a new seed", flush=True)
            resume, latest = False, None
            continue
        break
    seconds = time.perf_counter() - began
    segments = [*earlier, {"from": start, "to": steps, "wall_seconds": round(seconds, 1)}]
    set_aside_steps = sum(record["timesteps"] for record in restarts)
    summary = {
        "timesteps": steps,
        # the run's cost: this attempt's segments and every attempt set aside before it
        "wall_seconds": round(sum(part["wall_seconds"] for part in [*segments, *restarts]), 1),
        "steps_per_second": round((steps - start) / seconds, 1),  # of this (last) segment
        "segments": segments,
        "interrupted": interrupted,
        "selected_timesteps": log.selected,
        "seed": attempt_config.seed,
        "restarts": len(restarts),
        "env_steps_with_restarts": steps + set_aside_steps,
        "tier": config.tier,
        "config_name": config_name,
        "engineered_by": list(config.engineered_by),
    }
    (run_dir / "training.json").write_text(json.dumps(summary, indent=2) + "\n")
    from concentration_env.training.plots import learning_curve

    learning_curve(run_dir, config)
    return run_dir


def _config_text(config: TrainConfig) -> str:
    """A config as a run folder's ``config.yaml`` holds it: the tier comment, then the keys."""
    return tier_comment(config) + yaml.safe_dump(config.to_dict(), sort_keys=False)


def _train_attempt(
    config: TrainConfig, rules: Rules, run_dir: Path, log: EvalLog, progress_bar: bool, resume: bool
) -> tuple[int, bool]:
    """Train one attempt of a run (``rules``: the run's, resolved once) with its learner,
    torch's threads and SIGTERM set for it."""
    import torch

    on_term = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _interrupt)
    threads = torch.get_num_threads()
    torch.set_num_threads(config.torch_threads)
    try:
        if config.algo == "recurrent_ppo":
            from concentration_env.training.recurrent_run import train_recurrent

            return train_recurrent(config, rules, run_dir, log, progress_bar, resume)
        return _train_sb3(config, rules, run_dir, log, progress_bar, resume)
    finally:
        signal.signal(signal.SIGTERM, on_term)
        torch.set_num_threads(threads)  # the caller's setting again (a test run, a notebook)


def _segments_before(run_dir: Path, start: int) -> list[dict[str, Any]]:
    """The training segments behind a run resumed at ``start`` steps, from its ``training.json``
    (a run from before segments were kept counts as one); a stretch whose process died before
    writing it is missing, so ``wall_seconds`` never counts time it cannot vouch for."""
    path = run_dir / "training.json"
    if not path.is_file():
        return []
    old = json.loads(path.read_text())
    segments = old.get("segments") or [{"from": 0, "to": old["timesteps"], "wall_seconds": old["wall_seconds"]}]
    return [segment for segment in segments if segment["to"] <= start]


def _train_sb3(
    config: TrainConfig, rules: Rules, run_dir: Path, log: EvalLog, progress_bar: bool, resume: bool = False
) -> tuple[int, bool]:
    from stable_baselines3.common.callbacks import BaseCallback, CallbackList, CheckpointCallback, ProgressBarCallback

    from concentration_env.training.envs import make_vec_env
    from concentration_env.training.learners import build_sb3, load_sb3, use_learning_rate
    from concentration_env.training.model_policy import ModelPolicy

    latest = latest_model(run_dir) if resume else None
    done = 0 if latest is None else latest[1]
    venv = make_vec_env(config, rules, config.num_envs, config.seed + done)  # fresh deals after a resume
    if latest is None:
        model = build_sb3(config, venv, str(run_dir / "tb"))
    else:
        model = load_sb3(config.algo, latest[0])
        model.set_env(venv)
        use_learning_rate(model, config)
        model.tensorboard_log = str(run_dir / "tb")
        print(f"resuming from {latest[0]} at {model.num_timesteps} steps")
    per_call = max(1, config.num_envs)

    def keep(path: Path) -> None:
        model.save(str(path.with_suffix(".zip")))

    keep_best_at_resume(log.selected, done, run_dir, ".zip", keep)

    class Evaluate(BaseCallback):
        """Every ``eval_freq`` env steps, evaluate the model (masked for masked learners).

        At the start of a rollout, not mid-rollout: there the update of the steps counted so
        far has been made, so a row shows the model its step count names (an evaluation in
        the last rollout would otherwise stand for a final model it never saw)."""

        def _on_rollout_start(self) -> None:
            if self.num_timesteps >= (log.last or 0) + config.eval_freq:
                row = log.evaluate(self.num_timesteps, ModelPolicy.of_model(self.model, config, rules), keep)
                for key in ("moves", "misses", "win", "margin"):
                    if np.isfinite(row[key]):
                        self.logger.record(f"eval/{key}", row[key])

        def _on_step(self) -> bool:
            return True

    callbacks = [
        Evaluate(),
        CheckpointCallback(
            save_freq=max(1, config.checkpoint_freq // per_call),
            save_path=str(run_dir / "checkpoints"),
            name_prefix="model",
        ),
    ]
    if config.league is not None:
        from concentration_env.training.league import League, league_callback

        callbacks.append(league_callback(League(config, rules, run_dir)))
    bar = ProgressBarCallback() if progress_bar else None  # held here, so that a restart can close it
    if bar is not None:
        callbacks.append(bar)
    interrupted = False
    try:  # the envs close however the attempt ends: finished, interrupted, or stopped for a restart
        try:
            remaining = max(0, config.total_timesteps - int(model.num_timesteps))
            model.learn(
                remaining,
                callback=CallbackList(callbacks),
                tb_log_name="train",
                reset_num_timesteps=latest is None,
            )
        except KeyboardInterrupt:
            interrupted = True
            print(f"\ninterrupted at {model.num_timesteps} steps: saving the model")
        model.save(str(run_dir / "final_model.zip"))
        log.finish(int(model.num_timesteps), ModelPolicy.of_model(model, config, rules), keep)
    finally:
        if bar is not None and hasattr(bar, "pbar"):  # SB3 closes it only when training ends normally
            bar.pbar.close()
        venv.close()
    return int(model.num_timesteps), interrupted

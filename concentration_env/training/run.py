"""One training run: build the envs and learner of a config, train, and fill the run folder.

A run folder (default ``runs/<config>-<timestamp>/``) holds:

- ``config.yaml``: the resolved config (after ``--set`` overrides);
- ``tb/``: TensorBoard logs; ``checkpoints/``: periodic saves;
- ``final_model.zip`` (SB3) or ``final_model.pt`` (recurrent PPO);
- ``eval.csv``: deterministic evaluations over training (masked for masked learners);
- ``learning_curve.png``: the evaluations with the baselines' levels as horizontal lines;
- ``training.json``: steps, wall time, steps/s, and whether the run was interrupted.

Ctrl-C stops training and still saves the model and the files above.
"""

from __future__ import annotations

import csv
import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from concentration_env.training.config import TrainConfig

EVAL_COLUMNS = ("timesteps", "mean_reward", "std_reward", "mean_moves", "mean_misses", "episodes")
TORCH_THREADS = 1  # on a small shared CPU one thread per process beats contention between them


def new_run_dir(config_name: str, root: str | Path = "runs") -> Path:
    """A fresh ``<root>/<config_name>-<timestamp>`` folder."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    path = Path(root) / f"{config_name}-{stamp}"
    suffix = 1
    while path.exists():
        path = Path(root) / f"{config_name}-{stamp}-{suffix}"
        suffix += 1
    path.mkdir(parents=True)
    return path


class EvalLog:
    """Appends evaluation rows to ``eval.csv`` (solitaire rows also give moves and misses)."""

    def __init__(self, path: Path, num_pairs: int | None):
        self.path = path
        self.num_pairs = num_pairs
        with path.open("w", newline="") as handle:
            csv.writer(handle).writerow(EVAL_COLUMNS)

    def add(self, timesteps: int, rewards: np.ndarray) -> dict[str, float]:
        """Record one evaluation from its per-episode returns."""
        mean = float(np.mean(rewards))
        # Solitaire return is minus the unsuccessful pairs, and every turn either captures a
        # pair or is unsuccessful, so moves = pairs + misses.
        misses = -mean if self.num_pairs else float("nan")
        moves = self.num_pairs + misses if self.num_pairs else float("nan")
        row = {"timesteps": timesteps, "mean_reward": mean, "std_reward": float(np.std(rewards)),
               "mean_moves": moves, "mean_misses": misses, "episodes": len(rewards)}
        with self.path.open("a", newline="") as handle:
            csv.writer(handle).writerow([row[c] for c in EVAL_COLUMNS])
        return row


def read_eval_csv(path: Path) -> dict[str, np.ndarray]:
    """The columns of an ``eval.csv`` as float arrays."""
    with Path(path).open() as handle:
        rows = list(csv.DictReader(handle))
    return {c: np.array([float(r[c]) for r in rows]) for c in EVAL_COLUMNS}


def train(config: TrainConfig, config_name: str = "run", run_dir: str | Path | None = None,
          progress_bar: bool = True) -> Path:
    """Train ``config``; returns the run folder."""
    import torch

    torch.set_num_threads(TORCH_THREADS)
    run_dir = Path(run_dir) if run_dir is not None else new_run_dir(config_name)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config.to_dict(), sort_keys=False))
    rules = config.resolved_rules
    log = EvalLog(run_dir / "eval.csv", rules.num_pairs if rules.num_players == 1 else None)
    began = time.perf_counter()
    if config.algo == "recurrent_ppo":
        from concentration_env.training.recurrent_run import train_recurrent

        steps, interrupted = train_recurrent(config, rules, run_dir, log, progress_bar)
    else:
        steps, interrupted = _train_sb3(config, rules, run_dir, log, progress_bar)
    seconds = time.perf_counter() - began
    summary = {"timesteps": steps, "wall_seconds": round(seconds, 1), "steps_per_second": round(steps / seconds, 1),
               "interrupted": interrupted, "config_name": config_name}
    (run_dir / "training.json").write_text(json.dumps(summary, indent=2) + "\n")
    from concentration_env.training.plots import learning_curve

    learning_curve(run_dir, config)
    return run_dir


def _train_sb3(config: TrainConfig, rules, run_dir: Path, log: EvalLog, progress_bar: bool) -> tuple[int, bool]:
    from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback

    from concentration_env.training.envs import make_vec_env
    from concentration_env.training.learners import build_sb3

    venv = make_vec_env(config, rules, config.num_envs, config.seed)
    eval_env = make_vec_env(config, rules, 1, config.seed + 10_000, kind="dummy")
    model = build_sb3(config, venv, str(run_dir / "tb"))
    per_call = max(1, config.num_envs)

    class EvalToCsv(MaskableEvalCallback):
        """MaskableEvalCallback that also appends every evaluation to ``eval.csv``."""

        def _on_step(self) -> bool:
            before = len(self.evaluations_results)
            keep_going = super()._on_step()
            if len(self.evaluations_results) > before:
                row = log.add(self.num_timesteps, np.asarray(self.evaluations_results[-1]))
                if log.num_pairs:
                    self.logger.record("eval/mean_moves", row["mean_moves"])
            return keep_going

    callbacks = CallbackList([
        EvalToCsv(eval_env, n_eval_episodes=config.eval_episodes, eval_freq=max(1, config.eval_freq // per_call),
                  log_path=str(run_dir), deterministic=True, use_masking=config.masked, verbose=0),
        CheckpointCallback(save_freq=max(1, config.checkpoint_freq // per_call), save_path=str(run_dir / "checkpoints"),
                           name_prefix="model"),
    ])
    interrupted = False
    try:
        model.learn(config.total_timesteps, callback=callbacks, progress_bar=progress_bar, tb_log_name="train")
    except KeyboardInterrupt:
        interrupted = True
        print(f"\ninterrupted at {model.num_timesteps} steps: saving the model")
    model.save(str(run_dir / "final_model.zip"))
    venv.close()
    eval_env.close()
    return int(model.num_timesteps), interrupted


def final_model_path(run_dir: str | Path) -> Path:
    """The saved model of a run (or model) folder."""
    for name in ("final_model.zip", "final_model.pt", "model.zip", "model.pt"):
        if (Path(run_dir) / name).is_file():
            return Path(run_dir) / name
    raise FileNotFoundError(f"{run_dir}: no saved model (final_model.zip / final_model.pt / model.zip / model.pt)")


def read_run_config(folder: str | Path) -> dict[str, Any]:
    """The ``config.yaml`` saved with a run or model."""
    path = Path(folder) / "config.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"{folder}: no config.yaml next to the model")
    return yaml.safe_load(path.read_text())

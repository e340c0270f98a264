"""The run folder: what a training run writes, and how everything else reads it.

A run folder (default ``runs/<config>-<timestamp>/``) holds:

- ``config.yaml``: the resolved config (after ``--set`` overrides);
- ``tb/``: TensorBoard logs; ``checkpoints/``: periodic saves;
- ``final_model.zip`` (SB3) or ``final_model.pt`` (recurrent PPO);
- ``selected_model.zip`` / ``.pt``: the model at the best row of ``eval.csv`` (fewest moves
  in solitaire, highest win rate against an opponent; a tie goes to the later row), which may
  be the final one (:func:`selected_model`);
- ``eval.csv``: deterministic evaluations over training (masked for masked learners),
  columns :data:`EVAL_COLUMNS`;
- ``learning_curve.png``: the evaluations with the baselines' levels as horizontal lines;
- ``training.json``: steps, wall time, steps/s, whether the run was interrupted, the env
  steps of the selected model, and its tier (``raw`` or ``engineered``,
  :attr:`TrainConfig.tier`), also the first line of ``config.yaml``.

A model folder under ``models/`` has the same files (the model as ``model.zip`` or
``model.pt``). Training (:mod:`.run`) writes these files; the policy of a saved model
(:mod:`.model_policy`), the plots and the benchmark read them through this module only.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import yaml

EVAL_COLUMNS = ("timesteps", "games", "moves", "moves_ci95", "misses", "cleared", "win", "win_ci95", "margin")
SELECTED_MODEL = "selected_model"  # + the learner's suffix: .zip (SB3) or .pt (recurrent PPO)


def eval_score(row: Mapping[str, float]) -> float:
    """How good one ``eval.csv`` row is, lower better: moves in solitaire, minus the win rate
    against an opponent (whose rows have no moves)."""
    return float(row["moves"]) if np.isfinite(row["moves"]) else -float(row["win"])


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


def read_eval_csv(path: Path) -> dict[str, np.ndarray]:
    """The columns of an ``eval.csv`` as float arrays."""
    with Path(path).open() as handle:
        rows = list(csv.DictReader(handle))
    return {c: np.array([float(r[c]) for r in rows]) for c in EVAL_COLUMNS}


def eval_rows(curve: Mapping[str, np.ndarray]) -> list[dict[str, float]]:
    """The rows of :func:`read_eval_csv`'s columns, one mapping per evaluation."""
    return [dict(zip(EVAL_COLUMNS, map(float, values))) for values in zip(*(curve[c] for c in EVAL_COLUMNS))]


def best_row(rows: list[dict[str, float]]) -> int | None:
    """The index of the best of ``eval_rows`` (lowest :func:`eval_score`, a tie going to the
    later row): the selected model's evaluation; None for no rows."""
    best: int | None = None
    for index, row in enumerate(rows):
        if best is None or eval_score(row) <= eval_score(rows[best]):
            best = index
    return best


def final_model_path(run_dir: str | Path) -> Path:
    """The saved model of a run (or model) folder."""
    for name in ("final_model.zip", "final_model.pt", "model.zip", "model.pt"):
        if (Path(run_dir) / name).is_file():
            return Path(run_dir) / name
    raise FileNotFoundError(f"{run_dir}: no saved model (final_model.zip / final_model.pt / model.zip / model.pt)")


def selected_model(run_dir: str | Path) -> tuple[Path, int] | None:
    """The selected model of a run folder and its env steps: the saved ``selected_model``, or
    the final model when the last row of ``eval.csv`` is its best (a run trained before
    selected models were saved); None when neither holds (the selection was not kept)."""
    folder = Path(run_dir)
    summary = json.loads((folder / "training.json").read_text())
    if "selected_timesteps" in summary:
        for suffix in (".zip", ".pt"):
            if (folder / (SELECTED_MODEL + suffix)).is_file():
                return folder / (SELECTED_MODEL + suffix), int(summary["selected_timesteps"])
    rows = eval_rows(read_eval_csv(folder / "eval.csv"))
    best = best_row(rows)
    if best is not None and best == len(rows) - 1 and int(rows[best]["timesteps"]) == int(summary["timesteps"]):
        return final_model_path(folder), int(summary["timesteps"])
    return None


def read_run_config(folder: str | Path) -> dict[str, Any]:
    """The ``config.yaml`` saved with a run or model."""
    path = Path(folder) / "config.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"{folder}: no config.yaml next to the model")
    return yaml.safe_load(path.read_text())


def latest_model(run_dir: Path) -> tuple[Path, int] | None:
    """The newest model a run folder holds and its env steps: the final model (steps from
    ``training.json``), periodic checkpoints or league snapshots, whichever is furthest on
    (``.zip`` for SB3 learners, ``.pt`` for recurrent PPO)."""
    found = [
        (path, int(path.stem.split("_")[1]))
        for pattern in ("checkpoints/model_*_steps.zip", "checkpoints/model_*_steps.pt", "league/snapshot_*.zip")
        for path in run_dir.glob(pattern)
    ]
    summary = run_dir / "training.json"
    for final in (run_dir / "final_model.zip", run_dir / "final_model.pt"):
        if final.is_file() and summary.is_file():
            found.append((final, int(json.loads(summary.read_text())["timesteps"])))
    # On a tie the final model wins: a checkpoint at the last step was saved before the last update.
    return max(found, key=lambda item: (item[1], item[0].stem == "final_model")) if found else None


def keep_best_at_resume(
    selected: int | None, done: int, run_dir: Path, suffix: str, keep: Callable[[Path], None]
) -> None:
    """Save the model resumed from (its save is ``keep``) as the selected one when it is the
    run's best so far (``selected``: the env steps of the best ``eval.csv`` row) and no selected
    model is on disk: a run from before selected models were kept."""
    if selected == done and not (run_dir / SELECTED_MODEL).with_suffix(suffix).is_file():
        keep(run_dir / SELECTED_MODEL)

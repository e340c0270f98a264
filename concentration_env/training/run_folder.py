"""The run folder: what a training run writes, and how everything else reads it.

A run folder (default ``runs/<config>-<timestamp>/``) holds:

- ``config.yaml``: the resolved config (after ``--set`` overrides);
- ``tb/``: TensorBoard logs; ``checkpoints/``: periodic saves;
- ``final_model.zip`` (SB3) or ``final_model.pt`` (recurrent PPO);
- ``eval.csv``: deterministic evaluations over training (masked for masked learners),
  columns :data:`EVAL_COLUMNS`;
- ``learning_curve.png``: the evaluations with the baselines' levels as horizontal lines;
- ``training.json``: steps, wall time, steps/s, whether the run was interrupted, and the
  learner's tier (``raw``: the env's observation only; ``engineered``).

A model folder under ``models/`` has the same files (the model as ``model.zip`` or
``model.pt``). Training (:mod:`.run`) writes these files; the policy of a saved model
(:mod:`.model_policy`), the plots and the benchmark read them through this module only.
"""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import yaml

EVAL_COLUMNS = ("timesteps", "games", "moves", "moves_ci95", "misses", "cleared", "win", "win_ci95", "margin")


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

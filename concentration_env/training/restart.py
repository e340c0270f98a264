"""Restarting a solitaire run that has stalled, read from the run's own evaluations.

Some seeds of a learner settle early on a policy that misses the same known matches deal
after deal, and more training does not move them (docs/training.md has the runs behind this).
A config's ``restart`` section names a check: the first evaluation at or after ``at`` env
steps; when its moves are above ``moves_above``, training of that attempt stops there, the
attempt's files move to ``restarts/attempt_<k>/`` in the run folder, and a fresh attempt starts
from scratch with the next seed of :func:`attempt_seed`, at most ``tries`` times. The last
attempt always trains to the end, whatever its check reads.

Every attempt is evaluated on the same deals (the run's own evaluation deals, from the
config's seed), so the check is a selection made on deals disjoint from those a benchmark
reports. ``restarts.json`` in the run folder lists the attempts set aside; the run's
``training.json`` counts their env steps and wall time in the run's cost.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from concentration_env.game.checks import check_int
from concentration_env.training.config_values import finite, section_mapping

RESTARTS_FOLDER = "restarts"
RESTARTS_FILE = "restarts.json"
RESTART_SEED_STRIDE = 100_000_000  # attempts' seeds lie this far apart: no deal stream of one is another's
MAX_TRIES = 9  # with the stride, every attempt's seed stays within a 32-bit seed
KEPT_AT_RESTART = ("config.yaml", RESTARTS_FOLDER, RESTARTS_FILE)  # the run's own files, not an attempt's


@dataclass(frozen=True)
class RestartConfig:
    """The ``restart`` section of a config: check the first evaluation at or after ``at`` env
    steps and start again with a new seed when its moves are above ``moves_above``; at most
    ``tries`` restarts."""

    at: int
    moves_above: float
    tries: int = 1


def parse_restart(value: Any) -> RestartConfig | None:
    """A config's ``restart`` entry (``null`` or a mapping of :class:`RestartConfig`'s fields)."""
    if value is None:
        return None
    fields = ("at", "moves_above", "tries")
    values = section_mapping(value, fields)
    missing = [name for name in fields[:2] if name not in values]
    if missing:
        raise ValueError(f"missing {', '.join(map(repr, missing))}: a restart needs the step and the bound it checks")
    return RestartConfig(
        at=check_int("restart.at", values["at"], 1, whole_floats=True),
        moves_above=finite("restart.moves_above", values["moves_above"], 0.0, above=True),
        tries=check_int("restart.tries", values.get("tries", 1), 1, MAX_TRIES, whole_floats=True),
    )


def attempt_seed(seed: int, attempt: int) -> int:
    """The seed attempt ``attempt`` (0: the first) of a run with config seed ``seed`` trains with."""
    return seed + attempt * RESTART_SEED_STRIDE


class RestartDue(Exception):
    """Raised by the run's evaluation log when an attempt's check fails and tries are left;
    the training loop stops that attempt and :func:`set_aside` keeps its files."""

    def __init__(self, timesteps: int, moves: float) -> None:
        super().__init__(f"moves {moves:.2f} at {timesteps} env steps")
        self.timesteps, self.moves = timesteps, moves


def read_restarts(run_dir: Path) -> list[dict[str, Any]]:
    """The attempts a run folder has set aside, oldest first (none for a run without restarts)."""
    path = run_dir / RESTARTS_FILE
    return json.loads(path.read_text()) if path.is_file() else []


def set_aside(run_dir: Path, record: dict[str, Any], config_text: str) -> dict[str, Any]:
    """Move the files of the attempt in ``run_dir`` to ``restarts/attempt_<k>/`` (with
    ``config_text``, its config with its own seed, as ``config.yaml``) and add ``record``
    (which names ``attempt``) to ``restarts.json``; returns the record with its folder."""
    folder = run_dir / RESTARTS_FOLDER / f"attempt_{record['attempt']}"
    if folder.exists():  # left by a process that died between the move and the record
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for path in run_dir.iterdir():
        if path.name not in KEPT_AT_RESTART:
            path.rename(folder / path.name)
    (folder / "config.yaml").write_text(config_text)
    record = {**record, "folder": str(folder.relative_to(run_dir))}
    records = [*read_restarts(run_dir), record]
    (run_dir / RESTARTS_FILE).write_text(json.dumps(records, indent=2) + "\n")
    return record

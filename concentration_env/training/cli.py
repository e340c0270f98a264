"""Command lines: ``concentration-train`` (``scripts/train.py``) and ``concentration-benchmark``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def train_main(argv: list[str] | None = None) -> int:
    """Train from a config file; prints the run folder."""
    parser = argparse.ArgumentParser(
        prog="concentration-train",
        description="Train an agent from a YAML config; writes runs/<config>-<timestamp>/.",
    )
    parser.add_argument("--config", help="a YAML file under configs/train/")
    parser.add_argument(
        "--resume",
        metavar="RUN_DIR",
        help="carry on a run from its folder: its config (and --set overrides, e.g. a larger "
        "total_timesteps), latest model and league pool",
    )
    parser.add_argument(
        "--set",
        nargs="+",
        action="extend",  # a second --set adds to the first rather than replacing it
        default=[],
        metavar="KEY=VALUE",
        help="override config keys, e.g. --set total_timesteps=2e6 seed=3 (repeatable)",
    )
    parser.add_argument("--run-dir", help="write here instead of runs/<config>-<timestamp>/")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = parser.parse_args(argv)
    from concentration_env.training.config import load_config

    if (args.config is None) == (args.resume is None) or (args.resume and args.run_dir):
        parser.error("give --config (with --run-dir if you like) or --resume RUN_DIR")
    try:
        if args.resume is not None:
            if not Path(args.resume).is_dir():
                raise ValueError(f"--resume {args.resume!r}: no such run folder")
            config, folder = load_config(Path(args.resume) / "config.yaml", args.set), args.resume
            name = _config_name_of(Path(folder))
        else:
            config, name, folder = load_config(args.config, args.set), Path(args.config).stem, args.run_dir
        if folder is not None:
            check_run_dir(Path(folder))
        from concentration_env.training.run import train

        # Opponents' model files are loaded when the envs are built: a bad one is a ValueError.
        run_dir = train(config, name, folder, progress_bar=not args.no_progress, resume=args.resume is not None)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"run folder: {run_dir}")
    return 0


def _config_name_of(run_dir: Path) -> str:
    """The config name a run was started with (its ``training.json``), so a resumed run keeps it;
    the folder's name when the run never wrote one."""
    try:
        return str(json.loads((run_dir / "training.json").read_text())["config_name"])
    except (OSError, ValueError, KeyError, TypeError):
        return run_dir.name


def check_run_dir(path: Path) -> None:
    """``ValueError`` unless ``path`` can become the run folder: a folder, or a new one in a
    writable folder."""
    if path.exists() and not path.is_dir():
        raise ValueError(f"--run-dir {str(path)!r}: not a folder")
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"--run-dir {str(path)!r}: {str(existing)!r} is not writable")


def benchmark_main(argv: list[str] | None = None) -> int:
    """Benchmark saved models and baselines from a config file; a learner suite's config
    (one with ``variants``, :mod:`concentration_env.training.suite`) runs the suite."""
    from concentration_env.training import suite

    args = sys.argv[1:] if argv is None else argv
    if suite.is_suite_config(args):
        return suite.main(args)
    from concentration_env.training.benchmark import main

    return main(args)

"""``scripts/evaluate.py`` and ``scripts/record.py``: bad arguments are one line and exit 2."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from concentration_env import Rules
from concentration_env.play.gif import record_gif

ROOT = Path(__file__).resolve().parents[2]


def run_script(script, args):
    done = subprocess.run(
        [sys.executable, f"scripts/{script}", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--set", "layout=[4,"], "the value is not valid YAML"),
        (["--json", "no/such/folder/out.json"], "--json 'no/such/folder/out.json': not a file in an existing folder"),
        (["--seed", "-1"], "invalid --seed=-1"),
        (["--games", "0"], "invalid --games=0"),
    ],
)
def test_evaluate_bad_arguments(args, message):
    status, out, err = run_script("evaluate.py", ["--policies", "greedy", "--games", "3", *args])
    assert status == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert out == ""  # refused before any game


@pytest.mark.parametrize(
    "args, message",
    [
        (["--fps", "0"], "invalid --fps=0"),
        (["--fps", "-5"], "invalid --fps=-5"),
        (["--out", "no/such/folder/game.gif"], "expected a .gif file in an existing folder"),
        (["--out", "game"], "--out 'game': expected a .gif file"),
        (["--seed", "-1"], "invalid --seed=-1"),
    ],
)
def test_record_bad_arguments(args, message):
    status, _, err = run_script("record.py", ["--rules", "toddler", "--max-flips", "2", *args])
    assert status == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err, err


def test_record_gif_takes_policy_names(tmp_path):
    pytest.importorskip("PIL")
    pytest.importorskip("baselines")
    rules = Rules.from_preset("toddler", num_players=2)
    result, frames = record_gif(rules, ["greedy", "random"], tmp_path / "game.gif", seed=1, max_flips=4)
    assert frames == 5 and (tmp_path / "game.gif").stat().st_size > 0
    with pytest.raises(ValueError, match="unknown policy 'grumpy'"):
        record_gif(rules, ["greedy", "grumpy"], tmp_path / "bad.gif", seed=1)
    with pytest.raises(ValueError, match="invalid fps=0"):
        record_gif(rules, ["greedy", "random"], tmp_path / "bad.gif", fps=0)
    assert not (tmp_path / "bad.gif").exists()

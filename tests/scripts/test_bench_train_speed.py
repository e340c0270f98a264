"""scripts/bench_train_speed.py: bad arguments end in one line and exit 2 (speed is never asserted)."""

import subprocess
import sys

import pytest


@pytest.mark.parametrize("argument", [["--rounds", "0"], ["--iterations", "-1"]])
def test_bad_counts_exit_2_with_one_line(argument):
    done = subprocess.run(
        [sys.executable, "scripts/bench_train_speed.py", *argument], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "bench_train_speed.py: --rounds and --iterations must be at least 1\n"

"""``scripts/train.py``: every bad argument is one line on stderr and exit status 2."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from concentration_env.training.cli import train_main

ROOT = Path(__file__).resolve().parents[2]
CONFIG = "configs/train/solitaire_ppo.yaml"


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["seed=["], "--set 'seed=[': the value is not valid YAML"),
        (["seed=2**40"], "key 'seed'"),
        (["seed=1099511627776"], "invalid seed=1099511627776: above the maximum 4294967295"),
        (["hyperparameters.learning_rate=abc"], "invalid learning_rate='abc': not a number"),
        (["hyperparameters.learning_rate=0"], "invalid learning_rate=0"),
        (["hyperparameters.n_steps=0"], "invalid n_steps=0: below the minimum 1"),
        (["hyperparameters.gamma=1.5"], "invalid gamma=1.5: above the maximum 1.0"),
        (["network=mlp", "features=raw", "policy_kwargs={net_arch: abc}"], "invalid net_arch='abc'"),
        (["network=mlp", "policy_kwargs={net_arch: [64, 0]}"], "invalid net_arch=0"),
        (["algo=ppo", "network=mlp", "policy_kwargs={}", "rules.illegal_action=raise"], "illegal_action: raise"),
    ],
)
def test_bad_settings_are_one_line(overrides, message, capsys):
    assert train_main(["--config", CONFIG, "--set", *overrides]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_a_run_dir_that_is_a_file_or_unwritable(tmp_path, capsys):
    file = tmp_path / "file"
    file.write_text("")
    assert train_main(["--config", CONFIG, "--run-dir", str(file)]) == 2
    assert "not a folder" in capsys.readouterr().err
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        assert train_main(["--config", CONFIG, "--run-dir", str(locked / "run")]) == 2
        assert "is not writable" in capsys.readouterr().err


def test_an_opponent_zip_that_is_no_model_is_one_line(tmp_path):
    pytest.importorskip("sb3_contrib")
    fake = tmp_path / "fake.zip"
    fake.write_bytes(b"not a model")
    done = subprocess.run(
        [
            sys.executable,
            "scripts/train.py",
            "--config",
            "configs/train/duel2p_ppo.yaml",
            "--run-dir",
            str(tmp_path / "run"),
            "--set",
            f"opponents=[{fake}]",
            "num_envs=2",
            "vec_env=dummy",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert done.returncode == 2 and "fake.zip" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_every_set_flag_applies(monkeypatch, tmp_path):
    """``--set a=1 --set b=2`` applies both overrides (a plain ``nargs`` list would keep the last)."""
    import concentration_env.training.run as run

    trained = []
    monkeypatch.setattr(run, "train", lambda config, *args, **kwargs: trained.append(config) or tmp_path)
    argv = ["--config", CONFIG, "--set", "seed=3", "num_envs=2", "--set", "total_timesteps=64", "--no-progress"]
    assert train_main(argv) == 0
    assert (trained[0].seed, trained[0].num_envs, trained[0].total_timesteps) == (3, 2, 64)

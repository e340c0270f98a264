"""Restarting a stalled solitaire run (``restart`` in a training config)."""

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from baselines.evaluate import play
from concentration_env.training import ModelPolicy, load_config, train
from concentration_env.training.config import config_from_mapping
from concentration_env.training.evaluation import training_cap
from concentration_env.training.restart import RESTART_SEED_STRIDE, RestartConfig, attempt_seed, read_restarts
from concentration_env.training.run import EVAL_SEED_OFFSET
from concentration_env.training.run_folder import best_row, eval_rows, read_eval_csv

CONFIGS = Path("configs/train")
SMALL = [
    "rules=toddler",
    "num_envs=4",
    "hyperparameters.n_steps=64",
    "hyperparameters.batch_size=64",
    "hyperparameters.n_epochs=1",
    "eval_freq=256",
    "eval_episodes=4",
    "checkpoint_freq=256",
    "total_timesteps=512",
]
ALWAYS = "restart={at: 256, moves_above: 1, tries: 2}"  # every toddler game takes more than one move
NEVER = "restart={at: 256, moves_above: 1000000, tries: 2}"


def small_run(tmp_path, *overrides, name="solitaire_ppo"):
    config = load_config(CONFIGS / f"{name}.yaml", [*SMALL, *overrides])
    return config, train(config, name, tmp_path / "run", progress_bar=False)


def test_a_restart_section_is_validated_and_round_trips():
    config = config_from_mapping({"restart": {"at": 1000, "moves_above": 42.0}})
    assert config.restart == RestartConfig(at=1000, moves_above=42.0, tries=1)
    assert config_from_mapping(config.to_dict()) == config
    assert config_from_mapping({"restart": None}).restart is None


@pytest.mark.parametrize(
    ("restart", "message"),
    [
        ({"at": 1000, "moves_above": 42, "every": 3}, "unknown key(s) 'every'"),
        ({"at": 1000}, "missing 'moves_above'"),
        ({"at": 0, "moves_above": 42}, "restart.at"),
        ({"at": 1000, "moves_above": -1}, "restart.moves_above"),
        ({"at": 1000, "moves_above": 42, "tries": 10}, "restart.tries"),
        ({"at": 100_000, "moves_above": 42}, "must be below total_timesteps"),
        (3, "restart"),
    ],
)
def test_bad_restart_sections_name_the_key(restart, message):
    with pytest.raises(ValueError, match="key 'restart'") as error:
        config_from_mapping({"restart": restart})
    assert message in str(error.value)


def test_a_restart_needs_solitaire_and_32_bit_attempt_seeds():
    with pytest.raises(ValueError, match="num_players: 1"):
        config_from_mapping({"rules": {"num_players": 2}, "restart": {"at": 1000, "moves_above": 42}})
    with pytest.raises(ValueError, match="attempt seeds above"):
        config_from_mapping({"seed": 2**32 - 10, "restart": {"at": 1000, "moves_above": 42}})


def test_attempt_seeds_start_at_the_configs_seed():
    assert attempt_seed(7, 0) == 7
    assert attempt_seed(7, 2) == 7 + 2 * RESTART_SEED_STRIDE


def test_a_run_that_fails_every_check_restarts_its_tries_and_keeps_the_attempts(tmp_path):
    config, run_dir = small_run(tmp_path, ALWAYS)
    records = read_restarts(run_dir)
    assert [record["attempt"] for record in records] == [0, 1]
    assert [record["seed"] for record in records] == [config.seed, config.seed + RESTART_SEED_STRIDE]
    assert all(record["timesteps"] == 256 and record["moves"] > 1 for record in records)
    summary = json.loads((run_dir / "training.json").read_text())
    # the last attempt trains to the end whatever its check reads
    assert summary["restarts"] == 2 and summary["seed"] == attempt_seed(config.seed, 2)
    assert summary["timesteps"] == 512 and summary["env_steps_with_restarts"] == 512 + 2 * 256
    assert summary["wall_seconds"] >= sum(record["wall_seconds"] for record in records)
    assert read_eval_csv(run_dir / "eval.csv")["timesteps"].tolist() == [256, 512]
    for record in records:
        folder = run_dir / record["folder"]
        assert read_eval_csv(folder / "eval.csv")["timesteps"].tolist() == [256]
        assert yaml.safe_load((folder / "config.yaml").read_text())["seed"] == record["seed"]
        assert (folder / "selected_model.zip").is_file() and not (folder / "final_model.zip").exists()
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["seed"] == config.seed


def test_every_attempt_is_evaluated_on_the_runs_own_deals(tmp_path):
    config, run_dir = small_run(tmp_path, ALWAYS)
    rules = config.resolved_rules
    for folder in [run_dir / record["folder"] for record in read_restarts(run_dir)] + [run_dir]:
        rows = eval_rows(read_eval_csv(folder / "eval.csv"))
        best = rows[best_row(rows)]
        games = int(best["games"])
        policy = ModelPolicy(folder / "selected_model.zip", rules)
        result = play(rules, [policy], games, config.seed + EVAL_SEED_OFFSET, max_turns=training_cap(rules))
        assert np.mean(result.turns) == pytest.approx(best["moves"])


def test_a_run_that_passes_its_check_trains_on_as_without_one(tmp_path):
    config, run_dir = small_run(tmp_path, NEVER)
    summary = json.loads((run_dir / "training.json").read_text())
    assert summary["restarts"] == 0 and summary["seed"] == config.seed
    assert summary["env_steps_with_restarts"] == summary["timesteps"] == 512
    assert not (run_dir / "restarts").exists() and read_restarts(run_dir) == []


def test_a_resumed_run_carries_on_its_kept_attempt_without_checking_again(tmp_path):
    config, run_dir = small_run(tmp_path, "restart={at: 256, moves_above: 1, tries: 1}")
    longer = load_config(
        CONFIGS / "solitaire_ppo.yaml", [*SMALL, "restart={at: 256, moves_above: 1, tries: 1}", "total_timesteps=768"]
    )
    train(longer, "solitaire_ppo", run_dir, progress_bar=False, resume=True)
    summary = json.loads((run_dir / "training.json").read_text())
    assert summary["timesteps"] == 768 and summary["restarts"] == 1
    assert summary["seed"] == attempt_seed(config.seed, 1)
    assert [part["from"] for part in summary["segments"]] == [0, 512]
    assert read_eval_csv(run_dir / "eval.csv")["timesteps"].tolist() == [256, 512, 768]


def test_a_new_run_in_a_folder_drops_the_old_runs_attempts(tmp_path):
    small_run(tmp_path, "restart={at: 256, moves_above: 1, tries: 1}")
    _, run_dir = small_run(tmp_path, NEVER)
    assert read_restarts(run_dir) == [] and not (run_dir / "restarts").exists()
    assert json.loads((run_dir / "training.json").read_text())["restarts"] == 0


def test_a_recurrent_run_restarts_too(tmp_path):
    overrides = ["rules.pairs=3", "num_envs=8", "hyperparameters.n_steps=32", "hyperparameters.n_epochs=1"]
    config = load_config(
        CONFIGS / "visible_recurrent.yaml",
        [*overrides, "eval_freq=256", "eval_episodes=4", "checkpoint_freq=256", "total_timesteps=512", ALWAYS],
    )
    run_dir = train(config, "visible_recurrent", tmp_path / "run", progress_bar=False)
    assert [record["attempt"] for record in read_restarts(run_dir)] == [0, 1]
    assert json.loads((run_dir / "training.json").read_text())["timesteps"] >= 512
    ModelPolicy(run_dir).reset()


def test_a_check_read_at_the_final_evaluation_restarts_a_finished_attempt(tmp_path):
    config, run_dir = small_run(tmp_path, "restart={at: 384, moves_above: 1, tries: 1}")
    (record,) = read_restarts(run_dir)
    assert record["timesteps"] == 512  # no evaluation between 384 and the end: the final one is the check
    assert (run_dir / record["folder"] / "final_model.zip").is_file()
    summary = json.loads((run_dir / "training.json").read_text())
    assert summary["restarts"] == 1 and summary["timesteps"] == 512


def test_a_restart_under_a_progress_bar_closes_the_attempts_bar(tmp_path, monkeypatch):
    from stable_baselines3.common.callbacks import ProgressBarCallback

    bars = []
    start = ProgressBarCallback._on_training_start

    def record(self):
        start(self)
        bars.append(self.pbar)

    monkeypatch.setattr(ProgressBarCallback, "_on_training_start", record)
    config = load_config(CONFIGS / "solitaire_ppo.yaml", [*SMALL, "restart={at: 256, moves_above: 1, tries: 1}"])
    run_dir = train(config, "solitaire_ppo", tmp_path / "run", progress_bar=True)
    assert len(read_restarts(run_dir)) == 1 and len(bars) == 2
    assert all(bar.disable or bar.n >= 256 for bar in bars)
    assert all(bar._instances is None or bar not in bar._instances for bar in bars)  # closed

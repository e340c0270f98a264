"""The benchmark script: config errors, and a tiny run's table and charts."""

from pathlib import Path

import pytest

pytest.importorskip("torch")

from concentration_env.training import load_config, train
from concentration_env.training.benchmark import load_benchmark_config, main


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    overrides = [
        "rules=toddler",
        "num_envs=4",
        "total_timesteps=256",
        "eval_freq=256",
        "eval_episodes=2",
        "checkpoint_freq=256",
        "hyperparameters.n_steps=64",
        "hyperparameters.batch_size=64",
        "hyperparameters.n_epochs=1",
    ]
    config = load_config("configs/train/solitaire_ppo.yaml", overrides)
    return train(config, "tiny", tmp_path_factory.mktemp("tiny") / "run", progress_bar=False)


def test_benchmark_writes_table_json_and_chart(tiny_run, tmp_path, capsys):
    path = tmp_path / "bench.yaml"
    output = tmp_path / "out"
    path.write_text(
        f"games: 12\nseed: 5\noutput: {output}\n"
        f"solitaire:\n  - rules: toddler\n    models: [{tiny_run}]\n    baselines: [random, greedy, optimal]\n"
    )
    assert main(["--config", str(path)]) == 0
    table = (output / "benchmark.md").read_text()
    assert "| run | engineered |" in table  # solitaire_ppo's per-card features
    for agent in ("random", "greedy", "optimal"):
        assert f"| {agent} | baseline |" in table
    assert "14.84" in table  # the exact optimum of the 20-card any-suit game, from the DP
    assert (output / "solitaire.png").stat().st_size > 0
    assert (output / "benchmark.json").is_file()
    assert "unsuccessful pairs" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("gamez: 3\n", "gamez"),
        ("games: 0\n", "games"),
        ("solitaire: {rules: toddler}\n", "solitaire"),
        ("solitaire:\n  - rules: toddler\n    agents: [x]\n", "solitaire[0]"),
        ("solitaire:\n  - rules: {num_players: 2}\n", "solitaire[0].rules"),
        ("solitaire:\n  - rules: toddler\n    models: [no/such/model]\n", "solitaire[0].models"),
        ("duel:\n  - rules: standard\n", "duel[0].rules"),
        ("solitaire:\n  - rules: toddler\n    baselines: [grumpy]\n", "solitaire[0].baselines"),
        ("duel:\n  - rules: {num_players: 2}\n    opponents: [greedy]\n", "duel[0].models"),
        (
            "duel:\n  - rules: {num_players: 2, matching: rank}\n    models: [" + __file__ + "]\n"
            "    opponents: [optimal]\n",
            "duel[0].opponents",
        ),
        ("output: [1]\n", "output"),
        ("output: " + __file__ + "\n", "output"),
    ],
)
def test_bad_benchmark_configs_name_the_key(tmp_path, text, key):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ValueError) as error:
        load_benchmark_config(path)
    assert str(path) in str(error.value) and repr(key) in str(error.value)


def test_headline_config_is_valid():
    config = load_benchmark_config(Path("configs/benchmark/headline.yaml"))
    assert config["games"] >= 1000


def test_benchmark_cli_refuses_a_missing_config_in_one_line(capsys):
    from concentration_env.training.benchmark import main

    assert main(["--config", "no/such.yaml"]) == 2
    err = capsys.readouterr().err
    assert "no/such.yaml: no such benchmark config file" in err and err.count("\n") == 1

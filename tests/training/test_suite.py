"""The learner suite: the tiny suite trains and reports, the table reproduces from saved
models, missing models read "not trained", and bad configs get one clear error."""

import copy
import json
import shlex
import shutil
from pathlib import Path

import pytest
import yaml

pytest.importorskip("torch")

from baselines.evaluate import play
from concentration_env.training import ModelPolicy, load_config
from concentration_env.training.cli import benchmark_main
from concentration_env.training.run_folder import selected_model
from concentration_env.training.suite import NOT_AVAILABLE, NOT_TRAINED, evaluate_learner, t_interval, train_command
from concentration_env.training.suite_config import load_suite

TINY = "configs/benchmark/suite_tiny.yaml"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("suite")
    argv = ["--config", TINY, "--set", f"output={root / 'out'}", "--set", f"models={root / 'models'}"]
    assert benchmark_main(argv + ["--train"]) == 0
    return root, argv


def test_tiny_suite_writes_table_json_and_curves(tiny):
    root, _ = tiny
    table = (root / "out" / "suite.md").read_text()
    results = {v["name"]: v for v in json.loads((root / "out" / "suite.json").read_text())}
    memory, visible = results["memory_rank8"], results["visible_pictures6"]
    assert memory["optimum"] == pytest.approx(5.371, abs=1e-3)  # the DP's 8-card rank game
    assert visible["optimum"] is not None and "(perfect memory)" in table
    assert {lr: memory["learners"][lr]["status"] for lr in memory["learners"]} == {
        "raw_mlp": "ok",
        "raw_attention": "ok",
        "per_card": "ok",
    }
    # visible learners on visible rows only
    assert set(visible["learners"]) == {"raw_memory", "raw_max_memory", "raw_recall_attention", "recurrent"}
    assert {lr: visible["learners"][lr]["status"] for lr in visible["learners"]} == {
        "raw_memory": "ok",
        "raw_max_memory": "ok",
        "raw_recall_attention": "ok",
        "recurrent": "ok",
    }
    # Paired differences are against players on the very same deals: the learner's mean minus theirs.
    per_card = memory["learners"]["per_card"]["plays"]["deterministic"]
    greedy = next(b for b in memory["baselines"] if b["label"] == "greedy")
    assert per_card["paired"]["greedy"]["mean"] == pytest.approx(per_card["moves"] - greedy["moves"])
    assert per_card["paired"]["optimal"]["ci95"] is not None
    assert "| paired vs optimal | paired vs greedy |" in table
    assert "| selected model: moves (ratio) | capped | selected at env steps |" in table
    for row in (*memory["learners"].values(), *visible["learners"].values()):
        selected = row["selected"]
        assert not selected["missing"] and len(selected["steps"]) == len(row["seeds"])
        assert all(0 < steps <= total for steps, total in zip(selected["steps"], row["env_steps"]))
    recurrent = visible["learners"]["recurrent"]
    assert recurrent["gamma"] == 0.9 and recurrent["model"] == "final" and recurrent["env_steps"][0] >= 256
    for play_mode in ("deterministic", "sampled"):
        assert 0.0 <= recurrent["plays"][play_mode]["capped_share"] <= 1.0
    assert [b["label"] for b in memory["baselines"]] == [
        "random",
        "greedy",
        "defer_pairs",
        "forgetful(capacity=2, forget=0)",
    ]
    assert "| 8 cards, rank | memory | 5.37 |" in table
    trained = sum(learner["status"] == "ok" for row in results.values() for learner in row["learners"].values())
    assert f"Training the {trained} runs shown took" in table and "Training (this command) took" in table
    for name in results:
        assert (root / "out" / f"curve_{name}.png").stat().st_size > 0
    readme = (root / "models" / "memory_rank8" / "per_card" / "seed0" / "README.md").read_text()
    assert "python scripts/train.py --config configs/train/solitaire_ppo.yaml" in readme
    assert not (root / "models" / "memory_rank8" / "per_card" / "seed0" / "tb").exists()


def test_a_start_from_learner_starts_from_its_memory_mode_twin(tiny):
    """raw_recall_attention on visible_pictures6 starts from raw_attention's selected model on
    memory_pictures6 (same seed); its README's command names that file."""
    root, _ = tiny
    twin = root / "models" / "memory_pictures6" / "raw_attention" / "seed0"
    run = root / "models" / "visible_pictures6" / "raw_recall_attention" / "seed0"
    start = selected_model(twin)
    assert start is not None
    config = yaml.safe_load((run / "config.yaml").read_text())
    assert config["hyperparameters"]["policy_from"] == str(start[0])
    readme = (run / "README.md").read_text()
    assert f"hyperparameters.policy_from={start[0]}" in readme
    assert f"Curriculum: the network's policy and value trunks start from `{start[0]}`" in readme
    table = (root / "out" / "suite.md").read_text()
    assert "`raw_recall_attention` starts each run from the selected model of `raw_attention`" in table


def test_the_table_reproduces_from_the_saved_models(tiny, tmp_path):
    root, argv = tiny
    again = tmp_path / "again"
    assert benchmark_main([*argv, "--set", f"output={again}"]) == 0
    before = json.loads((root / "out" / "suite.json").read_text())
    assert json.loads((again / "suite.json").read_text()) == before


def test_missing_models_read_not_trained(tmp_path):
    output = tmp_path / "out"
    argv = ["--config", TINY, "--set", f"output={output}", "--set", f"models={tmp_path / 'none'}"]
    assert benchmark_main(argv) == 0
    results = json.loads((output / "suite.json").read_text())
    statuses = {row["status"] for variant in results for row in variant["learners"].values()}
    assert statuses == {NOT_TRAINED}
    assert "| not trained |" in (output / "suite.md").read_text()


def test_a_learner_whose_config_cannot_load_reads_not_available(tmp_path):
    text = Path(TINY).read_text().replace("configs/train/raw_attention_standard.yaml", "configs/train/missing.yaml")
    config = tmp_path / "suite.yaml"
    config.write_text(text)
    output = tmp_path / "out"
    argv = ["--config", str(config), "--set", f"output={output}", "--set", f"models={tmp_path / 'none'}"]
    assert benchmark_main(argv) == 0
    results = {v["name"]: v for v in json.loads((output / "suite.json").read_text())}
    assert results["memory_rank8"]["learners"]["raw_attention"]["status"] == NOT_AVAILABLE
    assert "configs/train/missing.yaml" in (output / "suite.md").read_text()


def test_readme_command_trains_the_same_config(tiny):
    suite = load_suite(TINY, {"models": str(tiny[0] / "models")})  # start_from needs its twin's model
    for variant in suite.variants:
        for learner in (suite.learners[name] for name in variant.learners if suite.learners[name].base):
            words = shlex.split(train_command(suite, variant, learner, 0))
            sets = words[words.index("--set") + 1 : words.index("--run-dir")]
            assert load_config(words[words.index("--config") + 1], sets) == suite.train_config(variant, learner, 0)


def test_readme_command_names_a_preset_variant_in_one_word(tmp_path):
    path = tmp_path / "suite.yaml"
    path.write_text(GOOD.replace("{{rules: {{ranks: 2}}, ", "{{rules: toddler, ").format(output=tmp_path))
    suite = load_suite(path)
    command = train_command(suite, suite.variants[0], suite.learners["mlp"], 0)
    assert "\n" not in command and " rules=toddler " in command
    words = shlex.split(command)
    sets = words[words.index("--set") + 1 : words.index("--run-dir")]
    assert load_config(words[words.index("--config") + 1], sets) == suite.train_config(
        suite.variants[0], suite.learners["mlp"], 0
    )


def test_selected_models_play_as_the_table_says(tiny):
    root, _ = tiny
    suite = load_suite(TINY)
    results = {v["name"]: v for v in json.loads((root / "out" / "suite.json").read_text())}
    for variant in suite.variants:
        for name, row in results[variant.name]["learners"].items():
            selected = row["selected"]
            for k, seed in enumerate(row["seeds"]):
                path, steps = selected_model(root / "models" / variant.name / name / f"seed{seed}")
                assert steps == selected["steps"][k]
                # The default play of a saved model, as during training's evaluations.
                turns = play(variant.rules, [ModelPolicy(path, variant.rules)], suite.eval_games, suite.eval_seed).turns
                assert turns.mean() == pytest.approx(selected["seed_moves"][k])


def test_an_earlier_selected_model_is_played_on_its_own(tiny, tmp_path):
    root, _ = tiny
    suite = load_suite(TINY, {"models": str(tmp_path)})
    variant = suite.variants[0]
    folder = suite.model_dir(variant, suite.learners["per_card"], 0)
    shutil.copytree(root / "models" / variant.name / "per_card" / "seed0", folder)
    summary = json.loads((folder / "training.json").read_text())
    (folder / "training.json").write_text(json.dumps({**summary, "selected_timesteps": 128}))
    row = evaluate_learner(suite, variant, suite.learners["per_card"])
    # Not the final step, so replayed: the same model file plays the same games.
    assert row["selected"]["steps"] == [128]
    assert row["selected"]["seed_moves"] == row["plays"]["deterministic"]["seed_moves"]
    (folder / "selected_model.zip").unlink()
    (folder / "training.json").write_text(json.dumps({k: v for k, v in summary.items() if k != "selected_timesteps"}))
    header, *rows = (folder / "eval.csv").read_text().splitlines()
    earlier = "1,4,0.5,0,0,1.0,nan,nan,nan"  # an earlier evaluation than the final one's, and better
    (folder / "eval.csv").write_text("\n".join([header, earlier, *rows]) + "\n")
    assert evaluate_learner(suite, variant, suite.learners["per_card"])["selected"] == {"missing": [0]}


def test_sampled_and_deterministic_play_are_reproducible(tiny):
    root, _ = tiny
    suite = load_suite(TINY)
    for variant in suite.variants:
        for name in ("per_card", "recurrent"):
            if name not in variant.learners:
                continue
            folder = root / "models" / variant.name / name / "seed0"
            for deterministic in (True, False):
                # One policy twice: loading a model reseeds torch, playing must too.
                policy = ModelPolicy(folder, variant.rules, deterministic)
                runs = [play(variant.rules, [policy], 8, 3, 200).turns for _ in range(2)]
                assert (runs[0] == runs[1]).all()


def test_only_retrains_the_runs_it_names(tmp_path, capsys):
    models = tmp_path / "models"
    argv = ["--config", TINY, "--set", f"output={tmp_path / 'out'}", "--set", f"models={models}"]
    argv += ["--set", "seeds=[0, 1]"]
    assert benchmark_main([*argv, "--train", "--only", "visible_pictures6/recurrent/1"]) == 0
    assert [p.relative_to(models).as_posix() for p in models.glob("*/*/*")] == ["visible_pictures6/recurrent/seed1"]
    results = {v["name"]: v for v in json.loads((tmp_path / "out" / "suite.json").read_text())}
    recurrent = results["visible_pictures6"]["learners"]["recurrent"]
    assert recurrent["status"] == "ok" and recurrent["seeds"] == [1] and len(recurrent["missing"]) == 1
    assert results["visible_pictures6"]["learners"]["raw_memory"]["status"] == NOT_TRAINED
    assert "[1 of 2 seeds]" in (tmp_path / "out" / "suite.md").read_text()
    capsys.readouterr()
    for bad in (
        ["--train", "--only", "visible_pictures6/per_card"],
        ["--train", "--only", "visible_pictures6/recurrent/7"],
        ["--train", "--only", "nowhere"],
        ["--only", "nowhere"],
    ):
        assert benchmark_main([*argv, *bad]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and "--only" in err


def test_only_without_train_plays_the_named_cells_and_carries_the_others(tiny, tmp_path):
    """--only without --train plays those cells again and copies every other one from the
    suite.json already there: a figure planted in a carried cell survives, one planted in a
    named cell is played over."""
    root, _ = tiny
    out = tmp_path / "out"
    shutil.copytree(root / "out", out)
    before = {v["name"]: v for v in json.loads((out / "suite.json").read_text())}
    planted = copy.deepcopy(before)
    planted["memory_rank8"]["learners"]["raw_mlp"]["plays"]["deterministic"]["moves"] = 123.0
    planted["visible_pictures6"]["learners"]["recurrent"]["plays"]["sampled"]["moves"] = 456.0
    planted["visible_pictures6"]["baselines"][0]["moves"] = 789.0
    (out / "suite.json").write_text(json.dumps(list(planted.values())))
    argv = ["--config", TINY, "--set", f"output={out}", "--set", f"models={root / 'models'}"]
    assert benchmark_main([*argv, "--only", "visible_pictures6/recurrent"]) == 0
    after = {v["name"]: v for v in json.loads((out / "suite.json").read_text())}
    memory, visible = after["memory_rank8"], after["visible_pictures6"]
    assert memory["learners"]["raw_mlp"]["plays"]["deterministic"]["moves"] == 123.0
    assert all(row["carried"] for row in memory["learners"].values())
    assert visible["learners"]["raw_memory"]["carried"] and not visible["learners"]["recurrent"].get("carried")
    # The named cell and its variant's baselines are played again, as the full run played them.
    assert visible["learners"]["recurrent"]["plays"] == before["visible_pictures6"]["learners"]["recurrent"]["plays"]
    assert visible["baselines"] == before["visible_pictures6"]["baselines"]
    table = (out / "suite.md").read_text()
    assert "This run played 1 of the 10 learner cells again (`--only`): recurrent on 6 picture cards (visible)" in table


def test_an_interrupted_run_stops_the_suite_and_counts_as_not_trained(tmp_path, monkeypatch, capsys):
    import concentration_env.training.run as run_module
    from concentration_env.training.suite import evaluate_learner, train_suite

    calls = []

    def stopped_early(config, name, folder, progress_bar=True, resume=False):  # what a SIGTERM mid-run leaves
        calls.append(folder)
        folder.mkdir(parents=True)
        (folder / "training.json").write_text(json.dumps({"timesteps": 8, "wall_seconds": 0.1, "interrupted": True}))
        return folder

    monkeypatch.setattr(run_module, "train", stopped_early)
    suite = load_suite(TINY, {"models": str(tmp_path / "models"), "seeds": [0, 1]})
    train_suite(suite)
    assert len(calls) == 1 and "the suite stops here" in capsys.readouterr().out
    variant = suite.variants[0]
    learner = suite.learners[variant.learners[0]]
    assert evaluate_learner(suite, variant, learner)["status"] == NOT_TRAINED


def test_a_learner_can_state_its_own_budget(tmp_path):
    path = tmp_path / "suite.yaml"
    path.write_text(
        GOOD.replace("mode: memory}}\nvariants", "mode: memory, budget: 96}}\nvariants").format(output=tmp_path)
    )
    suite = load_suite(path)
    config = suite.train_config(suite.variants[0], suite.learners["mlp"], 0)
    assert (config.total_timesteps, config.checkpoint_freq, config.eval_freq) == (96, 96, 9)
    assert suite.budget == 64


def test_an_extended_run_carries_on_from_its_budget(tiny):
    root, _ = tiny
    folder = root / "models" / "memory_rank8" / "per_card" / "seed0"
    summary = json.loads((folder / "training.json").read_text())
    assert summary["timesteps"] >= 384 and [s["from"] for s in summary["segments"]] == [0, summary["segments"][0]["to"]]
    assert 256 <= summary["segments"][0]["to"] < 384  # the first segment is the learner's budget, as on other rows
    steps = [int(line.split(",")[0]) for line in (folder / "eval.csv").read_text().splitlines()[1:]]
    assert steps == sorted(steps) and len(set(steps)) == len(steps) and steps[-1] == summary["timesteps"]
    card = (folder / "README.md").read_text()
    assert f"--resume {folder} --set total_timesteps=384 learning_rate_decay_from=256 learning_rate_final=0" in card
    assert "in segments" in card
    assert load_config(folder / "config.yaml").learning_rate_decay_from == 256  # the resumed segment's settings
    results = {v["name"]: v for v in json.loads((root / "out" / "suite.json").read_text())}
    assert results["memory_rank8"]["learners"]["per_card"]["env_steps"] == [summary["timesteps"]]
    assert results["memory_rank8"]["learners"]["raw_mlp"]["env_steps"][0] < 384
    assert "resumed past its budget with learning_rate_decay_from=256" in (root / "out" / "suite.md").read_text()


def test_a_variant_sets_its_own_settings_for_a_learner(tmp_path):
    path = tmp_path / "suite.yaml"
    two = GOOD.replace(
        "  small: {{rules: {{ranks: 2}}, mode: memory}}\n",
        "  small: {{rules: {{ranks: 2}}, mode: memory, set: {{mlp: [hyperparameters.gamma=0.5, seed=7]}}}}\n"
        "  other: {{rules: {{ranks: 3}}, mode: memory}}\n",
    )
    path.write_text(two.format(output=tmp_path / "out"))
    suite = load_suite(path)
    small, other = suite.variants
    mlp = suite.learners["mlp"]
    config = suite.train_config(small, mlp, 0)
    assert config.hyperparameters["gamma"] == 0.5 and config.seed == 0  # the suite's own keys win
    assert suite.train_config(other, mlp, 0).hyperparameters["gamma"] == mlp.base.hyperparameters["gamma"]
    assert "hyperparameters.gamma=0.5" in train_command(suite, small, mlp, 0)
    assert "gamma=0.5" not in train_command(suite, other, mlp, 0)


def test_t_interval():
    mean, half = t_interval([1.0, 2.0, 3.0])
    assert mean == 2.0 and half == pytest.approx(4.303 / 3**0.5)
    assert t_interval([5.0]) == (5.0, None)


def test_full_suite_config_meets_the_brief():
    suite = load_suite("configs/benchmark/suite.yaml")
    assert len(suite.seeds) >= 3 and suite.eval_games >= 1000 and suite.eval_seed >= 1_000_000
    assert {v.mode for v in suite.variants} == {"memory", "visible"}
    for variant in suite.variants:
        assert all(suite.learners[name].mode == variant.mode for name in variant.learners)
    assert {lr.tier for lr in suite.learners.values()} == {"raw", "engineered"}


GOOD = """\
budget: 64
seeds: [0]
eval_games: 4
eval_seed: 1000000
output: {output}
models: {output}/models
baselines: [random]
learners:
  mlp: {{config: configs/train/solitaire_raw_mlp.yaml, tier: raw, mode: memory}}
variants:
  small: {{rules: {{ranks: 2}}, mode: memory}}
"""


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (("budget: 64", "budgit: 64"), "(top level)"),  # unknown, and budget missing
        (("seeds: [0]", "seeds: []"), "seeds"),
        (("eval_seed: 1000000", "eval_seed: 10050"), "eval_seed"),  # overlaps training's evaluation deals
        (("[random]", "[clever]"), "baselines[0]"),
        (("[random]", "[{{policy: forgetful, memory: 3}}]"), "baselines[0]"),
        (("tier: raw", "tier: cooked"), "learners.mlp"),
        (("mode: memory}}\nvariants", "mode: memory, budget: 0}}\nvariants"), "learners.mlp"),
        (("2}}, mode: memory}}", "2}}, mode: visible, learners: [mlp]}}"), "variants.small.learners"),
        (("2}}, mode: memory}}", "2}}, mode: memory, learners: [cnn]}}"), "variants.small.learners"),
        (("{{rules: {{ranks: 2}}, ", "{{rules: {{ranks: 99}}, "), "variants.small"),
        (("2}}, mode: memory}}", "2}}, mode: memory, extend: {{cnn: 128}}}}"), "variants.small.extend"),
        (("2}}, mode: memory}}", "2}}, mode: memory, extend: {{mlp: 64}}}}"), "variants.small.extend.mlp"),
        (("2}}, mode: memory}}", "2}}, mode: memory, extend: {{mlp: many}}}}"), "variants.small.extend.mlp"),
        (
            ("2}}, mode: memory}}", "2}}, mode: memory, extend: {{mlp: {{steps: 128, sett: []}}}}}}"),
            "variants.small.extend.mlp",
        ),
        (("2}}, mode: memory}}", "2}}, mode: memory, extend: {{mlp: {{set: []}}}}}}"), "variants.small.extend.mlp"),
        (
            ("2}}, mode: memory}}", "2}}, mode: memory, extend: {{mlp: {{steps: 128, set: seed=1}}}}}}"),
            "variants.small.extend.mlp.set",
        ),
        (
            ("2}}, mode: memory}}", "2}}, mode: memory, extend: {{mlp: {{steps: 128, set: [gamma=0.9]}}}}}}"),
            "variants.small.extend.mlp",  # an override the config does not take
        ),
        (("mode: memory}}\nvariants", "mode: memory, start_from: mlp}}\nvariants"), "learners.mlp.start_from"),
        (("2}}, mode: memory}}", "2}}, mode: memory, set: [seed=1]}}"), "variants.small.set"),
        (("2}}, mode: memory}}", "2}}, mode: memory, set: {{cnn: [seed=1]}}}}"), "variants.small.set"),
        (("2}}, mode: memory}}", "2}}, mode: memory, set: {{mlp: seed=1}}}}"), "variants.small.set.mlp"),
        (("2}}, mode: memory}}", "2}}, mode: memory, set: {{mlp: [gamma=0.9]}}}}"), "variants.small.set.mlp"),
        (("2}}, mode: memory}}", "2}}, mode: memory, set: {{mlp: [seed]}}}}"), "variants.small.set.mlp"),
    ],
)
def test_bad_suite_configs_name_the_key(tmp_path, change, key):
    path = tmp_path / "suite.yaml"
    path.write_text(GOOD.replace(*change).format(output=tmp_path / "out"))
    with pytest.raises(ValueError) as error:
        load_suite(path)
    assert str(path) in str(error.value) and repr(key) in str(error.value)


@pytest.mark.parametrize(
    ("start_from", "visible_rules", "message"),
    [
        ("cnn", "{ranks: 2}", "unknown memory-mode learner 'cnn'; allowed: mlp"),
        ("mlp", "{ranks: 3}", "variant 'seen' has no memory-mode variant with its rules where 'mlp' plays"),
    ],
)
def test_start_from_needs_a_memory_mode_learner_on_a_twin_variant(tmp_path, start_from, visible_rules, message):
    recall = "{config: configs/train/raw_recall_attention_visible_52.yaml, tier: raw, mode: visible"
    text = GOOD.format(output=tmp_path / "out").replace(
        "learners:\n", f"learners:\n  recall: {recall}, start_from: {start_from}}}\n"
    )
    path = tmp_path / "suite.yaml"
    path.write_text(text + f"  seen: {{rules: {visible_rules}, mode: visible}}\n")
    with pytest.raises(ValueError, match=message) as error:
        load_suite(path)
    assert "'learners.recall.start_from'" in str(error.value)
    path.write_text(text.replace(start_from, "mlp") + "  seen: {rules: {ranks: 2}, mode: visible}\n")
    suite = load_suite(path)  # a memory-mode learner and a twin: it loads
    assert suite.learners["recall"].start_from == "mlp" and suite.memory_twin(suite.variants[1]).name == "small"


def test_unwritable_output_and_cli_errors(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    path = tmp_path / "suite.yaml"
    path.write_text(GOOD.format(output=blocker / "out"))
    with pytest.raises(ValueError, match="'output'.*is a file"):
        load_suite(path)
    assert benchmark_main(["--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert all(learner.unavailable is None for learner in load_suite(Path(TINY)).learners.values())


def test_a_run_that_restarted_counts_its_attempts_in_the_table_and_card(tiny):
    root, _ = tiny
    folder = root / "models" / "memory_rank8" / "raw_attention" / "seed0"
    summary = json.loads((folder / "training.json").read_text())
    assert summary["restarts"] == 1 and summary["env_steps_with_restarts"] > summary["timesteps"]
    attempt = folder / "restarts" / "attempt_0"
    assert (attempt / "eval.csv").is_file() and not (attempt / "tb").exists() and not (attempt / "checkpoints").exists()
    results = {v["name"]: v for v in json.loads((root / "out" / "suite.json").read_text())}
    row = results["memory_rank8"]["learners"]["raw_attention"]
    assert row["restarts"] == [1] and row["env_steps"] == [summary["env_steps_with_restarts"]]
    assert "final (restarts, seed: count; 0: 1)" in (root / "out" / "suite.md").read_text()
    assert "Restarts: 1 attempt(s)" in (folder / "README.md").read_text()

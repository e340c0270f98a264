"""Training configs: every shipped one loads; bad keys and values fail naming file and key."""

from pathlib import Path

import pytest

from concentration_env.training.config import KEYS, apply_overrides, load_config, parse_override

SHIPPED = sorted(Path("configs/train").glob("*.yaml"))


def write(tmp_path, text: str) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_config_loads(path):
    config = load_config(path)
    assert config.total_timesteps > 0
    assert config.resolved_rules.num_cards > 0


def test_shipped_configs_exist():
    assert {"solitaire_ppo", "visible_recurrent", "duel2p_ppo"} <= {p.stem for p in SHIPPED}


@pytest.mark.parametrize(
    ("text", "key", "why"),
    [
        ("algo: a2c\n", "algo", "allowed: maskable_ppo"),
        ("learning_rate: 0.1\n", "learning_rate", "unknown key"),
        ("total_timesteps: -5\n", "total_timesteps", "below the minimum"),
        ("total_timesteps: 2.5\n", "total_timesteps", "not a whole number"),
        ("num_envs: many\n", "num_envs", "not a number"),
        ("observation_mode: partial\n", "observation_mode", "allowed: memory"),
        ("rules: nonsense\n", "rules", "unknown preset"),
        ("rules: {packs: 3}\n", "rules", "packs=3"),
        ("hyperparameters: {n_stepz: 8}\n", "hyperparameters", "'n_stepz'"),
        ("hyperparameters: [1, 2]\n", "hyperparameters", "expected a mapping"),
        ("network: per_card\nfeatures: raw\n", "network", "needs features: card_features"),
        ("features: count_lead_features\nnetwork: per_card\n", "features", "needs rules with num_players >= 2"),
        ("end_stalled_games: yes please\n", "end_stalled_games", "True or False"),
        ("torch_threads: 0\n", "torch_threads", "below the minimum"),
        (
            "rules: {num_players: 2}\nend_stalled_games: true\n",
            "end_stalled_games",
            "needs rules with num_players >= 2 and vec_env: native",
        ),
        (
            "algo: recurrent_ppo\nnetwork: card_memory\nfeatures: card_features\n",
            "network",
            "'card_memory' needs features: raw",
        ),
        ("algo: maskable_ppo\nnetwork: card_memory\n", "network", "implemented for algo: recurrent_ppo"),
        (
            "algo: recurrent_ppo\nnetwork: card_max_memory\nfeatures: count_features\n",
            "network",
            "'card_max_memory' needs features: raw",
        ),
        ("algo: maskable_ppo\nnetwork: card_max_memory\n", "network", "'card_max_memory' is implemented for algo"),
        ("algo: recurrent_ppo\nhyperparameters: {batch_size: 8}\n", "hyperparameters", "'batch_size'"),
        (
            "algo: recurrent_ppo\nnetwork: mlp\nhyperparameters: {value_trunk: true}\n",
            "hyperparameters",
            "value_trunk set the value trunk of network: card_memory or card_max_memory",
        ),
        (
            "algo: recurrent_ppo\nnetwork: card_memory\nhyperparameters: {value_trunk: 1}\n",
            "hyperparameters",
            "True or False",
        ),
        ("algo: recurrent_ppo\nhyperparameters: {target_kl: 0}\n", "hyperparameters", "a number > 0.0"),
        (
            "algo: recurrent_ppo\nnetwork: card_max_memory\nhyperparameters: {policy_from: README.md}\n",
            "hyperparameters",
            "policy_from is read by algo: maskable_ppo (any network) or network: card_recall_attention only",
        ),
        (  # only MaskablePPO's build reads it: the weights would be silently fresh
            "algo: ppo\nfeatures: card_features\nhyperparameters: {policy_from: README.md}\n",
            "hyperparameters",
            "policy_from is read by algo: maskable_ppo (any network) or network: card_recall_attention only",
        ),
        (  # without it the learner would freeze parameters this network does not have
            "algo: recurrent_ppo\nnetwork: card_max_memory\nhyperparameters: {policy_frozen_steps: 100}\n",
            "hyperparameters",
            "policy_frozen_steps is read by network: card_recall_attention only",
        ),
        (
            "algo: recurrent_ppo\nnetwork: card_recall_attention\nhyperparameters: {policy_from: nowhere.zip}\n",
            "hyperparameters",
            "invalid policy_from='nowhere.zip'; allowed: null or the file of a saved MaskablePPO model",
        ),
        (
            "algo: recurrent_ppo\nnetwork: card_recall_attention\nhyperparameters: {policy_frozen_steps: -1}\n",
            "hyperparameters",
            "policy_frozen_steps",
        ),
        ("opponents: []\n", "opponents", "non-empty list"),
        ("policy_kwargs: {hidden: 8}\n", "policy_kwargs", "'hidden' is the width"),
    ],
)
def test_bad_configs_name_the_file_and_key(tmp_path, text, key, why):
    path = write(tmp_path, text)
    with pytest.raises(ValueError) as error:
        load_config(path)
    message = str(error.value)
    assert str(path) in message and repr(key) in message and why in message


@pytest.mark.parametrize("algo", ["maskable_ppo", "recurrent_ppo"])
def test_a_null_target_kl_means_no_early_stop(tmp_path, algo):
    config = load_config(write(tmp_path, f"algo: {algo}\nhyperparameters: {{target_kl: null}}\n"))
    assert config.hyperparameters == {"target_kl": None}


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ValueError, match="no such config file"):
        load_config(tmp_path / "absent.yaml")
    with pytest.raises(ValueError, match="bad.yaml"):
        load_config(write(tmp_path, "algo: [unclosed\n"))


def test_overrides_are_parsed_and_validated(tmp_path):
    path = write(tmp_path, "algo: maskable_ppo\nhyperparameters: {n_steps: 64}\n")
    config = load_config(path, ["total_timesteps=2e6", "seed=3", "hyperparameters.learning_rate=1e-4"])
    assert config.total_timesteps == 2_000_000 and config.seed == 3
    assert config.hyperparameters == {"n_steps": 64, "learning_rate": 1e-4}
    with pytest.raises(ValueError, match="key 'seed'"):
        load_config(path, ["seed=-1"])
    with pytest.raises(ValueError, match="expected key=value"):
        parse_override("seed")
    assert apply_overrides({"a": 1}, ["b.c=x"]) == {"a": 1, "b": {"c": "x"}}


def test_rule_field_overrides_change_the_preset_they_are_given(tmp_path):
    toddler = load_config(write(tmp_path, "rules: toddler\n"), ["rules.matching=zebra"]).resolved_rules
    assert (toddler.ranks, toddler.matching) == (5, "zebra")
    path = write(tmp_path, "rules: {ranks: 3}\n")
    again = load_config(path, ["rules=toddler", "rules.num_players=2"]).resolved_rules
    assert (again.ranks, again.matching, again.num_players) == (5, "rank", 2)
    with pytest.raises(ValueError, match="key 'rules'.*matching"):
        load_config(path, ["rules=toddler", "rules.matching=bogus"])


def test_keys_are_documented_in_the_dataclass():
    from concentration_env.training.config import TrainConfig

    for key in KEYS:
        assert f"``{key}``" in TrainConfig.__doc__


def test_importing_the_package_never_imports_torch():
    import subprocess
    import sys

    code = "import sys, concentration_env, concentration_env.training; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=".")
    assert out.stdout.strip() == "False"

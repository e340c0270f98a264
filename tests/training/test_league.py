"""League self-play: opponent swaps in the batched versus game, sampling weights, a smoke
run with two snapshots on a tiny deck, snapshot loading and resuming a run."""

import json

import numpy as np
import pytest

from baselines import make_policy
from concentration_env.game.batch import VersusBatch
from concentration_env.game.rules import resolve_rules
from concentration_env.training.config import config_from_mapping
from concentration_env.training.league import EPSILON, League, allot, sampling_weights

TINY = resolve_rules("standard", num_players=2, ranks=2)


def legal_first(batch):
    return batch.action_masks().argmax(axis=1)


def test_set_opponents_waits_for_the_next_deal_and_drops_unused_policies():
    first, second = make_policy("greedy", TINY), make_policy("safe_first", TINY)
    swapped = VersusBatch(3, TINY, seats=[0, 1, 0], opponents=first)
    kept = VersusBatch(3, TINY, seats=[0, 1, 0], opponents=make_policy("greedy", TINY))
    for batch in (swapped, kept):
        batch.reset(seed=5)
    swapped.set_opponents([0, 2], second)
    assert swapped.kind.tolist() == [0, 0, 0] and [swapped.policies[k] for k in swapped.next_kind] == [
        second,
        first,
        second,
    ]
    # The games being played keep their opponent: flip for flip as the batch left alone.
    while not swapped.state.done.any():
        actions = legal_first(swapped)
        np.testing.assert_array_equal(swapped.step(actions)[0], kept.step(actions)[0])
        for key, value in swapped.observe().items():
            np.testing.assert_array_equal(value, kept.observe()[key])
    swapped.deal(np.arange(3))
    assert [swapped.policies[k] for k in swapped.kind] == [second, first, second]
    swapped.set_opponents([1], second)
    assert swapped.policies == [first, second]  # game 1 still plays the first until its next deal
    swapped.deal(np.array([1]))
    swapped.set_opponents([], second)
    assert swapped.policies == [second] and swapped.kind.tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match="set_opponents"):
        swapped.set_opponents([3], first)
    with pytest.raises(ValueError, match="set_opponents"):
        swapped.set_opponents([0], "greedy")


def test_pfsp_weights_favour_the_members_the_learner_beats_least():
    shares = np.array([0.0, 0.5, 1.0])
    np.testing.assert_allclose(sampling_weights(shares, "pfsp", 2.0), (1 - shares + EPSILON) ** 2)
    np.testing.assert_array_equal(sampling_weights(shares, "uniform", 2.0), [1, 1, 1])
    np.testing.assert_array_equal(sampling_weights(shares, "pfsp", 0.0), [1, 1, 1])
    counts = allot(sampling_weights(shares, "pfsp", 2.0), 16)
    assert counts.sum() == 16 and counts[0] > counts[1] > counts[2] >= 0
    assert allot(np.array([1.0, 1.0, 1.0]), 16).tolist() in ([6, 5, 5], [5, 6, 5], [5, 5, 6])


def test_fixed_share_splits_the_games_between_baselines_and_snapshots(tmp_path):
    league_settings = {"baselines": ["greedy", "safe_first"], "fixed_share": 0.6}
    config = config_from_mapping(
        {"rules": {"num_players": 3, "ranks": 2}, "vec_env": "native", "league": league_settings}
    )
    (tmp_path / "config.yaml").write_text("{}\n")
    league = League(config, config.resolved_rules, tmp_path)
    league.shares = {"greedy": 0.9, "safe_first": 0.5, "snapshot_1.zip": 0.2, "snapshot_2.zip": 0.4}
    pfsp = sampling_weights(np.array([0.9, 0.5]), "pfsp", 2.0)
    # No snapshot yet: the fixed members share everything by their own weights.
    np.testing.assert_allclose(league.weights(), pfsp)
    league.snapshots = ["snapshot_1.zip", "snapshot_2.zip"]
    weights = league.weights() / league.weights().sum()
    np.testing.assert_allclose(weights[:2].sum(), 0.6)
    np.testing.assert_allclose(weights[:2] / weights[:2].sum(), pfsp / pfsp.sum())
    snapshots = sampling_weights(np.array([0.2, 0.4]), "pfsp", 2.0)
    np.testing.assert_allclose(weights[2:] / weights[2:].sum(), snapshots / snapshots.sum())
    assert allot(league.weights(), 20)[:2].sum() == 12


def test_league_config_checks():
    base = {"rules": {"num_players": 3, "ranks": 2}, "vec_env": "native"}
    assert config_from_mapping({**base, "league": {}}).league.scheme == "pfsp"
    for league, match in (
        ({"scheme": "elo"}, "league.scheme"),
        ({"snapshot_every": 0}, "league.snapshot_every"),
        ({"baselines": ["optimal"]}, "2-player games only"),
        ({"pool": 3}, "unknown key"),
        ({"fixed_share": 1.5}, "league.fixed_share"),
    ):
        with pytest.raises(ValueError, match=match):
            config_from_mapping({**base, "league": league})
    with pytest.raises(ValueError, match="vec_env: native"):
        config_from_mapping({**base, "vec_env": "dummy", "league": {}})


pytest.importorskip("sb3_contrib")

SMOKE = {
    "rules": {"num_players": 2, "ranks": 2, "reward_mode": "margin"},
    "num_envs": 4,
    "vec_env": "native",
    "total_timesteps": 256,
    "hyperparameters": {"n_steps": 32, "batch_size": 64, "n_epochs": 1},
    "opponents": ["greedy"],
    "league": {"snapshot_every": 100, "pool_size": 2, "baselines": ["greedy", "optimal"], "eval_games": 3},
    "eval_freq": 256,
    "eval_episodes": 4,
    "checkpoint_freq": 10_000,
}


@pytest.fixture(scope="module")
def league_run(tmp_path_factory):
    from concentration_env.training.run import train

    config = config_from_mapping(SMOKE)
    return config, train(config, "league", tmp_path_factory.mktemp("league") / "run", progress_bar=False)


def test_smoke_self_play_with_two_snapshots(league_run):
    from baselines.evaluate import play
    from concentration_env.training import ModelPolicy

    config, run_dir = league_run
    pool = json.loads((run_dir / "league" / "pool.json").read_text())
    assert pool["snapshots"] == ["snapshot_100.zip", "snapshot_200.zip"]
    assert pool["scheme"] == "pfsp" and pool["fixed_share"] is None
    assert [entry["timesteps"] for entry in pool["history"]] == [0, 100, 200]
    last = pool["history"][-1]
    assert set(last["shares"]) == {"greedy", "optimal", "snapshot_100", "snapshot_200"}
    assert all(0 <= share <= 1 for share in last["shares"].values())
    for name, weight in last["weights"].items():
        assert weight == pytest.approx((1 - last["shares"][name] + EPSILON) ** 2, abs=1e-3)
    # A snapshot is a saved model like any other: it loads and plays.
    snapshot = ModelPolicy(run_dir / "league" / "snapshot_200.zip", config.resolved_rules)
    result = play(config.resolved_rules, [snapshot, make_policy("greedy", TINY)], games=4, seed=0, max_turns=60)
    assert (result.scores.sum(axis=1) + result.mismatches == result.turns).all()


def test_resume_carries_on_from_the_latest_model_and_pool(league_run):
    from concentration_env.training.cli import train_main
    from concentration_env.training.run_folder import latest_model

    _, run_dir = league_run
    path, steps = latest_model(run_dir)
    assert steps == 256 and path.name == "final_model.zip"
    rows = len((run_dir / "eval.csv").read_text().splitlines())
    first = json.loads((run_dir / "training.json").read_text())
    assert first["segments"] == [{"from": 0, "to": 256, "wall_seconds": first["wall_seconds"]}]
    assert train_main(["--resume", str(run_dir), "--set", "total_timesteps=300", "--no-progress"]) == 0
    pool = json.loads((run_dir / "league" / "pool.json").read_text())
    assert pool["snapshots"] == ["snapshot_200.zip", "snapshot_300.zip"]  # pool_size 2: the oldest left
    # Members are named relative to the run folder, so a moved folder resumes with its estimates.
    assert set(pool["shares"]) == {"greedy", "optimal", "snapshot_200.zip", "snapshot_300.zip"}
    assert [entry["timesteps"] for entry in pool["history"]][-1] == 300
    summary = json.loads((run_dir / "training.json").read_text())
    assert summary["timesteps"] >= 300
    assert summary["config_name"] == first["config_name"] != run_dir.name  # the config's name, not the folder's
    # The time of both segments is counted; the speed is the resumed segment's own.
    assert [(s["from"], s["to"]) for s in summary["segments"]] == [(0, 256), (256, summary["timesteps"])]
    assert summary["wall_seconds"] == pytest.approx(sum(s["wall_seconds"] for s in summary["segments"]), abs=0.11)
    last = summary["segments"][-1]
    assert summary["steps_per_second"] == pytest.approx((last["to"] - 256) / last["wall_seconds"], rel=0.2)
    assert len((run_dir / "eval.csv").read_text().splitlines()) > rows


def test_resume_needs_a_run_folder(tmp_path, capsys):
    from concentration_env.training.cli import train_main

    assert train_main(["--resume", str(tmp_path / "nowhere")]) == 2
    assert "no such run folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "config.yaml").write_text(json.dumps(SMOKE))
    assert train_main(["--resume", str(tmp_path / "empty"), "--no-progress"]) == 2
    assert "no saved model" in capsys.readouterr().err


@pytest.mark.parametrize(
    "changes",
    [
        {"features": "count_features"},
        {
            "features": "count_lead_features",  # reads the scores: the harness must pass them on
            "end_stalled_games": True,
            "rules": {**SMOKE["rules"], "reward_mode": "win_loss"},
        },
    ],
    ids=["count_features", "count_lead_features"],
)
def test_count_features_league_snapshots_load_and_play(tmp_path, changes):
    """The engineered count feature sets through a league run: its snapshots rebuild the
    same features when they play as opponents or in evaluation."""
    from baselines.evaluate import play
    from concentration_env.training import ModelPolicy
    from concentration_env.training.run import train

    league = {**SMOKE["league"], "snapshot_every": 200, "pool_size": 1}
    config = config_from_mapping({**SMOKE, "network": "per_card", "league": league, **changes})
    assert config.tier == "engineered" and f"features: {changes['features']}" in config.engineered_by[0]
    run_dir = train(config, "league_counts", tmp_path / "run", progress_bar=False)
    snapshot = ModelPolicy(run_dir / "league" / "snapshot_200.zip", config.resolved_rules)
    result = play(config.resolved_rules, [snapshot, make_policy("greedy", TINY)], games=4, seed=0, max_turns=60)
    assert (result.scores.sum(axis=1) + result.mismatches == result.turns).all()


def test_a_raw_league_learner_starts_from_a_solitaire_model(tmp_path):
    """hyperparameters.policy_from: a raw card_attention learner of the 2-player league starts
    with every weight of a solitaire model (its tokens read the cards, not the scores), a
    mismatched model is refused with nothing copied, and the run trains and snapshots."""
    import torch
    from sb3_contrib.common.maskable.utils import get_action_masks

    from baselines.evaluate import play
    from concentration_env.training import ModelPolicy
    from concentration_env.training.envs import make_vec_env
    from concentration_env.training.learners import build_sb3, load_sb3
    from concentration_env.training.run import train

    def raw(d_model: int, **changes) -> dict:
        sizes = {"d_model": d_model, "layers": 1, "heads": 2}
        return {**SMOKE, "features": "raw", "network": "card_attention", "policy_kwargs": sizes, **changes}

    solitaire = {key: value for key, value in raw(16, rules={"ranks": 2}).items() if key not in ("league", "opponents")}
    solitaire = config_from_mapping(solitaire)
    source_file = train(solitaire, "solitaire", tmp_path / "solitaire", progress_bar=False) / "final_model.zip"
    source = load_sb3("maskable_ppo", source_file).policy
    started = {**SMOKE["hyperparameters"], "policy_from": str(source_file)}
    config = config_from_mapping(raw(16, hyperparameters=started))
    assert config.tier == "raw"
    venv = make_vec_env(config, config.resolved_rules, config.num_envs, config.seed)
    policy = build_sb3(config, venv, None).policy
    obs = {key: torch.as_tensor(value) for key, value in venv.reset().items()}
    assert "scores" in obs and "scores" not in source.observation_space.spaces
    masks = get_action_masks(venv)
    with torch.no_grad():
        logits = [p.get_distribution(obs, masks).distribution.logits.numpy() for p in (policy, source)]
        values = [p.predict_values(obs).numpy() for p in (policy, source)]
    np.testing.assert_allclose(logits[0], logits[1], atol=1e-6)
    np.testing.assert_allclose(values[0], values[1], atol=1e-6)

    wider = build_sb3(config_from_mapping(raw(32)), venv, None).policy
    before = {name: value.clone() for name, value in wider.state_dict().items()}
    with pytest.raises(ValueError, match=r"the model's d_model 16 \(here 32\) must match this policy"):
        wider.start_from(source_file)
    assert all(torch.equal(before[name], value) for name, value in wider.state_dict().items())

    run_dir = train(config, "league_raw", tmp_path / "run", progress_bar=False)
    snapshot = ModelPolicy(run_dir / "league" / "snapshot_200.zip", config.resolved_rules)
    result = play(config.resolved_rules, [snapshot, make_policy("greedy", TINY)], games=4, seed=0, max_turns=60)
    assert (result.scores.sum(axis=1) + result.mismatches == result.turns).all()


def test_a_league_learner_carries_on_from_a_saved_model_of_its_own_network(league_run):
    """hyperparameters.policy_from for any MaskablePPO network: a fresh learner starts with
    every weight of the saved model; a model of other layer sizes or another observation is
    refused, naming what differs, and leaves the learner's weights as they were."""
    import torch

    from concentration_env.training.envs import make_vec_env
    from concentration_env.training.learners import build_sb3, load_sb3, start_policy_from

    _, run_dir = league_run
    source_file = run_dir / "final_model.zip"
    source = load_sb3("maskable_ppo", source_file).policy
    config = config_from_mapping(
        {**SMOKE, "hyperparameters": {**SMOKE["hyperparameters"], "policy_from": str(source_file)}}
    )
    venv = make_vec_env(config, config.resolved_rules, config.num_envs, config.seed)
    started = build_sb3(config, venv, None).policy
    assert all(torch.equal(value, source.state_dict()[name]) for name, value in started.state_dict().items())

    def refused(changes: dict, message: str) -> None:
        other = config_from_mapping({**SMOKE, **changes})
        policy = build_sb3(other, make_vec_env(other, other.resolved_rules, 4, 0), None).policy
        before = {name: value.clone() for name, value in policy.state_dict().items()}
        with pytest.raises(ValueError, match=message):
            start_policy_from(policy, source_file)
        assert all(torch.equal(before[name], value) for name, value in policy.state_dict().items())

    widths = r"model's action_net.weight \(8, 64\) \(here \(8, 32\)\), .* and \d+ more must match this policy"
    refused({"policy_kwargs": {"net_arch": [32, 32]}}, widths)
    refused({"features": "card_features", "network": "per_card"}, r"policy \w+ \(here PerCardMaskablePolicy\)")

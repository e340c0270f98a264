"""Smoke-train every shipped config on a small deck, then load the model and play with it."""

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from baselines import make_policy
from baselines.evaluate import play
from concentration_env.training import ModelPolicy, load_config, train
from concentration_env.training.config import config_from_mapping
from concentration_env.training.evaluation import training_cap
from concentration_env.training.run import EVAL_SEED_OFFSET
from concentration_env.training.run_folder import eval_rows, eval_score, read_eval_csv, selected_model

CONFIGS = Path("configs/train")
MAX_TURNS = 60
QUICK = ["eval_freq=256", "eval_episodes=4", "checkpoint_freq=256", "total_timesteps=512"]
DECAYING_LEAGUES = ("league_4p_counts", "league_3p_raw", "league_4p_raw")
# Per shipped config: a small deck and small batches, so each trains in seconds.
SMALL = {
    "solitaire_ppo": [
        "rules=toddler",
        "num_envs=4",
        "hyperparameters.n_steps=64",
        "hyperparameters.batch_size=64",
        "hyperparameters.n_epochs=2",
    ],
    "visible_recurrent": ["rules.pairs=3", "num_envs=8", "hyperparameters.n_steps=32", "hyperparameters.n_epochs=1"],
    "raw_memory_visible": ["rules.pairs=3", "num_envs=8", "hyperparameters.n_steps=32", "hyperparameters.n_epochs=1"],
    **{
        name: [
            "rules=toddler",
            "num_envs=4",
            "hyperparameters.n_steps=32",
            "hyperparameters.n_epochs=1",
            "hyperparameters.env_batches=2",
        ]
        for name in ("raw_memory_visible_52", "raw_max_memory_visible_52")
    },
    # Its 52-card memory-mode model does not fit the toddler deck: the smoke starts fresh and trains it all.
    "raw_recall_attention_visible_52": [
        "rules=toddler",
        "num_envs=4",
        "hyperparameters.n_steps=32",
        "hyperparameters.n_epochs=1",
        "hyperparameters.env_batches=2",
        "hyperparameters.policy_from=null",
        "hyperparameters.policy_frozen_steps=0",
    ],
    "duel2p_ppo": [
        "rules.ranks=3",
        "num_envs=4",
        "hyperparameters.n_steps=64",
        "hyperparameters.batch_size=64",
        "hyperparameters.n_epochs=2",
    ],
    **{
        name: [
            "rules.ranks=2",
            "num_envs=4",
            "hyperparameters.n_steps=64",
            "hyperparameters.batch_size=64",
            "hyperparameters.n_epochs=1",
            "league.snapshot_every=256",
            "league.eval_games=2",
            # the config's rate falls from 400k or 500k steps: within the smoke's 512 here
            *(["learning_rate_decay_from=256"] if name in DECAYING_LEAGUES else []),
            # the raw ones' 52-card solitaire model does not fit the small deck: they start fresh
            *(["hyperparameters.policy_from=null"] if name.endswith("_raw") else []),
        ]
        for name in (
            *(
                variant
                for base in ("league_2p", "league_3p", "league_4p", "league_2p_one_flip")
                for variant in (base, f"{base}_counts", f"{base}_raw")
            ),
            "league_2p_lead",
        )
    },
    "solitaire_raw_mlp": [
        "rules=toddler",
        "num_envs=4",
        "hyperparameters.n_steps=64",
        "hyperparameters.batch_size=64",
        "hyperparameters.n_epochs=2",
    ],
    **{
        f"raw_attention_{matching}": [
            "rules=toddler",
            "num_envs=8",
            "policy_kwargs.d_model=16",
            "hyperparameters.n_steps=32",
            "hyperparameters.batch_size=128",
            *(["restart=null"] if matching == "fast" else []),  # its check comes at 4.2M steps
        ]
        for matching in ("rank", "standard", "zebra", "fast")
    },
    "maskable_throughput": [
        "rules=toddler",
        "num_envs=4",
        "hyperparameters.n_steps=64",
        "hyperparameters.batch_size=64",
        "hyperparameters.n_epochs=2",
    ],
}


def shipped():
    return sorted(p.stem for p in CONFIGS.glob("*.yaml"))


def test_every_shipped_config_has_a_smoke_setting():
    assert set(shipped()) <= set(SMALL)


@pytest.fixture(scope="module")
def smoke_runs(tmp_path_factory):
    """Train each shipped config once on its small deck (shared by the tests below)."""
    runs = {}

    def run(name):
        if name not in runs:
            config = load_config(CONFIGS / f"{name}.yaml", SMALL[name] + QUICK)
            runs[name] = config, train(config, name, tmp_path_factory.mktemp(name) / "run", progress_bar=False)
        return runs[name]

    return run


@pytest.mark.parametrize("name", shipped())
def test_smoke_train_load_and_evaluate(name, smoke_runs):
    config, run_dir = smoke_runs(name)

    for item in ("config.yaml", "eval.csv", "learning_curve.png", "training.json", "tb"):
        assert (run_dir / item).exists(), item
    assert any((run_dir / "tb").rglob("events.out.tfevents.*"))
    assert any((run_dir / "checkpoints").iterdir())
    evals = read_eval_csv(run_dir / "eval.csv")
    assert len(evals["timesteps"]) >= 1 and np.all(evals["games"] >= 2)
    summary = json.loads((run_dir / "training.json").read_text())
    assert summary["timesteps"] >= 512 and not summary["interrupted"]
    # The selected model is the best evaluation, a tie going to the later one.
    scores = [eval_score(row) for row in eval_rows(evals)]
    best = max(i for i, score in enumerate(scores) if score == min(scores))
    selected = selected_model(run_dir)
    assert selected is not None and selected[1] == summary["selected_timesteps"] == evals["timesteps"][best]
    assert selected[0].stem == "selected_model"

    rules = config.resolved_rules
    policy = ModelPolicy(run_dir, rules)
    seats = [policy] + [make_policy("greedy", rules) for _ in range(rules.num_players - 1)]
    # A barely trained deterministic policy may repeat one missed pair: cap the turns.
    result = play(rules, seats, games=4, seed=0, max_turns=MAX_TURNS)
    # Every turn captured a pair or missed (masked flips are legal, none is lost).
    np.testing.assert_array_equal(result.scores.sum(axis=1) + result.mismatches, result.turns)
    assert (result.turns >= rules.num_pairs).all() or (result.turns == MAX_TURNS).any()


def test_a_saved_policy_is_deterministic_and_checks_its_rules(smoke_runs):
    config, run_dir = smoke_runs("solitaire_ppo")
    rules = config.resolved_rules
    first = play(rules, [ModelPolicy(run_dir / "final_model.zip")], games=3, seed=7, max_turns=MAX_TURNS)
    again = play(rules, [ModelPolicy(run_dir)], games=3, seed=7, max_turns=MAX_TURNS)
    np.testing.assert_array_equal(first.turns, again.turns)
    # Deterministic and memoryless, it tells the harness that a repeated miss repeats forever.
    assert ModelPolicy(run_dir).stationary and not ModelPolicy(run_dir, deterministic=False).stationary
    with pytest.raises(ValueError, match="cannot play 52 cards"):
        ModelPolicy(run_dir, rules.replace(ranks=13, matching="rank_colour"))


def test_the_selected_model_replays_its_evaluation(smoke_runs):
    config, run_dir = smoke_runs("raw_attention_rank")
    path, steps = selected_model(run_dir)
    rules = config.resolved_rules
    seed = config.seed + EVAL_SEED_OFFSET
    result = play(rules, [ModelPolicy(path, rules)], config.eval_episodes, seed, max_turns=training_cap(rules))
    evals = read_eval_csv(run_dir / "eval.csv")
    assert result.turns.mean() == pytest.approx(evals["moves"][list(evals["timesteps"]).index(steps)])


def _fake_run(folder, moves, selected=None):
    """A run folder with an ``eval.csv`` of these moves and a final model at its last row."""
    folder.mkdir()
    steps = [100 * (i + 1) for i in range(len(moves))]
    lines = ["timesteps,games,moves,moves_ci95,misses,cleared,win,win_ci95,margin"]
    lines += [f"{s},4,{m},0.1,1,1.0,nan,nan,nan" for s, m in zip(steps, moves)]
    (folder / "eval.csv").write_text("\n".join(lines) + "\n")
    summary = {"timesteps": steps[-1], "interrupted": False}
    if selected is not None:
        summary["selected_timesteps"] = selected
        (folder / "selected_model.zip").write_bytes(b"")
    (folder / "training.json").write_text(json.dumps(summary))
    (folder / "final_model.zip").write_bytes(b"")
    return folder


def test_selected_model_of_runs_with_and_without_a_saved_one(tmp_path):
    # Saved: whatever its step.
    saved = _fake_run(tmp_path / "saved", [9.0, 8.0, 8.5], selected=200)
    assert selected_model(saved) == (saved / "selected_model.zip", 200)
    # Not saved (an older run): the final model when its row is the best, a tie included.
    assert selected_model(_fake_run(tmp_path / "final", [9.0, 8.0, 8.0])) == (
        tmp_path / "final" / "final_model.zip",
        300,
    )
    assert selected_model(_fake_run(tmp_path / "lost", [9.0, 8.0, 8.5])) is None
    # Versus rows have no moves: the highest win rate is the best.
    assert eval_score({"moves": float("nan"), "win": 0.6}) < eval_score({"moves": float("nan"), "win": 0.4})


def test_resuming_an_older_run_keeps_its_best_model_as_selected(smoke_runs, tmp_path):
    import shutil

    from concentration_env.training.run_folder import latest_model

    config, trained = smoke_runs("solitaire_ppo")
    run_dir = shutil.copytree(trained, tmp_path / "old")
    steps = json.loads((run_dir / "training.json").read_text())["timesteps"]
    # On a tie the final model is the latest: the checkpoint at its step predates the last update.
    assert (run_dir / "checkpoints" / f"model_{steps}_steps.zip").is_file()
    assert latest_model(run_dir) == (run_dir / "final_model.zip", steps)
    # A run from before selected models were kept, whose final evaluation is its best.
    (run_dir / "selected_model.zip").unlink()
    summary = json.loads((run_dir / "training.json").read_text())
    del summary["selected_timesteps"]
    (run_dir / "training.json").write_text(json.dumps(summary))
    lines = (run_dir / "eval.csv").read_text().splitlines()
    last = lines[-1].split(",")
    lines[-1] = ",".join([last[0], last[1], "0.0", *last[3:]])  # no later evaluation can beat it
    (run_dir / "eval.csv").write_text("\n".join(lines) + "\n")
    old_final = shutil.copytree(run_dir, tmp_path / "before") / "final_model.zip"
    longer = config_from_mapping({**config.to_dict(), "total_timesteps": steps + 256})
    resumed = train(longer, "solitaire_ppo", run_dir, progress_bar=False, resume=True)
    summary = json.loads((resumed / "training.json").read_text())
    assert summary["timesteps"] > steps and summary["selected_timesteps"] == steps
    rules = config.resolved_rules
    kept, before = (
        play(rules, [ModelPolicy(path, rules)], 4, 3, max_turns=MAX_TURNS)
        for path in (resumed / "selected_model.zip", old_final)
    )
    np.testing.assert_array_equal(kept.turns, before.turns)


def test_ctrl_c_saves_the_model(tmp_path, monkeypatch):
    from stable_baselines3.common.callbacks import CheckpointCallback

    def interrupt(self):
        if self.num_timesteps >= 256:
            raise KeyboardInterrupt
        return True

    monkeypatch.setattr(CheckpointCallback, "_on_step", interrupt)
    config = load_config(CONFIGS / "solitaire_ppo.yaml", SMALL["solitaire_ppo"] + QUICK + ["total_timesteps=100000"])
    run_dir = train(config, "solitaire_ppo", tmp_path / "run", progress_bar=False)
    summary = json.loads((run_dir / "training.json").read_text())
    assert summary["interrupted"] and summary["timesteps"] < 100000
    assert (run_dir / "final_model.zip").is_file()
    ModelPolicy(run_dir).reset()


def test_training_runs_on_the_configs_torch_threads_and_gives_the_callers_back(tmp_path, monkeypatch):
    import torch

    from concentration_env.training import run as run_module

    seen = []
    learner = run_module._train_sb3

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return learner(*args, **kwargs)

    monkeypatch.setattr(run_module, "_train_sb3", spy)
    before = torch.get_num_threads()
    wanted = 3 if before != 3 else 2
    config = load_config(CONFIGS / "solitaire_ppo.yaml", SMALL["solitaire_ppo"] + QUICK + [f"torch_threads={wanted}"])
    train(config, "solitaire_ppo", tmp_path / "run", progress_bar=False)
    assert seen == [wanted]
    assert torch.get_num_threads() == before


def test_recurrent_record_of_seen_faces_uses_only_observations():
    import torch

    from concentration_env.training.recurrent import remember

    def obs(cards, removed):
        return {"cards": torch.tensor([cards]), "removed": torch.tensor([removed])}

    recalled = torch.zeros(1, 4, dtype=torch.long)
    recalled = remember(recalled, obs([0, 3, 0, 0], [0, 0, 0, 0]), torch.tensor([1.0]))
    recalled = remember(recalled, obs([0, 0, 2, 0], [0, 0, 0, 0]), torch.tensor([0.0]))
    assert recalled.tolist() == [[0, 3, 2, 0]]  # both faces remembered after they turned down
    recalled = remember(recalled, obs([0, 0, 0, 0], [0, 1, 0, 0]), torch.tensor([0.0]))
    assert recalled.tolist() == [[0, 0, 2, 0]]  # captured cards are forgotten
    recalled = remember(recalled, obs([1, 0, 0, 0], [0, 0, 0, 0]), torch.tensor([1.0]))
    assert recalled.tolist() == [[1, 0, 0, 0]]  # a new episode starts from nothing


def test_a_saved_agent_plays_the_opponent_in_single_and_batched_versus_games(smoke_runs):
    import gymnasium as gym
    from stable_baselines3.common.vec_env import DummyVecEnv

    from concentration_env.integrations.sb3 import make_sb3_vec_env
    from tests.helpers.batched import assert_same, play_alongside

    config, run_dir = smoke_runs("duel2p_ppo")
    rules, model = config.resolved_rules, str(run_dir / "final_model.zip")
    seats = [0, 1, 0, 1]
    ours = make_sb3_vec_env(len(seats), rules=rules, seats=seats, opponents=model, max_episode_steps=40)
    reference = DummyVecEnv(
        [
            lambda seat=seat: gym.make(
                "ConcentrationVs-v0", rules=rules, seat=seat, opponents=model, max_episode_steps=40
            )
            for seat in seats
        ]
    )
    ours.seed(3), reference.seed(3)
    assert_same(ours.reset(), reference.reset(), "reset")
    ends = play_alongside(
        ours, reference, 120, 0, lambda result, expected, where: assert_same(result[:3], expected[:3], where)
    )
    assert ends > len(seats)


def test_league_config_trains_against_a_saved_agent(smoke_runs, tmp_path):
    config, run_dir = smoke_runs("duel2p_ppo")
    model = str(run_dir / "final_model.zip")
    league = load_config(CONFIGS / "duel2p_ppo.yaml", SMALL["duel2p_ppo"] + QUICK + [f"opponents=[{model}, greedy]"])
    assert league.opponents == (model, "greedy")
    league_dir = train(league, "league", tmp_path / "run", progress_bar=False)
    assert read_eval_csv(league_dir / "eval.csv")["games"].min() >= 2  # evaluated against the saved agent
    with pytest.raises(ValueError, match="no saved model at 'nowhere.zip'"):
        load_config(CONFIGS / "duel2p_ppo.yaml", ["opponents=[nowhere.zip]"])
    with pytest.raises(ValueError, match="unknown policy 'grumpy'"):
        load_config(CONFIGS / "duel2p_ppo.yaml", ["opponents=[grumpy]"])


def test_a_recurrent_agent_keeps_one_memory_per_game_as_a_batched_opponent(smoke_runs):
    from concentration_env.envs.opponents import resolve_opponents
    from concentration_env.game.batch import VersusBatch

    config, run_dir = smoke_runs("visible_recurrent")
    rules = config.resolved_rules.replace(num_players=2)
    opponents = resolve_opponents(str(run_dir / "final_model.pt"), rules, 3)
    batch = VersusBatch(3, rules, seats=[1, 0, 1], opponents=opponents, max_episode_steps=30)
    batch.reset(seed=0)
    opponent = batch.policies[0]
    assert opponent._actor.memory.shape[0] == 3 * rules.num_players  # a row per seat of every game
    before = opponent._actor.memory.clone()
    rng = np.random.default_rng(0)
    for _ in range(40):
        rewards, terminated, truncated = batch.step([rng.choice(np.flatnonzero(row)) for row in batch.action_masks()])
        batch.deal(np.flatnonzero(terminated | truncated))
    learner_rows = [1, 2, 5]  # game * players + the learner's seat: never the opponent's
    assert torch_equal(opponent._actor.memory[learner_rows], before[learner_rows])
    assert not torch_equal(opponent._actor.memory, before)


def torch_equal(a, b):
    import torch

    return bool(torch.equal(a, b))


def test_a_raw_two_player_model_trains_evaluates_and_plays_the_opponent(tmp_path):
    import gymnasium as gym

    from concentration_env.integrations.sb3 import make_sb3_vec_env

    raw = ["features=raw", "network=mlp", "policy_kwargs={}"]
    config = load_config(CONFIGS / "duel2p_ppo.yaml", SMALL["duel2p_ppo"] + QUICK + raw)
    run_dir = train(config, "raw2p", tmp_path / "run", progress_bar=False)  # evaluates during training
    assert read_eval_csv(run_dir / "eval.csv")["games"].min() >= 2
    rules, model = config.resolved_rules, str(run_dir / "final_model.zip")
    result = play(rules, [ModelPolicy(run_dir), make_policy("greedy", rules)], games=4, seed=0, max_turns=MAX_TURNS)
    assert (result.turns > 0).all()
    # Seated second, the learner's env plays the model's opening turns in reset.
    single = gym.make("ConcentrationVs-v0", rules=rules, seat=1, opponents=model, max_episode_steps=40)
    observation, _ = single.reset(seed=0)
    batched = make_sb3_vec_env(2, rules=rules, seats=[1, 1], opponents=model, max_episode_steps=40)
    batched.seed(0)
    assert (batched.reset()["cards"] > 0).any(axis=1).all() and (observation["cards"] > 0).any()


def test_learning_rate_decay_is_a_function_of_the_env_step():
    from concentration_env.training.learners import LinearDecay

    decay = LinearDecay(start=1e-3, final=0.0, decay_from=600, total=1000)
    # SB3 passes the progress remaining, 1 - step / total.
    for step, expected in [(0, 1e-3), (600, 1e-3), (800, 5e-4), (1000, 0.0), (1100, 0.0)]:
        assert decay(1 - step / 1000) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (["learning_rate_decay_from=512"], "learning_rate_decay_from"),  # not below total_timesteps
        (["learning_rate_decay_from=-1"], "learning_rate_decay_from"),
        (["learning_rate_decay_from=100", "hyperparameters={n_steps: 64}"], "learning_rate_decay_from"),  # no start
        (["learning_rate_decay_from=100", "learning_rate_final=1"], "learning_rate_final"),  # above the start
        (["learning_rate_decay_from=100", "learning_rate_final=-1e-4"], "learning_rate_final"),
    ],
)
def test_bad_learning_rate_decays_name_the_key(change, key):
    sets = [*SMALL["solitaire_ppo"], *QUICK, "total_timesteps=512", "hyperparameters.learning_rate=1e-3", *change]
    with pytest.raises(ValueError, match=f"key '{key}'"):
        load_config(CONFIGS / "solitaire_ppo.yaml", sets)


def test_recurrent_ppo_decays_its_learning_rate_and_carries_it_on_resume(smoke_runs, tmp_path):
    """recurrent_ppo sets the rate before each update from the env step, as SB3 does, so a
    resumed run goes on along the same line; the rate goes to TensorBoard."""
    import shutil

    import torch
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    config, trained = smoke_runs("raw_max_memory_visible_52")
    run_dir = shutil.copytree(trained, tmp_path / "run")
    steps = json.loads((run_dir / "training.json").read_text())["timesteps"]
    start = config.hyperparameters["learning_rate"]
    total = steps + 4 * 128  # four more rollouts of 4 games x 32 flips
    longer = config_from_mapping(
        {**config.to_dict(), "total_timesteps": total, "learning_rate_decay_from": steps, "learning_rate_final": 0.0}
    )
    train(longer, "raw_max_memory_visible_52", run_dir, progress_bar=False, resume=True)
    saved = torch.load(run_dir / "final_model.pt", weights_only=False)
    assert saved["optimizer"]["param_groups"][0]["lr"] == pytest.approx(0.0)  # the last update's, at total
    events = EventAccumulator(str(next((run_dir / "tb").glob("events.out.tfevents.*")).parent))
    events.Reload()
    rates = {event.step: event.value for event in events.Scalars("train/learning_rate")}
    for step in range(steps + 128, total + 1, 128):
        assert rates[step] == pytest.approx(start * (total - step) / (total - steps))
    for step in range(128, steps, 128):  # the first segment: the shipped config's own fall to 0 at its end
        assert rates[step] == pytest.approx(start * (steps - step) / steps)


def test_a_resumed_run_decays_its_learning_rate(smoke_runs, tmp_path):
    import shutil

    from concentration_env.training.learners import LinearDecay, load_sb3

    config, trained = smoke_runs("solitaire_ppo")
    run_dir = shutil.copytree(trained, tmp_path / "run")
    steps = json.loads((run_dir / "training.json").read_text())["timesteps"]
    start = load_sb3(config.algo, run_dir / "final_model.zip").lr_schedule(1.0)
    hyperparameters = {**config.hyperparameters, "learning_rate": start}
    longer = config_from_mapping(
        {
            **config.to_dict(),
            "hyperparameters": hyperparameters,
            "total_timesteps": steps + 512,
            "learning_rate_decay_from": steps,
            "learning_rate_final": 0.0,
        }
    )
    train(longer, "solitaire_ppo", run_dir, progress_bar=False, resume=True)
    model = load_sb3(config.algo, run_dir / "final_model.zip")
    assert model.learning_rate == LinearDecay(start, 0.0, steps, steps + 512)
    # The last update ran near the end of the decay, at a small share of the starting rate.
    assert 0.0 <= model.policy.optimizer.param_groups[0]["lr"] < 0.5 * start


def test_a_recurrent_run_resumes_with_its_optimizer(smoke_runs, tmp_path):
    import shutil

    import torch

    config, trained = smoke_runs("raw_memory_visible_52")
    run_dir = shutil.copytree(trained, tmp_path / "run")
    steps = json.loads((run_dir / "training.json").read_text())["timesteps"]
    before = torch.load(run_dir / "final_model.pt", weights_only=False)["optimizer"]
    hyperparameters = {**config.hyperparameters, "learning_rate": 2e-4}
    longer = config_from_mapping(
        {**config.to_dict(), "hyperparameters": hyperparameters, "total_timesteps": steps + 256}
    )
    train(longer, "raw_memory_visible_52", run_dir, progress_bar=False, resume=True)
    summary = json.loads((run_dir / "training.json").read_text())
    assert summary["timesteps"] >= steps + 256
    assert [segment["from"] for segment in summary["segments"]] == [0, steps]
    timesteps = list(read_eval_csv(run_dir / "eval.csv")["timesteps"])
    assert timesteps == sorted(set(timesteps)) and timesteps[-1] == summary["timesteps"]
    after = torch.load(run_dir / "final_model.pt", weights_only=False)["optimizer"]
    # Adam carried on from its saved state (its step count went on), at the resumed run's rate.
    first = next(iter(after["state"]))
    assert after["state"][first]["step"] > before["state"][first]["step"]
    assert after["param_groups"][0]["lr"] == 2e-4
    wider = config_from_mapping(
        {**config.to_dict(), "hyperparameters": {**hyperparameters, "hidden": 16}, "total_timesteps": steps + 512}
    )
    written = {name: (run_dir / name).read_text() for name in ("config.yaml", "eval.csv", "training.json")}
    with pytest.raises(ValueError, match="the saved network has hidden=32"):
        train(wider, "raw_memory_visible_52", run_dir, progress_bar=False, resume=True)
    assert {name: (run_dir / name).read_text() for name in written} == written  # refused before any change

"""RLlib scale-out: the run config, the observation adapter, and a Ray smoke test.

The smoke test needs the ``rllib`` extra; ``make test`` runs this file in ``.venv-rllib``
(ray[rllib] pins its own gymnasium), and the main suite skips that test.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from concentration_env import Rules, concentration_v0
from concentration_env.envs.opponents import play_turns
from concentration_env.game import core
from concentration_env.game.policy import Policy
from concentration_env.integrations.rllib import (
    MASK_KEY,
    OBS_KEY,
    MaskedFlatObservation,
    RLlibConfig,
    encode,
    observed_space,
)
from tests.helpers.rllib import TINY_RULES, tiny_config

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs" / "rllib"
RAY_OBJECT_STORE_BYTES = 100 * 1024**2


@pytest.mark.parametrize("path", sorted(CONFIG_DIR.glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_configs_load(path):
    config = RLlibConfig.from_yaml(path)
    assert config.game_rules().num_players == config.num_players


@pytest.mark.parametrize(
    "fields, named",
    [
        ({"iterationz": 3}, "'iterationz'"),
        ({"policy": "both"}, "policy"),
        ({"num_players": 1}, "num_players"),
        ({"num_env_runners": -1}, "num_env_runners"),
        ({"lr": "fast"}, "lr"),
        ({"hidden": [64, 0]}, "hidden"),
        ({"observation_mode": "x"}, "observation_mode"),
        ({"rules": "no_such_preset"}, "rules"),
        ({"rules": {"ranks": 99}}, "ranks"),
        ({"rules": {"num_players": 3}}, "top-level"),
    ],
)
def test_bad_config_names_the_key(tmp_path, fields, named):
    path = tmp_path / "run.yaml"
    path.write_text("\n".join(f"{key}: {value!r}" for key, value in fields.items()))
    with pytest.raises(ValueError, match=named) as error:
        RLlibConfig.from_yaml(path)
    assert str(path) in str(error.value)


def test_config_round_trips_and_sets_seats():
    config = RLlibConfig(rules=TINY_RULES, num_players=3, policy="per_seat", hidden=[32])
    assert RLlibConfig.from_mapping(config.to_mapping()) == config
    assert config.module_ids() == ["player_0", "player_1", "player_2"]
    assert RLlibConfig(policy="shared").module_ids() == ["shared"]


@pytest.mark.parametrize("rules", ["toddler", "checkerboard"])
@pytest.mark.parametrize("mode", ["memory", "visible"])
def test_masked_flat_observation(rules, mode):
    raw = concentration_v0.env(rules=rules, num_players=3, observation_mode=mode)
    env = MaskedFlatObservation(concentration_v0.env(rules=rules, num_players=3, observation_mode=mode))
    board = observed_space(raw.unwrapped.rules)
    assert set(board) == set(raw.observation_space("player_0")["observation"]) - {"scores"}
    raw.reset(seed=4)
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(30):
        for agent in env.possible_agents:
            wrapped, expected = env.observe(agent), raw.observe(agent)
            assert env.observation_space(agent).contains(wrapped)
            np.testing.assert_array_equal(wrapped[MASK_KEY], expected[MASK_KEY])
            np.testing.assert_array_equal(wrapped[OBS_KEY], encode(board, expected["observation"]))
        if env.terminations[env.agent_selection]:
            break
        action = int(rng.choice(np.flatnonzero(raw.observe(raw.agent_selection)[MASK_KEY])))
        raw.step(action)
        env.step(action)


def test_encoding_is_one_hot_cards_then_flags():
    rules = Rules(ranks=1, matching="rank")  # the four aces: 4 faces, card values 0 (unknown) .. 4
    observation = {
        "cards": np.array([0, 4, 1, 0]),
        "face_up": np.array([0, 1, 0, 0]),
        "removed": np.array([0, 0, 0, 1]),
    }
    one_hot = np.eye(5)[[0, 4, 1, 0]].ravel()
    want = np.concatenate([one_hot, observation["face_up"], observation["removed"]])
    np.testing.assert_array_equal(encode(observed_space(rules), observation), want)


@pytest.fixture(scope="module")
def local_ray():
    """A small local Ray instance for this module's tests."""
    ray = pytest.importorskip(
        "ray", reason='ray is not installed (the "rllib" extra; make test runs it in .venv-rllib)'
    )
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=RAY_OBJECT_STORE_BYTES, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_train_checkpoint_restore_and_play(local_ray, tmp_path):
    import torch

    from concentration_env.integrations.rllib import RLlibPolicy, build_algorithm, episode_stats, save_checkpoint

    config = tiny_config(
        tmp_path, network="mlp", num_env_runners=2, train_batch_size=200, minibatch_size=50, hidden=[32]
    )
    rules = config.game_rules()
    algorithm = build_algorithm(config)
    try:
        stats = episode_stats(algorithm.train())
        assert stats["num_env_steps_sampled_lifetime"] >= config.train_batch_size
        assert stats["num_episodes"] > 0
        path = save_checkpoint(algorithm, config)
        trained = algorithm.get_module("shared")
    finally:
        algorithm.stop()

    # sampling, not argmax: an untrained greedy policy can retry one mismatched pair forever
    policy = RLlibPolicy(path, rules, explore=True)
    assert isinstance(policy, Policy)
    # the restored module computes what the trained one does
    env = MaskedFlatObservation(concentration_v0.env(rules=rules))
    env.reset(seed=1)
    observation = {key: torch.from_numpy(value)[None] for key, value in env.observe("player_0").items()}
    with torch.no_grad():
        want = trained.forward_inference({"obs": dict(observation)})["action_dist_inputs"]
        got = policy.module.forward_inference({"obs": dict(observation)})["action_dist_inputs"]
    torch.testing.assert_close(got, want)

    table = concentration_v0.raw_env(rules=rules)
    table.reset(seed=2)
    policy.reset(seed=2)
    earned = play_turns(table, dict.fromkeys(range(rules.num_players), policy), watch="player_0")
    assert all(table.terminations.values())
    assert sum(table.scores_by_name().values()) == rules.num_pairs
    assert earned == table.scores_by_name()["player_0"]
    # the batched path (the baselines' harness, observations of the core) picks what the single path picks
    greedy = RLlibPolicy(path)
    game = core.compile_rules(rules)
    rng = np.random.default_rng(3)
    state = core.new_state(game, np.stack([core.deal(game, rng) for _ in range(4)]))
    for _ in range(3):
        legal = core.observe(game, state, memory=True)[MASK_KEY]
        core.step(game, state, np.array([rng.choice(np.flatnonzero(row)) for row in legal]))
    batch = core.observe(game, state, memory=True)
    singles = [greedy.act({key: value[b] for key, value in batch.items()}, batch[MASK_KEY][b]) for b in range(4)]
    np.testing.assert_array_equal(greedy.act_batch(batch), singles)
    assert all(batch[MASK_KEY][b, a] for b, a in enumerate(singles))

    # the baselines' harness plays it against a baseline, every game to its end
    from baselines import make_policy
    from baselines.evaluate import play

    results = play(rules, [policy, make_policy("random", rules)], games=4, seed=5)
    assert results.policies == (policy.name, "random")
    assert (results.turns > 0).all()
    assert (results.scores.sum(axis=1)[results.cleared] == rules.num_pairs).all()

    with pytest.raises(ValueError, match="trained on size"):
        RLlibPolicy(path, "toddler")
    with pytest.raises(ValueError, match="seat"):
        RLlibPolicy(path, seat=2)
    with pytest.raises(ValueError, match="not a checkpoint"):
        RLlibPolicy(tmp_path)


def test_league_trains_the_learner_against_frozen_snapshots_and_greedy(local_ray, tmp_path):
    import torch

    from concentration_env.integrations.rllib import build_algorithm, episode_stats
    from concentration_env.integrations.rllib.training import snapshot

    config = tiny_config(
        tmp_path,
        rules={"ranks": 4, "matching": "rank"},  # 16 cards: greedy rarely clears it before the learner moves
        num_env_runners=1,
        train_batch_size=300,
        minibatch_size=100,
        num_epochs=2,
        lr=0.01,
        greedy_share=0.2,
        self_play_share=0.0,  # every non-greedy game: the learner against a frozen snapshot
        pool_size=2,
    )

    def weights(algorithm, module_id, on_runner=False):
        if on_runner:
            (state,) = algorithm.env_runner_group.foreach_env_runner(
                lambda runner: runner.module[module_id].state_dict(), local_env_runner=False
            )
        else:
            state = algorithm.learner_group.get_weights(module_ids=[module_id])[module_id]
        return {key: torch.as_tensor(value) for key, value in state.items()}

    def same(a, b):
        return all(torch.equal(a[key], b[key]) for key in a)

    algorithm = build_algorithm(config)
    try:
        start = weights(algorithm, "shared")
        assert all(same(weights(algorithm, slot), start) for slot in config.frozen_ids())
        result = algorithm.train()
        stats = episode_stats(result)
        trained = weights(algorithm, "shared")
        assert not same(trained, start)  # the learner learned ...
        assert all(same(weights(algorithm, slot), start) for slot in config.frozen_ids())  # ... the pool did not
        played = set(result["env_runners"]["module_episode_returns_mean"])
        # frozen snapshots took opponent seats (which slot, each game draws; the greedy games have none)
        assert "shared" in played and played & set(config.frozen_ids())
        assert "return/learner" in stats and "return/opponent_1" in stats
        snapshot(algorithm, config, ["frozen_1"])
        assert same(weights(algorithm, "frozen_1"), trained) and same(weights(algorithm, "frozen_0"), start)
        assert same(weights(algorithm, "frozen_1", on_runner=True), trained)  # the runners play the new snapshot
    finally:
        algorithm.stop()


def test_attention_network_trains_and_restores(local_ray, tmp_path):
    import torch

    from concentration_env.integrations.rllib import RLlibPolicy, build_algorithm, episode_stats, save_checkpoint

    config = tiny_config(
        tmp_path,
        rules={**TINY_RULES, "backs": "checkerboard", "packs": 2},  # the back colour is one more raw column
        network="card_attention",
        num_env_runners=0,
        train_batch_size=100,
        minibatch_size=50,
        d_model=16,
        heads=2,
        layers=1,
    )
    algorithm = build_algorithm(config)
    try:
        assert episode_stats(algorithm.train())["num_env_steps_sampled_lifetime"] >= 100
        path = save_checkpoint(algorithm, config)
        trained = algorithm.get_module("shared")
    finally:
        algorithm.stop()
    policy = RLlibPolicy(path)
    assert policy.tier == "raw" and policy.encoding.columns == ("cards", "face_up", "removed", "back")
    game = core.compile_rules(policy.rules)
    state = core.new_state(game, np.stack([core.deal(game, np.random.default_rng(s)) for s in range(3)]))
    batch = core.observe(game, state, memory=True)
    mask = batch[MASK_KEY].astype(np.float32)
    obs = {OBS_KEY: torch.from_numpy(policy.encoding.batch(batch)), MASK_KEY: torch.from_numpy(mask)}
    with torch.no_grad():
        want = trained.forward_inference({"obs": obs})["action_dist_inputs"].numpy()
    np.testing.assert_allclose(policy.logits(batch), want, rtol=1e-5, atol=1e-5)

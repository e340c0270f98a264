"""The RLlib pieces below the algorithm: each network's encoding, the turn-based
multi-agent env (self-play seats and league roles) and the per-card RLModules.

The env and module tests need Ray and torch (``make test`` runs this file in ``.venv-rllib``);
the main venv runs the encoding tests and skips the rest, saying why.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from concentration_env import Rules, concentration_v0
from concentration_env.envs.features import card_features
from concentration_env.game import core
from concentration_env.game.rules import resolve_rules
from concentration_env.integrations.rllib import MASK_KEY, OBS_KEY, Encoding, MaskedFlatObservation, RLlibConfig

TINY = {"ranks": 2, "matching": "rank"}  # 8 cards


def ray_or_skip():
    return pytest.importorskip(
        "ray", reason='ray is not installed (the "rllib" extra; make test runs it in .venv-rllib)'
    )


def core_batch(rules: Rules, games: int, flips: int, seed: int = 0) -> dict:
    """Observations of ``games`` deals after ``flips`` random legal flips each."""
    game = core.compile_rules(rules)
    rng = np.random.default_rng(seed)
    state = core.new_state(game, np.stack([core.deal(game, rng) for _ in range(games)]))
    for _ in range(flips):
        legal = core.observe(game, state, memory=True)[MASK_KEY]
        core.step(game, state, np.array([rng.choice(np.flatnonzero(row)) for row in legal]))
    return core.observe(game, state, memory=True)


@pytest.mark.parametrize("rules", ["toddler", "checkerboard"])
def test_encodings_read_the_board(rules):
    rules = resolve_rules(rules)
    batch = core_batch(rules, games=3, flips=5)
    features = Encoding("per_card", rules)
    np.testing.assert_array_equal(features.batch(batch), card_features(features.game, batch))
    raw = Encoding("card_attention", rules)
    columns = raw.batch(batch)
    assert columns.shape == (3, features.game.num_cards, len(raw.columns))
    for i, key in enumerate(raw.columns):
        np.testing.assert_array_equal(columns[..., i], batch[key])
    assert ("back" in raw.columns) == (rules.backs == "checkerboard")
    for encoding in (features, raw, Encoding("mlp", rules)):
        single = encoding.one({key: value[1] for key, value in batch.items()}, batch[MASK_KEY][1])
        assert encoding.observation_space().contains(single)
        np.testing.assert_array_equal(single[OBS_KEY], encoding.batch(batch)[1])


def test_config_tier_and_league_checks():
    assert RLlibConfig(network="per_card").tier == "engineered"
    assert RLlibConfig(network="card_attention").tier == "raw"
    assert RLlibConfig().to_mapping()["tier"] == "raw"
    with pytest.raises(ValueError, match="tier"):
        RLlibConfig.from_mapping({"network": "mlp", "tier": "engineered"})
    with pytest.raises(ValueError, match="network"):
        RLlibConfig(network="cnn")
    with pytest.raises(ValueError, match="league"):
        RLlibConfig(policy="per_seat", greedy_share=0.5)
    with pytest.raises(ValueError, match="heads"):
        RLlibConfig(d_model=10, heads=4)
    config = RLlibConfig(network="per_card", pool_size=2, greedy_share=0.25)
    assert config.league and config.frozen_ids() == ["frozen_0", "frozen_1"]
    assert RLlibConfig.from_mapping(config.to_mapping()) == config


def play_out(env, seed: int) -> tuple[dict, dict, object]:
    """Play one game of the multi-agent env with random legal flips; the return per agent,
    the agents that observed, and the table at the end."""
    rng = np.random.default_rng(seed)
    observations, _ = env.reset(seed=seed)
    returns: dict = {}
    seen = set(observations)
    while True:
        (agent,) = observations  # turn-based: one agent to move
        mask = observations[agent][MASK_KEY]
        assert env.observation_spaces[agent].contains(observations[agent])
        observations, rewards, terminated, truncated, _ = env.step({agent: int(rng.choice(np.flatnonzero(mask)))})
        for key, value in rewards.items():
            returns[key] = returns.get(key, 0.0) + value
        seen |= set(observations)
        if terminated["__all__"]:
            assert set(observations) == set(rewards) == set(terminated) - {"__all__"}
            return returns, seen, env.table
        assert not truncated["__all__"]


@pytest.mark.parametrize("players", [2, 3])
def test_self_play_env_pays_every_seat_its_pairs(players):
    ray_or_skip()
    from concentration_env.integrations.rllib.multiagent import ConcentrationMultiAgentEnv

    rules = Rules.from_mapping({**TINY, "num_players": players})
    env = ConcentrationMultiAgentEnv({"rules": rules, "observation_mode": "memory", "network": "per_card"})
    assert env.possible_agents == [f"player_{seat}" for seat in range(players)]
    for seed in range(6):
        returns, seen, table = play_out(env, seed)
        scores = table.scores_by_name()
        assert {agent: returns.get(agent, 0.0) for agent in seen} == {agent: float(scores[agent]) for agent in seen}
        assert sum(scores.values()) == rules.num_pairs


def test_league_env_seats_the_learner_and_plays_greedy_inside():
    ray_or_skip()
    from baselines import make_policy
    from concentration_env.integrations.rllib.multiagent import ConcentrationMultiAgentEnv

    rules = Rules.from_mapping({**TINY, "num_players": 2, "ranks": 4})  # 16 cards
    config = {"rules": rules, "observation_mode": "memory", "network": "mlp", "league": True, "greedy_share": 1.0}
    env = ConcentrationMultiAgentEnv(config)
    assert env.possible_agents == ["learner", "opponent_1"]
    seats = set()
    for seed in range(12):
        returns, seen, table = play_out(env, seed)
        assert seen == {"learner"}  # the greedy seat never reaches RLlib
        learner_seat = env._learner_seat
        seats.add(learner_seat)
        assert returns["learner"] == table.scores_by_name()[f"player_{learner_seat}"]
    assert seats == {0, 1}
    assert type(env._greedy) is type(make_policy("greedy", rules))  # the scripted seats play baselines' greedy

    mixed = ConcentrationMultiAgentEnv({**config, "greedy_share": 0.0})
    _, seen, _ = play_out(mixed, 0)
    assert seen == {"learner", "opponent_1"}


@pytest.mark.parametrize("network", ["per_card", "card_attention"])
def test_card_module_masks_and_is_equivariant(network):
    ray_or_skip()
    import torch
    from ray.rllib.core.columns import Columns

    from concentration_env.integrations.rllib.module import CardRLModule, model_config

    config = RLlibConfig(rules=TINY, network=network, hidden=[16], d_model=16, heads=2, layers=1)

    def module_for(rules):
        encoding = Encoding(network, rules)
        torch.manual_seed(0)
        return encoding, CardRLModule(
            observation_space=encoding.observation_space(),
            action_space=gym.spaces.Discrete(encoding.game.num_cards),
            model_config=model_config(config),
        )

    rules = config.game_rules()
    encoding, module = module_for(rules)
    batch = core_batch(rules, games=4, flips=3)
    obs = {
        OBS_KEY: torch.from_numpy(encoding.batch(batch)),
        MASK_KEY: torch.from_numpy(batch[MASK_KEY].astype(np.float32)),
    }
    with torch.no_grad():
        out = module.forward_train({Columns.OBS: obs})
        logits = out[Columns.ACTION_DIST_INPUTS]
        values = module.compute_values({Columns.OBS: obs}, out[Columns.EMBEDDINGS])
        again = module.compute_values({Columns.OBS: obs})
    assert logits.shape == (4, encoding.game.num_cards) and values.shape == (4,)
    torch.testing.assert_close(values, again)
    assert (logits[obs[MASK_KEY] == 0] < -1e8).all() and (logits[obs[MASK_KEY] > 0] > -1e3).all()
    # moving the cards moves their logits and leaves the value alone
    perm = torch.from_numpy(np.random.default_rng(1).permutation(encoding.game.num_cards))
    moved = {key: value[:, perm] for key, value in obs.items()}
    with torch.no_grad():
        out_moved = module.forward_train({Columns.OBS: moved})
    torch.testing.assert_close(out_moved[Columns.ACTION_DIST_INPUTS], logits[:, perm])
    torch.testing.assert_close(module.compute_values({Columns.OBS: moved}), values, atol=1e-5, rtol=1e-5)
    if network == "per_card":  # the same weights score a larger deck
        bigger = Rules.from_mapping({**TINY, "ranks": 4, "num_players": 2})
        big_encoding = Encoding(network, bigger)
        big = core_batch(bigger, games=2, flips=2)
        big_obs = {
            OBS_KEY: torch.from_numpy(big_encoding.batch(big)),
            MASK_KEY: torch.from_numpy(big[MASK_KEY].astype(np.float32)),
        }
        with torch.no_grad():
            assert module.forward_inference({Columns.OBS: big_obs})[Columns.ACTION_DIST_INPUTS].shape == (2, 16)


def test_masked_flat_observation_uses_the_network_encoding():
    rules = Rules.from_mapping({**TINY, "num_players": 2})
    env = MaskedFlatObservation(concentration_v0.env(rules=rules), network="per_card")
    env.reset(seed=0)
    observed = env.observe("player_0")
    assert observed[OBS_KEY].shape == card_features(env.encoding.game, core_batch(rules, 1, 0)).shape[1:]
    assert env.observation_space("player_0").contains(observed)


@pytest.mark.parametrize("script", ["train_rllib.py", "bench_rllib.py"])
def test_scripts_reject_a_bad_config_in_one_line(tmp_path, script):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    config = tmp_path / "run.yaml"
    config.write_text("network: cnn\n")
    done = subprocess.run(
        [sys.executable, str(root / "scripts" / script), "--config", str(config)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "network" in done.stderr and str(config) in done.stderr

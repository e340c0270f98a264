"""``observation_format="flat"``: the observation is the box layout's float32 vector and the
legal flips travel in the infos (the AEC env, the duel and ConcentrationVs-v0)."""

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from pettingzoo.test import api_test, seed_test

from concentration_env import concentration_v0, duel_v0
from tests.envs.test_multiplayer import quietly
from tests.helpers.tables import short_rules

AEC_CASES = [
    (concentration_v0.env, dict(num_players=3, ranks=3)),
    (concentration_v0.env, dict(rules=short_rules("checkerboard"), num_players=2)),
    (concentration_v0.env, dict(num_players=2, ranks=2, max_turns=6)),
    (duel_v0.env, dict(ranks=2)),
]
AEC_IDS = ["three_players", "checkerboard", "max_turns", "duel_v0"]


@pytest.mark.parametrize("make_env, kwargs", AEC_CASES, ids=AEC_IDS)
def test_flat_format_passes_pettingzoo_api_and_seed_tests(make_env, kwargs):
    kwargs = dict(kwargs, observation_format="flat")
    env = make_env(**kwargs)
    boxed = make_env(**dict(kwargs, observation_format="box"))
    for agent in env.possible_agents:
        space = env.observation_space(agent)
        assert isinstance(space, gym.spaces.Box) and space == boxed.observation_space(agent)["observation"]
    quietly(api_test, env, num_cycles=500)
    quietly(seed_test, lambda: make_env(**kwargs), num_cycles=500)


def check_flat_matches_box(make_env, kwargs, seed):
    """One random game on the flat and the box format side by side, every action drawn
    from the flat env's info mask: each flat observation is the box one's ``"observation"``,
    each agent's info mask is the box mask while it is on turn, zero otherwise and once the
    game is over, and equals ``action_mask(agent)``."""
    flat, boxed = make_env(observation_format="flat", **kwargs), make_env(observation_format="box", **kwargs)
    flat.reset(seed=seed)
    boxed.reset(seed=seed)
    n, kept = flat.unwrapped.num_cards, []
    rng = np.random.default_rng(seed)
    for agent in flat.agent_iter():
        observation, _, terminated, truncated, info = flat.last()
        reference = boxed.observe(agent)
        assert observation.dtype == np.float32 and flat.observation_space(agent).contains(observation)
        assert np.array_equal(observation, reference["observation"])
        over = terminated or truncated
        for other in flat.agents:
            mask = flat.infos[other]["action_mask"]
            assert mask.dtype == np.int8 and mask.shape == (n,)
            assert np.array_equal(mask, flat.unwrapped.action_mask(other))
            if other == agent and not over:
                assert np.array_equal(mask, reference["action_mask"]) and mask.any()
            else:
                assert not mask.any(), (other, agent, over)
        kept.append((info["action_mask"], info["action_mask"].copy()))
        action = None if over else int(rng.choice(np.flatnonzero(info["action_mask"])))
        flat.step(action)
        boxed.step(action)
    assert all(np.array_equal(mask, copied) for mask, copied in kept), "an info kept from an earlier step changed"
    return len(kept)


@pytest.mark.parametrize("make_env, kwargs", AEC_CASES, ids=AEC_IDS)
def test_flat_observation_is_the_box_vector_and_the_mask_is_in_the_infos(make_env, kwargs):
    for seed in range(3):
        assert check_flat_matches_box(make_env, kwargs, seed) > 4


def test_action_mask_method_checks_its_agent_and_the_reset():
    raw = concentration_v0.raw_env(num_players=2, ranks=2, observation_format="flat")
    with pytest.raises(RuntimeError, match="reset"):
        raw.action_mask("player_0")
    raw.reset(seed=0)
    with pytest.raises(ValueError, match=r"invalid agent='player_7'.*player_0, player_1"):
        raw.action_mask("player_7")
    assert raw.action_mask("player_0").tolist() == [1] * raw.num_cards and not raw.action_mask("player_1").any()


@pytest.mark.parametrize("clone", [pickle.loads, copy.deepcopy], ids=["pickle", "deepcopy"])
def test_flat_env_copied_mid_game_continues_identically(clone):
    env = concentration_v0.env(num_players=3, ranks=3, observation_format="flat")
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(7):
        env.step(int(rng.choice(np.flatnonzero(env.last()[4]["action_mask"]))))
    twin = clone(pickle.dumps(env)) if clone is pickle.loads else clone(env)
    for agent, other in zip(env.agent_iter(), twin.agent_iter()):
        assert agent == other
        (obs, reward, term, trunc, info), (obs2, reward2, term2, trunc2, info2) = env.last(), twin.last()
        assert np.array_equal(obs, obs2) and (reward, term, trunc) == (reward2, term2, trunc2)
        assert all(np.array_equal(info[key], info2[key]) for key in info)
        action = None if term or trunc else int(rng.choice(np.flatnonzero(info["action_mask"])))
        env.step(action)
        twin.step(action)
    assert not twin.agents


def test_versus_flat_format_is_the_box_vector_with_the_mask_in_the_info():
    kwargs = dict(num_players=3, ranks=3, seat=1)
    flat = gym.make("ConcentrationVs-v0", observation_format="flat", **kwargs)
    boxed = gym.make("ConcentrationVs-v0", observation_format="box", **kwargs)
    gym_check_env(gym.make("ConcentrationVs-v0", observation_format="flat", **kwargs).unwrapped)
    assert flat.observation_space == boxed.observation_space["observation"]
    rng = np.random.default_rng(0)
    for seed in range(3):
        (observation, info), (reference, _) = flat.reset(seed=seed), boxed.reset(seed=seed)
        done = False
        while not done:
            assert flat.observation_space.contains(observation)
            assert np.array_equal(observation, reference["observation"])
            assert info["action_mask"].dtype == np.int8
            assert np.array_equal(info["action_mask"], reference["action_mask"])
            assert np.array_equal(flat.unwrapped.action_masks(), info["action_mask"].astype(bool))
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            observation, _, terminated, truncated, info = flat.step(action)
            reference, *_ = boxed.step(action)
            done = terminated or truncated

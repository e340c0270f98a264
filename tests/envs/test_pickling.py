"""Every env kind, as users get it (wrapped), pickled or deep-copied at a random point of a
random game continues flip for flip like the original, generators and opponents included."""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import concentration_env  # noqa: F401  (registers the ids)
from concentration_env import concentration_v0, duel_v0


def plain(value):
    """Nested observations, infos and rewards as plain Python values, for comparison."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, np.ndarray):
        return [value.dtype.str, value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    return value


class Gym:
    """A single Gymnasium env: a finished game is followed by a reset without a seed."""

    def __init__(self, make):
        self.make = make

    def start(self, seed):
        env = self.make()
        env.reset(seed=seed)
        return env

    def play(self, env, rng):
        action = int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))
        result = env.step(action)
        if result[2] or result[3]:
            return plain([result, env.reset()])
        return plain(result)


class Vector(Gym):
    """The native vector env (it resets finished games itself)."""

    def play(self, env, rng):
        masks = env.action_masks()  # a finished game (reset on this step) has no legal flip
        return plain(env.step(np.array([rng.choice(np.flatnonzero(row)) if row.any() else 0 for row in masks])))


class Aec(Gym):
    """A wrapped PettingZoo env: a dead agent steps with None; after the game, a reset."""

    def start(self, seed):
        env = self.make()
        env.reset(seed=seed)
        return env

    def play(self, env, rng):
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        if not env.agents:
            env.reset()
        return plain([env.agent_selection, env.last(), env.unwrapped.scores_by_name()])


KINDS = {
    "solitaire": Gym(lambda: gym.make("Concentration-v0", ranks=3, observation_mode="visible")),
    "vector": Vector(lambda: gym.make_vec("Concentration-v0", num_envs=3, ranks=2)),
    "versus": Gym(
        lambda: gym.make(
            "ConcentrationVs-v0",
            num_players=3,
            seat=1,
            ranks=3,
            opponents=["forgetful", "random"],
            reward_mode="margin",
        )
    ),
    "versus-greedy": Gym(lambda: gym.make("ConcentrationVs-v0", num_players=2, ranks=3, opponents="greedy")),
    "aec-2": Aec(lambda: concentration_v0.env(num_players=2, ranks=3)),
    "aec-3": Aec(lambda: concentration_v0.env(num_players=3, ranks=3, turn_policy="one_flip", render_mode="ansi")),
    "duel": Aec(lambda: duel_v0.env(ranks=2)),
}
CLONES = {"pickle": lambda env: pickle.loads(pickle.dumps(env)), "deepcopy": copy.deepcopy}


@given(
    kind=st.sampled_from(sorted(KINDS)),
    clone=st.sampled_from(sorted(CLONES)),
    seed=st.integers(0, 2**32 - 1),
    played=st.integers(0, 80),
)
def test_a_clone_mid_game_continues_identically(kind, clone, seed, played):
    driver = KINDS[kind]
    env = driver.start(seed)
    rng = np.random.default_rng(seed)
    for _ in range(played):
        driver.play(env, rng)
    twin = CLONES[clone](env)
    assert type(twin) is type(env) and type(twin.unwrapped) is type(env.unwrapped)
    choices = copy.deepcopy(rng)
    ahead = [driver.play(twin, choices) for _ in range(60)]
    assert [driver.play(env, rng) for _ in range(60)] == ahead


@pytest.mark.parametrize("kind", ["aec-2", "aec-3", "duel"])
def test_aec_get_state_set_state_restores_exactly_also_into_a_fresh_env(kind):
    driver = KINDS[kind]
    env = driver.start(5)
    rng = np.random.default_rng(5)
    for _ in range(17):
        driver.play(env, rng)
    snapshot = env.unwrapped.get_state()
    choices = copy.deepcopy(rng)
    ahead = [driver.play(env, choices) for _ in range(70)]  # runs past the end of the game: a reset
    env.unwrapped.set_state(snapshot)
    choices = copy.deepcopy(rng)
    assert [driver.play(env, choices) for _ in range(70)] == ahead
    fresh = driver.make()
    fresh.set_state(snapshot)  # through the wrappers: the restored game counts as reset
    assert [driver.play(fresh, rng) for _ in range(70)] == ahead


def test_aec_set_state_refuses_a_snapshot_of_other_rules():
    env = concentration_v0.env(num_players=2, ranks=3)
    env.reset(seed=0)
    other = concentration_v0.env(num_players=2, ranks=3, turn_policy="one_flip")
    with pytest.raises(ValueError, match="rules"):
        other.unwrapped.set_state(env.unwrapped.get_state())


@pytest.mark.parametrize(
    "make", [lambda: gym.make("Concentration-v0", render_mode="human"), lambda: duel_v0.env(render_mode="human")]
)
def test_an_env_with_a_window_pickles_and_its_copy_has_its_own(make):
    pytest.importorskip("pygame")
    env = make()
    for twin in (pickle.loads(pickle.dumps(env)), copy.deepcopy(env)):
        screen = twin.unwrapped._screen
        assert screen is not env.unwrapped._screen and screen.fps == env.unwrapped._screen.fps

"""Snapshots, pickling, copying and cross-process determinism of the solitaire env."""

import copy
import pickle
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

from concentration_env.envs.solitaire import ConcentrationEnv
from concentration_env.game.rules import Rules, load_yaml_mapping


def play(env, actions):
    """Observations and rewards of a fixed action sequence (legal or not)."""
    out = []
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        out.append((obs["cards"].tolist(), obs["face_up"].tolist(), reward, terminated, info["turns"]))
        if terminated:
            break
    return out


ACTIONS = [int(a) for a in np.random.default_rng(0).integers(0, 20, size=80)]


@pytest.mark.parametrize("mode", ["memory", "visible"])
def test_get_state_set_state_restores_exactly(mode):
    env = ConcentrationEnv(rules="toddler", observation_mode=mode)
    env.reset(seed=4)
    play(env, ACTIONS[:15])
    snapshot = env.get_state()
    original = play(env, ACTIONS[15:])
    env.set_state(snapshot)
    assert play(env, ACTIONS[15:]) == original
    # a reset after restoring deals from the restored generator too
    env.set_state(snapshot)
    env.reset()
    layout = env.layout
    env.set_state(snapshot)
    env.reset()
    assert env.layout == layout


def test_set_state_into_a_fresh_env_and_bad_snapshots():
    env = ConcentrationEnv(rules="toddler")
    env.reset(seed=1)
    play(env, ACTIONS[:9])
    other = ConcentrationEnv(rules="toddler")
    other.set_state(env.get_state())
    assert play(other, ACTIONS[9:]) == play(env, ACTIONS[9:])
    with pytest.raises(ValueError, match="snapshot"):
        other.set_state({"core": None})
    standard = ConcentrationEnv()
    standard.reset(seed=0)
    with pytest.raises(ValueError, match=r"snapshot\[.rules.\]"):
        other.set_state(standard.get_state())


@pytest.mark.parametrize("clone", [pickle.loads, copy.deepcopy])
def test_pickle_and_deepcopy_mid_game_continue_identically(clone):
    env = gym.make("Concentration-Toddler-v0", observation_mode="visible")
    env.reset(seed=3)
    play(env, ACTIONS[:11])
    twin = clone(pickle.dumps(env)) if clone is pickle.loads else clone(env)
    assert play(twin, ACTIONS[11:]) == play(env, ACTIONS[11:])
    env.reset()
    twin.reset()
    assert env.unwrapped.layout == twin.unwrapped.layout


def test_same_seed_same_trajectory_in_a_fresh_process():
    code = (
        "import gymnasium as gym, numpy as np, concentration_env\n"
        "env = gym.make('Concentration-v0', matching='zebra')\n"
        "obs, _ = env.reset(seed=123)\n"
        "rng = np.random.default_rng(5)\n"
        "total = []\n"
        "for _ in range(300):\n"
        "    obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(obs['action_mask']))))\n"
        "    total.append(int(obs['cards'].sum()))\n"
        "    if term: break\n"
        "print([str(c) for c in env.unwrapped.layout], total)\n"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    ]
    assert runs[0] == runs[1] and len(runs[0]) > 100


@pytest.mark.parametrize(
    "text, message",
    [
        ("matching: [rank\n", "not valid YAML"),
        ("- rank\n", "expected a mapping"),
        ("colour: red\n", "unknown rule field.*'colour'"),
        ("packs: two\n", "packs='two'.*allowed"),
        ("layout: [3, 13]\n", "layout=.*allowed"),
    ],
)
def test_bad_yaml_rules_name_the_file_and_key(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as error:
        Rules.from_mapping(load_yaml_mapping(path), source=str(path))
    assert "bad.yaml" in str(error.value)

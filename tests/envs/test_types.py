"""Every env takes seeds, masks and counters of one kind: a bad seed is one clear error, and
info counters are plain Python ints with numba's JIT on or off."""

import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import concentration_env  # noqa: F401  (registers the envs)
from concentration_env.envs import duel, multiplayer

MAKERS = {
    "solitaire": lambda: gym.make("Concentration-v0", ranks=2),
    "vector": lambda: gym.make_vec("Concentration-v0", num_envs=2, vectorization_mode="vector_entry_point", ranks=2),
    "versus": lambda: gym.make("ConcentrationVs-v0", ranks=2),
    "multiplayer": lambda: multiplayer.env(ranks=2),
    "duel": lambda: duel.env(),
}


@pytest.mark.parametrize("kind", MAKERS)
@pytest.mark.parametrize("seed", [3.0, "12", True, -1, 2.5])
def test_a_bad_seed_is_one_value_error_naming_it(kind, seed):
    with pytest.raises(ValueError, match=rf"invalid seed={seed!r}.*allowed: None"):
        MAKERS[kind]().reset(seed=seed)


def _first_observation(env, seed):
    result = env.reset(seed=seed)
    observation = env.last()[0] if result is None else result[0]
    return observation["observation"] if "observation" in observation else observation


@pytest.mark.parametrize("kind", MAKERS)
def test_a_numpy_seed_plays_like_the_plain_int(kind):
    plain, given = _first_observation(MAKERS[kind](), 7), _first_observation(MAKERS[kind](), np.int64(7))
    for key, value in plain.items():
        np.testing.assert_array_equal(given[key], value, err_msg=key)


def test_a_vector_reset_mask_of_all_false_changes_nothing():
    env = MAKERS["vector"]()
    env.reset(seed=0)
    observation, *_ = env.step(np.array([0, 1]))
    again, info = env.reset(options={"reset_mask": np.zeros(2, dtype=bool)})
    for key, value in observation.items():
        np.testing.assert_array_equal(again[key], value, err_msg=key)
    assert "action_mask" not in info


GAME_WITHOUT_JIT = """
import json, gymnasium as gym, numpy as np, concentration_env
env = gym.make("Concentration-v0", ranks=1, max_mismatches=3)
observation, info = env.reset(seed=0)
infos, done = [info], False
while not done:
    observation, reward, done, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    infos.append(info)
counters = [{key: value for key, value in info.items() if key != "action_mask"} for info in infos]
print(json.dumps([[key, type(value).__name__] for info in counters for key, value in info.items()]))
"""


def test_info_counters_are_python_ints_without_the_jit():
    environ = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", GAME_WITHOUT_JIT], cwd=root, env=environ, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    types = dict(json.loads(result.stdout))
    assert types == {"mismatches": "int", "pairs": "int", "turns": "int", "matched": "bool", "won": "bool"}

"""The soak script's pickling round-trip: a faithful copy passes, a copy that drifts or
cannot be made is reported (the soak's own figures are not tested)."""

import importlib.util
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import concentration_env  # noqa: F401  (registers the ids)


@pytest.fixture(scope="module")
def soak():
    spec = importlib.util.spec_from_file_location("soak", Path("scripts/soak.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules["soak"] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    yield module
    del sys.modules["soak"]


class Counter:
    """A stand-in env whose pickled copy starts counting from ``restart``."""

    def __init__(self, restart=None):
        self.count, self.restart = 0, restart

    def step(self):
        self.count += 1
        return self.count

    def close(self):
        pass

    def __reduce__(self):
        if self.restart == "unpicklable":
            raise TypeError("no pickling here")
        return restored, (self.restart, self.count if self.restart is None else self.restart)


def restored(restart, count):
    counter = Counter(restart)
    counter.count = count
    return counter


def count_on(env, rng):
    return [env.step() for _ in range(3)]


def test_a_faithful_copy_passes_and_a_drifting_one_is_reported(soak):
    rng = np.random.default_rng(0)
    assert soak.twin_check(restored(None, 5), count_on, rng) == (None, [6, 7, 8])
    problem, played = soak.twin_check(restored(0, 5), count_on, rng)
    assert "continued differently" in problem and played == [6, 7, 8]
    problem, played = soak.twin_check(Counter(restart="unpicklable"), count_on, rng)
    assert problem.startswith("cannot pickle: TypeError") and played is None


def test_solitaire_and_vector_envs_survive_the_round_trip(soak):
    rng = np.random.default_rng(1)
    flips, problem = soak.soak_gym(gym.make("Concentration-Toddler-v0"), 60, rng)
    assert problem is None and flips == 60 + soak.TWIN_FLIPS
    steps, problem = soak.soak_vector("Concentration-Toddler-v0", 10, rng, num_envs=4)
    assert problem is None and steps == (10 + soak.TWIN_FLIPS) * 4

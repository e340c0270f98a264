"""The PettingZoo SB3 action-masking tutorial on this env (scripts/examples/sb3_action_mask.py):
MaskablePPO's default policy trains by self-play on the flat observation, saves and loads."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
from sb3_contrib import MaskablePPO

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "examples" / "sb3_action_mask.py"
TINY = {"ranks": 2, "num_players": 2}


@pytest.fixture(scope="module")
def tutorial():
    spec = importlib.util.spec_from_file_location("sb3_action_mask", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_wrapper_shows_the_mover_and_pays_the_seat_that_moved(tutorial):
    env = tutorial.masked_env(0, **TINY)
    raw = env.unwrapped  # through ActionMasker and SB3ActionMaskWrapper: the raw AEC env
    observation, _ = env.reset(seed=3)
    assert env.observation_space.shape == observation.shape and observation.dtype == np.float32
    rng, done = np.random.default_rng(0), False
    while not done:
        mover = raw.agent_selection
        mask = env.action_masks()
        assert mask.any() and mask.tolist() == raw.observe(mover)["action_mask"].astype(bool).tolist()
        before = raw.scores_by_name()[mover]
        observation, reward, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert reward == raw.scores_by_name()[mover] - before  # pairs reward: what the mover captured
        assert np.array_equal(observation, raw.observe(raw.agent_selection)["observation"])
        done = terminated or truncated
    assert raw.winner_names()


def test_trains_a_few_thousand_steps_then_saves_and_loads(tutorial, tmp_path):
    model = tutorial.train(3000, seed=0, **TINY)
    assert model.num_timesteps >= 3000
    model.save(tmp_path / "model")
    loaded = MaskablePPO.load(tmp_path / "model")
    env = tutorial.masked_env(1, **TINY)
    observation, _ = env.reset(seed=1)
    mask = env.action_masks()
    ours, _ = model.predict(observation, action_masks=mask, deterministic=True)
    theirs, _ = loaded.predict(observation, action_masks=mask, deterministic=True)
    assert ours == theirs and mask[int(ours)]
    winners = tutorial.play(loaded, 3, seed=0, **TINY)
    assert len(winners) == 3 and all(winners)
    assert "supersuit" not in sys.modules  # the flat layout needs no SuperSuit

"""Smoke test of an installed wheel, run from outside the source tree by a clean venv's
Python (``scripts/check_wheel.sh`` builds the wheel and the venv). It checks what a user of
``pip install concentration-env`` gets: the package and its data, every registered id under
Gymnasium's and PettingZoo's checkers, one game of every env, the typing marker and the
terminal game's entry point. Prints one line per check; exits 1 on the first failure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

import concentration_env
from concentration_env import concentration_v0, duel_v0
from concentration_env.envs.registration import solitaire_env_ids

SOURCE_TREE = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else None


def check(what: str, ok: bool) -> None:
    print(f"{'ok' if ok else 'FAILED'}: {what}")
    if not ok:
        sys.exit(1)


def play_out(env: gym.Env, seed: int) -> int:
    """Random legal flips until the game ends; returns the flips played."""
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for flips in range(1, 100_000):
        obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated or truncated:
            return flips
    raise RuntimeError("the game did not end")


def main() -> None:
    package = Path(concentration_env.__file__).resolve().parent
    check(f"imported from the install at {package}", SOURCE_TREE is None or SOURCE_TREE not in package.parents)
    check("py.typed ships", (package / "py.typed").is_file())
    check("presets ship", len(concentration_env.preset_names()) >= 10)
    for env_id in solitaire_env_ids():
        check_env(gym.make(env_id).unwrapped)
    check(f"check_env on {len(solitaire_env_ids())} solitaire ids", True)
    check_env(gym.make("ConcentrationVs-v0").unwrapped)
    check("check_env on ConcentrationVs-v0", True)
    api_test(concentration_v0.env(num_players=3, ranks=3), num_cycles=100)
    api_test(duel_v0.env(ranks=3), num_cycles=100)
    check("api_test on concentration_v0 and duel_v0", True)
    check("a solitaire game", play_out(gym.make("Concentration-v0"), 0) > 0)
    check("a game against greedy", play_out(gym.make("ConcentrationVs-v0", ranks=3, opponents="greedy"), 1) > 0)
    envs = gym.make_vec("Concentration-v0", num_envs=8, ranks=2)
    _, infos = envs.reset(seed=0)
    for _ in range(50):
        _, _, _, _, infos = envs.step(infos["action_mask"].argmax(axis=1))
    check("the native vector env steps", True)
    for env in (concentration_v0.env(num_players=2, ranks=2), duel_v0.env(ranks=2)):
        env.reset(seed=0)
        for agent in env.agent_iter(max_iter=10_000):
            obs, _, termination, truncation, _ = env.last()
            env.step(None if termination or truncation else env.action_space(agent).sample(obs["action_mask"]))
    check("an AEC game and a duel", True)
    play = Path(sys.executable).parent / "concentration-play"
    out = subprocess.run([str(play), "--help"], capture_output=True, text=True)
    check("concentration-play --help", out.returncode == 0 and "usage" in out.stdout)


if __name__ == "__main__":
    main()

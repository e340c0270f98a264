"""The README's main job: play a few seeded games of solitaire Concentration and report."""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np

import concentration_env  # noqa: F401  (registers the ids)


def play(env_id: str, games: int, seed: int) -> list[dict]:
    env = gym.make(env_id)
    rng = np.random.default_rng(seed)
    results = []
    for game in range(games):
        obs, info = env.reset(seed=seed + game)
        done = False
        while not done:
            action = rng.choice(np.flatnonzero(obs["action_mask"]))
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        results.append(info)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env", default="Concentration-v0")
    parser.add_argument("--games", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    results = play(args.env, args.games, args.seed)
    print(f"{args.env}: {args.games} games of random legal play")
    for game, info in enumerate(results):
        print(f"  game {game}: {info['turns']} turns, {info['mismatches']} unsuccessful pairs, won={info.get('won')}")
    print(f"mean turns: {np.mean([r['turns'] for r in results]):.1f}")


if __name__ == "__main__":
    main()

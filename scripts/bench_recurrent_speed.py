"""Training speed of the recurrent learners on the visible-mode config, measured in one run.

Times (wall clock, env steps per second, training included) sb3-contrib's ``RecurrentPPO``
with its defaults (``MlpLstmPolicy``, one env; the observation flattened to a Box because it
fails on MultiDiscrete observations with torch 2.13) and this package's recurrent PPO with
the shipped config (``--set`` overrides it, as in ``scripts/train.py``), each for the same
number of steps, alternating, and prints the ratio.

    python scripts/bench_recurrent_speed.py --steps 4096 --rounds 2
    python scripts/bench_recurrent_speed.py --set hyperparameters.env_batches=4
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import numpy as np  # noqa: E402

from concentration_env.training import load_config  # noqa: E402

CONFIG = ROOT / "configs/train/visible_recurrent.yaml"


def sb3_contrib_speed(config, steps: int) -> float:
    """Env steps/s of sb3-contrib RecurrentPPO (defaults) on the config's game."""
    import gymnasium as gym
    from sb3_contrib import RecurrentPPO as ContribRecurrentPPO

    env = gym.wrappers.FlattenObservation(
        gym.make("Concentration-v0", rules=config.resolved_rules, observation_mode=config.observation_mode)
    )
    model = ContribRecurrentPPO("MlpLstmPolicy", env, seed=config.seed, device="cpu", n_steps=min(128, steps))
    began = time.perf_counter()
    model.learn(steps)
    return steps / (time.perf_counter() - began)


def our_speed(config, steps: int) -> float:
    """Env steps/s of concentration_env's recurrent PPO with the shipped config."""
    from concentration_env.training.envs import make_vec_env
    from concentration_env.training.recurrent_run import build_agent

    rules = config.resolved_rules
    venv = make_vec_env(config, rules, config.num_envs, config.seed)
    agent = build_agent(config, rules, venv)
    began = time.perf_counter()
    agent.learn(steps)
    return agent.num_timesteps / (time.perf_counter() - began)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=4096)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--set", nargs="+", action="extend", default=[], metavar="KEY=VALUE", help="override keys of the shipped config"
    )
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    config = load_config(CONFIG, args.set)
    ours, theirs = [], []
    for round_ in range(args.rounds):
        theirs.append(sb3_contrib_speed(config, args.steps))
        ours.append(our_speed(config, args.steps))
        print(f"round {round_ + 1}: sb3-contrib RecurrentPPO {theirs[-1]:.1f} steps/s, ours {ours[-1]:.1f} steps/s")
    ratio = np.median(ours) / np.median(theirs)
    print(
        f"median: sb3-contrib {np.median(theirs):.1f} steps/s, ours {np.median(ours):.1f} steps/s, ratio {ratio:.1f}x"
    )


if __name__ == "__main__":
    main()

"""Sampling throughput of RLlib env runners on this game: env steps per second with 1, 2 and 4
runners (or ``--runners``), measured in one run on one Ray instance.

    python scripts/bench_rllib.py --config configs/rllib/duel_52_per_card.yaml --runners 1 2 4

For each runner count an algorithm is built from the config (its network, league and deck),
every runner samples once to warm up, then all sample ``--steps`` env steps each at the same
time, ``--repeats`` times; the line printed is total env steps over wall time (the best
repeat, and the mean). Only sampling is timed: no learner update runs. Sampling is
CPU-bound, so the figures stop growing once the runners outnumber the cores; on a cluster
each node brings its own cores. Needs the ``rllib`` extra.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

from concentration_env.integrations.rllib.config import RLlibConfig
from concentration_env.integrations.rllib.training import build_algorithm, require_ray

DEFAULT_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "rllib" / "duel_52_per_card.yaml"


def measure(config: RLlibConfig, runners: int, steps: int, repeats: int) -> dict:
    """Env steps per second of ``runners`` env runners sampling ``steps`` each at once."""
    import ray

    algorithm = build_algorithm(dataclasses.replace(config, num_env_runners=runners))
    try:
        group = algorithm.env_runner_group

        def sample(runner, count=steps):
            return sum(len(episode) for episode in runner.sample(num_timesteps=count, random_actions=False))

        group.foreach_env_runner(lambda runner: sample(runner, 200), local_env_runner=False)  # warm up
        rates = []
        for _ in range(repeats):
            start = time.perf_counter()
            counts = group.foreach_env_runner(sample, local_env_runner=False)
            rates.append(sum(counts) / (time.perf_counter() - start))
        return {
            "runners": runners,
            "best": max(rates),
            "mean": sum(rates) / len(rates),
            "cpus": ray.cluster_resources().get("CPU"),
        }
    finally:
        algorithm.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(DEFAULT_CONFIG), help="YAML run config")
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2, 4], help="env runner counts to measure")
    parser.add_argument("--steps", type=int, default=2000, help="env steps each runner samples per repeat")
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats per runner count")
    parser.add_argument("--address", default=None, help="Ray cluster to join (default: start a local Ray)")
    parser.add_argument("--out", default=None, help="also write the results as JSON here")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    args = parser.parse_args()
    try:
        config = RLlibConfig.from_yaml(args.config, args.set)
        if min(args.runners) < 1 or args.steps < 1 or args.repeats < 1:
            raise ValueError("--runners, --steps and --repeats must be at least 1")
    except (OSError, ValueError) as error:
        print(f"bench_rllib: {error}", file=sys.stderr)
        sys.exit(2)
    require_ray()
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # logical CPUs: every runner gets its slot even where the machine has fewer cores
    ray.init(address=args.address, num_cpus=None if args.address else max(args.runners) + 1, include_dashboard=False)
    try:
        results = [measure(config, runners, args.steps, args.repeats) for runners in args.runners]
    finally:
        ray.shutdown()
    cores = os.cpu_count()
    print(f"network {config.network}, {config.game_rules().num_cards} cards, {cores} cores on this machine")
    for row in results:
        print(
            f"{row['runners']} env runners: {row['best']:.0f} env steps/s (best of {args.repeats}; mean {row['mean']:.0f})"
        )
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(
                {"config": args.config, "cores": cores, "steps": args.steps, "results": results}, handle, indent=2
            )


if __name__ == "__main__":
    main()

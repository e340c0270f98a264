"""Train the multi-player game with RLlib (PPO with action masking) on Ray, with checkpoints.

    python scripts/train_rllib.py --config configs/rllib/concentration_2p.yaml
    python scripts/train_rllib.py --config configs/rllib/concentration_2p.yaml --address ray://head:10001
    python scripts/train_rllib.py --config configs/rllib/concentration_2p.yaml --resume

Without ``--address`` a local Ray instance is started; with it the same run joins an existing
cluster (``auto``, ``ray://host:port`` or ``host:port``), and ``num_env_runners`` in the config
spreads sampling over its nodes. ``checkpoint_every`` in the config saves numbered checkpoints
under ``checkpoint_dir``; ``--resume`` continues from the newest one (the iteration count goes
on from there up to ``iterations``). A failed env runner is restarted (``max_env_runner_restarts``);
each iteration's line says how many have been. Needs the ``rllib`` extra: ``pip install -e ".[rllib]"``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

from concentration_env.integrations.rllib.config import RLlibConfig
from concentration_env.integrations.rllib.training import require_ray, train


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True, help="YAML run config (see configs/rllib/)")
    parser.add_argument("--address", default=None, help="Ray cluster to join (default: start a local Ray)")
    parser.add_argument("--checkpoint-dir", default=None, help="override the config's checkpoint_dir")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    parser.add_argument("--resume", action="store_true", help="continue from the newest checkpoint of checkpoint_dir")
    parser.add_argument("--num-cpus", type=int, default=None, help="CPUs of a local Ray (default: all)")
    args = parser.parse_args()

    try:
        config = RLlibConfig.from_yaml(args.config, args.set)
        if args.checkpoint_dir:
            config = dataclasses.replace(config, checkpoint_dir=args.checkpoint_dir)
    except (OSError, ValueError) as error:
        print(f"train_rllib: {error}", file=sys.stderr)
        sys.exit(2)
    require_ray()
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(address=args.address, num_cpus=args.num_cpus, include_dashboard=False)
    try:
        print(f"network {config.network} (tier {config.tier}), {config.num_players} players", flush=True)
        path = train(config, resume=args.resume, log=lambda line: print(line, flush=True))
        print(f"final checkpoint: {path}")
    except ValueError as error:
        print(f"train_rllib: {error}", file=sys.stderr)
        sys.exit(2)
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()

"""Train the multi-player game with RLlib (PPO with action masking) on Ray, and save a checkpoint.

    python scripts/train_rllib.py --config configs/rllib/concentration_2p.yaml
    python scripts/train_rllib.py --config configs/rllib/concentration_2p.yaml --address ray://head:10001

Without ``--address`` a local Ray instance is started; with it the same run joins an existing
cluster (``auto``, ``ray://host:port`` or ``host:port``), and ``num_env_runners`` in the config
spreads sampling over its nodes. Needs the ``rllib`` extra: ``pip install -e ".[rllib]"``.
"""

from __future__ import annotations

import argparse
import time

from concentration_env.integrations.rllib import (
    RLlibConfig,
    build_algorithm,
    episode_stats,
    require_ray,
    save_checkpoint,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True, help="YAML run config (see configs/rllib/)")
    parser.add_argument("--address", default=None, help="Ray cluster to join (default: start a local Ray)")
    parser.add_argument("--checkpoint-dir", default=None, help="override the config's checkpoint_dir")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key")
    args = parser.parse_args()

    config = RLlibConfig.from_yaml(args.config, args.set)
    require_ray()
    import ray

    ray.init(address=args.address, include_dashboard=False)
    try:
        algorithm = build_algorithm(config)
        start = time.perf_counter()
        for iteration in range(1, config.iterations + 1):
            stats = episode_stats(algorithm.train())
            shown = "  ".join(f"{key}={value:.3g}" for key, value in stats.items())
            print(
                f"iteration {iteration}/{config.iterations} ({time.perf_counter() - start:.0f}s): {shown}", flush=True
            )
        path = save_checkpoint(algorithm, config, args.checkpoint_dir)
        print(f"checkpoint: {path}")
        algorithm.stop()
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()

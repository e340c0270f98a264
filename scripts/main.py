"""The README's main job: train a short solitaire run, then benchmark it next to the committed
models and every baseline on the same seeded deals, and print the table."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from concentration_env.training import load_config, train  # noqa: E402
from concentration_env.training.benchmark import load_benchmark_config, run_benchmark  # noqa: E402

TRAIN_CONFIG = ROOT / "configs/train/solitaire_ppo.yaml"
BENCHMARK_CONFIG = ROOT / "configs/benchmark/headline.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timesteps", type=int, default=10_000, help="length of the short training run")
    parser.add_argument("--games", type=int, default=300, help="games per benchmark row")
    args = parser.parse_args()
    print(f"1/2 training {TRAIN_CONFIG.name} for {args.timesteps} steps (the committed model had the full run)")
    config = load_config(
        TRAIN_CONFIG,
        [
            f"total_timesteps={args.timesteps}",
            f"eval_freq={args.timesteps // 2}",
            "eval_episodes=20",
            f"checkpoint_freq={args.timesteps}",
        ],
    )
    run_dir = train(config, "main-solitaire")
    print(f"   run folder: {run_dir}")
    print(f"2/2 benchmarking ({args.games} games per row)")
    bench = load_benchmark_config(BENCHMARK_CONFIG, {"games": args.games, "output": str(run_dir / "benchmark")})
    bench["solitaire"][0]["models"] = [*bench["solitaire"][0]["models"], str(run_dir)]
    text, output = run_benchmark(bench)
    print(text)
    print(f"tables and charts: {output}")


if __name__ == "__main__":
    main()

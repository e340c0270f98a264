"""Benchmark saved models and baselines: ``python scripts/benchmark.py --config configs/benchmark/headline.yaml``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from concentration_env.training.cli import benchmark_main

if __name__ == "__main__":
    sys.exit(benchmark_main())

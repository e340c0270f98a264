"""Train an agent from a config: ``python scripts/train.py --config configs/train/solitaire_ppo.yaml``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from concentration_env.training.cli import train_main

if __name__ == "__main__":
    sys.exit(train_main())

"""Round-robin crosstable of saved agents and baselines, with Bradley-Terry ratings.

Example::

    python scripts/crosstable.py --agents models/duel2p_ppo --baselines greedy safe_first optimal random \\
        --players 2 --games 1000 --out benchmarks/crosstable

Writes crosstable.md, crosstable.json and crosstable.png into ``--out``
(:mod:`concentration_env.training.crosstable`).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from concentration_env.training.crosstable_report import main

if __name__ == "__main__":
    sys.exit(main())

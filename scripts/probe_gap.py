"""Where an agent's gap to the exact two-player optimum lies.

Example::

    python scripts/probe_gap.py models/league_2p_counts --games 500

Prints a Markdown table: the agent against the optimum with the optimum deciding none, the
first, the second or both flips of its turns (:mod:`concentration_env.training.decisions`).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from concentration_env.training.decisions import gap_main

if __name__ == "__main__":
    sys.exit(gap_main())

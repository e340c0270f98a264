"""How often an agent's second flips agree with the exact two-player optimum's.

Example::

    python scripts/probe_decisions.py models/league_2p_counts --games 500

Prints a Markdown table by the parity of the unseen pairs and the lone known cards
(:mod:`concentration_env.training.decisions`).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from concentration_env.training.decisions import main

if __name__ == "__main__":
    sys.exit(main())

"""How often a solitaire agent turns a partner it has seen, by how many faces it must remember.

Example::

    python scripts/probe_recall.py models/suite/visible_standard52/raw_max_memory/seed0 --games 200

Prints a Markdown table by the number of cards of known face on the table
(:mod:`concentration_env.training.recall`).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from concentration_env.training.recall import main

if __name__ == "__main__":
    sys.exit(main())

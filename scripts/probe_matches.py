"""Which solitaire flips of an agent differ from exact optimal play, by situation and by face.

Example::

    python scripts/probe_matches.py models/suite/memory_rank52/raw_attention/seed0 --set matching=rank

Prints a Markdown table of the agent's first and second flips by situation beside the exact
optimum's, and the faces whose known match it leaves on the table
(:mod:`concentration_env.training.match_probe`).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from concentration_env.training.match_probe import main

if __name__ == "__main__":
    sys.exit(main())

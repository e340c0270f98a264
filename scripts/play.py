"""Play Concentration in the terminal against bots, or solitaire (same as ``concentration-play``)."""

import sys

from concentration_env.play.terminal import main

if __name__ == "__main__":
    sys.exit(main())

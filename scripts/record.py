"""Record a game between chosen policies as an animated GIF.

    python scripts/record.py --rules toddler --policies random random --out game.gif
    python scripts/record.py --policies greedy --table-shape circle --seed 3 --out solitaire.gif

One policy plays solitaire; two or more play the multi-player game, one seat each. A policy
is a baseline name (``baselines.make_policy``) or a saved model's ``.zip`` path.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from concentration_env.game.checks import check_int
from concentration_env.game.rules import preset_names
from concentration_env.game.seats import SEED_RANGE
from concentration_env.play.gif import DEFAULT_GIF_FPS, MAX_GIF_FPS, record_gif
from concentration_env.play.terminal import build_rules
from concentration_env.render.shapes import TABLE_SHAPES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rules", default="standard", help=f"rule preset: {', '.join(preset_names())}")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="override a rule field")
    parser.add_argument("--policies", nargs="+", default=["random"], help="one policy per seat")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--table-shape", choices=TABLE_SHAPES, default="grid")
    parser.add_argument("--fps", type=int, default=DEFAULT_GIF_FPS)
    parser.add_argument("--max-flips", type=int, default=None, help="stop after this many flips")
    parser.add_argument("--out", default="game.gif")
    args = parser.parse_args(argv)
    out = Path(args.out)
    try:
        check_int("--seed", args.seed, 0, SEED_RANGE - 1)
        check_int("--fps", args.fps, 1, MAX_GIF_FPS)
        if out.suffix.lower() != ".gif" or not out.parent.is_dir():
            raise ValueError(f"--out {args.out!r}: expected a .gif file in an existing folder")
        rules = build_rules(args.rules, args.set, len(args.policies))
        result, frames = record_gif(
            rules,
            args.policies,
            out,
            seed=args.seed,
            table_shape=args.table_shape,
            fps=args.fps,
            max_flips=args.max_flips,
        )
    except ValueError as error:
        print(f"record.py: error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {frames} frames; {result.summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

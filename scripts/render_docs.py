"""Draw the picture of a table on docs/rendering.md: a seeded game between bots, stopped just after a
missed pair so that two cards lie face up.

    python scripts/render_docs.py            # writes docs/board.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from PIL import Image

from concentration_env.envs.opponents import resolve_policy
from concentration_env.game.rules import Rules
from concentration_env.play.seated import SeatedGame

ROOT = Path(__file__).resolve().parents[1]


def seeded_frame(preset: str, policies: list[str], seed: int, flips: int, table_shape: str) -> np.ndarray:
    """The table after at least ``flips`` flips, at the first missed pair after that."""
    rules = Rules.from_preset(preset, num_players=len(policies))
    bots = [resolve_policy(name, rules) for name in policies]
    for seat, bot in enumerate(bots):
        bot.reset(seed=seed + seat)
    match = SeatedGame(rules, "rgb_array", table_shape=table_shape, seed=seed)
    done = 0
    while not match.over:
        flip = match.flip(int(bots[match.to_move].act(*match.observe())))
        done += 1
        if done >= flips and flip.ends_turn and not flip.matched:
            break
    return match.render()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="jokers")
    parser.add_argument("--policies", nargs="+", default=["greedy", "greedy"], help="one bot per seat")
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--flips", type=int, default=40)
    parser.add_argument("--table-shape", default="grid")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "board.png")
    args = parser.parse_args()
    frame = seeded_frame(args.preset, args.policies, args.seed, args.flips, args.table_shape)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(frame).save(args.out, optimize=True)
    print(f"wrote {args.out} ({frame.shape[1]} x {frame.shape[0]})")


if __name__ == "__main__":
    main()

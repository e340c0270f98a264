"""Evaluate an RLlib checkpoint with the baselines' harness: win share (ties count half) and
pair margin against each opponent, the agent in both seats on the same deals, 95% intervals.

    python scripts/eval_rllib.py runs/rllib/duel_52_per_card --opponents greedy optimal --games 1000

``--games`` deals per seat, seeded from ``--seed`` (default 1,000,000, the suite's unseen
evaluation deals); the checkpoint plays its most likely flip (``--explore`` samples), and a
game stops at the training layer's turn cap. Two-player checkpoints only. Needs the ``rllib``
extra (the policy is loaded without starting Ray).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from concentration_env.envs.opponents import resolve_policy
from concentration_env.integrations.rllib.policy import RLlibPolicy
from concentration_env.training.evaluation import duel_stats, training_cap

EVAL_SEED = 1_000_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", help="a checkpoint folder or a run's checkpoint_dir (its newest checkpoint)")
    parser.add_argument("--opponents", nargs="+", default=["greedy", "optimal"], help="baselines to play")
    parser.add_argument("--games", type=int, default=1000, help="deals per seat")
    parser.add_argument("--seed", type=int, default=EVAL_SEED, help="first deal's seed")
    parser.add_argument("--explore", action="store_true", help="sample flips instead of the most likely one")
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args()
    try:
        if args.games < 1:
            raise ValueError(f"invalid --games={args.games}; allowed: an int >= 1")
        policy = RLlibPolicy(args.checkpoint, explore=args.explore)
        if policy.rules.num_players != 2:
            raise ValueError(f"{args.checkpoint}: {policy.rules.num_players} players; allowed: a two-player checkpoint")
        opponents = [resolve_policy(name, policy.rules) for name in args.opponents]
    except (OSError, ValueError) as error:
        print(f"eval_rllib: {error}", file=sys.stderr)
        sys.exit(2)
    rows = []
    for name, opponent in zip(args.opponents, opponents):
        start = time.perf_counter()
        stats = duel_stats(policy.rules, policy, opponent, args.games, args.seed, training_cap(policy.rules))
        stats.update(opponent=name, seconds=round(time.perf_counter() - start, 1), tier=policy.tier)
        rows.append(stats)
        print(
            f"{policy.name} ({policy.tier}) vs {name}: win {stats['win']:.3f} ± {stats['win_ci95']:.3f} "
            f"(first {stats['win_first']:.3f}, second {stats['win_second']:.3f}), "
            f"margin {stats['margin']:+.2f} ± {stats['margin_ci95']:.2f}, {stats['games']} games, "
            f"capped {stats['capped']}, stalled {stats['stalled']}",
            flush=True,
        )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"checkpoint": str(args.checkpoint), "seed": args.seed, "rows": rows}, handle, indent=2)


if __name__ == "__main__":
    main()

"""Evaluate baseline policies on any rules: seeded games, 95% intervals, exact DP values.

Examples::

    python scripts/evaluate.py --policies greedy optimal --games 10000
    python scripts/evaluate.py --rules zebra --policies optimal --games 2000 --json out.json
    python scripts/evaluate.py --players 2 --policies optimal greedy --games 5000
    python scripts/evaluate.py --set matching=rank --set ranks=5 --policies forgetful --capacity 4

Solitaire evaluates each listed policy on its own; with ``--players N`` the N listed
policies take the seats in order (seat 0 moves first).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from baselines.evaluate import evaluate, table
from baselines.policies import POLICIES
from concentration_env.game.checks import check_int
from concentration_env.game.overrides import apply_overrides
from concentration_env.game.rules import resolve_rules
from concentration_env.game.seats import SEED_RANGE


def usage_error(message: str) -> NoReturn:
    """Stop with one line on stderr and exit status 2, as for bad arguments."""
    print(f"evaluate.py: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def parse_fields(pairs: list[str]) -> dict:
    """``field=value`` strings into rule fields (values read as YAML: 2, true, [4, 13])."""
    try:
        return apply_overrides({}, pairs, form="FIELD=VALUE, e.g. --set matching=zebra")
    except ValueError as error:
        usage_error(str(error))


def check_arguments(args: argparse.Namespace) -> None:
    """The numbers and the output path, before any game is played."""
    try:
        check_int("--games", args.games, 1)
        check_int("--seed", args.seed, 0, SEED_RANGE - 1)
    except ValueError as error:
        usage_error(str(error))
    if args.json is not None and (args.json.is_dir() or not args.json.parent.is_dir()):
        usage_error(f"--json {str(args.json)!r}: not a file in an existing folder")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rules", default=None, help="a preset name (default: the standard game)")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="override a rule field")
    parser.add_argument("--players", type=int, default=None, help="number of seats (overrides the rules)")
    parser.add_argument("--policies", nargs="+", default=["greedy", "optimal"], choices=sorted(POLICIES))
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--capacity", type=int, default=8, help="forgetful: cards remembered")
    parser.add_argument("--forget", type=float, default=0.1, help="forgetful: chance to forget a card per turn")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the numbers as JSON")
    args = parser.parse_args(argv)
    check_arguments(args)
    fields = parse_fields(args.set)
    if args.players is not None:
        fields["num_players"] = args.players
    try:
        rules = resolve_rules(args.rules, **fields)
    except ValueError as error:
        usage_error(str(error))
    kwargs = {"forgetful": {"capacity": args.capacity, "forget": args.forget}}
    if rules.num_players == 1:
        lineups = [[name] for name in args.policies]
    elif len(args.policies) == rules.num_players:
        lineups = [args.policies]
    else:
        usage_error(f"{rules.num_players} seats need {rules.num_players} --policies, got {len(args.policies)}")

    results = []
    for lineup in lineups:
        start, cpu = time.perf_counter(), time.process_time()
        try:
            results.append(evaluate(rules, lineup, args.games, args.seed, **kwargs))
        except ValueError as error:
            usage_error(f"{' vs '.join(lineup)}: {error}")
        results[-1].summary["seconds"] = round(time.perf_counter() - start, 2)
        results[-1].summary["cpu_seconds"] = round(time.process_time() - cpu, 2)
    print(f"rules: {rules}")
    print(table(results))
    if args.json is not None:
        args.json.write_text(json.dumps([r.to_dict() for r in results], indent=2))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()

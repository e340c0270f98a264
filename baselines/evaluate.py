"""Evaluation harness: play policies on any rules for many seeded games, batched on the core.

Games are dealt exactly as the envs deal them (game ``g`` is ``core.deal`` with
``np.random.default_rng(seed + g)``, which is what ``env.reset(seed=seed + g)`` does), and
stepped together with :func:`concentration_env.game.core.step`; every seat's policy watches every
flip (perfect-memory observations, as in ``observation_mode="memory"``) and acts through
``act_batch``. Results come with 95% confidence intervals and, where the dynamic programme
of :mod:`baselines.optimal` covers the game and the policy, the exact expectation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from baselines import optimal
from baselines.policies import BaselinePolicy, make_policy
from concentration_env.game import core
from concentration_env.game.rules import Rules
from concentration_env.game.scoring import scores_seen_by

Z95 = 1.959963984540054  # two-sided 95% normal quantile
COMPACT_BELOW = 2  # drop finished games from the batch once fewer than 1 / this of it runs
TURNS_PER_CARD_CAP = 50  # a game still running after this many turns per card is stopped


@dataclass
class Estimate:
    """A sample mean with its 95% confidence half-width and, where known, the exact value."""

    mean: float
    ci95: float
    exact: float | None = None

    def __str__(self) -> str:
        text = f"{self.mean:.3f} ± {self.ci95:.3f}"
        return text + (f" (exact {self.exact:.4f})" if self.exact is not None else "")


def estimate(samples: np.ndarray, exact: float | None = None) -> Estimate:
    """Mean and 95% normal confidence half-width of ``samples``."""
    samples = np.asarray(samples, dtype=float)
    spread = samples.std(ddof=1) if len(samples) > 1 else 0.0
    return Estimate(float(samples.mean()), float(Z95 * spread / math.sqrt(len(samples))), exact)


@dataclass
class Results:
    """What a batch of games produced, per game, and its summary."""

    rules: Rules
    policies: tuple[str, ...]
    seed: int
    turns: np.ndarray  # (G,) completed turns (moves)
    mismatches: np.ndarray  # (G,) unsuccessful pairs
    scores: np.ndarray  # (G, P) points per seat
    cleared: np.ndarray  # (G,) every card captured
    stalled: np.ndarray  # (G,) stopped unfinished: every seat passed in turn, or the turn cap
    summary: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The summary as plain JSON-ready values."""
        return {
            "rules": asdict(self.rules),
            "policies": list(self.policies),
            "games": len(self.turns),
            "seed": self.seed,
            "summary": {
                key: asdict(value) if isinstance(value, Estimate) else value for key, value in self.summary.items()
            },
        }


def play(
    rules: Rules, policies: Sequence[BaselinePolicy], games: int, seed: int = 0, max_turns: int | None = None
) -> Results:
    """Play ``games`` games of ``rules``, seat ``p`` played by ``policies[p]``, seeds
    ``seed .. seed + games - 1``; returns per-game results (no summary)."""
    if games < 1:
        raise ValueError(f"invalid games={games}; allowed: an int >= 1")
    game = core.compile_rules(rules)
    seeds = [seed + g for g in range(games)]
    faces = np.stack([core.deal(game, np.random.default_rng(s)) for s in seeds])
    return play_deals(rules, policies, faces, seeds, max_turns)


def play_deals(
    rules: Rules,
    policies: Sequence[BaselinePolicy],
    faces: np.ndarray,
    seeds: Sequence[int],
    max_turns: int | None = None,
) -> Results:
    """Play the given deals ``faces`` (G, n) to the end, game ``g`` with policy seeds from ``seeds[g]``."""
    game = core.compile_rules(rules)
    if len(policies) != rules.num_players:
        raise ValueError(f"{len(policies)} policies for {rules.num_players} seat(s); give one policy per seat")
    games = len(faces)
    final = core.new_state(game, faces)  # every game's record; `state` holds the running ones
    state, rows = final.copy(), np.arange(games)
    for seat, policy in enumerate(policies):
        # Each seat gets its own stream of randomness for the same deal.
        policy.reset_batch([s * rules.num_players + seat for s in seeds])
    cap = max_turns if max_turns is not None else TURNS_PER_CARD_CAP * game.num_cards
    actions = np.zeros(games, dtype=np.int64)
    # A turn that captures nothing and shows nothing new is a pass; once every seat has
    # passed in a row the position repeats forever (both refusing to reveal): stop there,
    # the remaining pairs shared, as the DP scores it.
    passes = np.zeros(games, dtype=np.int64)
    seen_at_turn_start = state.seen.sum(axis=1)
    while True:
        state.done |= (state.turns >= cap) | ((passes >= rules.num_players) & (rules.num_players > 1))
        running = ~state.done
        if not running.any():
            break
        if running.sum() * COMPACT_BELOW < len(rows):
            # Most games are over: step only the running ones (long games set the pace).
            final.assign(state, rows)
            state = core.State(**{f.name: getattr(state, f.name)[running] for f in fields(state)})
            rows, actions, passes, seen_at_turn_start = (
                a[running] for a in (rows, actions, passes, seen_at_turn_start)
            )
            for policy in policies:
                policy.keep(running)
        observation = core.observe(game, state, memory=True)
        if rules.num_players > 1:  # as the multi-player envs show it to the seat to move
            observation["scores"] = scores_seen_by(state.scores, state.player)
        for seat, policy in enumerate(policies):
            chosen = policy.act_batch(observation)
            actions = np.where(state.player == seat, chosen, actions)
        outcome = core.step(game, state, actions)
        seen = state.seen.sum(axis=1)
        ended_turn = outcome.turn_ended
        passed = ended_turn & outcome.missed & (seen == seen_at_turn_start)
        passes = np.where(ended_turn, np.where(passed, passes + 1, 0), passes)
        seen_at_turn_start = np.where(ended_turn, seen, seen_at_turn_start)
    final.assign(state, rows)
    stalled = ~core.cleared(final) & ~_chips_lost(rules, final)
    return Results(
        rules,
        tuple(p.name for p in policies),
        int(seeds[0]),
        final.turns.copy(),
        final.mismatches.copy(),
        final.scores.copy(),
        core.cleared(final),
        stalled,
    )


def _chips_lost(rules: Rules, state: core.State) -> np.ndarray:
    if rules.max_mismatches is None:
        return np.zeros(state.batch_size, dtype=bool)
    return state.mismatches >= rules.max_mismatches


def exact_value(rules: Rules, names: Sequence[str]):
    """The DP's expectation for these policies on these rules, or None where it has none:
    solitaire expected moves, or the first seat's expected pair margin when both seats play
    the same DP-modelled strategy."""
    if len(set(names)) != 1 or names[0] not in optimal.STRATEGIES or rules.max_mismatches is not None:
        return None
    try:
        if rules.num_players == 1:
            return float(optimal.expected_moves(rules, names[0]))
        return float(optimal.expected_pair_difference(rules, names[0]))
    except ValueError:
        return None


def summarise(results: Results) -> Results:
    """Fill ``results.summary``: moves, unsuccessful pairs, wins, per-seat points and margins."""
    rules, summary = results.rules, {}
    exact = exact_value(rules, results.policies)
    if rules.num_players == 1:
        summary["moves"] = estimate(results.turns, exact)
        summary["unsuccessful_pairs"] = estimate(results.mismatches, None if exact is None else exact - rules.num_pairs)
        summary["win_rate"] = estimate(results.cleared)
    else:
        summary["unsuccessful_pairs"] = estimate(results.mismatches)
        scores = results.scores
        best = scores.max(axis=1, keepdims=True)
        sole = (scores == best) & ((scores == best).sum(axis=1, keepdims=True) == 1)
        for seat, name in enumerate(results.policies):
            summary[f"seat{seat}_{name}_points"] = estimate(scores[:, seat])
            summary[f"seat{seat}_{name}_win_rate"] = estimate(sole[:, seat])
        if rules.num_players == 2:
            summary["margin_seat0_minus_seat1"] = estimate(scores[:, 0] - scores[:, 1], exact)
        summary["stalled_games"] = int(results.stalled.sum())
    results.summary = summary
    return results


def evaluate(rules: Rules, names: Sequence[str], games: int, seed: int = 0, **policy_kwargs) -> Results:
    """Build the named policies (one per seat) and play and summarise ``games`` games."""
    policies = [make_policy(name, rules, **policy_kwargs.get(name, {})) for name in names]
    return summarise(play(rules, policies, games, seed))


def table(results: Sequence[Results]) -> str:
    """A plain-text table of summaries, one block per evaluation."""
    lines = []
    for result in results:
        lines.append(f"{' vs '.join(result.policies)}  ({len(result.turns)} games, seed {result.seed})")
        for key, value in result.summary.items():
            lines.append(f"  {key:<34} {value}")
    return "\n".join(lines)

"""Evaluation harness: play policies on any rules for many seeded games, batched on the core.

Games are dealt exactly as the envs deal them (game ``g`` is ``core.deal`` with
``np.random.default_rng(seed + g)``, which is what ``env.reset(seed=seed + g)`` does), and
stepped together with :func:`concentration_env.game.core.step`; every seat's policy watches every
flip (perfect-memory observations, as in ``observation_mode="memory"``) and acts through
``act_batch``. Results come with 95% confidence intervals and, where the dynamic programme
of :mod:`baselines.optimal` covers the game and the policy, the exact expectation.

Games that do not finish are told apart from those that do:

- *stalled*: every seat passed in a row (a turn that captures nothing and shows nothing new)
  and every seat is played by a stationary policy (``stationary = True``: greedy, safe_first,
  optimal; see :func:`concentration_env.game.policy.is_stationary`), so the position would
  repeat forever. Two
  optimal players do this on purpose where every other move loses; the game is scored as it
  stands, i.e. the remaining pairs shared, as the DP scores it. Random or forgetful players
  who pass in a row have not stalled: they may flip differently next time.
- *capped*: still running after ``max_turns`` turns (default
  :data:`concentration_env.game.seats.TURNS_PER_CARD_CAP`
  turns per card). The summary leaves capped games out of every figure and counts them.
  A lone stationary player who misses the same pair twice running, seeing nothing new (a
  deterministic model stuck on one missed pair, say), would repeat that turn until the cap,
  so the harness books those turns and misses at once: the result is the same, minus the wait.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Protocol

import numpy as np

from baselines import optimal
from baselines.policies import make_policy
from concentration_env.game import core
from concentration_env.game.passes import Passes
from concentration_env.game.policy import is_stationary
from concentration_env.game.rules import Rules
from concentration_env.game.scoring import scores_seen_by
from concentration_env.game.seats import turn_cap

Z95 = 1.959963984540054  # two-sided 95% normal quantile
COMPACT_BELOW = 2  # drop finished games from the batch once fewer than 1 / this of it runs


class HarnessPolicy(Protocol):
    """What :func:`play` needs of each seat's player (the baselines and saved models offer it)."""

    name: str

    def reset_batch(self, seeds: Sequence[int | None]) -> None: ...

    def keep(self, rows: np.ndarray) -> None: ...

    def act_batch(self, observations: Mapping[str, np.ndarray]) -> np.ndarray: ...


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
    stalled: np.ndarray  # (G,) stopped in a position that stationary players repeat forever
    capped: np.ndarray  # (G,) stopped unfinished at the turn cap
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


def seed_range(games: int, seed: int) -> list[int]:
    """The deal seeds ``seed .. seed + games - 1``; ValueError for ``games < 1``."""
    if games < 1:
        raise ValueError(f"invalid games={games}; allowed: an int >= 1")
    return [seed + g for g in range(games)]


def seeded_games(rules: Rules, games: int, seed: int, *policies) -> tuple[core.Game, core.State]:
    """The compiled game and a batch of ``games`` fresh games dealt from seeds ``seed ..``, with
    each of ``policies`` reset for them (the probes' shared start); ValueError for ``games < 1``."""
    seeds = seed_range(games, seed)
    game = core.compile_rules(rules)
    for policy in policies:
        policy.reset_batch(seeds)
    return game, core.new_state(game, core.deal_seeded(game, seeds))


def play(
    rules: Rules, policies: Sequence[HarnessPolicy], games: int, seed: int = 0, max_turns: int | None = None
) -> Results:
    """Play ``games`` games of ``rules``, seat ``p`` played by ``policies[p]``, seeds
    ``seed .. seed + games - 1``, each stopped once stalled or after ``max_turns`` turns (see
    the module docstring); returns per-game results (no summary)."""
    seeds = seed_range(games, seed)
    game = core.compile_rules(rules)
    faces = core.deal_seeded(game, seeds)
    return play_deals(rules, policies, faces, seeds, max_turns)


def play_deals(
    rules: Rules,
    policies: Sequence[HarnessPolicy],
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
    cap = turn_cap(game.num_cards, max_turns)
    actions = np.zeros(games, dtype=np.int64)
    # Once every seat has passed in a row (concentration_env.game.passes) the position is
    # back where it was; players who repeat themselves would go round forever, so the game
    # stops there (scored as the DP scores it).
    stationary = all(is_stationary(policy) for policy in policies)
    can_stall = rules.num_players > 1 and stationary
    stall_after = rules.num_players if can_stall else np.iinfo(np.int64).max
    # Alone, such a player who misses the same pair twice running, seeing nothing new, starts
    # its next turn from the same observation as the last one (that pair face up): it will
    # repeat the turn until the cap (a chip limit would end it sooner).
    loops_to_cap = rules.num_players == 1 and stationary and rules.max_mismatches is None
    last_pair = np.full((games, 2), core.NONE, dtype=state.shown.dtype)
    passes = Passes(games)
    passes.start(rows, state)
    while True:
        state.done |= (state.turns >= cap) | (passes.in_a_row >= stall_after)
        running = ~state.done
        if not running.any():
            break
        if running.sum() * COMPACT_BELOW < len(rows):
            # Most games are over: step only the running ones (long games set the pace).
            final.assign(state, rows)
            state = core.State(**{f.name: getattr(state, f.name)[running] for f in fields(state)})
            rows, actions, last_pair = (a[running] for a in (rows, actions, last_pair))
            passes.keep(running)
            for policy in policies:
                policy.keep(running)
        observation = core.observe(game, state, memory=True)
        if rules.num_players > 1:  # as the multi-player envs show it to the seat to move
            observation["scores"] = scores_seen_by(state.scores, state.player)
        for seat, policy in enumerate(policies):
            chosen = policy.act_batch(observation)
            actions = np.where(state.player == seat, chosen, actions)
        outcome = core.step(game, state, actions)
        passed = passes.note(state, outcome)
        if loops_to_cap:
            pair = np.sort(state.shown, axis=1)
            left = np.where(passed & (pair == last_pair).all(axis=1), cap - state.turns, 0)
            state.mismatches += left.astype(state.mismatches.dtype)
            state.turns += left.astype(state.turns.dtype)
            last_pair = np.where(outcome.turn_ended[:, None], pair, last_pair)
    final.assign(state, rows)
    unfinished = ~core.cleared(final) & ~_chips_lost(rules, final)
    capped = unfinished & (final.turns >= cap)
    return Results(
        rules,
        tuple(p.name for p in policies),
        int(seeds[0]),
        final.turns.copy(),
        final.mismatches.copy(),
        final.scores.copy(),
        core.cleared(final),
        unfinished & ~capped,
        capped,
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
    """Fill ``results.summary``: moves, unsuccessful pairs, wins, per-seat points and margins
    over the games that were not capped, and how many games stalled or were capped."""
    summary: dict[str, Estimate | int]
    rules, summary = results.rules, {}
    exact = exact_value(rules, results.policies)
    scored = ~results.capped
    summary["games_scored"] = int(scored.sum())
    summary["capped_games"] = int(results.capped.sum())
    if rules.num_players > 1:
        summary["stalled_games"] = int(results.stalled.sum())
    results.summary = summary
    if not scored.any():
        return results  # nothing to estimate: every game ran into the cap
    if rules.num_players == 1:
        summary["moves"] = estimate(results.turns[scored], exact)
        unsuccessful = None if exact is None else exact - rules.num_pairs
        summary["unsuccessful_pairs"] = estimate(results.mismatches[scored], unsuccessful)
        summary["win_rate"] = estimate(results.cleared[scored])
    else:
        summary["unsuccessful_pairs"] = estimate(results.mismatches[scored])
        scores = results.scores[scored]
        best = scores.max(axis=1, keepdims=True)
        sole = (scores == best) & ((scores == best).sum(axis=1, keepdims=True) == 1)
        for seat, name in enumerate(results.policies):
            summary[f"seat{seat}_{name}_points"] = estimate(scores[:, seat])
            summary[f"seat{seat}_{name}_win_rate"] = estimate(sole[:, seat])
        if rules.num_players == 2:
            summary["margin_seat0_minus_seat1"] = estimate(scores[:, 0] - scores[:, 1], exact)
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
        note = _unfinished_note(result)
        if note is not None:
            lines.append(f"  note: {note}")
        for key, value in result.summary.items():
            lines.append(f"  {key:<34} {value}")
    return "\n".join(lines)


def _unfinished_note(result: Results) -> str | None:
    """A line on how the figures treat unfinished games, when there are any."""
    notes = []
    if result.stalled.any():
        notes.append("stalled games (a position every seat repeats) are scored as they stand, the rest shared")
    if result.capped.any():
        notes.append("capped games (still running at the turn cap) are left out of every figure")
    return "; ".join(notes) or None

"""Which solitaire flips of an agent differ from exact optimal play, sorted by situation.

A memory-mode observation shows every card ever turned, so each flip falls into one of a few
situations that the observation alone decides. A first flip either turns an unknown card or
a known one, and a known one either while unknown cards are still face down or once none
are. A second flip either has the match of the card showing among the known cards or not,
and the flip takes that match, turns another known card or turns an unknown card.
:func:`match_decisions` plays an agent on seeded deals, sorts every flip into those
situations and asks the exact optimum (:class:`baselines.optimal_policy.OptimalPolicy`, where
the DP models the game) whether the flip is worth as much as its best one from the same
observation (its ``best_flips``: ties count as optimal, so an agent that takes a sure pair
later than the DP would is not marked down; the DP takes a known match of the card showing at
once and has no value for leaving it, so any other flip there counts as not optimal). It also counts, per
face of the card showing, how often a known match was taken: a network that has not learned
which faces pair misses the matches of some faces every time and those of others never.
``scripts/probe_matches.py`` is its command line.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from concentration_env.game import core
from concentration_env.game.compile import NONE
from concentration_env.game.rules import Rules
from concentration_env.training.crosstable_report import ProbeCommand

# A sound solitaire player clears 52 cards in well under this many turns; an agent that
# loops is cut off here (the deals it did not finish are counted).
PROBE_MAX_TURNS = 600

FIRST_UNKNOWN, FIRST_KNOWN_EARLY, FIRST_KNOWN_LATE = 0, 1, 2
SECOND_TAKES_MATCH, SECOND_OTHER_KNOWN, SECOND_UNKNOWN_BESIDE_MATCH = 3, 4, 5
SECOND_UNKNOWN, SECOND_KNOWN = 6, 7
SITUATIONS = (
    "first flip: an unknown card",
    "first flip: a known card, unknown cards still face down",
    "first flip: a known card, no unknown card left",
    "second flip, the match of the card showing known: takes it",
    "second flip, the match of the card showing known: another known card",
    "second flip, the match of the card showing known: an unknown card",
    "second flip, no known match: an unknown card",
    "second flip, no known match: a known card",
)


@dataclass(frozen=True)
class MatchDecisions:
    """What an agent turned in each situation, and how many of those flips were optimal."""

    rules: Rules
    moves: np.ndarray  # (games,) turns each deal took (PROBE_MAX_TURNS where it was cut off)
    finished: np.ndarray  # (games,) bool the deal was cleared
    agent: np.ndarray  # (len(SITUATIONS),) flips of the agent in each situation
    optimal: np.ndarray  # (len(SITUATIONS),) of those, flips the DP values as one of its best
    compared: bool  # whether the DP models the game (else ``optimal`` is all zero)
    taken: np.ndarray  # (num_faces,) second flips that took the known match of a card of this face
    missed: np.ndarray  # (num_faces,) second flips that left that known match on the table

    @property
    def games(self) -> int:
        return len(self.moves)


def _situations(cards: np.ndarray, removed: np.ndarray, first: np.ndarray, match: np.ndarray, flips: np.ndarray):
    """(B,) situation of each game's flip ``flips`` and (B,) whether the card showing had a
    known match (the face showing, or -1 on first flips, is returned too)."""
    rows = np.arange(len(cards))
    on_table = ~removed
    known = (cards > 0) & on_table
    unknown = (cards == 0) & on_table
    chosen_known = known[rows, flips]
    mid_turn = first != NONE
    showing = np.where(mid_turn, cards[rows, np.maximum(first, 0)] - 1, -1)
    pairs_with_showing = match[np.maximum(showing, 0)]  # (B, num_faces)
    partner = known & np.take_along_axis(pairs_with_showing, np.maximum(cards - 1, 0), axis=1)
    partner[rows, np.maximum(first, 0)] = False
    has_match = mid_turn & partner.any(axis=1)
    takes = partner[rows, flips]
    opening = np.where(chosen_known, np.where(unknown.any(axis=1), FIRST_KNOWN_EARLY, FIRST_KNOWN_LATE), FIRST_UNKNOWN)
    beside = np.where(
        takes, SECOND_TAKES_MATCH, np.where(chosen_known, SECOND_OTHER_KNOWN, SECOND_UNKNOWN_BESIDE_MATCH)
    )
    alone = np.where(chosen_known, SECOND_KNOWN, SECOND_UNKNOWN)
    return np.where(mid_turn, np.where(has_match, beside, alone), opening), has_match, showing


def match_decisions(rules: Rules, agent, games: int, seed: int) -> MatchDecisions:
    """Play ``agent`` (a batch policy, :mod:`baselines.base`; a saved model through
    :class:`concentration_env.training.model_policy.ModelPolicy`) alone on ``games`` deals
    (seeds ``seed ..``), memory mode, and sort every flip it makes (see the module)."""
    from baselines import optimal
    from baselines.evaluate import seeded_games
    from baselines.optimal_policy import OptimalPolicy

    if rules.num_players != 1:
        raise ValueError(f"num_players={rules.num_players}: this probe plays solitaire (num_players=1)")
    try:
        optimal.check_solvable(rules, players=1)
        optimum = OptimalPolicy(rules)
    except ValueError:  # a game the DP does not model: the agent alone is sorted
        optimum = None
    game, state = seeded_games(rules, games, seed, agent, *([optimum] if optimum is not None else []))
    situations = len(SITUATIONS)
    counts = {name: np.zeros(situations, dtype=np.int64) for name in ("agent", "optimal")}
    taken = np.zeros(game.num_faces, dtype=np.int64)
    missed = np.zeros(game.num_faces, dtype=np.int64)
    while True:
        state.done |= state.turns >= PROBE_MAX_TURNS
        if state.done.all():
            break
        observation = core.observe(game, state, memory=True)
        flips = np.asarray(agent.act_batch(observation), dtype=np.intp)
        running = ~state.done
        cards, removed, first = observation["cards"], observation["removed"].astype(bool), state.first.copy()
        sorted_as, has_match, showing = _situations(cards, removed, first, game.match, flips)
        counts["agent"] += np.bincount(sorted_as[running], minlength=situations)
        beside = running & has_match
        np.add.at(taken, showing[beside & (sorted_as == SECOND_TAKES_MATCH)], 1)
        np.add.at(missed, showing[beside & (sorted_as != SECOND_TAKES_MATCH)], 1)
        if optimum is not None:
            optimum.act_batch(observation)  # keeps its memory of the turn's opening
            rated_best = optimum.best_flips(observation)[np.arange(games), flips]
            counts["optimal"] += np.bincount(sorted_as[running & rated_best], minlength=situations)
        core.step(game, state, flips)
    finished = np.asarray(state.removed.all(axis=1))
    return MatchDecisions(
        rules, state.turns.copy(), finished, taken=taken, missed=missed, compared=optimum is not None, **counts
    )


def match_table(decisions: MatchDecisions) -> str:
    """Markdown: per situation, the agent's flips a deal and the share the DP rates optimal;
    then the faces whose known match the agent leaves on the table."""
    games, compared = decisions.games, decisions.compared
    lines = [
        f"{games} deals: {decisions.moves.mean():.2f} moves a deal, {int((~decisions.finished).sum())} "
        f"not cleared within {PROBE_MAX_TURNS} turns.",
        "",
        "| situation | flips a deal | optimal (worth the DP's best) |",
        "|---|---:|---:|",
    ]
    for index, name in enumerate(SITUATIONS):
        made = decisions.agent[index]
        if made:
            share = f"{decisions.optimal[index] / made:.3f}" if compared else "—"
            lines.append(f"| {name} | {made / games:.2f} | {share} |")
    if compared:
        worse = int(decisions.agent.sum() - decisions.optimal.sum())
        lines.append(f"\nFlips the DP values below its best: {worse / games:.2f} a deal.")
    if not compared:
        lines.append("\nThe exact optimum does not model this game: the agent's flips alone.")
    beside = decisions.taken + decisions.missed
    faces = core.compile_rules(decisions.rules).faces
    never = [str(faces[f]) for f in np.flatnonzero((beside > 0) & (decisions.taken == 0))]
    mostly = int(((beside > 0) & (decisions.missed > decisions.taken)).sum())
    lines.append(
        f"\nA known match of the card showing: taken {int(decisions.taken.sum())} times, left "
        f"{int(decisions.missed.sum())} times. Faces whose known match is never taken: {len(never)}"
        + (f" ({', '.join(never)})" if never else "")
        + f"; faces whose match is left more often than taken: {mostly}."
    )
    return "\n".join(lines) + "\n"


def _match_table(rules: Rules, agent, games: int, seed: int) -> str:
    return match_table(match_decisions(rules, agent, games, seed))


# ``scripts/probe_matches.py``: print the situation table of one agent; 2 and one line on bad input.
# ProbeCommand(prog, description, players, default games, default seed, a --set example, table)
main = ProbeCommand(
    "probe_matches.py",
    "Which solitaire flips of an agent differ from exact optimal play, by situation and by face.",
    1,
    100,
    2_000_000,
    "matching=rank",
    _match_table,
).main

"""Exact optimal play: values and choices by dynamic programming over the abstract positions
of :mod:`baselines.positions` (multisets of class states), and the public value functions.

Moves. A turn is two flips. The first flip is an unknown card (if it pairs with a known card
the player takes the pair), a known card, or a card of a known pair. The second flip is an
unknown card or a known card that does not pair with the first (a deliberate miss that reveals
nothing). With checkerboard backs the player also chooses under which back to turn an unknown
card. A known pair need not be taken at once (with four cards of a rank, leaving one on the
table so that the next card of the rank pairs at once is better); the DP chooses, except for
pairs that can only be worth taking now in solitaire and under the extra-turn rule (every card
of the class known, or enough known cards left to pair with any card of the class that may
turn up). Under the one-flip rule taking a pair ends the turn, so there the DP always chooses.

Solitaire (:func:`expected_moves`) minimises the expected number of moves (completed turns,
``info["turns"]``): Velleman and Warrington, "What to expect in a game of memory", Amer. Math.
Monthly 120(9) 2013, show it grows as (3 - 2 ln 2) n + 7/8 - 2 ln 2 for n one-partner pairs.
Two players (:func:`expected_pair_difference`) maximise the expected difference between the
mover's pairs and the opponent's, as in Zwick and Paterson, "The memory game", TCS 110 (1993);
flipping two known cards (a "0-move") passes without revealing anything, and when every other
move loses, both players would repeat it forever: such a stalled game is scored as a pair
difference of 0 from that position on (the remaining pairs shared), the convention of
Zwick and Paterson.

Values are exact ``fractions.Fraction`` with ``exact=True`` and floats otherwise.
"""

from __future__ import annotations

import sys
from fractions import Fraction
from functools import cache

from baselines.positions import FIRST, PAIR, Positions, class_structure
from concentration_env.game.rules import Rules

STRATEGIES = ("optimal", "greedy", "safe_first", "defer_pairs")
UNKNOWN = "unknown"  # flip a face-down card nobody has seen
KNOWN = "known"  # flip a card whose face is known (a deliberate miss on the second flip)
TAKE_PAIR = "take_pair"  # flip one card of a known pair (its twin follows)
STALL = "stall"  # two players: flip two known cards, revealing nothing (a "0-move")

# Beyond this many abstract states (an upper bound from the class kinds) the pure-Python DP
# would take hours: two packs with rank or zebra matching.
MAX_STATES = 250_000

# Recursion depth grows with the number of cards plus known cards; a 108-card game needs a
# few hundred frames per level of the DP.
RECURSION_LIMIT = 20_000


class Solver(Positions):
    """The DP for one rule set and one objective; values are memoised per position.

    ``players`` is 1 (minimise expected moves) or 2 (maximise the mover's expected pair
    difference). ``strategy`` is ``"optimal"`` or a fixed rule whose value is wanted:
    ``"greedy"`` (a known pair if any, else an unknown card, then its known partner or another
    unknown card), ``"safe_first"`` (the same, but a known card as second flip whenever the
    first one does not pair and a known card exists) or ``"defer_pairs"`` (greedy, but a
    known pair is taken only once no unknown card is left). Positions and class states are those of
    :class:`baselines.positions.Positions`.
    """

    def __init__(self, rules: Rules, players: int, strategy: str = "optimal", exact: bool = False):
        if strategy not in STRATEGIES:
            raise ValueError(f"invalid strategy={strategy!r}; allowed: {' | '.join(STRATEGIES)}")
        check_solvable(rules, players)
        super().__init__(rules, players)
        self.strategy = strategy
        self.exact = exact
        self.extra_turn = rules.turn_policy == "extra_turn"
        if strategy != "optimal" and len(self.pools) > 1:
            raise ValueError(
                f"strategy={strategy!r} with checkerboard backs: its value depends on which back "
                "it turns first, which the fixed strategies leave open; allowed: 'optimal'"
            )
        bound = self.state_bound()
        if bound > MAX_STATES:
            raise ValueError(
                f"rules {rules}: up to {bound:,} abstract states, too many for the exact DP "
                f"(allowed: up to {MAX_STATES:,}; two packs with rank or zebra matching exceed it)"
            )
        self._values: dict[tuple, object] = {}
        self._choices: dict[tuple, object] = {}
        sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))

    def unknown_choice(self, pool: int):
        """The choice "turn an unknown card" (under back ``pool`` with checkerboard backs)."""
        return UNKNOWN if len(self.pools) == 1 else (UNKNOWN, pool)

    def _ratio(self, a: int, b: int):
        return Fraction(a, b) if self.exact else a / b

    # -- values -------------------------------------------------------------------------
    def value_of(self, counts: tuple):
        """Solitaire: expected moves to finish. Two players: the mover's expected pair difference."""
        if counts in self._values:
            return self._values[counts]
        forced = [t for t, c in enumerate(counts) if c and self.take_at_once[t]]
        choice: object  # what _choices stores: a move, STALL, or None with nothing left
        if forced:  # take a sure pair first (one move, or points with the turn kept)
            t = forced[0]
            result = self._after_capture(self.value[t], self.move(counts, t, self.after_take[t]))
            choice = (TAKE_PAIR, t)
        elif not any(counts):
            result, choice = self._zero(), None
        else:
            result, choice = self._best(self._first_options(counts))
            if self.players == 2 and self.strategy == "optimal" and self.known_classes(counts) >= 2 and result < 0:
                # A 0-move (two known cards) passes; if everything else loses, both players
                # would stall forever, scored as a draw on the remaining pairs.
                result, choice = self._zero(), STALL
        self._values[counts] = result
        self._choices[counts] = choice
        return result

    def first_choice(self, counts: tuple):
        """The first flip to make: ``UNKNOWN``, ``(KNOWN, class state)``, ``(TAKE_PAIR, class state)``
        or, for a stalled two-player position, ``STALL`` (flip two known cards)."""
        self.value_of(counts)
        return self._choices[counts]

    def second_choice(self, counts: tuple, first: int, first_known: bool) -> str:
        """The second flip after a first card that pairs with no known card: ``UNKNOWN`` or ``KNOWN``.

        ``counts`` include the first card as known; ``first`` is the state of its class;
        ``first_known`` says whether it was known before this turn.
        """
        return self._best(self._second_options(counts, first, first_known))[1]

    def _zero(self):
        return Fraction(0) if self.exact else 0.0

    def _best(self, options: list):
        """The best (value, choice): fewest moves in solitaire, largest difference for two players."""
        pick = min if self.players == 1 else max
        return pick(options, key=lambda option: option[0])

    def _after_capture(self, value: int, counts: tuple):
        """Value for the mover of taking a pair of ``value`` points, leading to ``counts``."""
        if self.players == 1:
            return 1 + self.value_of(counts)
        if self.extra_turn:
            return value + self.value_of(counts)
        return value - self.value_of(counts)

    def _after_miss(self, counts: tuple):
        """Value for the mover of a missed turn leading to ``counts`` (the other player moves)."""
        if self.players == 1:
            return 1 + self.value_of(counts)
        return -self.value_of(counts)

    def _first_options(self, counts: tuple) -> list:
        pairs = [
            (self._after_capture(self.value[t], self.move(counts, t, self.after_take[t])), (TAKE_PAIR, t))
            for t, count in enumerate(counts)
            if count and self.has_pair[t]
        ]
        if self.strategy == "defer_pairs" and self.pools_with_cards(counts):
            pairs = []  # known pairs wait until every card has been seen
        if pairs and self.strategy != "optimal":
            return pairs[:1]  # the fixed strategies take a known pair first
        options = pairs
        for pool in self.pools_with_cards(counts):
            value, total = self._zero(), self.face_down(counts, pool=pool)
            for weight, t, outcome, target, _kept in self.draws(counts, pool=pool):
                p = self._ratio(weight, total)
                if outcome == PAIR:  # the card pairs with a known one: take them
                    value += p * self._after_capture(self.value[t], self.move(counts, t, target))
                else:
                    value += p * self._best(self._second_options(self.move(counts, t, target), target, False))[0]
            options.append((value, self.unknown_choice(pool)))
        if self.strategy == "optimal":
            for t, count in enumerate(counts):
                if count and self.partnerless[t]:
                    options.append((self._best(self._second_options(counts, t, True))[0], (KNOWN, t)))
        return options

    def _second_options(self, counts: tuple, first: int, first_known: bool) -> list:
        options = []
        for pool in self.pools_with_cards(counts, first):
            value, total = self._zero(), self.face_down(counts, first, pool)
            for weight, t, outcome, target, kept in self.draws(counts, first, pool):
                p = self._ratio(weight, total)
                if outcome == FIRST:
                    value += p * self._after_capture(self.value[t], self.move(counts, t, target))
                else:  # a miss; a card pairing with another known card stays known
                    value += p * self._after_miss(self.move(counts, t, kept))
            options.append((value, self.unknown_choice(pool)))
        # A deliberate miss on another known card (after a known first card that would be a
        # 0-move, handled as stalling in value_of, or in solitaire a wasted turn).
        if not first_known and self.known_cards(counts) >= 2 and self.strategy not in ("greedy", "defer_pairs"):
            miss = (self._after_miss(counts), KNOWN)
            if self.strategy == "safe_first":
                return [miss]
            options.append(miss)
        return options


def check_solvable(rules: Rules, players: int) -> None:
    """Raise a clear ValueError if the DP does not model this game."""
    if rules.num_players != players:
        raise ValueError(f"rules have num_players={rules.num_players}; this DP is for {players} player(s)")
    if players not in (1, 2):
        raise ValueError(f"num_players={players}: exact play is solved for 1 or 2 players only")
    if players == 2 and not class_structure(rules).one_partner:
        raise ValueError(
            f"two-player DP needs every card to have exactly one partner (Zwick and Paterson's game); "
            f"matching={rules.matching!r} with packs={rules.packs} gives larger classes"
        )


@cache
def solver(rules: Rules, strategy: str = "optimal", exact: bool = False) -> Solver:
    """The cached solver for a rule set (one per rules, strategy and number type)."""
    return Solver(rules, rules.num_players, strategy, exact)


def expected_moves(rules: Rules, strategy: str = "optimal", exact: bool = False):
    """Expected moves (completed turns) to clear the table in solitaire, playing ``strategy``
    with perfect memory. Chips (``max_mismatches``) are ignored: this is the unlimited game."""
    check_solvable(rules, players=1)
    s = solver(rules.replace(max_mismatches=None), strategy, exact)
    return s.value_of(s.initial_state())


def expected_mismatches(rules: Rules, strategy: str = "optimal", exact: bool = False):
    """Expected unsuccessful pairs in solitaire (moves minus the pairs, which each take one move)."""
    return expected_moves(rules, strategy, exact) - rules.num_pairs


def expected_pair_difference(rules: Rules, strategy: str = "optimal", exact: bool = False):
    """Two players: the first player's expected pairs minus the second's (points, with
    ``joker_value``), both playing ``strategy``."""
    check_solvable(rules, players=2)
    s = solver(rules, strategy, exact)
    return s.value_of(s.initial_state())

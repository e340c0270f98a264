"""Win shares against exact optimal play, by dynamic programming.

The two-player optimum of :mod:`baselines.optimal` maximises the expected pair margin and
never looks at the score. A game, though, is won by the player ahead at the end, and where
both players pass (flip two known cards, a "0-move") the game stops and is scored as it
stands (:mod:`baselines.evaluate`). :func:`win_share` gives the exact win
share (ties half) of a player against the optimum (or against one of the DP's fixed
strategies, greedy or safe_first), the player being either the optimum itself or the best
response that knows the score and plays to win, so that a learned agent's win share can be
read against the most any player can reach.

Positions are the DP's (:class:`baselines.positions.Positions`) plus the lead in points, whose
turn it is and whether the last turn passed. The DP's strategies flip as the DP chooses; the
best response may flip anything the DP considers, including a 0-move wherever two known cards
lie on the table. Stalls end as the evaluation harness ends them: when both players pass in a
row, the game is scored as it stands.
"""

from __future__ import annotations

from baselines import optimal
from baselines.positions import FIRST, PAIR
from concentration_env.game.rules import Rules

LEARNERS = ("best_response", "optimal")
OPPONENTS = ("optimal", "greedy", "safe_first")  # the DP's strategies for two players
LEARNER, OPPONENT = 0, 1  # who is to move


class WinShare:
    """The learner's win share (ties half) from every position against ``opponent``."""

    def __init__(self, rules: Rules, learner: str = "best_response", opponent: str = "optimal"):
        if learner not in LEARNERS:
            raise ValueError(f"invalid learner={learner!r}; allowed: {' | '.join(LEARNERS)}")
        if opponent not in OPPONENTS:
            raise ValueError(f"invalid opponent={opponent!r}; allowed: {' | '.join(OPPONENTS)}")
        optimal.check_solvable(rules, players=2)
        unlimited = rules.replace(max_mismatches=None)
        self.solver = optimal.solver(unlimited, opponent)  # the opponent's choices
        self.best_response = learner == "best_response"
        self.learner = optimal.solver(unlimited)  # the learner's choices when it plays the optimum
        self.extra_turn = rules.turn_policy == "extra_turn"
        self._values: dict[tuple, float] = {}

    def value(self, counts: tuple, lead: int, mover: int, passed: bool = False) -> float:
        """Win share of the learner, ``lead`` points ahead, with ``mover`` to move;
        ``passed``: the last turn was a pass (one more ends the game)."""
        key = (counts, lead, mover, passed)
        if key not in self._values:
            self._values[key] = self._value(counts, lead, mover, passed)
        return self._values[key]

    def _value(self, counts: tuple, lead: int, mover: int, passed: bool) -> float:
        if not any(counts):
            return scored(lead)
        options = self._first_options(counts, lead, mover, passed)
        if mover == LEARNER and self.best_response:
            return max(options.values())
        return options[self._chooser(mover).first_choice(counts)]

    def _chooser(self, mover: int) -> optimal.Solver:
        """The DP whose choices ``mover`` follows (the learner's only when it plays the optimum)."""
        return self.learner if mover == LEARNER else self.solver

    def _capture(self, points: int, counts: tuple, lead: int, mover: int) -> float:
        gained = points if mover == LEARNER else -points
        return self.value(counts, lead + gained, mover if self.extra_turn else 1 - mover)

    def _take_pair(self, counts: tuple, t: int, lead: int, mover: int) -> float:
        """Win share after the mover takes a known pair of class state ``t``."""
        s = self.solver
        return self._capture(s.value[t], s.move(counts, t, s.after_take[t]), lead, mover)

    def _first_options(self, counts: tuple, lead: int, mover: int, passed: bool) -> dict:
        """Every first flip the DP weighs (:meth:`baselines.optimal.Solver._first_options`),
        with the learner's win share after it."""
        s = self.solver
        forced = [t for t, c in enumerate(counts) if c and s.take_at_once[t]]
        if forced:  # a sure pair is taken first by both players, as the DP does
            return {(optimal.TAKE_PAIR, forced[0]): self._take_pair(counts, forced[0], lead, mover)}
        options: dict[object, float] = {
            (optimal.TAKE_PAIR, t): self._take_pair(counts, t, lead, mover)
            for t, count in enumerate(counts)
            if count and s.has_pair[t]
        }
        for pool in s.pools_with_cards(counts):
            share, total = 0.0, s.face_down(counts, pool=pool)
            for weight, t, outcome, target, _kept in s.draws(counts, pool=pool):
                after = s.move(counts, t, target)
                if outcome == PAIR:
                    share += weight / total * self._capture(s.value[t], after, lead, mover)
                else:
                    share += weight / total * self._second(after, target, False, lead, mover)
            options[s.unknown_choice(pool)] = share
        for t, count in enumerate(counts):
            if count and s.partnerless[t]:
                options[(optimal.KNOWN, t)] = self._second(counts, t, True, lead, mover)
        if s.known_classes(counts) >= 2:  # a 0-move passes; two passes in a row end the game
            options[optimal.STALL] = scored(lead) if passed else self.value(counts, lead, 1 - mover, True)
        return options

    def _second(self, counts: tuple, first: int, first_known: bool, lead: int, mover: int) -> float:
        """Win share after the second flip that the mover (learner: best; optimum: the DP's) makes."""
        s = self.solver
        options: dict[object, float] = {}
        for pool in s.pools_with_cards(counts, first):
            share, total = 0.0, s.face_down(counts, first, pool)
            for weight, t, outcome, target, kept in s.draws(counts, first, pool):
                if outcome == FIRST:
                    share += weight / total * self._capture(s.value[t], s.move(counts, t, target), lead, mover)
                else:
                    share += weight / total * self.value(s.move(counts, t, kept), lead, 1 - mover)
            options[s.unknown_choice(pool)] = share
        if not first_known and s.known_cards(counts) >= 2:  # a deliberate miss on another known card
            options[optimal.KNOWN] = self.value(counts, lead, 1 - mover)
        if mover == LEARNER and self.best_response:
            return max(options.values())
        return options[self._chooser(mover).second_choice(counts, first, first_known)]


def scored(lead: int) -> float:
    """The learner's share of a game that ends with it ``lead`` points ahead."""
    return 1.0 if lead > 0 else 0.5 if lead == 0 else 0.0


def win_share(rules: Rules, learner: str = "best_response", opponent: str = "optimal") -> dict[str, float]:
    """Exact win share (ties half) of ``learner`` against :class:`baselines.OptimalPolicy` (or
    the DP's ``"greedy"`` or ``"safe_first"`` strategy) on a two-player game the DP solves:
    ``"best_response"`` (knows the score, plays to win) or ``"optimal"`` (the optimum itself).
    Keys: ``first`` (the learner moves first), ``second`` and ``both_seats`` (their mean)."""
    share = WinShare(rules, learner, opponent)
    start = share.solver.initial_state()
    first, second = share.value(start, 0, LEARNER), share.value(start, 0, OPPONENT)
    return {"first": first, "second": second, "both_seats": (first + second) / 2}

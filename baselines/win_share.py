"""Win shares against the DP's strategies, by dynamic programming.

The two-player optimum of :mod:`baselines.optimal` maximises the expected pair margin and
never looks at the score. A game, though, is won by the player ahead at the end, and where
every player passes in a row (flips two known cards, a "0-move") the game stops and is scored
as it stands (:mod:`baselines.evaluate`). :func:`win_share` gives the exact win share (ties
split) of a player against the optimum, or against a table of one of the DP's fixed
strategies (greedy or safe_first) in every other seat, for two or more players. The player is
the best response that knows the score and plays to win, or the optimum, greedy or safe_first
itself, so that a learned agent's win share can be read against the most any player can reach.

Positions are the DP's (:class:`baselines.positions.Positions`) plus the learner's lead in
points over each other seat, whose turn it is and how many turns in a row have passed. The
DP's strategies flip as the DP chooses; the best response may flip anything the DP considers,
including a 0-move wherever two known cards lie on the table. Stalls end as the evaluation
harness ends them: when every player has passed in a row, the game is scored as it stands.
The fixed strategies choose without looking at the other players, so their choices carry over
to tables of three or more; the optimum is the two-player DP's and plays only with two.
"""

from __future__ import annotations

from baselines import optimal
from baselines.positions import FIRST, PAIR
from concentration_env.game.rules import Rules

LEARNERS = ("best_response", "optimal", "greedy", "safe_first")
OPPONENTS = ("optimal", "greedy", "safe_first")  # the DP's strategies
TWO_PLAYERS_ONLY = "optimal"  # the two-player DP's margin optimum
LEARNER = 0  # the learner's seat in the positions; the others follow in turn order


class WinShare:
    """The learner's win share (ties split) from every position against ``opponent`` in
    every other seat."""

    def __init__(self, rules: Rules, learner: str = "best_response", opponent: str = "optimal"):
        if learner not in LEARNERS:
            raise ValueError(f"invalid learner={learner!r}; allowed: {' | '.join(LEARNERS)}")
        if opponent not in OPPONENTS:
            raise ValueError(f"invalid opponent={opponent!r}; allowed: {' | '.join(OPPONENTS)}")
        self.players = rules.num_players
        if self.players < 2:
            raise ValueError(f"num_players={self.players}: win shares need 2 or more players")
        if self.players > 2 and TWO_PLAYERS_ONLY in (learner, opponent):
            raise ValueError(
                f"num_players={self.players} with the optimum: the DP solves two players only; "
                f"allowed with {self.players}: learner best_response | greedy | safe_first, "
                "opponent greedy | safe_first"
            )
        # The DP's positions and strategies are the two-player game's; a fixed strategy's
        # choices do not depend on how many play.
        unlimited = rules.replace(max_mismatches=None, num_players=2)
        self.solver = optimal.solver(unlimited, opponent)  # the opponents' choices
        self.best_response = learner == "best_response"
        self.learner = optimal.solver(unlimited, "optimal" if self.best_response else learner)
        self.extra_turn = rules.turn_policy == "extra_turn"
        self._values: dict[tuple, float] = {}

    def value(self, counts: tuple, lead: tuple[int, ...], mover: int, passes: int = 0) -> float:
        """Win share of the learner, ``lead[i]`` points ahead of seat ``i + 1`` (in turn order
        after it), with ``mover`` to move and ``passes`` turns in a row just passed."""
        key = (counts, lead, mover, passes)
        if key not in self._values:
            self._values[key] = self._value(counts, lead, mover, passes)
        return self._values[key]

    def _value(self, counts: tuple, lead: tuple[int, ...], mover: int, passes: int) -> float:
        if not any(counts):
            return scored(lead)
        options = self._first_options(counts, lead, mover, passes)
        if mover == LEARNER and self.best_response:
            return max(options.values())
        return options[self._chooser(mover).first_choice(counts)]

    def _chooser(self, mover: int) -> optimal.Solver:
        """The DP whose choices ``mover`` follows (the learner's when it plays a fixed strategy)."""
        return self.learner if mover == LEARNER else self.solver

    def _next(self, mover: int) -> int:
        return (mover + 1) % self.players

    def _capture(self, points: int, counts: tuple, lead: tuple[int, ...], mover: int) -> float:
        if mover == LEARNER:
            lead = tuple(ahead + points for ahead in lead)
        else:
            lead = tuple(ahead - points if seat == mover else ahead for seat, ahead in enumerate(lead, 1))
        return self.value(counts, lead, mover if self.extra_turn else self._next(mover))

    def _take_pair(self, counts: tuple, t: int, lead: tuple[int, ...], mover: int) -> float:
        """Win share after the mover takes a known pair of class state ``t``."""
        s = self.solver
        return self._capture(s.value[t], s.move(counts, t, s.after_take[t]), lead, mover)

    def _first_options(self, counts: tuple, lead: tuple[int, ...], mover: int, passes: int) -> dict:
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
        if s.known_classes(counts) >= 2:  # a 0-move passes; once every player has, the game ends
            last = passes + 1 == self.players
            options[optimal.STALL] = scored(lead) if last else self.value(counts, lead, self._next(mover), passes + 1)
        return options

    def _second(self, counts: tuple, first: int, first_known: bool, lead: tuple[int, ...], mover: int) -> float:
        """Win share after the second flip that the mover makes (the best response: its best)."""
        s = self.solver
        options: dict[object, float] = {}
        for pool in s.pools_with_cards(counts, first):
            share, total = 0.0, s.face_down(counts, first, pool)
            for weight, t, outcome, target, kept in s.draws(counts, first, pool):
                if outcome == FIRST:
                    share += weight / total * self._capture(s.value[t], s.move(counts, t, target), lead, mover)
                else:
                    share += weight / total * self.value(s.move(counts, t, kept), lead, self._next(mover))
            options[s.unknown_choice(pool)] = share
        if not first_known and s.known_cards(counts) >= 2:  # a deliberate miss on another known card
            options[optimal.KNOWN] = self.value(counts, lead, self._next(mover))
        if mover == LEARNER and self.best_response:
            return max(options.values())
        return options[self._chooser(mover).second_choice(counts, first, first_known)]


def scored(lead: tuple[int, ...]) -> float:
    """The learner's share of a game that ends with it ``lead`` points ahead of each other
    seat: 1 alone on top, 1/k tied on top with k - 1 others, 0 behind anyone."""
    if min(lead) < 0:
        return 0.0
    return 1.0 / (1 + sum(ahead == 0 for ahead in lead))


def win_share(rules: Rules, learner: str = "best_response", opponent: str = "optimal") -> dict[str, object]:
    """Exact win share (ties split) of ``learner`` with ``opponent`` in every other seat, for
    ``rules.num_players`` players on a game the DP solves. ``learner``: ``"best_response"``
    (knows the score, plays to win), or the DP's ``"optimal"``, ``"greedy"`` or
    ``"safe_first"``; ``opponent``: :class:`baselines.OptimalPolicy`'s ``"optimal"`` (two
    players only), ``"greedy"`` or ``"safe_first"``. Keys: ``seats`` (a tuple: the share with
    the learner in seat 0, which moves first, then seat 1, ...) and ``every_seat`` (their mean)."""
    share = WinShare(rules, learner, opponent)
    start, level = share.solver.initial_state(), (0,) * (share.players - 1)
    # The learner in seat s: the seat to move first is P - s places after it in turn order.
    seats = tuple(share.value(start, level, (share.players - seat) % share.players) for seat in range(share.players))
    return {"seats": seats, "every_seat": sum(seats) / len(seats)}

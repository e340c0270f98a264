"""Exact optimal play by dynamic programming over abstract states.

With perfect memory the only thing that matters about a position is, for every *class* of
cards that can pair only among themselves, how many of its cards are still on the table and
how many of those are known. The positions of the cards and the names of the classes do not
matter, so a position is a multiset of class states, and the expected outcome of every
strategy is a function of that multiset.

Classes come from the compiled match table (:func:`concentration_env.game.core.compile_rules`), so
there is no second copy of the matching rules here:

- a *clique* of ``size`` cards, any two of which pair: one-partner decks (``rank_colour`` with
  one pack, ``identical``, pictures, the two jokers) have cliques of 2; ``rank`` has cliques of
  4 (8 with two packs); ``rank_colour`` with two packs and the jokers of two packs have 4;
- a *zebra* class of ``half`` red and ``half`` black cards where a pair is one of each colour;
- with checkerboard backs, twins whose two cards lie under different, public backs.

Class state ``(m, a, b)``: a clique with ``m`` cards on the table of which ``a`` are known; a
zebra class with ``m`` cards of each colour on the table and ``a`` and ``b`` known cards of the
two colours (colours are symmetric, so ``a >= b``); a pair of twins with ``a`` and ``b`` saying
whether the card under back 0 and the one under back 1 are known.

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

import math
import sys
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import numpy as np

from concentration_env.game.core import compile_rules
from concentration_env.game.rules import Rules

STRATEGIES = ("optimal", "greedy", "safe_first")
UNKNOWN = "unknown"  # flip a face-down card nobody has seen
KNOWN = "known"  # flip a card whose face is known (a deliberate miss on the second flip)
TAKE_PAIR = "take_pair"  # flip one card of a known pair (its twin follows)
STALL = "stall"  # two players: flip two known cards, revealing nothing (a "0-move")

# Outcomes of turning up an unknown card.
NEW = 0  # pairs with nothing known: one more known card
PAIR = 1  # pairs with a known card other than the face-up first card
FIRST = 2  # pairs with the face-up first card of this turn: a capture

# Beyond this many abstract states (an upper bound from the class kinds) the pure-Python DP
# would take hours: two packs with rank or zebra matching.
MAX_STATES = 250_000

# Recursion depth grows with the number of cards plus known cards; a 108-card game needs a
# few hundred frames per level of the DP.
RECURSION_LIMIT = 20_000


@dataclass(frozen=True)
class ClassKind:
    """A kind of class of cards that pair only among themselves."""

    zebra: bool  # two colours, a pair is one card of each; else any two cards pair
    size: int  # cards in the class
    value: int  # points for a pair
    backs: bool = False  # twins dealt under different public backs (checkerboard)


@dataclass(frozen=True)
class Structure:
    """The class decomposition of a deck: which face belongs to which class."""

    kinds: tuple[ClassKind, ...]
    class_kind: tuple[int, ...]  # class -> kind index
    face_class: np.ndarray  # (num_faces,) class of each face
    face_side: np.ndarray  # (num_faces,) colour side (0/1) within a zebra class, else 0

    @property
    def num_classes(self) -> int:
        return len(self.class_kind)

    @property
    def one_partner(self) -> bool:
        """Every card has exactly one partner (the setting of Zwick and Paterson)."""
        return all(not kind.zebra and kind.size == 2 for kind in self.kinds)

    def side_of(self, faces: np.ndarray, backs: np.ndarray) -> np.ndarray:
        """The side of each card within its class: its colour (zebra), its back
        (checkerboard), else 0."""
        checkerboard = np.array([self.kinds[k].backs for k in self.class_kind])[self.face_class[faces]]
        return np.where(checkerboard, backs, self.face_side[faces])


@cache
def class_structure(rules: Rules) -> Structure:
    """Split the deck of ``rules`` into classes using the compiled match table."""
    game = compile_rules(rules)
    match, copies = game.match, np.bincount(game.deck, minlength=game.num_faces)
    faces = range(game.num_faces)
    component = list(faces)

    def root(f: int) -> int:
        while component[f] != f:
            f = component[f]
        return f

    for f in faces:
        for g in faces:
            if match[f, g]:
                component[root(f)] = root(g)
    groups: dict[int, list[int]] = {}
    for f in faces:
        groups.setdefault(root(f), []).append(f)
    kinds: list[ClassKind] = []
    class_kind: list[int] = []
    face_class = np.zeros(game.num_faces, dtype=np.intp)
    face_side = np.zeros(game.num_faces, dtype=np.intp)
    for index, members in enumerate(groups.values()):
        kind = _classify(members, match, copies, face_side, int(game.pair_value[members[0]]), rules)
        if game.checkerboard:
            if kind.zebra or kind.size != 2:
                raise ValueError(
                    f"rules {rules}: with checkerboard backs the DP needs twins only "
                    "(identical matching without jokers)"
                )
            kind = ClassKind(zebra=False, size=2, value=kind.value, backs=True)
        if kind not in kinds:
            kinds.append(kind)
        class_kind.append(kinds.index(kind))
        face_class[members] = index
    face_class.setflags(write=False)
    face_side.setflags(write=False)
    return Structure(tuple(kinds), tuple(class_kind), face_class, face_side)


def _classify(members, match, copies, face_side, value, rules) -> ClassKind:
    """Recognise one connected group of faces as a clique or a zebra class."""
    size = int(copies[members].sum())
    pairs_all = all(match[f, g] for f in members for g in members if f != g or copies[f] > 1)
    if pairs_all:
        return ClassKind(zebra=False, size=size, value=value)
    sides, frontier = {members[0]: 0}, [members[0]]
    while frontier:  # two-colour the faces along the match edges
        f = frontier.pop()
        for g in members:
            if match[f, g] and g not in sides:
                sides[g] = 1 - sides[f]
                frontier.append(g)
    bipartite = len(sides) == len(members) and all(
        bool(match[f, g]) == (sides[f] != sides[g]) for f in members for g in members
    )
    side_sizes = [sum(int(copies[f]) for f in members if sides.get(f) == s) for s in (0, 1)]
    if not bipartite or side_sizes[0] != side_sizes[1]:
        raise ValueError(
            f"rules {rules}: a class of faces {members} is neither all-pairing nor two-coloured; "
            "the DP supports cliques and zebra classes only"
        )
    for f in members:
        face_side[f] = sides[f]
    return ClassKind(zebra=True, size=size, value=value)


class Solver:
    """The DP for one rule set and one objective; values are memoised per abstract state.

    ``players`` is 1 (minimise expected moves) or 2 (maximise the mover's expected pair
    difference). ``strategy`` is ``"optimal"`` or a fixed rule whose value is wanted:
    ``"greedy"`` (a known pair if any, else an unknown card, then its known partner or another
    unknown card) or ``"safe_first"`` (the same, but a known card as second flip whenever the
    first one does not pair and a known card exists).

    A class state is ``(kind, m, a, b)``: a clique with ``m`` cards on the table, ``a`` of them
    known (``b`` = 0); or a zebra class with ``m`` cards of each colour on the table and ``a``
    and ``b`` known cards of the two colours (``a >= b``: colours are symmetric).
    """

    def __init__(self, rules: Rules, players: int, strategy: str = "optimal", exact: bool = False):
        if strategy not in STRATEGIES:
            raise ValueError(f"invalid strategy={strategy!r}; allowed: {' | '.join(STRATEGIES)}")
        check_solvable(rules, players)
        self.rules = rules
        self.structure = class_structure(rules)
        self.players = players
        self.strategy = strategy
        self.exact = exact
        # Under one-flip, taking a known pair ends the turn, so the DP chooses when to take it;
        # otherwise pairs that can only be worth taking are taken at once (see _must_take).
        self.keep_pairs = players == 2 and rules.turn_policy == "one_flip"
        self.extra_turn = rules.turn_policy == "extra_turn"
        self._build_types()
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

    # -- the abstract state ------------------------------------------------------------
    def _build_types(self) -> None:
        """Enumerate the class states and what turning up a card of each does."""
        kinds = self.structure.kinds
        types = []
        for k, kind in enumerate(kinds):
            if kind.zebra:
                types += [
                    (k, m, a, b) for m in range(1, kind.size // 2 + 1) for a in range(m + 1) for b in range(a + 1)
                ]
            elif kind.backs:  # a, b: is the twin under back 0, back 1 known
                types += [(k, 2, a, b) for a in (0, 1) for b in (0, 1)]
            else:
                types += [(k, m, a, 0) for m in range(2, kind.size + 1, 2) for a in range(m + 1)]
        self.types = tuple(types)
        index = {t: i for i, t in enumerate(types)}
        self._index = index

        def at(k: int, m: int, a: int, b: int = 0):
            if m == 0 or not (0 <= a <= m and 0 <= b <= m):
                return None  # the class is cleared (or the draw is impossible: weight 0)
            return index[self._canonical((k, m, a, b))]

        self.known, self.value, self.has_pair, self.partnerless = [], [], [], []
        plain, first, take = [], [], []
        for k, m, a, b in types:
            zebra, backs = kinds[k].zebra, kinds[k].backs
            two_sided = zebra or backs
            self.known.append(a + b)
            self.value.append(kinds[k].value)
            self.has_pair.append(a >= 1 and b >= 1 if two_sided else a >= 2)
            # A known card with no known partner: as a first flip it reveals nothing new.
            self.partnerless.append(a + b == 1 if backs else (a >= 1 and b == 0 if zebra else a == 1))
            take.append(
                at(k, m - 1, a - 1, b - 1) if zebra else at(k, m - 2, a - 1, b - 1) if backs else at(k, m - 2, a - 2)
            )
            # (weight, partner known?, state after capturing with the partner, state if kept,
            # pool): a pool is the set of face-down cards one can choose to turn, by back.
            if zebra:
                draws = [
                    (m - a, b >= 1, at(k, m - 1, a, b - 1) if b else None, at(k, m, a + 1, b), 0),
                    (m - b, a >= 1, at(k, m - 1, a - 1, b) if a else None, at(k, m, a, b + 1), 0),
                ]
                # The face-up first card is on side a (nothing known on side b, or it would pair).
                firsts = (
                    [(m, FIRST, at(k, m - 1, a - 1, 0), 0), (m - a, NEW, at(k, m, a + 1, 0), 0)] if a and not b else []
                )
            elif backs:  # the twin under back 0 is unknown if a == 0; under back 1 if b == 0
                draws = [(1 - a, b == 1, None, at(k, 2, 1, b), 0), (1 - b, a == 1, None, at(k, 2, a, 1), 1)]
                firsts = [(1, FIRST, None, 1 if a else 0)] if a + b == 1 else []
            else:
                draws = [(m - a, a >= 1, at(k, m - 2, a - 1) if a else None, at(k, m, a + 1), 0)]
                firsts = [(m - 1, FIRST, at(k, m - 2, 0), 0)] if a == 1 else []
            plain.append([d for d in draws if d[0] > 0])
            first.append([f for f in firsts if f[0] > 0])
        self._plain, self._first, self._take = tuple(plain), tuple(first), tuple(take)
        self._must = tuple(self._must_take(t) for t in types)
        self.pools = (0, 1) if any(kind.backs for kind in kinds) else (0,)
        # Face-down cards of each class state in each pool.
        self._in_pool = tuple(
            tuple(sum(d[0] for d in plain[t] if d[-1] == pool) for t in range(len(types))) for pool in self.pools
        )

    def _canonical(self, state: tuple) -> tuple:
        """Zebra colours are symmetric within a class: put the side with more known cards first."""
        k, m, a, b = state
        return (k, m, b, a) if self.structure.kinds[k].zebra and b > a else state

    def _must_take(self, state: tuple) -> bool:
        """Whether a known pair of this class is taken at once without loss.

        Solitaire and extra-turn games only: taking it costs a move (or keeps the turn), and
        the known cards left still pair with every card of the class that can turn up later.
        Deliberate misses never help there, so known cards have no other use.
        """
        k, m, a, b = state
        if self.keep_pairs:
            return False
        if self.structure.kinds[k].zebra:
            return a >= 1 and b >= 1 and (a == m or b == m or (a >= 2 and b >= 2))
        return a + b >= 3 or (a + b == m and m >= 2)

    def state_bound(self) -> int:
        """An upper bound on the abstract states: multisets of class states per kind."""
        bound = 1
        for k in range(len(self.structure.kinds)):
            classes = self.structure.class_kind.count(k)
            states = sum(1 for t, (kind, *_) in enumerate(self.types) if kind == k and not self._must[t]) + 1
            bound *= math.comb(classes + states - 1, states - 1)
        return bound

    def initial_state(self) -> tuple[int, ...]:
        """Every class full and nothing known."""
        counts = [0] * len(self.types)
        for k in self.structure.class_kind:
            kind = self.structure.kinds[k]
            counts[self.type_of(k, kind.size // 2 if kind.zebra else kind.size, 0, 0)] += 1
        return tuple(counts)

    def type_of(self, kind: int, m: int, a: int, b: int = 0) -> int:
        """Index of class state ``(kind, m, a, b)`` (zebra colours put in canonical order)."""
        return self._index[self._canonical((kind, m, a, b))]

    @staticmethod
    def _move(counts: tuple, source: int, target: int | None) -> tuple:
        """One class changes from state ``source`` to ``target`` (None: cleared)."""
        new = list(counts)
        new[source] -= 1
        if target is not None:
            new[target] += 1
        return tuple(new)

    def _draws(self, counts: tuple, first: int | None = None, pool: int = 0):
        """(probability, class state, outcome, next class state, state if kept) of turning up
        an unknown card of ``pool``, ``first`` being the state of the class that holds the
        face-up first card, if any. A card whose partner is known gives ``PAIR``: the next
        state is the one after taking the pair, the kept state the one with the pair known."""
        inside = self._in_pool[pool]
        total = sum(c * u for c, u in zip(counts, inside)) - (inside[first] if first is not None else 0)
        total += sum(f[0] for f in self._first[first] if f[-1] == pool) if first is not None else 0
        for t, count in enumerate(counts):
            plain = count - (t == first)
            if plain > 0:
                for weight, paired, captured, kept, where in self._plain[t]:
                    if where == pool:
                        yield (
                            self._ratio(weight * plain, total),
                            t,
                            (PAIR if paired else NEW),
                            (captured if paired else kept),
                            kept,
                        )
            if t == first:
                for weight, outcome, target, where in self._first[t]:
                    if where == pool:
                        yield self._ratio(weight, total), t, outcome, target, target

    def _pools_with_cards(self, counts: tuple, first: int | None = None) -> list[int]:
        """Pools that hold a face-down card (the first card's class counted as in ``_draws``)."""
        return [pool for pool in self.pools if any(True for _ in self._draws(counts, first, pool))]

    def _unknown_choice(self, pool: int):
        return UNKNOWN if len(self.pools) == 1 else (UNKNOWN, pool)

    def _ratio(self, a: int, b: int):
        return Fraction(a, b) if self.exact else a / b

    def _known_classes(self, counts: tuple) -> int:
        return sum(c for c, j in zip(counts, self.known) if j)

    def _known_cards(self, counts: tuple) -> int:
        return sum(c * j for c, j in zip(counts, self.known))

    # -- values -------------------------------------------------------------------------
    def value_of(self, counts: tuple):
        """Solitaire: expected moves to finish. Two players: the mover's expected pair difference."""
        if counts in self._values:
            return self._values[counts]
        forced = [t for t, c in enumerate(counts) if c and self._must[t]]
        choice: object  # what _choices stores: a move, STALL, or None with nothing left
        if forced:  # take a sure pair first (one move, or points with the turn kept)
            t = forced[0]
            result = self._after_capture(self.value[t], self._move(counts, t, self._take[t]))
            choice = (TAKE_PAIR, t)
        elif not any(counts):
            result, choice = self._zero(), None
        else:
            result, choice = self._best(self._first_options(counts))
            if self.players == 2 and self.strategy == "optimal" and self._known_classes(counts) >= 2 and result < 0:
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
            (self._after_capture(self.value[t], self._move(counts, t, self._take[t])), (TAKE_PAIR, t))
            for t, count in enumerate(counts)
            if count and self.has_pair[t]
        ]
        if pairs and self.strategy != "optimal":
            return pairs[:1]  # the fixed strategies take a known pair first
        options = pairs
        for pool in self._pools_with_cards(counts):
            value = self._zero()
            for p, t, outcome, target, _kept in self._draws(counts, pool=pool):
                if outcome == PAIR:  # the card pairs with a known one: take them
                    value += p * self._after_capture(self.value[t], self._move(counts, t, target))
                else:
                    value += p * self._best(self._second_options(self._move(counts, t, target), target, False))[0]
            options.append((value, self._unknown_choice(pool)))
        if self.strategy == "optimal":
            for t, count in enumerate(counts):
                if count and self.partnerless[t]:
                    options.append((self._best(self._second_options(counts, t, True))[0], (KNOWN, t)))
        return options

    def _second_options(self, counts: tuple, first: int, first_known: bool) -> list:
        options = []
        for pool in self._pools_with_cards(counts, first):
            value = self._zero()
            for p, t, outcome, target, kept in self._draws(counts, first, pool):
                if outcome == FIRST:
                    value += p * self._after_capture(self.value[t], self._move(counts, t, target))
                else:  # a miss; a card pairing with another known card stays known
                    value += p * self._after_miss(self._move(counts, t, kept))
            options.append((value, self._unknown_choice(pool)))
        # A deliberate miss on another known card (after a known first card that would be a
        # 0-move, handled as stalling in value_of, or in solitaire a wasted turn).
        if not first_known and self._known_cards(counts) >= 2 and self.strategy != "greedy":
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

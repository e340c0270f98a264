"""The abstract positions the exact DP of :mod:`baselines.optimal` works on.

With perfect memory a position is summed up, for every *class* of cards that pair only among
themselves, by how many of the class's cards are still on the table and how many of those
are known. Which positions the cards lie in, and which class is which, changes nothing, so
a position is a multiset of class states: a tuple of counts, one per class state.

The classes are read off the compiled match table
(:func:`concentration_env.game.core.compile_rules`) rather than from a second copy of the
matching rules. Three kinds occur:

- a *clique* of ``size`` cards in which any two pair: size 2 for one-partner decks
  (``rank_colour`` with one pack, ``identical``, pictures, the two jokers), 4 for ``rank``
  (8 with two packs), 4 for ``rank_colour`` and the jokers with two packs;
- a *zebra* class of ``half`` red and ``half`` black cards, a pair being one of each colour;
- under checkerboard backs, twins whose two cards lie under different backs, both public.

A class state is ``(kind, m, a, b)``. For a clique, ``m`` cards are on the table and ``a``
of them are known (``b`` is 0). For a zebra class, ``m`` cards of each colour are on the
table, with ``a`` and ``b`` known cards of the two colours; the colours are interchangeable,
so states are stored with ``a >= b``. For checkerboard twins, ``a`` and ``b`` (0 or 1) say
whether the card under back 0 and the card under back 1 are known.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from concentration_env.game.core import compile_rules
from concentration_env.game.rules import Rules

# What turning up an unknown card can do.
NEW = 0  # it pairs with nothing known: the class has one more known card
PAIR = 1  # it pairs with a known card other than this turn's face-up first card
FIRST = 2  # it pairs with this turn's face-up first card: a capture


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


class Positions:
    """The class states of one game, and what one flip does to a position.

    A position is a tuple of counts, one per entry of :attr:`types` (the class states).
    ``players`` only decides how known pairs are handled: with two players under the one-flip
    rule, taking a pair ends the turn, so when to take it is left to the search; otherwise a
    pair that can only gain by being taken now is taken at once (:meth:`_must_take`), and
    positions holding one are not searched.
    """

    def __init__(self, rules: Rules, players: int):
        self.rules = rules
        self.structure = class_structure(rules)
        self.players = players
        self.keep_pairs = players == 2 and rules.turn_policy == "one_flip"
        self._build_types()

    def _build_types(self) -> None:
        """List the class states and, for each, what turning up one of its cards leads to."""
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
        self._plain, self._first = tuple(plain), tuple(first)
        self.after_take = tuple(take)  # class state once a known pair is taken (None: cleared)
        self.take_at_once = tuple(self._must_take(t) for t in types)
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
        """An upper bound on the positions searched: multisets of class states per kind."""
        bound = 1
        for k in range(len(self.structure.kinds)):
            classes = self.structure.class_kind.count(k)
            states = sum(1 for t, (kind, *_) in enumerate(self.types) if kind == k and not self.take_at_once[t]) + 1
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
    def move(counts: tuple, source: int, target: int | None) -> tuple:
        """One class changes from state ``source`` to ``target`` (None: cleared)."""
        new = list(counts)
        new[source] -= 1
        if target is not None:
            new[target] += 1
        return tuple(new)

    def face_down(self, counts: tuple, first: int | None = None, pool: int = 0) -> int:
        """How many cards of ``pool`` can turn up, with this turn's first card, if any, face up
        in a class of state ``first``: the sum of the weights of :meth:`draws`."""
        inside = self._in_pool[pool]
        total = sum(c * u for c, u in zip(counts, inside)) - (inside[first] if first is not None else 0)
        total += sum(f[0] for f in self._first[first] if f[-1] == pool) if first is not None else 0
        return total

    def draws(self, counts: tuple, first: int | None = None, pool: int = 0):
        """Each way turning up an unknown card of ``pool`` can go, as (weight, class state,
        outcome, next class state, class state if kept): ``weight`` of the
        :meth:`face_down` cards go that way. ``first`` is as in :meth:`face_down`. A card whose
        partner is known gives ``PAIR``; its next state is then the one after taking the pair
        and its kept state the one where the pair stays known on the table."""
        for t, count in enumerate(counts):
            plain = count - (t == first)
            if plain > 0:
                for weight, paired, captured, kept, where in self._plain[t]:
                    if where == pool:
                        yield weight * plain, t, (PAIR if paired else NEW), (captured if paired else kept), kept
            if t == first:
                for weight, outcome, target, where in self._first[t]:
                    if where == pool:
                        yield weight, t, outcome, target, target

    def pools_with_cards(self, counts: tuple, first: int | None = None) -> list[int]:
        """The pools holding a card that can turn up (``first`` as in :meth:`face_down`)."""
        return [pool for pool in self.pools if any(True for _ in self.draws(counts, first, pool))]

    def known_classes(self, counts: tuple) -> int:
        """Classes with at least one known card on the table."""
        return sum(c for c, j in zip(counts, self.known) if j)

    def known_cards(self, counts: tuple) -> int:
        """Known cards on the table."""
        return sum(c * j for c, j in zip(counts, self.known))

"""Brute-force reference for tiny decks: expectimax over every flip choice and every deal.

It uses none of the DP's abstractions (no classes, no "take known pairs first", no ruled-out
moves): the table is the multiset of what the cards on it show to a perfect-memory player
(a known face, or unknown, and the card's back; positions are interchangeable otherwise, so
only the multiset matters), every kind of card on the table is a choice for each flip, and
every unknown card is a chance node over the faces not yet seen under its back, which is
exactly averaging over every deal consistent with what was seen. Only the compiled match
table and back pattern are used.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from functools import cache

from concentration_env.game.core import compile_rules

UNKNOWN = -1


def solve(rules, strategy: str = "optimal"):
    """Solitaire: expected moves. Two players: the mover's expected pair difference.
    Greedy is only modelled for plain backs.

    ``strategy="greedy"`` fixes every choice to the greedy rule (a known pair if any; else an
    unknown card, then its known partner or another unknown card), ``"defer_pairs"`` to the
    same rule with known pairs taken only once no unknown card is left; "optimal" tries them all.
    Two-player positions where both players would flip two known cards forever are scored 0.
    """
    game = compile_rules(rules)
    match, value = game.match, game.pair_value
    players, extra = rules.num_players, rules.turn_policy == "extra_turn"

    def reveal(card, hidden):
        """(probability, face, hidden faces left) for a card ``(face or UNKNOWN, back)``."""
        face, back = card
        if face != UNKNOWN:
            yield Fraction(1), face, hidden
            return
        total = sum(count for _, count in hidden[back])
        for f, count in hidden[back]:
            rest = Counter(dict(hidden[back]))
            rest[f] -= 1
            left = list(hidden)
            left[back] = frozenset((+rest).items())
            yield Fraction(count, total), f, tuple(left)

    def has_pair(table):
        known = [f for f, _ in table if f != UNKNOWN]
        return [(a, b) for i, a in enumerate(known) for b in known[i + 1 :] if match[a, b]]

    def firsts(table):
        if strategy == "optimal":
            return sorted(set(table))
        pairs = has_pair(table)
        if strategy == "defer_pairs" and (UNKNOWN, 0) in table:
            pairs = []
        return [(pairs[0][0], 0)] if pairs else [(UNKNOWN, 0)]

    def seconds(rest, first_face):
        if strategy == "optimal":
            return sorted(set(rest))
        partner = [card for card in rest if card[0] != UNKNOWN and match[first_face, card[0]]]
        return partner[:1] or [(UNKNOWN, 0)]

    def without(table, face):
        items = list(table)
        items.remove(face)
        return items

    @cache
    def value_of(table, hidden):
        if not table:
            return Fraction(0)
        options, can_stall = [], False
        for a in firsts(table):
            rest_a = without(table, a)
            option = Fraction(0)
            for pa, fa, hidden_a in reveal(a, hidden):
                choices = []
                for b in seconds(rest_a, fa):
                    if a[0] != UNKNOWN and b[0] != UNKNOWN and not match[a[0], b[0]]:
                        can_stall = True  # two known cards: nothing changes
                        continue
                    rest_b = without(rest_a, b)
                    choices.append(
                        sum(pb * turn_value(rest_b, hidden_b, a, b, fa, fb) for pb, fb, hidden_b in reveal(b, hidden_a))
                    )
                if not choices:
                    option = None
                    break
                option += pa * (min(choices) if players == 1 else max(choices))
            if option is not None:
                options.append(option)
        best = min(options) if players == 1 else max(options)
        if players == 2 and can_stall and strategy == "optimal":
            best = max(best, Fraction(0))
        return best

    def turn_value(rest, hidden, a, b, fa, fb):
        if match[fa, fb]:
            later = value_of(tuple(sorted(rest)), hidden)
            if players == 1:
                return 1 + later
            return value[fa] + (later if extra else -later)
        later = value_of(tuple(sorted(rest + [(fa, a[1]), (fb, b[1])])), hidden)
        return 1 + later if players == 1 else -later

    backs = [int(b) for b in game.backs]
    # Each back holds one pack when backs are checkerboard (core.deal), else everything.
    packs = [game.deck[::2], game.deck[::2]] if game.checkerboard else [game.deck]
    hidden = tuple(frozenset(Counter(int(f) for f in pack).items()) for pack in packs)
    return value_of(tuple(sorted((UNKNOWN, back) for back in backs)), hidden)

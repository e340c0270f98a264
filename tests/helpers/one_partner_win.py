"""An independent reference for :mod:`baselines.win_share` on decks where every card has one
partner: positions are just (unseen pairs, lone known cards, known pairs), written out by hand
with no use of :mod:`baselines.positions`, together with its own margin DP for the optimum's
choices (ties broken in the DP's order: pairs, an unknown card, a known card, then stalling)."""

from __future__ import annotations

import sys
from functools import cache


def one_partner_win_share(pairs: int, extra_turn: bool, best_response: bool) -> tuple[float, float]:
    """(learner first, learner second) win shares against the margin optimum."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))

    def capture_margin(u, k, p):
        return 1 + margin(u, k, p) if extra_turn else 1 - margin(u, k, p)

    @cache
    def margin(u, k, p):
        if not (u or k or p):
            return 0.0
        return max(value for value, _ in first_margins(u, k, p))

    def first_margins(u, k, p):
        options = [(capture_margin(u, k, p - 1), "pair")] if p else []
        unseen = 2 * u + k
        if unseen:
            value = k / unseen * capture_margin(u, k - 1, p) if k else 0.0
            if u:
                value += 2 * u / unseen * max(v for v, _ in second_margins(u - 1, k, p, True))
            options.append((value, "unknown"))
        if k:
            options.append((max(v for v, _ in second_margins(u, k - 1, p, False)), "known"))
        if max(v for v, _ in options) < 0 and k >= 2:
            options.append((0.0, "stall"))
        return options

    def second_margins(u, k, p, first_new):
        """The first card's partner is unseen; (u, k, p) leave its class out."""
        unseen = 2 * u + k + 1
        value = capture_margin(u, k, p) / unseen
        if k:  # the partner of another lone known card: a known pair for the next player
            value -= k / unseen * margin(u, k, p + 1)
        if u:
            value -= 2 * u / unseen * margin(u - 1, k + 2, p)
        options = [(value, "unknown")]
        if first_new and k + 2 * p >= 1:
            options.append((-margin(u, k + 1, p), "known"))
        return options

    def pick(options):
        return max(options, key=lambda option: option[0])[1]

    def ended(lead):
        return 1.0 if lead > 0 else 0.5 if lead == 0 else 0.0

    @cache
    def win(u, k, p, lead, learner_moves, passed=False):
        if not (u or k or p):
            return ended(lead)
        step = 1 if learner_moves else -1

        def capture(u2, k2, p2):
            return win(u2, k2, p2, lead + step, learner_moves if extra_turn else not learner_moves)

        options = {"pair": capture(u, k, p - 1)} if p else {}
        unseen = 2 * u + k
        if unseen:
            value = k / unseen * capture(u, k - 1, p) if k else 0.0
            if u:
                value += 2 * u / unseen * second(u - 1, k, p, lead, learner_moves, True)
            options["unknown"] = value
        if k:
            options["known"] = second(u, k - 1, p, lead, learner_moves, False)
        if k >= 2:
            options["stall"] = ended(lead) if passed else win(u, k, p, lead, not learner_moves, True)
        if learner_moves and best_response:
            return max(options.values())
        return options[pick(first_margins(u, k, p))]

    def second(u, k, p, lead, learner_moves, first_new):
        step = 1 if learner_moves else -1
        unseen = 2 * u + k + 1
        value = win(u, k, p, lead + step, learner_moves if extra_turn else not learner_moves) / unseen
        if k:
            value += k / unseen * win(u, k, p + 1, lead, not learner_moves)
        if u:
            value += 2 * u / unseen * win(u - 1, k + 2, p, lead, not learner_moves)
        options = {"unknown": value}
        if first_new and k + 2 * p >= 1:
            options["known"] = win(u, k + 1, p, lead, not learner_moves)
        if learner_moves and best_response:
            return max(options.values())
        return options[pick(second_margins(u, k, p, first_new))]

    return win(pairs, 0, 0, 0, True), win(pairs, 0, 0, 0, False)

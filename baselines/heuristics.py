"""The heuristic players: random, perfect-memory greedy, safe-first and forgetful greedy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from baselines.base import NOWHERE, UNSEEN, BaselinePolicy
from concentration_env.game.checks import check_int, check_number
from concentration_env.game.rules import Rules


class RandomPolicy(BaselinePolicy):
    """Flips a uniformly random legal card (no memory at all)."""

    name = "random"

    def _remember(self, view: dict) -> None:
        """No memory at all."""

    def _act_duel(self, observation: Mapping[str, np.ndarray], legal: np.ndarray) -> int:
        return int(self.rng.choice(np.flatnonzero(legal)))

    def _choose(self, view: dict) -> np.ndarray:
        legal = view["legal"]
        count = legal.sum(axis=1)
        nth = np.minimum((self.rng.random(len(legal)) * count).astype(np.int64), np.maximum(count - 1, 0))
        return (np.cumsum(legal, axis=1) > nth[:, None]).argmax(axis=1)


class GreedyMemoryPolicy(BaselinePolicy):
    """The classic perfect-memory player: take a known pair if there is one; else flip an
    unknown card, then its known partner if there is one, else another unknown card.

    Works for every matching rule through the match table (several partners per card,
    jokers, pictures, two packs); with checkerboard backs the second unknown card is taken
    from under the other back, where the first card's twin must lie.
    """

    name = "greedy"
    stationary = True
    deliberate_miss = False  # after a first card that pairs with nothing known: a known card?
    defer_pairs = False  # leave known pairs on the table while unknown cards remain?

    def _choose(self, view: dict) -> np.ndarray:
        known = self._known(view)
        second = self._second_flip(view, known, np.full(len(known), self.deliberate_miss))
        return np.where(view["has_first"], second, self._first_flip_greedy(view, known))

    def _act_duel(self, observation: Mapping[str, np.ndarray], legal: np.ndarray) -> int:
        """Memory Duel: following, flip the known twin of the leader's card, else an unknown
        card; leading, flip a known card whose twin the opponent has not seen (it tells them
        nothing), else an unknown card."""
        n = len(legal)
        if self.duel_memory is None or self.duel_memory.shape[1] != n:
            self.duel_memory = np.full((2, n), UNSEEN, dtype=np.int32)
        for side, prefix in enumerate(("", "opponent_")):
            shown = np.asarray(observation[prefix + "cards"]).astype(np.int32)
            self.duel_memory[side][shown > 0] = shown[shown > 0] - 1
        mine, theirs = self.duel_memory
        removed = np.asarray(observation["opponent_removed"]).astype(bool)
        their_known = (theirs >= 0) & ~removed
        order = self.order[0, :n]
        if int(np.asarray(observation["leading"]).ravel()[0]):
            twin_seen = self.game.match[np.maximum(mine, 0)][:, np.maximum(theirs, 0)] & their_known[None]
            candidates = [legal & (mine >= 0) & ~twin_seen.any(axis=1), legal & (mine < 0)]
        else:
            lead = np.asarray(observation["opponent_face_up"]).astype(bool) & ~removed
            face = theirs[lead.argmax()]
            candidates = [legal & (mine >= 0) & self.game.match[face, np.maximum(mine, 0)], legal & (mine < 0)]
        for candidate in candidates + [legal]:
            if candidate.any():
                return int(np.where(candidate, order, NOWHERE).argmin())
        raise ValueError("no legal flip: the game is over or it is not this player's turn")

    # -- the greedy rule's flips (safe-first and forgetful play them too) -------------
    def _unknown_second(self, view: dict) -> np.ndarray:
        """(B, n): unknown cards that could pair with the first card. With checkerboard backs
        a card's twin lies under the other back, so only those are worth turning."""
        unknown = ~(self.memory >= 0) & view["legal"]
        if "back" in view:
            rows = np.arange(len(unknown))
            other_back = view["back"] != view["back"][rows, view["first_pos"]][:, None]
            unknown = np.where((unknown & other_back).any(axis=1)[:, None], unknown & other_back, unknown)
        return unknown

    def _first_flip_greedy(self, view: dict, known: np.ndarray) -> np.ndarray:
        """A card of a known pair, else an unknown card, else any legal card (with
        ``defer_pairs`` the unknown card comes before the known pair)."""
        pair, has_pair = self._pick(self._paired_known(known) & view["legal"])
        unknown, has_unknown = self._pick(~(self.memory >= 0) & view["legal"])
        anything, _ = self._pick(view["legal"])
        if self.defer_pairs:
            return np.where(has_unknown, unknown, np.where(has_pair, pair, anything))
        return np.where(has_pair, pair, np.where(has_unknown, unknown, anything))

    def _second_flip(self, view: dict, known: np.ndarray, deliberate_miss: np.ndarray) -> np.ndarray:
        """The known partner of the first card if there is one; else, where ``deliberate_miss``,
        a known card (revealing nothing new); else an unknown card; else any legal card."""
        rows = np.arange(len(known))
        first_face = self.memory[rows, view["first_pos"]]
        partner, has_partner = self._pick(self._partners(view, known, first_face) & view["legal"])
        other_known, has_known = self._pick(known & view["legal"])
        unknown, has_unknown = self._pick(self._unknown_second(view))
        anything, _ = self._pick(view["legal"])
        miss = deliberate_miss & has_known
        return np.where(has_partner, partner, np.where(miss, other_known, np.where(has_unknown, unknown, anything)))


class SafeFirstPolicy(GreedyMemoryPolicy):
    """Reference text 004's strategy: turn the less certain card first. Take a known pair if
    there is one; else flip an unknown card; if it pairs with a known card take that, else
    flip a known card (a deliberate miss that shows the opponents nothing new) when there is
    one, else another unknown card. In solitaire this wastes turns; against opponents under
    the one-flip rule it is what the DP of ``baselines.optimal`` does in most positions."""

    name = "safe_first"
    deliberate_miss = True


class DeferPairsPolicy(GreedyMemoryPolicy):
    """Greedy, except that a known pair stays on the table while unknown cards remain.

    In solitaire every pair costs one move whenever it is taken, but a known card left on the
    table can still pair with a card of its rank that turns up later (a first flip that pairs
    at once instead of a second flip that may miss). Under rank matching (four cards a rank)
    this one rule is most of what the exact optimum gains over greedy; with one partner per
    card it plays like greedy. The DP of :mod:`baselines.optimal` values it exactly
    (``strategy="defer_pairs"``)."""

    name = "defer_pairs"
    defer_pairs = True


class ForgetfulPolicy(GreedyMemoryPolicy):
    """A human-like greedy player with imperfect memory, for graded opponents and curricula.

    It remembers only cards it has seen face up (whatever the observation mode), at most
    ``capacity`` of them (the most recently seen), and at the start of each of its turns
    forgets each remembered card with probability ``forget``. ``capacity=None, forget=0``
    is the perfect-memory greedy player.
    """

    name = "forgetful"
    stationary = False  # it forgets at random
    per_game = BaselinePolicy.per_game + ("seen_at",)
    batch_wide = BaselinePolicy.batch_wide + ("clock",)
    _act_duel = BaselinePolicy._act_duel  # its forgetting is defined on the shared table only

    def __init__(self, rules: Rules, capacity: int | None = 8, forget: float = 0.1):
        self.capacity = check_int("capacity", capacity, minimum=0, optional=True)
        self.forget = check_number("forget", forget, 0.0, 1.0, allowed="a probability in [0, 1]")
        super().__init__(rules)

    def reset_batch(self, seeds: Sequence[int | None]) -> None:
        super().reset_batch(seeds)
        self.seen_at = np.zeros_like(self.memory)  # when each remembered card was last seen
        self.clock = 0

    def _remember(self, view: dict) -> None:
        self.clock += 1
        starting = ~view["has_first"]
        if self.forget:
            lost = (self.rng.random(self.memory.shape) < self.forget) & starting[:, None]
            self.memory[lost] = UNSEEN
        # A fixed order would send it back to the very cards it just forgot: reshuffle it.
        self.order = np.where(starting[:, None], self.rng.random(self.memory.shape), self.order)
        shown = view["face_up"] & (view["cards"] > 0)
        self.memory[shown] = view["cards"][shown] - 1
        self.seen_at[shown] = self.clock
        self.memory[view["removed"]] = UNSEEN  # captured cards need no remembering
        if self.capacity is not None:
            held = (self.memory >= 0) & ~shown
            recency = np.where(held, self.seen_at, -1)
            # Keep the `capacity` most recently seen cards besides those face up now.
            rank = (-recency).argsort(axis=1, kind="stable").argsort(axis=1, kind="stable")
            self.memory[held & (rank >= self.capacity)] = UNSEEN

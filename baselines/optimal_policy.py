"""The optimal player: it counts each game's class states (a position of
:mod:`baselines.positions`) from its memory and the removed cards, and flips what the solver
of :mod:`baselines.optimal` chooses there."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from baselines import optimal
from baselines.base import BaselinePolicy
from concentration_env.game.rules import Rules


class OptimalPolicy(BaselinePolicy):
    """Exact optimal play from the dynamic programme of :mod:`baselines.optimal`.

    Solitaire: fewest expected moves, for every matching rule and for checkerboard backs
    (chips are ignored: it plays the unlimited game's optimal strategy). Two players (one
    partner per card, either turn rule): largest expected pair difference, including
    flipping a known card instead of an unknown one and stalling (two known cards) where
    every other move loses. Raises ``ValueError`` for games the DP does not model (three or
    more players, two-player decks with larger classes, decks too large for the DP).
    """

    name = "optimal"
    stationary = True
    # known_at_opening: what was known when the turn began; stalling: the opening chose to stall.
    # The turn's first card is read from the board, not from this policy's own pick, so the
    # second flip is right whoever turned the first card (scripts/probe_gap.py substitutes).
    per_game = BaselinePolicy.per_game + ("known_at_opening", "stalling")
    STALL, KNOWN_MISS = -1, -1  # codes besides class states and pools

    def __init__(self, rules: Rules):
        self.solver = optimal.solver(rules.replace(max_mismatches=None))
        structure = self.solver.structure
        self.structure = structure
        self._size = np.array([structure.kinds[k].size for k in structure.class_kind])
        self._per_side = np.array([2 if structure.kinds[k].zebra else 1 for k in structure.class_kind])
        self._class_kind = np.array(structure.class_kind)
        top = int(self._size.max()) + 1
        self._state_table = np.full((len(structure.kinds), top, top, top), -1, dtype=np.int64)
        for index, (k, m, a, b) in enumerate(self.solver.types):
            self._state_table[k, m, a, b] = index
            if structure.kinds[k].zebra:  # colours are symmetric: both orders name one state
                self._state_table[k, m, b, a] = index
        super().__init__(rules)

    def reset_batch(self, seeds: Sequence[int | None]) -> None:
        super().reset_batch(seeds)
        self.known_at_opening = np.zeros((len(seeds), self.game.num_cards), dtype=bool)
        self.stalling = np.zeros(len(seeds), dtype=bool)

    def _class_states(self, view: dict, known: np.ndarray):
        """Per game: how many classes are in each class state, and each card's class state."""
        batch, classes = len(known), self.structure.num_classes
        faces = np.maximum(self.memory, 0)
        cls = self.structure.face_class[faces]
        side = self.structure.side_of(faces, view["backs"])
        rows = np.broadcast_to(np.arange(batch)[:, None], known.shape)
        gone = np.zeros((batch, classes), dtype=np.int64)
        held = np.zeros((batch, classes, 2), dtype=np.int64)
        captured = view["removed"]
        np.add.at(gone, (rows[captured], cls[captured]), 1)
        np.add.at(held, (rows[known], cls[known], side[known]), 1)
        left = (self._size - gone) // self._per_side  # cards left (of each colour, for zebra)
        kind = np.broadcast_to(self._class_kind, left.shape)
        state = self._state_table[kind, left, held[..., 0], held[..., 1]]
        counts = np.zeros((batch, len(self.solver.types)), dtype=np.int64)
        live = state >= 0
        np.add.at(counts, (np.nonzero(live)[0], state[live]), 1)
        return counts, state[np.arange(batch)[:, None], cls]

    def _decide(self, keys: np.ndarray, decide) -> np.ndarray:
        """Apply ``decide`` once per distinct abstract state among the rows of ``keys``."""
        distinct, inverse = np.unique(keys, axis=0, return_inverse=True)
        return np.array([decide(tuple(int(x) for x in key)) for key in distinct], dtype=np.int64)[inverse.ravel()]

    @staticmethod
    def _pool_of(choice) -> int:
        """The back to turn a face-down card from (0 when backs carry no information)."""
        return choice[1] if isinstance(choice, tuple) else 0

    def _opening_code(self, counts: tuple) -> int:
        """First flip as a number: STALL; -(10 + back) for a face-down card; else a class state."""
        choice = self.solver.first_choice(counts)
        if choice == optimal.STALL:
            return self.STALL
        if choice is None or choice == optimal.UNKNOWN or choice[0] == optimal.UNKNOWN:
            return -10 - self._pool_of(choice)
        return choice[1]

    def _second_code(self, key: tuple) -> int:
        """Second flip as a number: KNOWN_MISS for a known card, else the back to turn a card from."""
        *counts, first_state, first_known = key
        choice = self.solver.second_choice(tuple(counts), first_state, bool(first_known))
        return self.KNOWN_MISS if choice == optimal.KNOWN else self._pool_of(choice)

    def best_flips(self, observations: Mapping[str, np.ndarray]) -> np.ndarray:
        """Solitaire: (B, n) bool, the legal cards whose flip is worth as much as the best one by
        the DP's values (ties included; ``act_batch`` turns one of them). Call it after
        ``act_batch`` on the same observations: it reads what that remembered."""
        if self.game.num_players != 1:
            raise ValueError(f"num_players={self.game.num_players}: best_flips judges solitaire flips only")
        view = self._view(observations)
        known = self._known(view)
        counts, card_state = self._class_states(view, known)
        rows = np.arange(len(known))
        partner = self._partners(view, known, self.memory[rows, view["first_pos"]]) & view["legal"]
        has_partner = view["has_first"] & partner.any(axis=1)
        paired = self._paired_known(known)  # another known card pairs with it, same face or not
        best = partner & has_partner[:, None]  # the DP takes a known match of the card showing at once
        for game in np.flatnonzero(~has_partner):
            best[game] = self._best_of(view, game, known[game], paired[game], counts[game], card_state[game])
        return best & view["legal"]

    def _best_of(self, view, game, known, paired, counts, card_state) -> np.ndarray:
        """(n,) bool for one game with no known match of a card showing: the flips whose
        option the DP values at its best."""
        solver, key = self.solver, tuple(int(c) for c in counts)
        if view["has_first"][game]:
            position = view["first_pos"][game]
            first_known = bool(self.known_at_opening[game, position])
            options = solver._second_options(key, int(card_state[position]), first_known)
            choice_of = [
                optimal.KNOWN if known[p] else solver.unknown_choice(int(view["backs"][game, p]))
                for p in range(len(known))
            ]
        else:
            options = solver._first_options(key)
            choice_of = [
                ((optimal.TAKE_PAIR if paired[p] else optimal.KNOWN), int(card_state[p]))
                if known[p]
                else solver.unknown_choice(int(view["backs"][game, p]))
                for p in range(len(known))
            ]
        value = {choice: worth for worth, choice in options}
        if not value:  # the game is over
            return np.zeros(len(known), dtype=bool)
        top = min(value.values())
        tolerance = 1e-9 * max(1.0, abs(float(top)))
        return np.array([choice in value and value[choice] <= top + tolerance for choice in choice_of])

    def _view(self, observations: Mapping[str, np.ndarray]) -> dict:
        view = super()._view(observations)
        view["backs"] = view.get("back", np.zeros_like(view["cards"])).astype(np.int64)
        return view

    def _choose(self, view: dict) -> np.ndarray:
        known = self._known(view)
        counts, card_state = self._class_states(view, known)
        rows = np.arange(len(known))
        legal_known = known & view["legal"]
        unknown = ~(self.memory >= 0) & view["legal"]
        anything, _ = self._pick(view["legal"])
        opening = ~view["has_first"]

        code = np.full(len(known), -10, dtype=np.int64)
        if opening.any():
            code[opening] = self._decide(counts[opening], self._opening_code)
        self.stalling = np.where(opening, code == self.STALL, self.stalling)
        self.known_at_opening = np.where(opening[:, None], known, self.known_at_opening)
        face_down = unknown & (view["backs"] == (-10 - code)[:, None])
        target = np.where(
            (code <= -10)[:, None],
            face_down,
            legal_known & ((code == self.STALL)[:, None] | (card_state == code[:, None])),
        )
        first, found = self._pick(target)
        first = np.where(found, first, anything)

        first_face = self.memory[rows, view["first_pos"]]
        partner, has_partner = self._pick(self._partners(view, known, first_face) & view["legal"])
        first_known = self.known_at_opening[rows, view["first_pos"]]
        stalling = self.stalling & first_known  # a stall turns a known card first
        # The DP's second-flip choice, where there is a choice (no partner known, no stall).
        second = np.zeros(len(known), dtype=np.int64)
        choosing = ~opening & ~has_partner & ~stalling
        if choosing.any():
            first_state = card_state[rows, view["first_pos"]]
            keys = np.column_stack([counts, first_state, first_known])[choosing]
            second[choosing] = self._decide(keys, self._second_code)
        miss, has_known = self._pick(legal_known)
        turn, has_turn = self._pick(unknown & (view["backs"] == second[:, None]))
        deliberate = (stalling | (second == self.KNOWN_MISS)) & has_known
        flip = np.where(has_partner, partner, np.where(deliberate, miss, np.where(has_turn, turn, anything)))

        return np.where(opening, first, flip)

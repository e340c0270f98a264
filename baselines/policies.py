"""Baseline players: random, perfect-memory greedy, safe-first, exact optimal and forgetful.

Every policy follows one small protocol, for the solitaire env, every seat of the
multi-player env and the duel env::

    policy = GreedyMemoryPolicy(env.unwrapped.rules)   # the rules say which cards pair
    policy.reset(seed=0)                                # at the start of every game
    action = policy.act(observation, action_mask)       # -> int position to flip

``observation`` is the solitaire env's observation dict, or the ``"observation"`` entry of a
PettingZoo observation (the same keys plus ``scores``; Memory Duel's own keys are
recognised by ``leading``). Policies read only what the observing
player sees: in ``observation_mode="visible"`` they keep their own memory of every face they
have been shown (including the two cards shown after a missed pair); they never look at the
dealt layout. Face ids are decoded with ``rules.faces`` and compared with the compiled match
table ``core.compile_rules(rules).match``.

The policies are batch-first like the core: ``reset_batch(seeds)`` and
``act_batch(observations)`` play many games at once on ``(B, n)`` observation arrays (the
evaluation harness uses them); ``act`` is the same code on a batch of one, so a policy plays
each game identically whether it is batched or not. Choices among unknown cards follow a
random order of the positions drawn at reset from the game's seed (a uniformly random
unknown card, since the order is independent of the deal).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from baselines import optimal
from concentration_env.game.core import compile_rules
from concentration_env.game.rules import Rules

UNSEEN = -1  # memory entry of a position whose face the player does not know
NOWHERE = np.inf  # order key of a position that is not a candidate


class BaselinePolicy:
    """Base class: memory of faces seen, a per-game random order of positions, batching."""

    name = "policy"
    per_game: tuple[str, ...] = ("order", "memory")  # arrays with one row per game of the batch
    batch_wide: tuple[str, ...] = ("rng",)  # what all games of a batch share (kept when some games restart)

    def __init__(self, rules: Rules):
        if not isinstance(rules, Rules):
            raise TypeError(f"a policy needs the game's Rules (env.unwrapped.rules), got {type(rules).__name__}")
        self.rules = rules
        self.game = compile_rules(rules)
        self.reset()

    # -- protocol -------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> None:
        """Forget everything; start a new game (``seed`` fixes the policy's own randomness)."""
        self.reset_batch([seed])

    def act(self, observation: Mapping[str, np.ndarray], action_mask: np.ndarray) -> int:
        """The position to flip next, given one game's observation and its legal flips
        (the duel env's observations, with ``leading``, are played by :meth:`_act_duel`)."""
        if "leading" in observation:
            return self._act_duel(observation, np.asarray(action_mask).astype(bool))
        batch = {key: np.asarray(value)[None] for key, value in observation.items() if key != "scores"}
        batch["action_mask"] = np.asarray(action_mask)[None]
        return int(self.act_batch(batch)[0])

    def reset_batch(self, seeds: Sequence[int | None]) -> None:
        """Start ``len(seeds)`` games at once, game ``b`` seeded by ``seeds[b]``."""
        n = self.game.num_cards
        rngs = [np.random.default_rng(seed) for seed in seeds]
        self.order = np.stack([rng.random(n) for rng in rngs])
        self.rng = rngs[0] if len(rngs) == 1 else np.random.default_rng([s for s in seeds if s is not None] or None)
        self.memory = np.full((len(seeds), n), UNSEEN, dtype=np.int32)
        self.duel_memory: np.ndarray | None = None  # the two layouts of Memory Duel, allocated on first use

    def _act_duel(self, observation: Mapping[str, np.ndarray], legal: np.ndarray) -> int:
        """A flip of one's own layout in Memory Duel (``concentration_env.duel_v0``)."""
        raise ValueError(f"the {self.name} policy does not play the duel; allowed: random, greedy, safe_first")

    def keep(self, rows: np.ndarray) -> None:
        """Keep only games ``rows`` of the batch (the others are over)."""
        for name in self.per_game:
            setattr(self, name, getattr(self, name)[rows])

    def act_batch(self, observations: Mapping[str, np.ndarray]) -> np.ndarray:
        """Positions to flip in each game of a batch of ``(B, n)`` observations."""
        view = self._view(observations)
        self._remember(view)
        return self._choose(view)

    def reset_rows(self, rows: np.ndarray, seeds: Sequence[int | None]) -> None:
        """Start new games in ``rows`` of the batch, game ``rows[k]`` seeded by ``seeds[k]``;
        the other games play on (and the batch-wide random stream keeps going)."""
        kept = {name: getattr(self, name) for name in self.per_game + self.batch_wide}
        self.reset_batch(seeds)
        for name, value in kept.items():
            if name in self.per_game:
                value[rows] = getattr(self, name)
            setattr(self, name, value)

    def act_rows(self, observations: Mapping[str, np.ndarray], rows: np.ndarray) -> np.ndarray:
        """:meth:`act_batch` for games ``rows`` of the batch only (``observations`` holds just
        those games); what the other games remember is left as it is."""
        kept = {name: getattr(self, name) for name in self.per_game}
        try:
            for name, value in kept.items():
                setattr(self, name, value[rows])
            chosen = self.act_batch(observations)
            for name, value in kept.items():
                value[rows] = getattr(self, name)
        finally:
            for name, value in kept.items():
                setattr(self, name, value)
        return chosen

    # -- what the player sees and remembers -----------------------------------------
    def _view(self, observations: Mapping[str, np.ndarray]) -> dict:
        removed = np.asarray(observations["removed"]).astype(bool)
        legal = np.asarray(observations["action_mask"]).astype(bool)
        face_up = np.asarray(observations["face_up"]).astype(bool)
        cards = np.asarray(observations["cards"]).astype(np.int32)
        first = face_up & ~legal & ~removed  # flipped first this turn (not flippable again)
        view = {"removed": removed, "legal": legal, "face_up": face_up, "cards": cards, "first": first}
        view["has_first"] = first.any(axis=1)
        view["first_pos"] = first.argmax(axis=1)
        if "back" in observations:
            view["back"] = np.asarray(observations["back"]).astype(np.int8)
        return view

    def _remember(self, view: dict) -> None:
        """Perfect memory: every face ever shown (in memory mode the observation has them all)."""
        shown = view["cards"] > 0
        self.memory[shown] = view["cards"][shown] - 1

    def _choose(self, view: dict) -> np.ndarray:
        """The flips to make, from what is seen now and remembered (each policy's own rule)."""
        raise NotImplementedError(f"{type(self).__name__} must define _choose")

    # -- helpers shared by the memory players ----------------------------------------
    def _pick(self, candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(position, found) per game: the candidate earliest in the game's random order."""
        keyed = np.where(candidates, self.order, NOWHERE)
        return keyed.argmin(axis=1), np.any(candidates, axis=1)

    def _known(self, view: dict) -> np.ndarray:
        return (self.memory >= 0) & ~view["removed"]

    def _partners(self, view: dict, known: np.ndarray, faces: np.ndarray) -> np.ndarray:
        """(B, n): known cards on the table that pair with face ``faces[b]`` (not the first card)."""
        match = self.game.match[faces[:, None], np.maximum(self.memory, 0)]
        return known & match & ~view["first"]

    def _paired_known(self, known: np.ndarray) -> np.ndarray:
        """(B, n): known cards whose partner is also known (a known pair)."""
        faces = np.maximum(self.memory, 0)
        counts = np.zeros((len(known), self.game.num_faces), dtype=np.int32)
        np.add.at(counts, (np.nonzero(known)[0], faces[known]), 1)
        pairing = counts @ self.game.match.T.astype(np.int32)  # known cards each face pairs with
        rows = np.arange(len(known))[:, None]
        itself = self.game.match[faces, faces].astype(np.int32)
        return known & (pairing[rows, faces] - itself > 0)

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
        """A card of a known pair, else an unknown card, else any legal card."""
        pair, has_pair = self._pick(self._paired_known(known) & view["legal"])
        unknown, has_unknown = self._pick(~(self.memory >= 0) & view["legal"])
        anything, _ = self._pick(view["legal"])
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
    deliberate_miss = False  # after a first card that pairs with nothing known: a known card?

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


class SafeFirstPolicy(GreedyMemoryPolicy):
    """Reference text 004's strategy: turn the less certain card first. Take a known pair if
    there is one; else flip an unknown card; if it pairs with a known card take that, else
    flip a known card (a deliberate miss that shows the opponents nothing new) when there is
    one, else another unknown card. In solitaire this wastes turns; against opponents under
    the one-flip rule it is what the DP of ``baselines.optimal`` does in most positions."""

    name = "safe_first"
    deliberate_miss = True


class ForgetfulPolicy(GreedyMemoryPolicy):
    """A human-like greedy player with imperfect memory, for graded opponents and curricula.

    It remembers only cards it has seen face up (whatever the observation mode), at most
    ``capacity`` of them (the most recently seen), and at the start of each of its turns
    forgets each remembered card with probability ``forget``. ``capacity=None, forget=0``
    is the perfect-memory greedy player.
    """

    name = "forgetful"
    per_game = BaselinePolicy.per_game + ("seen_at",)
    batch_wide = BaselinePolicy.batch_wide + ("clock",)
    _act_duel = BaselinePolicy._act_duel  # its forgetting is defined on the shared table only

    def __init__(self, rules: Rules, capacity: int | None = 8, forget: float = 0.1):
        if capacity is not None and (not isinstance(capacity, int) or capacity < 0):
            raise ValueError(f"invalid capacity={capacity!r}; allowed: None or an int >= 0")
        if not 0.0 <= forget <= 1.0:
            raise ValueError(f"invalid forget={forget!r}; allowed: a probability in [0, 1]")
        self.capacity, self.forget = capacity, forget
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
    per_game = BaselinePolicy.per_game + ("first_known", "stalling")
    STALL, ANY_UNKNOWN, KNOWN_MISS = -1, -2, -1  # codes besides class states and pools

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
        self.first_known = np.zeros(len(seeds), dtype=bool)
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
        # The DP's second-flip choice, where there is a choice (no partner known, no stall).
        second = np.zeros(len(known), dtype=np.int64)
        choosing = ~opening & ~has_partner & ~self.stalling
        if choosing.any():
            first_state = card_state[rows, view["first_pos"]]
            keys = np.column_stack([counts, first_state, self.first_known])[choosing]
            second[choosing] = self._decide(keys, self._second_code)
        miss, has_known = self._pick(legal_known)
        turn, has_turn = self._pick(unknown & (view["backs"] == second[:, None]))
        deliberate = (self.stalling | (second == self.KNOWN_MISS)) & has_known
        flip = np.where(has_partner, partner, np.where(deliberate, miss, np.where(has_turn, turn, anything)))

        action = np.where(opening, first, flip)
        self.first_known = np.where(opening, known[rows, action], self.first_known)
        return action


POLICIES = {
    policy.name: policy
    for policy in (RandomPolicy, GreedyMemoryPolicy, SafeFirstPolicy, OptimalPolicy, ForgetfulPolicy)
}


def make_policy(name: str, rules: Rules, **kwargs) -> BaselinePolicy:
    """A policy by name (``"random"``, ``"greedy"``, ``"safe_first"``, ``"optimal"``,
    ``"forgetful"``), built for ``rules`` with extra keyword arguments (e.g. ``capacity``)."""
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; allowed: {', '.join(POLICIES)}")
    return POLICIES[name](rules, **kwargs)

"""What every baseline player shares: the protocol, memory of the faces seen, a per-game
random order of the positions, and batches of games.

One small protocol serves the solitaire env, every seat of the multi-player env and the
duel env::

    policy = GreedyMemoryPolicy(env.unwrapped.rules)   # the rules say which cards pair
    policy.reset(seed=0)                                # at the start of every game
    action = policy.act(observation, action_mask)       # -> int position to flip

``observation`` is the solitaire env's observation dict, or the ``"observation"`` entry of a
PettingZoo observation (the same keys plus ``scores``); Memory Duel's observations are told
apart by their ``leading`` key. A policy reads only what its player sees: under
``observation_mode="visible"`` it keeps its own memory of every face it has been shown (the
two cards of a missed pair included), and it never looks at the dealt layout. Faces are
decoded with ``rules.faces`` and compared through the compiled match table
``core.compile_rules(rules).match``.

Like the core, policies are batch-first: ``reset_batch(seeds)`` and ``act_batch(observations)``
play many games at once on ``(B, n)`` observation arrays (the evaluation harness calls them),
and ``act`` runs the same code on a batch of one, so a game is played the same way batched or
alone. Where a policy picks among unknown cards it takes the one first in a random order of
the positions drawn at reset from the game's seed; that order is independent of the deal, so
the pick is a uniformly random unknown card.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from concentration_env.game.core import compile_rules
from concentration_env.game.rules import Rules

UNSEEN = -1  # memory entry of a position whose face the player does not know
NOWHERE = np.inf  # order key of a position that is not a candidate


class BaselinePolicy:
    """Base class: memory of faces seen, a per-game random order of positions, batching."""

    name = "policy"
    stationary = False  # see concentration_env.game.policy.is_stationary
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

    def _paired_known(self, known: np.ndarray) -> np.ndarray:
        """(B, n): known cards whose partner is also known (a known pair)."""
        faces = np.maximum(self.memory, 0)
        counts = np.zeros((len(known), self.game.num_faces), dtype=np.int32)
        np.add.at(counts, (np.nonzero(known)[0], faces[known]), 1)
        pairing = counts @ self.game.match.T.astype(np.int32)  # known cards each face pairs with
        rows = np.arange(len(known))[:, None]
        itself = self.game.match[faces, faces].astype(np.int32)
        return known & (pairing[rows, faces] - itself > 0)

    def _partners(self, view: dict, known: np.ndarray, faces: np.ndarray) -> np.ndarray:
        """(B, n): known cards on the table that pair with face ``faces[b]`` (not the first card)."""
        match = self.game.match[faces[:, None], np.maximum(self.memory, 0)]
        return known & match & ~view["first"]

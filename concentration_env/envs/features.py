"""Observation-feature wrappers: per-card features that make the matching relation explicit.

The raw observation gives each card's face id (``cards``). To play well an agent must find
"the known card that pairs with the one face up", a relation between two positions that a
plain MLP over one-hot faces learns only slowly. :func:`card_features` derives it (and a few
related facts) from the observation and the public rules, so a network can score every card
with the same weights. Nothing here reads hidden state: every feature is a function of what
the observing player sees plus the match table that the rules define.

Features of card ``i`` (rows of the ``(num_cards, NUM_CARD_FEATURES)`` array, in this order):

==================  ===========================================================================
``unknown``         on the table and its face is unknown to the player
``known``           on the table, face known, not face up now
``first``           the turn's first card, face up now (exactly one card is face up)
``face_up``         face up now (the first card, or the two cards of a pair just missed)
``removed``         captured
``legal``           a legal flip now
``matches_first``   face known, and it pairs with the turn's first card
``known_pair``      face known and on the table, and another such card pairs with it
``mid_turn``        (global) a first card is face up: this flip completes a turn
``match_known``     (global) some card has ``matches_first``
``pair_known``      (global) some card has ``known_pair``
``unknown_frac``    (global) fraction of the deck still unknown on the table
``removed_frac``    (global) fraction of the deck captured
==================  ===========================================================================

Global features repeat on every row so that a per-card network sees its context.

:func:`count_features` (the feature set ``count_features``) appends two public counts, each
one-hot over ``0 .. num_cards // 2`` and repeated on every row:

==================  ===========================================================================
``unseen_pairs``    (unknown cards - lone known cards) // 2: on a deck where every card has one
                    partner, the number of pairs of which no card has been seen
``lone_known``      cards on the table whose face is known and that have no known partner
==================  ===========================================================================

Why one-hot counts: the exact two-player optimum on one-partner decks turns on the parity
of these counts. With the extra-turn rule, after a new first card that pairs with nothing,
it turns a known card on purpose when the unseen pairs before the turn are even and a
second unknown card when they are odd, in every position but one (Zwick and Paterson's
rule; ``tests/baselines/test_optimal.py`` checks it on the DP); under one flip the choice
alternates mostly with the parity of the lone known cards. ``unknown_frac`` and
``removed_frac`` carry the same numbers, but a small network does not read a parity off a
fraction; from a one-hot count it is one weight per value.

:func:`count_lead_features` (the feature set ``count_lead_features``, for games of two or more
players) appends one more column group to those, repeated on every row:

==================  ===========================================================================
``lead``            the observer's points minus the best other seat's, one-hot over
                    ``-num_cards // 2 .. num_cards // 2`` (clipped)
==================  ===========================================================================

Why the lead: the exact optimum maximises the expected pair margin, but a game is won by
being ahead at the end. Where to stop revealing cards (a "0-move", two known cards, passes
the turn without showing anything; when both players would rather pass, the game stops and
is scored as it stands) depends on who is ahead, which no count says.

:class:`CardFeatures` wraps a single Gymnasium env; :class:`VecCardFeatures` wraps an SB3
``VecEnv`` (for example the batched one of ``concentration_env.integrations.sb3``); both call the one
batched function of the feature set they are given (:data:`FEATURE_SETS`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import gymnasium as gym
import numpy as np

from concentration_env.game.core import Game, compile_rules

CARD_FEATURES = ("unknown", "known", "first", "face_up", "removed", "legal", "matches_first", "known_pair")
GLOBAL_FEATURES = ("mid_turn", "match_known", "pair_known", "unknown_frac", "removed_frac")
FEATURE_NAMES = CARD_FEATURES + GLOBAL_FEATURES
NUM_CARD_FEATURES = len(FEATURE_NAMES)


def card_features(game: Game, obs: dict[str, np.ndarray]) -> np.ndarray:
    """Per-card features ``(B, num_cards, NUM_CARD_FEATURES)`` float32 from a batch of
    observations (``cards``, ``face_up``, ``removed``, ``action_mask``, each ``(B, n)``)."""
    cards = np.asarray(obs["cards"])
    up = np.asarray(obs["face_up"]).astype(bool)
    removed = np.asarray(obs["removed"]).astype(bool)
    legal = np.asarray(obs["action_mask"]).astype(bool)
    n = cards.shape[1]
    visible = (cards > 0) & ~removed  # face known (remembered or face up) and still on the table
    unknown = ~visible & ~removed
    mid_turn = up.sum(axis=1) == 1
    first = up & mid_turn[:, None]
    face = np.maximum(cards.astype(np.intp) - 1, 0)
    first_face = face[np.arange(len(cards)), first.argmax(axis=1)]
    matches_first = visible & ~first & mid_turn[:, None] & game.match[first_face[:, None], face]
    # pairs[b, i, j]: cards i and j are both known on the table and pair with each other
    pairs = visible[:, :, None] & visible[:, None, :] & game.match[face[:, :, None], face[:, None, :]]
    pairs &= ~np.eye(n, dtype=bool)
    known_pair = pairs.any(axis=2)
    per_card = [unknown, visible & ~up, first, up, removed, legal, matches_first, known_pair]
    global_ = [
        mid_turn,
        matches_first.any(axis=1),
        known_pair.any(axis=1),
        unknown.mean(axis=1),
        removed.mean(axis=1),
    ]
    out = np.empty(cards.shape + (NUM_CARD_FEATURES,), dtype=np.float32)
    for k, column in enumerate(per_card):
        out[:, :, k] = column
    for k, column in enumerate(global_, start=len(per_card)):
        out[:, :, k] = column[:, None]
    return out


COUNT_FEATURES = ("unseen_pairs", "lone_known")  # each one-hot over 0 .. num_cards // 2
FEATURE_COLUMN = {name: k for k, name in enumerate(FEATURE_NAMES)}  # feature name -> its column


def count_width(game: Game) -> int:
    """How many values one count's one-hot takes: ``num_cards // 2 + 1``."""
    return game.num_cards // 2 + 1


def count_features(game: Game, obs: dict[str, np.ndarray]) -> np.ndarray:
    """:func:`card_features` followed by the one-hot counts of :data:`COUNT_FEATURES`:
    ``(B, num_cards, NUM_CARD_FEATURES + 2 * count_width(game))`` float32."""
    base = card_features(game, obs)
    on_table = base[..., FEATURE_COLUMN["removed"]] == 0
    known = (base[..., FEATURE_COLUMN["known"]] + base[..., FEATURE_COLUMN["face_up"]] > 0) & on_table
    lone = (known & (base[..., FEATURE_COLUMN["known_pair"]] == 0)).sum(axis=1)
    unknown = (base[..., FEATURE_COLUMN["unknown"]] > 0).sum(axis=1)
    width = count_width(game)
    counts = [np.clip((unknown - lone) // 2, 0, width - 1), np.clip(lone, 0, width - 1)]
    return with_one_hots(base, [(count, width) for count in counts])


def with_one_hots(base: np.ndarray, groups: list[tuple[np.ndarray, int]]) -> np.ndarray:
    """``base`` ``(B, n, F)`` followed by one one-hot column group per ``(values, width)``
    (``values`` ``(B,)`` in ``0 .. width - 1``), repeated on every row."""
    start = base.shape[2]
    out = np.zeros(base.shape[:2] + (start + sum(width for _, width in groups),), dtype=np.float32)
    out[..., :start] = base
    rows = np.arange(len(base))
    for values, width in groups:
        out[rows, :, start + values] = 1.0
        start += width
    return out


def lead_width(game: Game) -> int:
    """How many values the lead's one-hot takes: ``2 * (num_cards // 2) + 1``."""
    return 2 * count_width(game) - 1


def count_lead_features(game: Game, obs: dict[str, np.ndarray]) -> np.ndarray:
    """:func:`count_features` followed by the one-hot ``lead`` (the observer's points minus the
    best other seat's; ``obs["scores"]`` ``(B, players)``, the observer first):
    ``(B, num_cards, NUM_CARD_FEATURES + 2 * count_width(game) + lead_width(game))`` float32."""
    if "scores" not in obs:
        raise ValueError(
            "feature set 'count_lead_features' reads the scores, which these observations lack "
            f"(they have {', '.join(obs)}); it is for games of 2 or more players"
        )
    scores = np.asarray(obs["scores"]).astype(np.int64)
    reach = count_width(game) - 1
    lead = np.clip(scores[:, 0] - scores[:, 1:].max(axis=1), -reach, reach)
    return with_one_hots(count_features(game, obs), [(lead + reach, lead_width(game))])


# Feature set name (a config's ``features``) -> its batched function.
FEATURE_SETS: dict[str, Callable[[Game, dict[str, np.ndarray]], np.ndarray]] = {
    "card_features": card_features,
    "count_features": count_features,
    "count_lead_features": count_lead_features,
}
# Feature set name -> the columns it adds to card_features for one game.
_ADDED_WIDTH: dict[str, Callable[[Game], int]] = {
    "card_features": lambda game: 0,
    "count_features": lambda game: len(COUNT_FEATURES) * count_width(game),
    "count_lead_features": lambda game: len(COUNT_FEATURES) * count_width(game) + lead_width(game),
}


def _feature_function(feature_set: str) -> Callable[[Game, dict[str, np.ndarray]], np.ndarray]:
    if feature_set not in FEATURE_SETS:
        raise ValueError(f"invalid feature_set={feature_set!r}; allowed: {' | '.join(FEATURE_SETS)}")
    return FEATURE_SETS[feature_set]


def features_space(game: Game, feature_set: str = "card_features") -> gym.spaces.Box:
    """The observation space of one feature set (:data:`FEATURE_SETS`) for one game."""
    _feature_function(feature_set)
    width = NUM_CARD_FEATURES + _ADDED_WIDTH[feature_set](game)
    return gym.spaces.Box(0.0, 1.0, shape=(game.num_cards, width), dtype=np.float32)


class CardFeatures(gym.ObservationWrapper):
    """Replace the observation with a feature set (:func:`card_features` by default): a
    ``Box(0, 1, (num_cards, width))``. ``action_masks()`` still reaches the wrapped env."""

    def __init__(self, env: gym.Env, feature_set: str = "card_features"):
        super().__init__(env)
        self.features = _feature_function(feature_set)
        self.game: Game = env.unwrapped.game  # type: ignore[attr-defined]  # our envs add ``game`` to gym.Env
        self.observation_space = features_space(self.game, feature_set)

    def observation(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        return self.features(self.game, {k: v[None] for k, v in observation.items()})[0]


def vec_card_features(venv: Any, rules, feature_set: str = "card_features") -> Any:
    """Wrap an SB3 ``VecEnv`` of Dict observations so it observes a feature set."""
    from stable_baselines3.common.vec_env import VecEnvWrapper  # SB3 is an optional extra

    features = _feature_function(feature_set)

    class VecCardFeatures(VecEnvWrapper):
        """SB3 ``VecEnv`` wrapper computing the features for the whole batch at once."""

        def __init__(self, venv: Any):
            self.game = compile_rules(rules)
            super().__init__(venv, observation_space=features_space(self.game, feature_set))

        def reset(self) -> np.ndarray:
            return features(self.game, cast(dict[str, np.ndarray], self.venv.reset()))  # a Dict-space VecEnv

        def step_wait(self):
            obs, rewards, dones, infos = self.venv.step_wait()
            for index in np.flatnonzero(dones):
                terminal = infos[index].get("terminal_observation")
                if terminal is not None:
                    batch = {k: np.asarray(v)[None] for k, v in terminal.items()}
                    infos[index]["terminal_observation"] = features(self.game, batch)[0]
            return features(self.game, cast(dict[str, np.ndarray], obs)), rewards, dones, infos

    return VecCardFeatures(venv)

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
:class:`CardFeatures` wraps a single Gymnasium env; :class:`VecCardFeatures` wraps an SB3
``VecEnv`` (for example the batched one of ``concentration_env.integrations.sb3``); both call the one
batched function.
"""

from __future__ import annotations

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


def features_space(game: Game) -> gym.spaces.Box:
    """The observation space of :func:`card_features` for one game."""
    return gym.spaces.Box(0.0, 1.0, shape=(game.num_cards, NUM_CARD_FEATURES), dtype=np.float32)


class CardFeatures(gym.ObservationWrapper):
    """Replace the observation with :func:`card_features`: a ``Box(0, 1, (num_cards,
    NUM_CARD_FEATURES))``. ``action_masks()`` still reaches the wrapped env."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self.game: Game = env.unwrapped.game  # type: ignore[attr-defined]  # our envs add ``game`` to gym.Env
        self.observation_space = features_space(self.game)

    def observation(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        return card_features(self.game, {k: v[None] for k, v in observation.items()})[0]


def vec_card_features(venv: Any, rules) -> Any:
    """Wrap an SB3 ``VecEnv`` of Dict observations so it observes :func:`card_features`."""
    from stable_baselines3.common.vec_env import VecEnvWrapper  # SB3 is an optional extra

    class VecCardFeatures(VecEnvWrapper):
        """SB3 ``VecEnv`` wrapper computing :func:`card_features` for the whole batch at once."""

        def __init__(self, venv: Any):
            self.game = compile_rules(rules)
            super().__init__(venv, observation_space=features_space(self.game))

        def reset(self) -> np.ndarray:
            return card_features(self.game, cast(dict[str, np.ndarray], self.venv.reset()))  # a Dict-space VecEnv

        def step_wait(self):
            obs, rewards, dones, infos = self.venv.step_wait()
            for index in np.flatnonzero(dones):
                terminal = infos[index].get("terminal_observation")
                if terminal is not None:
                    batch = {k: np.asarray(v)[None] for k, v in terminal.items()}
                    infos[index]["terminal_observation"] = card_features(self.game, batch)[0]
            return card_features(self.game, cast(dict[str, np.ndarray], obs)), rewards, dones, infos

    return VecCardFeatures(venv)

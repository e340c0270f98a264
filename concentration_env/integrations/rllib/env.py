"""What an RLlib policy reads (no Ray needed): each network's observation encoding, the
PettingZoo wrapper that applies it.

Every encoding is ``{"observations": <network input>, "action_mask": float32}``, the layout
RLlib's action-masking modules read:

- ``mlp`` (raw tier): the board flattened to one float32 vector, one-hot faces then flags;
- ``card_attention`` (raw tier): one row of raw columns per card (``cards`` face id, 0 for
  unknown; ``face_up``; ``removed``; ``back`` on checkerboard decks), ``(num_cards, k)``;
- ``per_card`` (engineered tier): :func:`concentration_env.envs.features.card_features`,
  ``(num_cards, NUM_CARD_FEATURES)``, which adds the match relation of the rules.

The board is the arrays every env of the package observes, not the scores: under the
default pairs reward the best flip does not depend on them, and without them a trained
policy plays from the multi-player env, the solitaire env and the baselines' harness.
"""

from __future__ import annotations

from typing import cast

import gymnasium as gym
import numpy as np
from pettingzoo.utils.wrappers import BaseWrapper

from concentration_env import concentration_v0
from concentration_env.envs.features import card_features, features_space
from concentration_env.envs.spaces import board_space
from concentration_env.game.core import Game, compile_rules
from concentration_env.game.rules import Rules

ENV_NAME = "concentration_multiagent"
MASK_KEY = "action_mask"
OBS_KEY = "observations"  # the key RLlib's action-masking module expects
RAW_COLUMNS = ("cards", "face_up", "removed", "back")  # card_attention's columns (back: checkerboard)


def observed_space(rules: Rules) -> gym.spaces.Dict:
    """The board arrays a policy reads (``cards``, ``face_up``, ``removed``, ``back``)."""
    board = board_space(compile_rules(rules))
    return gym.spaces.Dict({key: space for key, space in board.spaces.items() if key != MASK_KEY})


def flat_space(space: gym.spaces.Space) -> gym.spaces.Box:
    """The flat float32 Box an observation space encodes to (one-hot for discrete parts)."""
    flat = cast(gym.spaces.Box, gym.spaces.flatten_space(space))  # Box/Discrete parts flatten to a Box
    return gym.spaces.Box(flat.low.astype(np.float32), flat.high.astype(np.float32), dtype=np.float32)


def encode(space: gym.spaces.Dict, observation: dict) -> np.ndarray:
    """One observation as the flat float32 vector of :func:`flat_space` (keys that ``space``
    lacks, such as ``scores`` or ``action_mask``, are ignored)."""
    return cast(np.ndarray, gym.spaces.flatten(space, observation)).astype(np.float32)  # a Dict flattens to one array


class Encoding:
    """One network's observation encoding for one game: :attr:`space` (the ``observations``
    part) and :meth:`batch`, which encodes ``(B, n)`` board arrays with their action mask."""

    def __init__(self, network: str, rules: Rules):
        self.network = network
        self.game: Game = compile_rules(rules)
        self.board = observed_space(rules)
        if network == "per_card":
            self.space = features_space(self.game)
        elif network == "card_attention":
            self.columns = tuple(key for key in RAW_COLUMNS if key in self.board.spaces)
            high = np.ones((self.game.num_cards, len(self.columns)), np.float32)
            high[:, 0] = cast(gym.spaces.MultiDiscrete, self.board["cards"]).nvec - 1
            self.space = gym.spaces.Box(np.zeros_like(high), high, dtype=np.float32)
        else:
            self.space = flat_space(self.board)

    def batch(self, observations: dict) -> np.ndarray:
        """The ``observations`` part for a batch of ``(B, n)`` arrays (``action_mask`` included)."""
        if self.network == "per_card":
            return card_features(self.game, observations)
        if self.network == "card_attention":
            return np.stack([np.asarray(observations[key]) for key in self.columns], axis=-1).astype(np.float32)
        count = len(observations[MASK_KEY])
        return np.stack([encode(self.board, {key: observations[key][b] for key in self.board}) for b in range(count)])

    def one(self, observation: dict, action_mask: np.ndarray) -> dict[str, np.ndarray]:
        """One observation (the board arrays of any env of the package) in RLlib's layout."""
        batch = {key: np.asarray(observation[key])[None] for key in self.board}
        batch[MASK_KEY] = np.asarray(action_mask)[None]
        return {MASK_KEY: np.asarray(action_mask, dtype=np.float32), OBS_KEY: self.batch(batch)[0]}

    def observation_space(self) -> gym.spaces.Dict:
        """The whole observation space: ``observations`` and ``action_mask``."""
        mask = gym.spaces.Box(0.0, 1.0, (self.game.num_cards,), np.float32)
        return gym.spaces.Dict({MASK_KEY: mask, OBS_KEY: self.space})


class MaskedFlatObservation(BaseWrapper):
    """PettingZoo wrapper: the multi-player env's ``{"observation", "action_mask"}`` become
    ``{"observations": <network input>, "action_mask": float32}`` (RLlib's masking layout);
    ``network`` picks the encoding (default ``mlp``, the flat one-hot board)."""

    def __init__(self, env, network: str = "mlp"):
        super().__init__(env)
        self.encoding = Encoding(network, env.unwrapped.rules)
        self._space = self.encoding.observation_space()

    def observation_space(self, agent: str) -> gym.spaces.Dict:
        return self._space

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        observation = self.env.observe(agent)
        return self.encoding.one(observation["observation"], observation[MASK_KEY])


def raw_table(env_config: dict):
    """The raw multi-player AEC env of an env config."""
    return concentration_v0.raw_env(rules=env_config["rules"], observation_mode=env_config["observation_mode"])

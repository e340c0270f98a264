"""What a player that is not the learner must offer: the policy protocols.

A :class:`Policy` plays one game: ``reset(seed=None)`` at the start of every game and
``act(observation, action_mask) -> position``, where ``observation`` is the solitaire env's
observation or the ``"observation"`` entry of a multi-player env's. A :class:`BatchPolicy`
also plays many games at once, one row per game (the baselines and saved models do), which
the batched engines need. Names and saved models' files become policies in the adapters
(:func:`concentration_env.envs.opponents.resolve_policy`), never here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Policy(Protocol):
    """A player of one game."""

    def reset(self, seed: int | None = None) -> None: ...

    def act(self, observation: Mapping[str, np.ndarray], action_mask: np.ndarray) -> int: ...


def is_stationary(policy: object) -> bool:
    """Whether ``policy`` says it is *stationary* (an optional ``stationary = True``
    attribute): its flips depend only on what it has seen and on what it drew at reset, so
    in a position where it has seen nothing new since last time it flips as it did then.
    Games between stationary players whose turns all reveal nothing have stalled for good."""
    return getattr(policy, "stationary", False) is True


@runtime_checkable
class BatchPolicy(Policy, Protocol):
    """A player of many games at once: row ``r`` of its batch is one game (or one seat of one)."""

    def reset_batch(self, seeds: Sequence[int | None]) -> None: ...

    def reset_rows(self, rows: np.ndarray, seeds: Sequence[int | None]) -> None: ...

    def act_rows(self, observations: Mapping[str, np.ndarray], rows: np.ndarray) -> np.ndarray: ...

"""Observation and action spaces shared by every env of the package."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from gymnasium import spaces

from concentration_env.game.core import FACE_DTYPE, Game


def board_space(game: Game) -> spaces.Dict:
    """The per-card arrays every env observes (flat, length ``num_cards``)."""
    n = game.num_cards
    fields = {
        "cards": spaces.MultiDiscrete(np.full(n, game.num_faces + 1), dtype=FACE_DTYPE),
        "face_up": spaces.MultiBinary(n),
        "removed": spaces.MultiBinary(n),
        "action_mask": spaces.MultiBinary(n),
    }
    if game.checkerboard:
        fields["back"] = spaces.MultiBinary(n)
    return spaces.Dict(fields)


class Positions(spaces.Discrete):
    """``Discrete(num_cards)``, the flip positions, whose ``contains`` answers a plain
    ``int`` without numpy: PettingZoo's AssertOutOfBoundsWrapper asks on every step.
    Equal to ``Discrete(num_cards)`` and the same answers for every value."""

    def __init__(self, num_cards: int):
        super().__init__(num_cards)
        self._end = int(num_cards)

    def contains(self, x: Any) -> bool:
        if type(x) is int:
            return 0 <= x < self._end
        return super().contains(x)


def parse_action(action: object, num_cards: int) -> int:
    """One flip position from what a user passed to ``step``; a clear error otherwise."""
    if type(action) is int and 0 <= action < num_cards:
        return action  # the common case, checked first because every flip comes through here
    if isinstance(action, np.ndarray):
        if action.shape not in ((), (1,)):
            raise ValueError(f"action {action!r} has shape {action.shape}; expected one position 0..{num_cards - 1}")
        action = action.reshape(()).item()
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, numbers.Integral):
        raise TypeError(
            f"action {action!r} ({type(action).__name__}) is not an integer position; "
            f"valid flips are 0..{num_cards - 1}"
        )
    action = int(action)
    if not 0 <= action < num_cards:
        raise ValueError(f"action {action} is out of range; valid flips are 0..{num_cards - 1}")
    return action


def total_points(game: Game) -> int:
    """Points to be won in a game: one per pair, ``joker_value`` for the joker pair."""
    return int(game.pair_value[game.deck].sum()) // 2


def scores_space(players: int, game: Game) -> spaces.Box:
    """Every seat's points, the observer first."""
    return spaces.Box(0, total_points(game), shape=(players,), dtype=np.int32)


def versus_space(game: Game, players: int) -> spaces.Dict:
    """``ConcentrationVs-v0``'s flat observation: the board with its mask, and every seat's
    points with the learner's first."""
    return spaces.Dict({**board_space(game).spaces, "scores": scores_space(players, game)})


def table_observation_space(board: spaces.Dict, players: int, game: Game) -> spaces.Dict:
    """The PettingZoo classic observation: the board (without its mask) plus rotated
    scores under ``"observation"``, and the int8 ``"action_mask"``."""
    fields = {key: space for key, space in board.spaces.items() if key != "action_mask"}
    fields["scores"] = scores_space(players, game)
    return spaces.Dict({"observation": spaces.Dict(fields), "action_mask": board["action_mask"]})


OBSERVATION_FORMATS = ("dict", "box", "flat")
# The planes of a flat observation, in this order (those the board has): the observer's
# cards, then for the duel the opponent's, then the duel's ``leading`` flag; then the scores.
BOX_PLANES = (
    "cards",
    "face_up",
    "removed",
    "back",
    "opponent_cards",
    "opponent_face_up",
    "opponent_removed",
    "leading",
)


def board_box_layout(board: spaces.Dict, players: int) -> list[tuple[str, int, int]]:
    """Where each plane of ``board`` (a board space: ``cards`` as face ids, the rest 0/1)
    lies in the flat observation, as ``(name, start, stop)``, and the scores last."""
    layout, start = [], 0
    for name in BOX_PLANES:
        if name in board.spaces:
            space = board[name]
            width = spaces.flatdim(space)  # cards: a column per card and face id; 0/1 planes: one per card
            layout.append((name, start, start + width))
            start += width
    layout.append(("scores", start, start + players))
    return layout


def box_layout(game: Game, players: int) -> list[tuple[str, int, int]]:
    """The flat vector of ``concentration_v0`` and ``ConcentrationVs-v0`` (the Box under
    ``"observation"`` with ``observation_format="box"``, the whole observation with
    ``"flat"``) as ``(name, start, stop)`` slices, in this order: ``cards``
    one-hot, ``num_faces + 1`` columns per card in position order (column 0: unknown or
    captured, column ``f + 1``: face id ``f``); ``face_up``, ``removed`` and, for
    checkerboard deals, ``back`` (one 0/1 column per card); ``scores``, every seat's points
    with the observer first, divided by the points of the whole game (so in 0..1)."""
    return board_box_layout(board_space(game), players)


def flat_space(layout: list[tuple[str, int, int]]) -> spaces.Box:
    """The float32 Box in 0..1 of a flat layout (``observation_format="flat"``)."""
    return spaces.Box(0.0, 1.0, (layout[-1][2],), np.float32)


def box_space(layout: list[tuple[str, int, int]], num_cards: int) -> spaces.Dict:
    """The PettingZoo classic observation for a flat layout: the :func:`flat_space` Box
    under ``"observation"`` and the int8 ``"action_mask"``."""
    mask = spaces.Box(0, 1, (num_cards,), np.int8)
    return spaces.Dict({"observation": flat_space(layout), "action_mask": mask})


def flatten_board(observation: dict[str, np.ndarray], layout: list[tuple[str, int, int]], total: int) -> np.ndarray:
    """One Dict observation (board planes and rotated ``scores``) as the float32 vector of
    ``layout`` (:func:`box_layout`); ``total``: the game's points, which scale the scores."""
    flat = np.zeros(layout[-1][2], dtype=np.float32)
    for name, start, stop in layout:
        value = observation[name]
        if name == "scores":
            flat[start:stop] = value / total
        elif name.endswith("cards"):  # one-hot: each card's block of columns, its face id + 1 set
            width = (stop - start) // len(value)
            flat[start + np.arange(len(value)) * width + value] = 1.0
        else:
            flat[start:stop] = value
    return flat


# The attributes ``last()`` and ``step()`` read on every step. PettingZoo's wrappers find
# them through ``__getattr__`` (a failed lookup, then a forwarding call, per wrapper), which
# cost most of a wrapped step; the wrappers below forward them as properties instead.

"""Who won: winners, tie-breaks, win/loss rewards and session standings, on plain arrays.

Pure numpy, batch first, no Gymnasium: the multi-player env, the Memory Duel and sessions
all score through these functions.

A game is won by the seats with the most points (``State.scores``: one per captured pair,
the joker pair worth ``joker_value``). Seats tied on points are separated by the rules'
``tie_break``; whatever tie remains is shared:

- ``"share"``: every tied seat wins.
- ``"first_capture"``: the tied seat that captured a pair first (earliest turn).
- ``"highest_rank"``: compare the tied seats' captured cards from the highest rank down;
  the first rank of which one seat holds more decides. Aces rank high (above kings, as
  when players cut for the deal). Jokers and picture cards have no rank and are left out
  of this comparison (jokers have their own tie-break), so picture games stay shared.
- ``"jokers"``: the tied seat holding the jokers.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from concentration_env.game.core import NONE, Game, State

ACE_HIGH = 14  # the rank key of an ace under "highest_rank"
UNRANKED = 0  # rank key of jokers and pictures: never compared
LOWEST = np.iinfo(np.int64).min  # below every real key


def rank_keys(game: Game) -> np.ndarray:
    """(num_faces,) rank key of each face for "highest_rank": 2..13, ace 14, else 0."""
    keys = [
        UNRANKED if card.is_joker or card.is_picture else (ACE_HIGH if card.rank == 1 else card.rank)
        for card in game.faces
    ]
    return np.array(keys, dtype=np.int64)


def _captured_counts(state: State, card_keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(B, P, len(values)): cards each seat captured whose key equals each value."""
    players = state.scores.shape[1]
    owned = (state.captured_by[:, :, None] == np.arange(players)).astype(np.int64)  # (B, n, P)
    hits = (card_keys[:, :, None] == values).astype(np.int64)  # (B, n, V)
    return np.einsum("bnp,bnv->bpv", owned, hits)


def tie_break_keys(game: Game, state: State) -> np.ndarray:
    """(B, P, K) keys for the rules' tie-break: among tied seats, a higher key in the first
    column where they differ wins. K is 0 for "share"."""
    tie_break = game.rules.tie_break
    batch, players = state.scores.shape
    if tie_break == "share":
        return np.zeros((batch, players, 0), dtype=np.int64)
    if tie_break == "first_capture":
        turn = state.first_capture.astype(np.int64)
        return np.where(turn == NONE, LOWEST, -turn)[:, :, None]
    if tie_break == "highest_rank":
        descending = np.arange(ACE_HIGH, UNRANKED, -1)
        return _captured_counts(state, rank_keys(game)[state.faces], descending)
    if tie_break == "jokers":
        return _captured_counts(state, game.is_joker[state.faces], np.array([True]))
    raise ValueError(f"unknown tie_break {tie_break!r}")


def best_seats(points: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """(B, P) bool: the seats with the most points, narrowed key by key among the tied."""
    points = np.asarray(points)
    best = points == points.max(axis=1, keepdims=True)
    for column in np.moveaxis(np.asarray(keys), -1, 0):
        top = np.where(best, column, LOWEST).max(axis=1, keepdims=True)
        best &= column == top
    return best


def winners(game: Game, state: State) -> np.ndarray:
    """(B, P) bool: the winners of each game under the rules' tie-break."""
    return best_seats(state.scores, tie_break_keys(game, state))


def capture_rewards(reward_mode: str, mover: npt.ArrayLike, gained: npt.ArrayLike, players: int) -> np.ndarray:
    """(B, P) float: every seat's reward for one flip per game under ``reward_mode``.

    ``"pairs"``: the mover gets the points it captured. ``"margin"``: the mover gets them and
    each other seat loses an equal share (zero-sum, so in a two-player game a seat's return
    is its final pair margin). ``"win_loss"``: nothing until the end.
    """
    mover, gained = np.asarray(mover), np.asarray(gained, dtype=np.float64)
    rewards = np.zeros((len(mover), players))
    if reward_mode == "win_loss":
        return rewards
    if reward_mode == "margin":
        rewards -= (gained / (players - 1))[:, None]
        gained = gained * players / (players - 1)  # the mover's share back, plus its points
    rewards[np.arange(len(mover)), mover] += gained
    return rewards


def win_loss_rewards(won: np.ndarray) -> np.ndarray:
    """(B, P) int: +1 to each winner and -1 to the rest; 0 to all when everyone won."""
    won = np.asarray(won, dtype=bool)
    rewards = np.where(won, 1, -1)
    return np.where(won.all(axis=1, keepdims=True), 0, rewards).astype(np.int32)


def head_to_head(points: np.ndarray, among: np.ndarray) -> np.ndarray:
    """(P,) for a series of games ``points`` (G, P): how many times each seat scored more
    than another seat of ``among`` in the same game."""
    points = np.asarray(points)
    beats = points[:, :, None] > points[:, None, :]  # (G, P, P): p beat q in game g
    return (beats & np.asarray(among, dtype=bool)[None, None, :]).sum(axis=(0, 2))


def session_winners(points: np.ndarray) -> np.ndarray:
    """(P,) bool: the winners of a series of games ``points`` (G, P): the most points in
    total; a tie goes to the tied seat that beat the other tied seats most often."""
    points = np.asarray(points)
    totals = points.sum(axis=0)
    tied = totals == totals.max()
    record = head_to_head(points, tied)
    return best_seats(totals[None], record[None, :, None])[0]


def scores_seen_by(scores: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """(B, P) points as seat ``seats[b]`` is shown them in the multi-player observations:
    its own first, then the seats after it in turn order."""
    players = scores.shape[1]
    order = (np.asarray(seats)[:, None] + np.arange(players)) % players
    return np.take_along_axis(scores, order, axis=1)

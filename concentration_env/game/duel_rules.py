"""Memory Duel's game functions, batch first on plain numpy arrays (no Gymnasium).

Two players each deal their own pack face down in front of them; a player flips cards of
their own layout only, but everyone sees every card turned. On a turn the leader flips
one card of their layout and the follower flips one of theirs, trying to find its match.
A match removes both cards and scores the pair for the follower; either way the roles
swap for the next turn (the follower leads). The game ends when every card is matched.

The duel reuses the core's :class:`~concentration_env.game.core.State` and compiled
:class:`~concentration_env.game.core.Game`: the rules describe the whole table (both packs:
``packs=2``, ``matching="identical"`` by default), and a state's ``(B, 2 * n)`` card
arrays hold seat 0's layout at ``[:n]`` and seat 1's at ``[n:]``. ``first`` is the flat
position of the leader's card this turn and ``player`` the seat to flip.
"""

from __future__ import annotations

import numpy as np

from concentration_env.game import core
from concentration_env.game.rules import Rules, resolve_rules

SEATS = 2
DUEL_DEFAULTS = {"packs": 2, "matching": "identical", "num_players": SEATS}


def duel_rules(rules: Rules | str | None = None, **rule_fields) -> Rules:
    """The duel's table rules: both packs, identical cards pair by default. Fields that do
    not fit the duel raise one ``ValueError`` naming them."""
    resolved = resolve_rules(rules, **({**DUEL_DEFAULTS, **rule_fields} if rules is None else rule_fields))
    if resolved.num_players == 1:  # the Rules default, not a choice: the duel seats two
        resolved = resolved.replace(num_players=SEATS)
    checks = {
        "packs": (resolved.packs == SEATS, "2 (one pack per player)"),
        "num_players": (resolved.num_players == SEATS, "2"),
        "backs": (resolved.backs == "plain", "'plain' (each player's pack lies on their own side)"),
        "layout": (resolved.layout is None, "None (each player's grid is the one-pack layout)"),
    }
    for field, (ok, allowed) in checks.items():
        if not ok:
            raise ValueError(f"invalid rules for the duel: {field}={getattr(resolved, field)!r}; allowed: {allowed}")
    return resolved


def player_rules(rules: Rules) -> Rules:
    """One player's side of the table: the same game with one pack (same faces; its
    ``shape`` is the grid of a player's layout)."""
    # "identical" needs two packs; the matching rule plays no part on one side.
    return rules.replace(packs=1, matching="rank" if rules.matching == "identical" else rules.matching)


def layout_size(game: core.Game) -> int:
    """Cards in one player's layout."""
    return game.num_cards // SEATS


def deal(game: core.Game, rng: np.random.Generator) -> np.ndarray:
    """Each player shuffles their own pack: (2 * n,) face ids, seat 0's layout first."""
    pack = game.deck[::SEATS]  # the deck holds each pack's cards interleaved, sorted
    return np.concatenate([rng.permutation(pack) for _ in range(SEATS)])


def layouts(array: np.ndarray) -> np.ndarray:
    """View a (B, 2 * n) card array as (B, 2, n): one row per seat's layout."""
    return array.reshape(array.shape[0], SEATS, -1)


def legal_mask(state: core.State) -> np.ndarray:
    """(B, n) bool: the cards of the mover's own layout still in play."""
    rows = np.arange(state.batch_size)
    return ~layouts(state.removed)[rows, state.player] & ~state.done[:, None]


def check_actions(game: core.Game, actions: np.ndarray) -> np.ndarray:
    """Validate a (B,) array of positions in the mover's layout."""
    actions = np.asarray(actions)
    n = layout_size(game)
    if actions.dtype.kind not in "iu":
        raise TypeError(f"actions must be integer positions, got dtype {actions.dtype}")
    bad = (actions < 0) | (actions >= n)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        raise ValueError(f"action {int(actions[index])} (game {index}) is out of range; valid flips are 0..{n - 1}")
    return actions.astype(np.intp, copy=False)


def step(game: core.Game, state: core.State, actions: np.ndarray) -> core.Outcome:
    """Each running game's mover flips ``actions[b]`` of their own layout, in place.

    A duel turn is a core turn on the two-layout table in which each flip lands in the
    mover's own half, so :func:`core.step` plays it (matching, capture by the second
    flipper, scores, misses, illegal flips, the end); only who moves next differs: the
    seat passes after the lead flip (legal or not) and the follower leads the next turn.
    """
    actions = check_actions(game, actions)
    rows = np.arange(state.batch_size)
    mover = state.player.copy()
    flat = mover * layout_size(game) + actions
    if game.rules.illegal_action == "raise":
        illegal = ~state.done & state.removed[rows, flat]
        if illegal.any():  # name the position in the player's own layout, not the flat one
            index = int(np.flatnonzero(illegal)[0])
            raise core.IllegalFlipError(
                f"illegal flip at position {int(actions[index])} (game {index}): the card is captured; "
                "flip a face-down card of your own layout (see the action mask)"
            )
    leading = state.first == core.NONE
    outcome = core.step(game, state, flat)
    state.player = np.where(outcome.acted & leading, SEATS - 1 - mover, mover).astype(np.int32)
    return outcome


def observe(game: core.Game, state: core.State, seat: int, memory: bool) -> dict[str, np.ndarray]:
    """What ``seat`` sees, each (B, n): its own layout (``cards``, ``face_up``,
    ``removed``), the opponent's (``opponent_*``), and ``leading`` (B, 1): whether the seat
    leads the turn in progress."""
    cards = layouts(np.where(core.known_cards(state, memory), state.faces + 1, 0).astype(core.FACE_DTYPE))
    up = layouts(core.face_up(state).astype(core.FLAG_DTYPE))
    removed = layouts(state.removed.astype(core.FLAG_DTYPE))
    leader = np.where(state.first == core.NONE, state.player, SEATS - 1 - state.player)
    obs = {}
    for prefix, side in (("", seat), ("opponent_", SEATS - 1 - seat)):
        obs[prefix + "cards"] = cards[:, side]
        obs[prefix + "face_up"] = up[:, side]
        obs[prefix + "removed"] = removed[:, side]
    obs["leading"] = (leader == seat).astype(core.FLAG_DTYPE)[:, None]
    return obs

"""PettingZoo AEC adapter for Concentration with two or more players: :class:`raw_env` plugs
the game core into the shared table bookkeeping (:class:`concentration_env.envs.table.TableEnv`),
and :func:`env` wraps it as PettingZoo's classic envs are wrapped.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import AECEnv

from concentration_env.envs.aec_wrappers import wrap
from concentration_env.envs.spaces import board_space
from concentration_env.envs.table import RENDER_MODES, TableEnv
from concentration_env.game import core
from concentration_env.game.rules import Rules
from concentration_env.game.seats import table_rules
from concentration_env.render.frame import Table


class raw_env(TableEnv):
    """Concentration for two or more players, as a PettingZoo AEC env.

    ## Description
    The deck is dealt face down into one grid that everyone plays on. On a turn a player
    flips two cards, one step each; a pair under the matching rule is captured and scores
    (one point, ``joker_value`` for the joker pair). With ``turn_policy="extra_turn"`` a
    capture earns the same player another turn; otherwise, and after every miss, play
    passes to the next seat (``player_0``, ``player_1``, ... and round again). The game
    ends when the table is cleared (or, with ``max_mismatches``, when that many misses
    have been made by the table together). Every field of :class:`concentration_env.Rules`
    applies, as in the solitaire env; an illegal flip (of a face-up or captured card) is
    undone and ends the turn under ``illegal_action="end_turn"``.

    ## Agents
    ``player_0`` .. ``player_{N-1}``; ``first_player`` starts.

    ## Action Space
    ``Discrete(num_cards)``: flip the card at a position (row-major over ``rules.shape``).

    ## Observation Space
    ``{"observation": Dict, "action_mask": MultiBinary(num_cards) int8}`` (the PettingZoo
    classic convention). ``observation`` holds the solitaire env's ``cards``, ``face_up``,
    ``removed`` (and ``back`` for checkerboard deals) and ``scores``: every seat's points,
    rotated so the observer comes first. Everyone watches every flip, so in ``"memory"``
    mode ``cards`` shows every card any player has seen that is still on the table; in
    ``"visible"`` mode only cards face up now. Captured cards are public. The mask is all
    zero for agents not on turn.

    With ``observation_format="box"`` the observation is PettingZoo's classic flat layout,
    ``{"observation": Box(0, 1, (N,), float32), "action_mask": Box(0, 1, (num_cards,), int8)}``
    (what the SB3 and Tianshou tutorials expect): the same planes
    concatenated in this order, ``cards`` one-hot with ``num_faces + 1`` columns per card in
    position order (column 0: not shown, column ``f + 1``: face id ``f``), then ``face_up``,
    ``removed`` and for checkerboard deals ``back`` (one column per card), then ``scores``
    (observer first) divided by the points of the whole game.
    :func:`concentration_env.envs.spaces.box_layout` and ``env.unwrapped.box_layout()`` give
    each plane's ``(name, start, stop)``; ``env.unwrapped.to_box`` flattens a Dict observation.

    With ``observation_format="flat"`` the observation is that float32 vector itself,
    ``Box(0, 1, (N,), float32)`` (what SuperSuit's observation wrappers take), and the legal
    flips come in every agent's info as ``info["action_mask"]`` (int8, one per position, at
    every step; all zero for agents not on turn and once the game is over), the same as
    ``env.unwrapped.action_mask(agent)``.

    ## State
    ``env.state()`` is the whole table for centralised critics (MAPPO and the like): an
    int32 array in ``env.state_space`` (a ``Box``) holding, in this order, every position's
    face id + 1 (0 once captured), ``face_up``, ``removed``, ``back`` for checkerboard deals
    (0/1 per position), every seat's points in seat order and the seat to move one-hot (all
    zero once the game is over). ``env.unwrapped.state_layout()`` gives the
    ``(name, start, stop)`` of each part. It shows every card, seen or not.

    ## Rewards
    ``reward_mode="pairs"`` (default): the points of each captured pair go to its captor.
    ``"margin"``: the captor gets the points and every other agent loses an equal share
    (zero-sum; over a two-player game an agent's return is its pair margin).
    ``"win_loss"``: at the end +1 to each winner, -1 to the rest, 0 to all when all tie.

    ## Episode End
    Every agent terminates together; ``info["winners"]`` then marks the winners (the most
    points, ties settled by ``tie_break`` or shared; see
    :mod:`concentration_env.game.scoring`). With ``max_turns``, a game still running when
    that many turns are over is truncated instead: every agent's ``truncation`` is True
    and the game is scored as it stands (``winners`` and win/loss rewards as at an end). Without it a game can run
    forever: two optimal players repeat a stalled position for good (the DP scores such a
    position as the remaining pairs shared, which is what scoring it as it stands gives).

    ## Information
    Every agent's info, from ``reset`` on and after every step, holds two fixed-shape
    arrays in seat order: ``winners`` (bool, all False until the game ends, then True for
    each winner, several on a shared win) and ``scores`` (int32, every seat's points so
    far); with ``observation_format="flat"`` also ``action_mask`` (see above). ``env.unwrapped.winner_names()`` and ``env.unwrapped.scores_by_name()`` give the
    same by agent name.

    ## Arguments
    ``concentration_v0.env(rules=None, num_players=None, first_player=0,
    observation_mode="memory", render_mode=None, table_shape="grid", max_turns=None,
    observation_format="dict", **rule_fields)``; ``observation_format``: ``"dict"``,
    ``"box"`` or ``"flat"`` (see above); ``num_players``
    defaults to the rules' own count when that is two or more, else 2. ``first_player``
    is a seat or agent name; ``reset(options={"first_player": ...})`` overrides it for
    one game. ``render_mode``: ``"ansi"`` (the table as text), ``"rgb_array"`` (a picture
    with every player's score and whose turn it is) or ``"human"`` (that picture in a
    pygame window; the ``render`` extra). ``table_shape`` lays the picture's cards out as a
    ``"grid"``, ``"circle"``, ``"diamond"`` or ``"scatter"`` (positions do not change).

    ## Version History
    - v0: initial release.
    """

    metadata = {
        "render_modes": list(RENDER_MODES),
        "name": "concentration_v0",
        "is_parallelizable": False,
        "render_fps": 4,
    }
    _snapshot_fields = (*TableEnv._snapshot_fields, "last_flip")

    def __init__(
        self,
        rules: Rules | str | None = None,
        num_players: int | None = None,
        first_player: int | str = 0,
        observation_mode: str = "memory",
        render_mode: str | None = None,
        table_shape: str = "grid",
        max_turns: int | None = None,
        observation_format: str = "dict",
        **rule_fields: Any,
    ):
        super().__init__()
        self.rules = table_rules(rules, num_players, **rule_fields)
        self.game = core.compile_rules(self.rules)
        self.num_cards = self.game.num_cards
        self.board_space = board_space(self.game)
        self._setup(
            self.rules.num_players,
            first_player,
            observation_mode,
            render_mode,
            table_shape,
            max_turns,
            observation_format,
        )
        self.last_flip: core.Flip | None = None  # what the last flip did, for callers that narrate the game

    @property
    def layout(self) -> tuple:
        """The dealt cards in position order (a god view for tests and debugging)."""
        state = self._require_reset()
        return tuple(self.game.faces[f] for f in state.faces[0])

    def _tables(self) -> list[Table]:
        state = self._require_reset()
        backs = self.game.backs if self.game.checkerboard else None
        return [Table(self.rules.shape, self.layout, core.face_up(state)[0], state.removed[0], backs)]

    # -- the game core ---------------------------------------------------------------------
    def _flip(self, position: int) -> tuple[int, int, bool]:
        # The batch-of-one fast path: the flip and the table's new look in one compiled call.
        assert self._state is not None  # flips come only after reset() dealt a game
        flip, self._view = core.step_one(self.game, self._state, position, self._memory)
        self.last_flip = flip
        return flip.mover, flip.gained, flip.ended

    def _sight(self, seat: int, on_turn: bool) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
        # Everyone sees every flip, so the board looks the same from every seat. The view the
        # last flip computed is handed out once; a second observation gets fresh arrays, so
        # no two observations share memory.
        view = self._view
        self._view = None
        if view is None:
            state = self._require_reset()
            view = {key: value[0] for key, value in core.observe(self.game, state, self._memory).items()}
        legal = view.pop("action_mask")
        return view, (legal if on_turn else None)

    def _legal(self) -> np.ndarray:
        return core.legal_mask(self._require_reset())[0]


def env(**kwargs: Any) -> AECEnv:
    """The multi-player env with PettingZoo's standard wrappers (see :class:`raw_env`)."""
    return wrap(raw_env(**kwargs))

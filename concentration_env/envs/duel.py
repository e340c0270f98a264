"""Memory Duel, PettingZoo classic style: ``env()`` and ``raw_env``."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from concentration_env.envs.aec_wrappers import wrap
from concentration_env.envs.spaces import board_space
from concentration_env.envs.table import RENDER_MODES, TableEnv
from concentration_env.game import core
from concentration_env.game import duel_rules as duel
from concentration_env.game.rules import Rules
from concentration_env.render.frame import Table


class raw_env(TableEnv):
    """Memory Duel: two players, each with their own pack, match each other's cards.

    ## Description
    Each player deals a full pack face down in front of them and may flip only cards of
    their own layout; every flipped card is seen by both. On a turn the leader flips one
    card of their layout, then the follower flips one of theirs looking for its match
    (by default the identical card: same rank and suit). A match removes both cards and
    the pair scores for the follower; otherwise both are shown, then turned face down
    again. Either way the roles swap: the follower leads the next turn. The game ends
    when every card is matched; the most pairs wins. ``turn_policy`` plays no part.

    ## Agents
    ``player_0`` and ``player_1``; ``first_player`` leads the first turn.

    ## Action Space
    ``Discrete(n)`` with ``n`` the cards of one pack: flip the card at a position of your
    own layout (row-major over ``env.unwrapped.player_shape``).

    ## Observation Space
    ``{"observation": Dict, "action_mask": MultiBinary(n) int8}``. ``observation`` holds
    ``cards``, ``face_up``, ``removed`` for the observer's layout, the same three with the
    prefix ``opponent_`` for the other layout (captured cards are public; ``cards`` follows
    ``observation_mode`` as in the main env), ``leading`` (1 when the observer leads the
    turn in progress) and ``scores`` (the observer's points first). The mask is all zero
    for the agent not on turn. ``observation_format="box"`` gives the classic flat layout
    as in ``concentration_v0``: the observer's ``cards`` one-hot, ``face_up``, ``removed``,
    then the same three ``opponent_`` planes, ``leading`` and the scores divided by the
    game's points (``env.unwrapped.box_layout()`` gives the slices).
    ``observation_format="flat"`` observes that float32 vector alone, the legal flips in
    every agent's ``info["action_mask"]`` (int8; all zero for the agent not on turn and
    once the game is over) and ``env.unwrapped.action_mask(agent)``, as in ``concentration_v0``.

    ## State
    ``env.state()``, in ``env.state_space``, is the whole table as in ``concentration_v0``
    (every card of both layouts, ``player_0``'s first, then the scores and the seat to move;
    ``env.unwrapped.state_layout()`` gives the slices).

    ## Rewards
    As in ``concentration_v0``: ``reward_mode="pairs"`` gives each captured pair's points
    to the follower who found it; ``"win_loss"`` gives +1 / -1 at the end (0 on a shared win).

    ## Episode End
    When every card is matched (or after ``max_mismatches`` misses); ``tie_break`` applies.
    Every agent's info holds ``winners`` and ``scores`` (fixed-shape arrays in seat order,
    from ``reset`` on) and ``winner_names()``/``scores_by_name()`` give them by name, as in
    ``concentration_v0``. ``max_turns``
    truncates a game still running after that many turns, scored as it stands, as in
    ``concentration_v0``.

    ## Arguments
    ``duel_v0.env(rules=None, first_player=0, observation_mode="memory",
    render_mode=None, table_shape="grid", max_turns=None, observation_format="dict",
    **rule_fields)``; rendering as in
    ``concentration_v0`` (pictures show both layouts). The rules describe the whole table: ``packs=2``
    (one per player) and ``matching="identical"`` by default; ``ranks``, ``jokers``,
    ``deck="pictures"``, other matching rules, ``reward_mode`` and ``tie_break`` apply.
    ``backs`` must be ``"plain"`` and ``layout`` ``None``.

    ## Version History
    - v0: initial release.
    """

    metadata = {"render_modes": list(RENDER_MODES), "name": "duel_v0", "is_parallelizable": False, "render_fps": 4}
    _deal_cards = staticmethod(duel.deal)
    _step_game = staticmethod(duel.step)

    def __init__(
        self,
        rules: Rules | str | None = None,
        first_player: int | str = 0,
        observation_mode: str = "memory",
        render_mode: str | None = None,
        table_shape: str = "grid",
        max_turns: int | None = None,
        observation_format: str = "dict",
        **rule_fields: Any,
    ):
        super().__init__()
        self.rules = duel.duel_rules(rules, **rule_fields)
        self.game = core.compile_rules(self.rules)
        side = duel.player_rules(self.rules)
        self.player_shape = side.shape
        self.num_cards = side.num_cards
        own = board_space(core.compile_rules(side))
        fields = dict(own.spaces)
        fields.update({f"opponent_{key}": own[key] for key in ("cards", "face_up", "removed")})
        fields["leading"] = spaces.MultiBinary(1)
        self.board_space = spaces.Dict(fields)
        self._setup(duel.SEATS, first_player, observation_mode, render_mode, table_shape, max_turns, observation_format)

    @property
    def layout(self) -> tuple[tuple, ...]:
        """Each player's dealt cards in position order (a god view for tests)."""
        faces = duel.layouts(self._require_reset().faces)[0]
        return tuple(tuple(self.game.faces[f] for f in side) for side in faces)

    def _tables(self) -> list[Table]:
        state = self._require_reset()
        up = duel.layouts(core.face_up(state))[0]
        removed = duel.layouts(state.removed)[0]
        return [
            Table(self.player_shape, cards, up[seat], removed[seat], None, f"{self.possible_agents[seat]}'s layout")
            for seat, cards in enumerate(self.layout)
        ]

    # -- the duel's game functions -----------------------------------------------------------
    def _board(self, seat: int) -> dict[str, np.ndarray]:
        return {
            key: value[0] for key, value in duel.observe(self.game, self._require_reset(), seat, self._memory).items()
        }

    def _legal(self) -> np.ndarray:
        return duel.legal_mask(self._require_reset())[0]


def env(**kwargs: Any) -> AECEnv:
    """The Memory Duel with PettingZoo's standard wrappers (see :class:`raw_env`)."""
    return wrap(raw_env(**kwargs))

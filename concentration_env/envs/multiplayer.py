"""PettingZoo AEC adapter for Concentration with two or more players.

:class:`TableEnv` is the AEC bookkeeping every turn-based table game of the package shares
(agents, rewards, terminations, winners, rotated scores, masks, seeding); :class:`raw_env`
plugs the game core into it. The Memory Duel (``duel_v0``) plugs in its own game functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle, seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from concentration_env.envs.spaces import Positions, board_space, parse_action
from concentration_env.game import core, scoring
from concentration_env.game.checks import check_seed
from concentration_env.game.rules import Rules
from concentration_env.game.seats import agent_name, check_observation_mode, seat_of, table_rules
from concentration_env.render.frame import Table, render_tables
from concentration_env.render.shapes import check_table_shape
from concentration_env.render.text import render_ansi
from concentration_env.render.window import Screen, check_render_mode

RENDER_MODES = ("ansi", "rgb_array", "human")


def total_points(game: core.Game) -> int:
    """Points to be won in a game: one per pair, ``joker_value`` for the joker pair."""
    return int(game.pair_value[game.deck].sum()) // 2


def scores_space(players: int, game: core.Game) -> spaces.Box:
    """Every seat's points, the observer first."""
    return spaces.Box(0, total_points(game), shape=(players,), dtype=np.int32)


def table_observation_space(board: spaces.Dict, players: int, game: core.Game) -> spaces.Dict:
    """The PettingZoo classic observation: the board (without its mask) plus rotated
    scores under ``"observation"``, and the int8 ``"action_mask"``."""
    fields = {key: space for key, space in board.spaces.items() if key != "action_mask"}
    fields["scores"] = scores_space(players, game)
    return spaces.Dict({"observation": spaces.Dict(fields), "action_mask": board["action_mask"]})


# The attributes ``last()`` and ``step()`` read on every step. PettingZoo's wrappers find
# them through ``__getattr__`` (a failed lookup, then a forwarding call, per wrapper), which
# cost most of a wrapped step; the wrappers below forward them as properties instead.
HOT_ATTRIBUTES = ("agent_selection", "agents", "rewards", "_cumulative_rewards", "terminations", "truncations", "infos")


def _forwarded(name: str, after_reset: bool) -> property:
    """A read-only property that returns the wrapped env's ``name`` (``after_reset``: and
    raises OrderEnforcingWrapper's AttributeError before the first reset, as it does)."""

    def get(self):
        if after_reset and not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self.env, name)

    return property(get, doc=f"The wrapped env's ``{name}``.")


def _forward_hot_attributes(before_reset: tuple[str, ...]) -> Callable[[type], type]:
    """A class decorator giving the class one :func:`_forwarded` property per hot
    attribute; those not in ``before_reset`` raise before the first reset."""

    def decorate(cls: type) -> type:
        for name in HOT_ATTRIBUTES:
            setattr(cls, name, _forwarded(name, after_reset=name not in before_reset))
        return cls

    return decorate


@_forward_hot_attributes(before_reset=HOT_ATTRIBUTES)
class AssertOutOfBoundsWrapper(wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's AssertOutOfBoundsWrapper (same check, same message), with the hot
    attributes forwarded directly."""


@_forward_hot_attributes(before_reset=("_cumulative_rewards",))
class OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's OrderEnforcingWrapper (same checks, same errors), with the hot
    attributes forwarded directly (all but ``_cumulative_rewards`` only after a reset, as
    PettingZoo's own)."""

    def __str__(self) -> str:
        return str(self.env)  # as PettingZoo prints its own OrderEnforcingWrapper


def wrap(env: AECEnv) -> AECEnv:
    """PettingZoo's standard wrappers for a classic env: action bounds and call order."""
    return OrderEnforcingWrapper(AssertOutOfBoundsWrapper(env))


class TableEnv(AECEnv):
    """AEC bookkeeping shared by the table games (subclasses supply the game functions).

    A subclass names its game functions (``_deal_cards(game, rng)`` and
    ``_step_game(game, state, actions)``, the core's or the duel's), sets ``rules``,
    ``game``, ``num_cards`` and ``board_space``, and implements ``_board``, ``_legal`` and
    ``_tables`` (what to draw), or ``_sight`` in place of the first two. The state is a
    batch of one ``core.State``. ``_view`` is free for a subclass to cache what the table
    looks like: it is cleared whenever the state changes (a deal or a flip).
    """

    _deal_cards = staticmethod(core.deal)
    _step_game = staticmethod(core.step)

    def _setup(
        self, players: int, first_player: int | str, observation_mode: str, render_mode: str | None, table_shape: str
    ) -> None:
        """Validate the table settings and build the agents and spaces."""
        self._memory = check_observation_mode(observation_mode)
        self.observation_mode = observation_mode
        self.render_mode = check_render_mode(render_mode, self.metadata)
        self.table_shape = check_table_shape(table_shape)
        self._screen = Screen(self.metadata["render_fps"]) if render_mode == "human" else None
        self.first_player = seat_of(first_player, players)
        self.possible_agents = [agent_name(seat) for seat in range(players)]
        self._seats = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        # Scores rotated so the observer comes first: index arrays per seat, built once.
        self._rotations = [np.roll(np.arange(players), -seat) for seat in range(players)]
        self._no_moves = np.zeros(self.num_cards, dtype=np.int8)
        self._pair_rewards = self.rules.reward_mode == "pairs"
        self._margin_rewards = self.rules.reward_mode == "margin"
        self.agents = []
        observation = table_observation_space(self.board_space, players, self.game)
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation)
        self.action_spaces = dict.fromkeys(self.possible_agents, Positions(self.num_cards))
        self._rng: np.random.Generator | None = None
        self._state = None
        self._view = None

    # -- PettingZoo API -------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new game. ``options={"first_player": seat or name}`` overrides who starts."""
        seed = check_seed(seed)
        first = seat_of((options or {}).get("first_player", self.first_player), self.num_players)
        if seed is not None or self._rng is None:
            self._rng, _ = seeding.np_random(seed)
        self._state = self._new_state(self._rng, first)
        self._view = None
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection = self.agents[first]
        if self._screen is not None:
            self.render()

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        position = parse_action(action, self.num_cards)
        mover, gained, ended = self._flip(position)
        self._cumulative_rewards[agent] = 0
        self._clear_rewards()
        if self._pair_rewards:
            self.rewards[self.possible_agents[mover]] = gained
        elif self._margin_rewards and gained:
            shares = scoring.capture_rewards("margin", [mover], [gained], self.num_players)[0]
            self.rewards.update(zip(self.possible_agents, shares.tolist()))
        if ended:
            self._finish()
        self.agent_selection = self.possible_agents[int(self._state.player[0])]
        self._accumulate_rewards()
        if self._screen is not None:
            self.render()

    def observe(self, agent: str) -> dict[str, Any]:
        seat = self._seats[agent]
        state = self._state
        on_turn = seat == state.player[0]
        observation, legal = self._sight(seat, on_turn)
        observation["scores"] = state.scores[0].take(self._rotations[seat])
        mask = legal.astype(np.int8, copy=False) if on_turn else self._no_moves.copy()
        return {"observation": observation, "action_mask": mask}

    def render(self) -> str | np.ndarray | None:
        """The table as text (``"ansi"``), a picture (``"rgb_array"``) or in a window (``"human"``)."""
        if self.render_mode is None:
            return None
        self._require_reset()
        tables = self._tables()
        if self.render_mode == "ansi":
            return self._header() + "\n" + "".join(render_ansi(*table[:5], table.title) for table in tables)
        done = bool(self._state.done[0])
        status = f"turn {int(self._state.turns[0]) + 1}" + ("  game over" if done else "")
        to_move = None if done else int(self._state.player[0])
        frame = render_tables(tables, status, list(self.scores().items()), to_move, self.table_shape)
        return frame if self._screen is None else self._screen.show(frame)

    def close(self) -> None:
        if self._screen is not None:
            self._screen.close()

    # -- the public face of the game -------------------------------------------------------
    @property
    def num_players(self) -> int:
        return self.rules.num_players

    @property
    def faces(self):
        """Face id -> Card, for decoding ``cards`` observations."""
        return self.game.faces

    def scores(self) -> dict[str, int]:
        """Every agent's points so far."""
        self._require_reset()
        return {agent: int(points) for agent, points in zip(self.possible_agents, self._state.scores[0])}

    # -- helpers -------------------------------------------------------------------------
    def _new_state(self, rng: np.random.Generator, first: int) -> core.State:
        """A freshly dealt game with seat ``first`` to move."""
        return core.new_state(self.game, self._deal_cards(self.game, rng)[None], first)

    def _flip(self, position: int) -> tuple[int, int, bool]:
        """Play one flip: (seat that flipped, points it gained, whether the game ended)."""
        self._view = None
        outcome = self._step_game(self.game, self._state, np.array([position]))
        return int(outcome.mover[0]), int(outcome.gained[0]), bool(outcome.ended[0])

    def _sight(self, seat: int, on_turn: bool) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
        """Fresh arrays: the board from ``seat`` and, when it is on turn, its legal flips."""
        return self._board(seat), (self._legal() if on_turn else None)

    def _winners(self) -> np.ndarray:
        """(P,) bool: the winners under the rules' tie-break."""
        return scoring.winners(self.game, self._state)[0]

    def _require_reset(self) -> None:
        if self._state is None:
            raise RuntimeError("call reset() before using the env")

    def _finish(self) -> None:
        """End the game: winners and final scores in every info, win/loss rewards."""
        won = self._winners()
        winners = [agent for agent, w in zip(self.possible_agents, won) if w]
        if self.rules.reward_mode == "win_loss":
            for agent, reward in zip(self.possible_agents, scoring.win_loss_rewards(won[None])[0]):
                self.rewards[agent] = int(reward)
        final = self.scores()
        for agent in self.agents:
            self.terminations[agent] = True
            self.infos[agent] = {"winners": winners, "scores": final}

    def _header(self) -> str:
        """One line for the text rendering: turn, scores and who moves."""
        state = self._state
        scores = " ".join(f"{agent}={points}" for agent, points in self.scores().items())
        mover = "game over" if state.done[0] else f"{self.agent_selection} to move"
        return f"turn {int(state.turns[0]) + 1}  {scores}  ({mover})"


class raw_env(TableEnv, EzPickle):
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

    ## Rewards
    ``reward_mode="pairs"`` (default): the points of each captured pair go to its captor.
    ``"margin"``: the captor gets the points and every other agent loses an equal share
    (zero-sum; over a two-player game an agent's return is its pair margin).
    ``"win_loss"``: at the end +1 to each winner, -1 to the rest, 0 to all when all tie.

    ## Episode End
    Every agent terminates together. Each agent's info then holds ``winners`` (agent
    names: the most points, ties settled by ``tie_break`` or shared) and the final
    ``scores`` (agent -> points). See :mod:`concentration_env.game.scoring` for tie-breaks.

    ## Arguments
    ``concentration_v0.env(rules=None, num_players=None, first_player=0,
    observation_mode="memory", render_mode=None, **rule_fields)``; ``num_players``
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

    def __init__(
        self,
        rules: Rules | str | None = None,
        num_players: int | None = None,
        first_player: int | str = 0,
        observation_mode: str = "memory",
        render_mode: str | None = None,
        table_shape: str = "grid",
        **rule_fields: Any,
    ):
        EzPickle.__init__(
            self, rules, num_players, first_player, observation_mode, render_mode, table_shape, **rule_fields
        )
        super().__init__()
        self.rules = table_rules(rules, num_players, **rule_fields)
        self.game = core.compile_rules(self.rules)
        self.num_cards = self.game.num_cards
        self.board_space = board_space(self.game)
        self._setup(self.rules.num_players, first_player, observation_mode, render_mode, table_shape)
        self.last_flip: core.Flip | None = None  # what the last flip did, for callers that narrate the game

    @property
    def layout(self) -> tuple:
        """The dealt cards in position order (a god view for tests and debugging)."""
        self._require_reset()
        return tuple(self.game.faces[f] for f in self._state.faces[0])

    def _tables(self) -> list[Table]:
        state = self._state
        backs = self.game.backs if self.game.checkerboard else None
        return [Table(self.rules.shape, self.layout, core.face_up(state)[0], state.removed[0], backs)]

    # -- the game core ---------------------------------------------------------------------
    def _flip(self, position: int) -> tuple[int, int, bool]:
        # The batch-of-one fast path: the flip and the table's new look in one compiled call.
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
            view = {key: value[0] for key, value in core.observe(self.game, self._state, self._memory).items()}
        legal = view.pop("action_mask")
        return view, (legal if on_turn else None)


def env(**kwargs: Any) -> AECEnv:
    """The multi-player env with PettingZoo's standard wrappers (see :class:`raw_env`)."""
    return wrap(raw_env(**kwargs))

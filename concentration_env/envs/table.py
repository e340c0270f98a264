"""The AEC bookkeeping every turn-based table game of the package shares: agents, rewards,
terminations and truncations, winners, rotated scores, masks, seeding, snapshots and
rendering. :class:`concentration_env.envs.multiplayer.raw_env` plugs the game core into
it; the Memory Duel (:mod:`concentration_env.envs.duel`) plugs in its own game functions.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv

from concentration_env.envs.spaces import (
    OBSERVATION_FORMATS,
    Positions,
    board_box_layout,
    box_space,
    flat_space,
    flatten_board,
    parse_action,
    table_observation_space,
    total_points,
)
from concentration_env.game import core, scoring
from concentration_env.game.checks import check_choice, check_int, check_seed, fail
from concentration_env.game.seats import agent_name, check_observation_mode, seat_of
from concentration_env.game.state import read_snapshot
from concentration_env.render.frame import Table, render_tables
from concentration_env.render.shapes import check_table_shape
from concentration_env.render.text import render_ansi
from concentration_env.render.window import Screen, available_render_modes, check_render_mode

RENDER_MODES = tuple(available_render_modes())


class TableEnv(AECEnv):
    """AEC bookkeeping shared by the table games (subclasses supply the game functions).

    A subclass names its game functions (``_deal_cards(game, rng)`` and
    ``_step_game(game, state, actions)``, the core's or the duel's), sets ``rules``,
    ``game``, ``num_cards`` and ``board_space``, and implements ``_board``, ``_legal`` and
    ``_tables`` (what to draw), or ``_sight`` in place of ``_board``. The state is a
    batch of one ``core.State``. ``_view`` is free for a subclass to cache what the table
    looks like: it is cleared whenever the state changes (a deal or a flip).
    """

    _deal_cards = staticmethod(core.deal)
    _step_game = staticmethod(core.step)
    # What a snapshot holds besides the game and the generator: the AEC bookkeeping.
    _snapshot_fields: tuple[str, ...] = (
        "agents",
        "rewards",
        "_cumulative_rewards",
        "terminations",
        "truncations",
        "infos",
        "agent_selection",
        "_won",
    )

    def _setup(
        self,
        players: int,
        first_player: int | str,
        observation_mode: str,
        render_mode: str | None,
        table_shape: str,
        max_turns: int | None = None,
        observation_format: str = "dict",
    ) -> None:
        """Validate the table settings and build the agents and spaces."""
        self.max_turns = check_int("max_turns", max_turns, 1, optional=True, numpy=True)
        self.observation_format = check_choice("observation_format", observation_format, OBSERVATION_FORMATS)
        self._flat = observation_format == "flat"  # the mask then travels in the infos
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
        self.agents: list[str] = []
        self._layout = board_box_layout(self.board_space, players)
        self._total = total_points(self.game)
        observation: spaces.Space
        if observation_format == "flat":
            observation = flat_space(self._layout)
        elif observation_format == "box":
            observation = box_space(self._layout, self.num_cards)
        else:
            observation = table_observation_space(self.board_space, players, self.game)
        self.state_space = spaces.Box(0, self._state_highs(), dtype=np.int32)
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation)
        self.action_spaces = dict.fromkeys(self.possible_agents, Positions(self.num_cards))
        self._rng: np.random.Generator | None = None
        self._state: core.State | None = None
        self._view: dict[str, np.ndarray] | None = None

    # -- PettingZoo API -------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
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
        self._won = np.zeros(self.num_players, dtype=bool)  # the winners: all False until the game ends
        self._refresh_infos()
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
        assert self._state is not None  # agents act only after reset() dealt a game
        if ended:
            self._finish()
        elif self.max_turns is not None and self._state.turns[0] >= self.max_turns:
            self._finish(truncated=True)
        else:
            self._refresh_infos()
        self.agent_selection = self.possible_agents[int(self._state.player[0])]
        self._accumulate_rewards()
        if self._screen is not None:
            self.render()

    def observe(self, agent: str) -> dict[str, Any] | np.ndarray:
        seat = self._seats[agent]
        state = self._state
        assert state is not None  # agents exist only after reset() dealt a game
        on_turn = seat == state.player[0] and not self._flat  # the flat format's mask is in the infos
        observation, legal = self._sight(seat, on_turn)
        observation["scores"] = state.scores[0].take(self._rotations[seat])
        if self._flat:
            return self.to_box(observation)
        mask = legal.astype(np.int8, copy=False) if legal is not None else self._no_moves.copy()
        if self.observation_format == "box":
            return {"observation": self.to_box(observation), "action_mask": mask}
        return {"observation": observation, "action_mask": mask}

    def render(self) -> str | np.ndarray | None:
        """The table as text (``"ansi"``), a picture (``"rgb_array"``) or in a window (``"human"``)."""
        if self.render_mode is None:
            return None
        state = self._require_reset()
        tables: list[Table] = self._tables()  # defined by the subclass
        if self.render_mode == "ansi":
            return self._header() + "\n" + "".join(render_ansi(*table[:5], table.title) for table in tables)
        done = bool(state.done[0])
        status = f"turn {int(state.turns[0]) + 1}" + ("  game over" if done else "")
        to_move = None if done else int(state.player[0])
        frame = render_tables(tables, status, list(self.scores_by_name().items()), to_move, self.table_shape)
        if self._screen is None:
            return frame
        self._screen.show(frame)
        return None

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

    def box_layout(self) -> list[tuple[str, int, int]]:
        """Where each plane lies in the flat vector of ``observation_format="box"`` and
        ``"flat"``: ``(name, start, stop)`` slices in order (see the env's docstring)."""
        return list(self._layout)

    def action_mask(self, agent: str) -> np.ndarray:
        """int8, one per position: the flips ``agent`` may make now (all zero when it is not
        on turn or the game is over); ``info["action_mask"]`` of ``observation_format="flat"``."""
        state = self._require_reset()
        seat = self._seats.get(agent)
        if seat is None:
            fail("agent", agent, ", ".join(self.possible_agents))
        if seat != state.player[0] or agent not in self.agents or self.terminations[agent] or self.truncations[agent]:
            return self._no_moves.copy()
        return self._legal().astype(np.int8)

    def state(self) -> np.ndarray:
        """The whole table as one int32 array (PettingZoo's global state, for centralised
        critics): a god view laid out as :meth:`state_layout` says, in ``state_space``."""
        state = self._require_reset()
        to_move = np.zeros(self.num_players, dtype=np.int32)
        if not self._won.any():  # nobody moves once the game is over
            to_move[state.player[0]] = 1
        planes = [
            np.where(state.removed[0], 0, state.faces[0].astype(np.int32) + 1),
            core.face_up(state)[0],
            state.removed[0],
            *([self.game.backs] if self.game.checkerboard else []),
            state.scores[0],
            to_move,
        ]
        return np.concatenate([np.asarray(plane, dtype=np.int32) for plane in planes])

    def state_layout(self) -> list[tuple[str, int, int]]:
        """Where each part of :meth:`state` lies, as ``(name, start, stop)``, in this order:
        ``faces`` (every position of the table, face id + 1, 0 once captured), ``face_up``,
        ``removed``, ``back`` for checkerboard deals (0/1 per position), ``scores`` (every
        seat's points in seat order) and ``to_move`` (the seat to move, one-hot; all zero
        once the game is over)."""
        layout, start = [], 0
        for name, width, _ in self._state_parts():
            layout.append((name, start, start + width))
            start += width
        return layout

    def to_box(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        """A Dict-format ``observation["observation"]`` as the flat float32 vector of
        :meth:`box_layout` (what ``observation_format="box"`` and ``"flat"`` observe)."""
        return flatten_board(observation, self._layout, self._total)

    def scores_by_name(self) -> dict[str, int]:
        """Every agent's points so far, by name (``info["scores"]`` holds them in seat order)."""
        state = self._require_reset()
        return {agent: int(points) for agent, points in zip(self.possible_agents, state.scores[0])}

    def winner_names(self) -> list[str]:
        """The winners' names once the game is over (terminated or truncated), else empty
        (``info["winners"]`` holds the same as booleans in seat order)."""
        self._require_reset()
        return [agent for agent, won in zip(self.possible_agents, self._won) if won]

    def truncate(self) -> None:
        """Truncate the game now, scored as it stands (as at ``max_turns``): for a caller who
        knows the players would repeat the position forever."""
        self._require_reset()
        if not (any(self.terminations.values()) or any(self.truncations.values())):
            self._finish(truncated=True)

    # -- snapshots -----------------------------------------------------------------------
    def get_state(self) -> dict[str, Any]:
        """A snapshot of the game, the AEC bookkeeping and the random generator, for search
        (e.g. MCTS): ``set_state`` brings this env, or one with equal rules, back to exactly
        this point."""
        state = self._require_reset()
        assert self._rng is not None  # reset() seeded it
        return {
            "rules": self.rules,
            "core": state.copy(),
            "rng": self._rng.bit_generator.state,
            "aec": copy.deepcopy({name: getattr(self, name) for name in self._snapshot_fields}),
        }

    def set_state(self, snapshot: dict[str, Any]) -> None:
        """Restore a snapshot taken by ``get_state`` of an env with equal rules; a
        ``ValueError`` naming what is wrong (checked in full before anything changes)."""
        core_state, rng = read_snapshot(snapshot, self.game, extra=("aec",))
        aec = snapshot["aec"]
        if not isinstance(aec, dict) or set(aec) != set(self._snapshot_fields):
            fail("snapshot['aec']", type(aec).__name__, f"a dict of {', '.join(self._snapshot_fields)}")
        agents = aec["agents"]
        if not isinstance(agents, list) or not set(agents) <= set(self.possible_agents):
            fail("snapshot['aec']['agents']", agents, f"a list of {', '.join(self.possible_agents)}")
        if aec["agent_selection"] not in self.possible_agents:
            fail("snapshot['aec']['agent_selection']", aec["agent_selection"], ", ".join(self.possible_agents))
        for name in self._snapshot_fields[1:6]:  # the per-agent dicts
            if not isinstance(aec[name], dict) or set(aec[name]) != set(agents):
                fail(f"snapshot['aec'][{name!r}]", aec[name], "a dict with one entry per agent in play")
        won = aec["_won"]
        if not (isinstance(won, np.ndarray) and won.dtype == bool and won.shape == (self.num_players,)):
            fail("snapshot['aec']['_won']", won, f"a bool array of shape ({self.num_players},)")
        self._state = core_state.copy()
        self._rng = rng
        for name, value in copy.deepcopy(aec).items():
            setattr(self, name, value)
        self._view = None

    # -- helpers -------------------------------------------------------------------------
    def _new_state(self, rng: np.random.Generator, first: int) -> core.State:
        """A freshly dealt game with seat ``first`` to move."""
        return core.new_state(self.game, self._deal_cards(self.game, rng)[None], first)

    def _flip(self, position: int) -> tuple[int, int, bool]:
        """Play one flip: (seat that flipped, points it gained, whether the game ended)."""
        self._view = None
        outcome = self._step_game(self.game, self._require_reset(), np.array([position]))
        return int(outcome.mover[0]), int(outcome.gained[0]), bool(outcome.ended[0])

    def _sight(self, seat: int, on_turn: bool) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
        """Fresh arrays: the board from ``seat`` and, when it is on turn, its legal flips."""
        return self._board(seat), (self._legal() if on_turn else None)

    def _winners(self) -> np.ndarray:
        """(P,) bool: the winners under the rules' tie-break."""
        return scoring.winners(self.game, self._require_reset())[0]

    def _state_parts(self) -> list[tuple[str, int, int]]:
        """The parts of :meth:`state`: (name, length, largest value)."""
        n, players = self.game.num_cards, self.num_players
        parts = [("faces", n, self.game.num_faces), ("face_up", n, 1), ("removed", n, 1)]
        if self.game.checkerboard:
            parts.append(("back", n, 1))
        return [*parts, ("scores", players, total_points(self.game)), ("to_move", players, 1)]

    def _state_highs(self) -> np.ndarray:
        """The upper bound of every entry of :meth:`state`."""
        return np.concatenate([np.full(width, high, dtype=np.int32) for _, width, high in self._state_parts()])

    def _require_reset(self) -> core.State:
        if self._state is None:
            raise RuntimeError("call reset() before using the env")
        return self._state

    def _refresh_infos(self) -> None:
        """Every agent's info: ``winners`` (bool) and ``scores`` (int32), both in seat order
        and of fixed shape at every step, so that libraries storing infos per step can stack
        them; with ``observation_format="flat"`` also ``action_mask`` (:meth:`action_mask`).
        Fresh arrays each time: an info kept from an earlier step never changes."""
        scores = self._require_reset().scores[0]
        self.infos = {agent: {"winners": self._won.copy(), "scores": scores.copy()} for agent in self.agents}
        if self._flat:
            for agent, info in self.infos.items():
                info["action_mask"] = self.action_mask(agent)

    def _finish(self, truncated: bool = False) -> None:
        """End the game (``truncated``: at the turn cap, scored as it stands): winners and
        final scores in every info, win/loss rewards."""
        self._won = self._winners()
        if self.rules.reward_mode == "win_loss":
            for agent, reward in zip(self.possible_agents, scoring.win_loss_rewards(self._won[None])[0]):
                self.rewards[agent] = int(reward)
        ends = self.truncations if truncated else self.terminations
        for agent in self.agents:
            ends[agent] = True
        self._refresh_infos()

    def _header(self) -> str:
        """One line for the text rendering: turn, scores and who moves."""
        state = self._require_reset()
        scores = " ".join(f"{agent}={points}" for agent, points in self.scores_by_name().items())
        mover = "game over" if state.done[0] else f"{self.agent_selection} to move"
        return f"turn {int(state.turns[0]) + 1}  {scores}  ({mover})"

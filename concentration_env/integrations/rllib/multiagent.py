"""The multi-player game as an RLlib ``MultiAgentEnv`` (needs Ray; imported by the env creator).

Turn-based: each step returns the observation of the one agent to move next, with what that
agent earned since it last moved (every seat's pair points reach it at its next turn, or at
the end). When the game ends every agent that has moved gets its last observation, reward and
``terminated``.

Agent ids are the seat names (``player_0``, ...) in self-play. In a league
(``env_config["league"]``) they are roles: ``learner`` sits at a random seat each game and the
other seats are ``opponent_1``, ``opponent_2``, ... in turn order after it, so the policy
mapping can pair the learner's module with an opponent's without knowing the seat. With
probability ``greedy_share`` a game's opponents are the greedy baseline instead, played inside
the env (RLlib then sees the learner alone); its flips are made by ``baselines``' own greedy
policy, the one the evaluation harness plays.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from concentration_env.envs.opponents import play_turns, resolve_policy
from concentration_env.game.seats import MAX_REDEALS, agent_name, no_game_for_the_learner
from concentration_env.integrations.rllib.config import LEARNER
from concentration_env.integrations.rllib.env import MASK_KEY, Encoding, raw_table

SCRIPTED_OPPONENT = "greedy"


def opponent_name(offset: int) -> str:
    """The agent id of the seat ``offset`` places after the learner in a league game."""
    return f"opponent_{offset}"


class ConcentrationMultiAgentEnv(MultiAgentEnv):
    """RLlib env of one table; ``config``: ``rules``, ``observation_mode``, ``network``,
    ``league`` and ``greedy_share`` (see :meth:`RLlibConfig.env_config`)."""

    def __init__(self, config: dict):
        super().__init__()
        self.rules = config["rules"]
        self.table = raw_table(config)
        self.encoding = Encoding(config.get("network", "mlp"), self.rules)
        self.league = bool(config.get("league", False))
        self.greedy_share = float(config.get("greedy_share", 0.0))
        seats = self.rules.num_players
        if self.league:
            self.possible_agents = [LEARNER] + [opponent_name(k) for k in range(1, seats)]
        else:
            self.possible_agents = [agent_name(seat) for seat in range(seats)]
        self.agents = list(self.possible_agents)
        space = self.encoding.observation_space()
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = dict.fromkeys(self.possible_agents, gym.spaces.Discrete(self.encoding.game.num_cards))
        self._rng = np.random.default_rng()
        self._scripted: dict = {}
        self._greedy = resolve_policy(SCRIPTED_OPPONENT, self.rules) if self.greedy_share > 0 else None

    def _deal(self, seed: int | None) -> None:
        self.table.reset(seed=seed)
        seats = self.rules.num_players
        learner = int(self._rng.integers(seats)) if self.league else 0
        self._ids = {}  # seat name -> agent id for this game
        for seat in range(seats):
            offset = (seat - learner) % seats
            self._ids[agent_name(seat)] = (
                (LEARNER if offset == 0 else opponent_name(offset)) if self.league else agent_name(seat)
            )
        self._scripted = {}
        if self._greedy is not None and self._rng.random() < self.greedy_share:
            self._greedy.reset(int(self._rng.integers(2**31)))
            self._scripted = {seat: self._greedy for seat in range(seats) if seat != learner}
        self._pending = dict.fromkeys(self.possible_agents, 0.0)
        self._moved: set[str] = set()
        self._learner_seat = learner

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._deal(seed)
        for _ in range(MAX_REDEALS):
            self._play_scripted()
            if not self._over():
                return {self._mover(): self._observe(self._mover())}, {}
            self._deal(None)  # the greedy seats cleared the table before the learner's first flip
        raise no_game_for_the_learner(self._learner_seat)

    def step(self, action_dict: dict):
        mover = self._mover()
        self.table.step(int(action_dict[mover]))
        self._collect()
        self._play_scripted()
        if self._over():
            done = sorted(self._moved)
            observations = {agent: self._observe(agent) for agent in done}
            rewards = {agent: self._take_reward(agent) for agent in done}
            ended = dict.fromkeys(done, True)
            truncated = any(self.table.truncations.values())
            return (
                observations,
                rewards,
                {**ended, "__all__": not truncated},
                {**dict.fromkeys(done, truncated), "__all__": truncated},
                {},
            )
        mover = self._mover()
        return (
            {mover: self._observe(mover)},
            {mover: self._take_reward(mover)},
            {"__all__": False},
            {"__all__": False},
            {},
        )

    def _over(self) -> bool:
        selected = self.table.agent_selection
        return bool(self.table.terminations[selected] or self.table.truncations[selected])

    def _mover(self) -> str:
        return self._ids[self.table.agent_selection]

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        self._moved.add(agent)
        seat = next(name for name, agent_id in self._ids.items() if agent_id == agent)
        observation = self.table.observe(seat)
        return self.encoding.one(observation["observation"], observation[MASK_KEY])

    def _take_reward(self, agent: str) -> float:
        reward, self._pending[agent] = self._pending[agent], 0.0
        return float(reward)

    def _collect(self) -> None:
        for seat, reward in self.table.rewards.items():
            self._pending[self._ids[seat]] += float(reward)

    def _play_scripted(self) -> None:
        if self._scripted:
            self._pending[LEARNER] += play_turns(self.table, self._scripted, watch=agent_name(self._learner_seat))

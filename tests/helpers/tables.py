"""Helpers shared by the multi-player, duel, versus and session tests."""

from __future__ import annotations

import numpy as np

from concentration_env import Rules


class RandomPolicy:
    """A seeded uniformly random legal player following the policy protocol."""

    def __init__(self, rules=None):
        self.rules = rules
        self.rng = np.random.default_rng()

    def reset(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def act(self, observation, action_mask):
        return int(self.rng.choice(np.flatnonzero(action_mask)))


class FirstLegalPolicy(RandomPolicy):
    """Always flips the lowest legal position (deterministic)."""

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[0])


def short_rules(preset: str) -> Rules:
    """A preset cut down to a short deck that keeps its rule features (for fast full games)."""
    rules = Rules.from_preset(preset)
    if rules.deck == "pictures":
        return rules.replace(pairs=4)
    return rules.replace(ranks=2 if rules.packs == 2 else 3)


def play_random_game(env, rng: np.random.Generator, check_turns: bool = True) -> int:
    """Play a raw AEC env to the end with random legal flips, checking (unless told not
    to) that only the agent on turn ever has legal moves; return the number of flips."""
    flips = 0
    while not env.terminations[env.agent_selection]:
        agent = env.agent_selection
        for other in env.agents if check_turns else ():
            mask = env.observe(other)["action_mask"]
            assert mask.dtype == np.int8
            assert (mask.any()) == (other == agent), f"{other} has legal moves while {agent} is on turn"
        env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
        flips += 1
    return flips


def positions_matching(env, matched: bool, start=None):
    """Two live positions on the main env's table that match (or not); the first is
    ``start`` when given."""
    state, game = env.unwrapped._state, env.unwrapped.game
    faces, live = state.faces[0], np.flatnonzero(~state.removed[0])
    firsts = live if start is None else [start]
    for i in firsts:
        for j in live:
            if i != j and game.match[faces[i], faces[j]] == matched:
                return int(i), int(j)
    raise AssertionError("no such pair on the table")

"""PettingZoo's Stable-Baselines3 action-masking tutorial, on Concentration.

One ``MaskablePPO`` with the default ``MaskableActorCriticPolicy`` learns by self-play: a
small wrapper makes the AEC env look like a single-agent env whose observation and
action mask are always those of the seat to move, so every seat's flips train the same
policy. The flat ``observation_format="box"`` layout is what the default (MLP) policy
takes; no SuperSuit needed. Needs the ``train`` extra.

    PYTHONPATH=. python scripts/examples/sb3_action_mask.py --steps 20000 --ranks 3
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pettingzoo.utils
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from sb3_contrib.common.wrappers import ActionMasker

from concentration_env import concentration_v0


class SB3ActionMaskWrapper(pettingzoo.utils.BaseWrapper, gym.Env):
    """The AEC env as SB3 sees a single-agent env: ``reset``/``step`` return the next
    mover's flat observation, ``step`` the reward, ends and info of the seat that just
    moved, and ``action_mask()`` the legal flips of the seat to move. (It is a
    ``gymnasium.Env`` too, which Gymnasium's wrappers such as ``ActionMasker`` require.)"""

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed, options)
        # Every seat shares one space, so the first agent's stand for all of them.
        agent = self.possible_agents[0]
        self.observation_space = super().observation_space(agent)["observation"]
        self.action_space = super().action_space(agent)
        return self.observe(self.agent_selection), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        mover = self.agent_selection
        super().step(action)
        return (
            self.observe(self.agent_selection),
            float(self._cumulative_rewards[mover]),
            self.terminations[mover],
            self.truncations[mover],
            self.infos[mover],
        )

    def observe(self, agent: str) -> np.ndarray:
        return super().observe(agent)["observation"]

    def action_mask(self) -> np.ndarray:
        return super().observe(self.agent_selection)["action_mask"]


def masked_env(seed: int, **env_kwargs: Any) -> ActionMasker:
    """The self-play env the learner trains on: box observations, the mover's mask."""
    env = SB3ActionMaskWrapper(concentration_v0.env(observation_format="box", **env_kwargs))
    env.reset(seed=seed)  # sets the spaces the wrapper exposes
    return ActionMasker(env, lambda wrapped: wrapped.action_mask())


def train(steps: int, seed: int = 0, **env_kwargs: Any) -> MaskablePPO:
    """Train one shared policy for ``steps`` flips of self-play."""
    model = MaskablePPO(MaskableActorCriticPolicy, masked_env(seed, **env_kwargs), seed=seed, verbose=0)
    model.learn(total_timesteps=steps)
    return model


def play(model: MaskablePPO, games: int, seed: int = 0, **env_kwargs: Any) -> list[list[str]]:
    """Let the model play every seat of ``games`` games (deterministically, with the mask
    as its only guide); returns each game's winners."""
    env = concentration_v0.env(observation_format="box", max_turns=200, **env_kwargs)
    winners = []
    for game in range(games):
        env.reset(seed=seed + game)
        for _agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            action = None
            if not (terminated or truncated):
                # A deterministic policy can retry one known mismatch for ever: max_turns ends such a game.
                chosen, _ = model.predict(
                    observation["observation"], action_masks=observation["action_mask"], deterministic=True
                )
                action = int(chosen)
            env.step(action)
        winners.append(env.unwrapped.winner_names())
    return winners


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="flips of self-play to train for")
    parser.add_argument("--ranks", type=int, default=3, help="ranks in the deck (4 cards each)")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/sb3_action_mask"), help="where to save the model")
    args = parser.parse_args(argv)
    env_kwargs = {"ranks": args.ranks, "num_players": args.players}
    model = train(args.steps, args.seed, **env_kwargs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    model.save(args.out)
    loaded = MaskablePPO.load(args.out)
    winners = play(loaded, 10, args.seed, **env_kwargs)
    first = sum("player_0" in names for names in winners)
    print(f"saved {args.out}.zip; over 10 games of self-play player_0 won or shared {first}")


if __name__ == "__main__":
    main()

"""Scale-out training with RLlib on Ray: the multi-player env as an RLlib multi-agent env,
PPO with action masking, and playback of a trained checkpoint.

Nothing here is imported by ``concentration_env`` itself, and Ray is imported only inside the
functions that need it, so the config and the observation encoding work without the
``rllib`` extra (``pip install -e ".[rllib]"``).

The pieces:

- :class:`RLlibConfig`: one training run (rules, seats, env runners, PPO settings), read from
  YAML by :meth:`RLlibConfig.from_yaml`; an unknown key fails naming it.
- :class:`MaskedFlatObservation`: a PettingZoo wrapper that turns the classic observation
  ``{"observation": Dict(...), "action_mask": int8}`` into the form RLlib's action-masking
  RLModule reads, ``{"observations": flat float32, "action_mask": float32}`` (the board, see
  :func:`observed_space`); RLlib's own
  :class:`~ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv` then turns the AEC env into a
  ``MultiAgentEnv`` (only the seat to move observes; rewards reach a seat when it next moves
  or when the game ends).
- :func:`build_algorithm`: PPO on the new API stack, one policy shared by every seat
  (self-play) or one per seat, env runners scaled by the config.
- :class:`RLlibPolicy`: a trained module behind the baselines' policy protocol
  (``reset(seed)``, ``act(observation, action_mask) -> int`` and the batched pair), loaded
  without starting Ray.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import gymnasium as gym
import numpy as np
from pettingzoo.utils.wrappers import BaseWrapper

from concentration_env import concentration_v0
from concentration_env.envs.spaces import board_space
from concentration_env.game.checks import check_choice, check_int, check_number, is_int
from concentration_env.game.core import compile_rules
from concentration_env.game.overrides import apply_overrides
from concentration_env.game.rules import Rules, load_yaml_mapping, resolve_rules
from concentration_env.game.seats import agent_name, check_observation_mode, seat_of

ENV_NAME = "concentration_multiagent"
SHARED_MODULE = "shared"  # module id of the self-play policy every seat uses
POLICY_SHARING = ("shared", "per_seat")
CONFIG_FILE = "concentration_rllib.yaml"  # the run's config, saved next to the checkpoint
INSTALL_HINT = 'RLlib is not installed: pip install -e ".[rllib]" (see the README, "Scale-out with RLlib")'
MASK_KEY = "action_mask"
OBS_KEY = "observations"  # the key RLlib's action-masking module expects
INT_MINIMA = {
    "num_players": 2,
    "num_env_runners": 0,
    "num_envs_per_env_runner": 1,
    "iterations": 1,
    "seed": 0,
    "train_batch_size": 1,
    "minibatch_size": 1,
    "num_epochs": 1,
}
FLOAT_RANGES = {"lr": (0.0, 1.0), "gamma": (0.0, 1.0), "entropy_coeff": (0.0, 1.0)}


@dataclass(frozen=True)
class RLlibConfig:
    """One RLlib training run; every field is a key of the YAML config."""

    rules: str | dict | None = None  # a preset name, a mapping of Rules fields, or None (defaults)
    num_players: int = 2
    observation_mode: str = "memory"
    policy: str = "shared"  # "shared": one self-play policy; "per_seat": one policy per seat
    num_env_runners: int = 2  # sampling actors; 0 samples in the driver
    num_envs_per_env_runner: int = 1
    iterations: int = 20
    seed: int = 0
    checkpoint_dir: str = "runs/rllib/concentration_2p"
    train_batch_size: int = 4000  # env steps per training iteration
    minibatch_size: int = 256
    num_epochs: int = 10
    lr: float = 3e-4
    gamma: float = 0.99
    entropy_coeff: float = 0.01
    hidden: tuple[int, ...] = field(default=(256, 256))

    def __post_init__(self) -> None:
        check_observation_mode(self.observation_mode)
        check_choice("policy", self.policy, POLICY_SHARING)
        for name, low in INT_MINIMA.items():
            check_int(name, getattr(self, name), low)
        for name, (minimum, maximum) in FLOAT_RANGES.items():
            check_number(name, getattr(self, name), minimum, maximum)
        if not isinstance(self.checkpoint_dir, str) or not self.checkpoint_dir:
            raise ValueError(f"invalid checkpoint_dir={self.checkpoint_dir!r}; allowed: a directory path")
        if not isinstance(self.hidden, (tuple, list)) or not all(is_int(h) and h > 0 for h in self.hidden):
            raise ValueError(f"invalid hidden={self.hidden!r}; allowed: a list of positive layer sizes")
        object.__setattr__(self, "hidden", tuple(self.hidden))
        self.game_rules()  # a bad rules entry fails here, naming the rule field

    @classmethod
    def from_mapping(cls, data: dict, source: str = "config") -> RLlibConfig:
        """Build from a mapping; an unknown key raises ValueError naming it and the allowed keys."""
        allowed = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(data) - set(allowed))
        if unknown:
            raise ValueError(f"{source}: unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(allowed)}")
        try:
            return cls(**data)
        except ValueError as error:
            raise ValueError(f"{source}: {error}") from None

    @classmethod
    def from_yaml(cls, path: str | Path, overrides: Sequence[str] = ()) -> RLlibConfig:
        """Read a YAML config file, with ``key=value`` overrides (errors name the file)."""
        path = Path(path)
        return cls.from_mapping(apply_overrides(load_yaml_mapping(path), overrides), source=str(path))

    def to_mapping(self) -> dict:
        """Plain data for YAML (the inverse of :meth:`from_mapping`)."""
        data = dataclasses.asdict(self)
        data["hidden"] = list(self.hidden)
        return data

    def game_rules(self) -> Rules:
        """The resolved rules of the game, for ``num_players`` seats."""
        if isinstance(self.rules, dict):
            if "num_players" in self.rules:
                raise ValueError("invalid rules: set num_players as a top-level key, not inside rules")
            return Rules.from_mapping({**self.rules, "num_players": self.num_players}, source="rules")
        return resolve_rules(self.rules, num_players=self.num_players)

    def env_config(self) -> dict:
        """What RLlib hands to :func:`make_multiagent_env` on every env runner."""
        return {"rules": self.game_rules(), "observation_mode": self.observation_mode}

    def module_ids(self) -> list[str]:
        """The RLModules this run trains."""
        if self.policy == "shared":
            return [SHARED_MODULE]
        return [agent_name(seat) for seat in range(self.num_players)]


def observed_space(rules: Rules) -> gym.spaces.Dict:
    """What a policy reads: the board arrays every env of the package observes (``cards``,
    ``face_up``, ``removed``, ``back`` for checkerboard). Not the scores: under the default
    pairs reward the best flip does not depend on them, and without them a trained policy
    plays from the multi-player env, the solitaire env and the baselines' batched harness."""
    board = board_space(compile_rules(rules))
    return gym.spaces.Dict({key: space for key, space in board.spaces.items() if key != MASK_KEY})


def flat_space(space: gym.spaces.Space) -> gym.spaces.Box:
    """The flat float32 Box an observation space encodes to (one-hot for discrete parts)."""
    flat = cast(gym.spaces.Box, gym.spaces.flatten_space(space))  # Box/Discrete parts flatten to a Box
    return gym.spaces.Box(flat.low.astype(np.float32), flat.high.astype(np.float32), dtype=np.float32)


def encode(space: gym.spaces.Dict, observation: dict) -> np.ndarray:
    """One observation as the flat float32 vector of :func:`flat_space` (keys that ``space``
    lacks, such as ``scores`` or ``action_mask``, are ignored)."""
    return cast(np.ndarray, gym.spaces.flatten(space, observation)).astype(np.float32)  # a Dict flattens to one array


class MaskedFlatObservation(BaseWrapper):
    """PettingZoo wrapper: the multi-player env's ``{"observation", "action_mask"}`` become
    ``{"observations": flat float32, "action_mask": float32}`` (RLlib's masking layout)."""

    def __init__(self, env):
        super().__init__(env)
        self._board = observed_space(env.unwrapped.rules)
        self._spaces = {
            agent: gym.spaces.Dict(
                {
                    MASK_KEY: gym.spaces.Box(0.0, 1.0, env.observation_space(agent)[MASK_KEY].shape, np.float32),
                    OBS_KEY: flat_space(self._board),
                }
            )
            for agent in env.possible_agents
        }

    def observation_space(self, agent: str) -> gym.spaces.Dict:
        return self._spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        observation = self.env.observe(agent)
        return {
            MASK_KEY: np.asarray(observation[MASK_KEY], dtype=np.float32),
            OBS_KEY: encode(self._board, observation["observation"]),
        }


def make_multiagent_env(env_config: dict):
    """RLlib env creator: the masked, flattened multi-player env (``env_config`` holds its
    keyword arguments) as an RLlib MultiAgentEnv."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    return PettingZooEnv(MaskedFlatObservation(concentration_v0.env(**env_config)))


def require_ray() -> None:
    """Fail with the install hint when the ``rllib`` extra is missing."""
    try:
        import ray.rllib  # noqa: F401
    except ImportError as error:
        raise ImportError(INSTALL_HINT) from error


def module_spec(config: RLlibConfig):
    """The RLModule spec: RLlib's PPO action-masking module with ``hidden`` layers."""
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    model = {"fcnet_hiddens": list(config.hidden), "fcnet_activation": "relu"}
    specs = {
        mid: RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model) for mid in config.module_ids()
    }
    return MultiRLModuleSpec(rl_module_specs=specs)


def shared_mapping(agent_id, episode, **kwargs) -> str:
    """Every seat plays the one shared module (self-play)."""
    return SHARED_MODULE


def seat_mapping(agent_id, episode, **kwargs) -> str:
    """Each seat plays its own module, named after the agent."""
    return agent_id


def ppo_config(config: RLlibConfig):
    """The PPO algorithm config for a run (new API stack)."""
    require_ray()
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.tune.registry import register_env

    register_env(ENV_NAME, make_multiagent_env)
    return (
        PPOConfig()
        .environment(env=ENV_NAME, env_config=config.env_config())
        .env_runners(num_env_runners=config.num_env_runners, num_envs_per_env_runner=config.num_envs_per_env_runner)
        .multi_agent(
            policies=set(config.module_ids()),
            policy_mapping_fn=shared_mapping if config.policy == "shared" else seat_mapping,
        )
        .rl_module(rl_module_spec=module_spec(config))
        .training(
            train_batch_size_per_learner=config.train_batch_size,
            minibatch_size=config.minibatch_size,
            num_epochs=config.num_epochs,
            lr=config.lr,
            gamma=config.gamma,
            entropy_coeff=config.entropy_coeff,
        )
        .debugging(seed=config.seed)
    )


def build_algorithm(config: RLlibConfig):
    """A PPO ``Algorithm`` ready to ``train()`` (needs a running or startable Ray)."""
    return ppo_config(config).build_algo()


def save_checkpoint(algorithm, config: RLlibConfig, path: str | Path | None = None) -> Path:
    """Save the algorithm and the run's config (which :class:`RLlibPolicy` reads back)."""
    import yaml

    path = Path(path or config.checkpoint_dir).absolute()
    algorithm.save_to_path(str(path))
    (path / CONFIG_FILE).write_text(yaml.safe_dump(config.to_mapping(), sort_keys=False))
    return path


def episode_stats(result: dict) -> dict[str, float]:
    """The headline numbers of one ``Algorithm.train()`` result (those present): flips per
    game, games and steps sampled, and each seat's mean return (``return/player_0``, ...;
    the all-seat return is uninformative: under ``reward_mode="pairs"`` it is every pair)."""
    runners = result.get("env_runners", {})
    keys = ("episode_len_mean", "num_episodes", "num_env_steps_sampled_lifetime")
    stats = {key: float(runners[key]) for key in keys if key in runners}
    for agent, value in sorted(runners.get("agent_episode_returns_mean", {}).items()):
        stats[f"return/{agent}"] = float(value)
    return stats


def is_checkpoint(path: str | Path) -> bool:
    """Whether ``path`` is a checkpoint folder written by :func:`save_checkpoint`."""
    return (Path(path) / CONFIG_FILE).is_file()


class RLlibPolicy:
    """A module of an RLlib checkpoint playing one seat, behind the baselines' protocol.

    ``RLlibPolicy(checkpoint, rules)`` loads the trained RLModule (no Ray cluster needed) and
    checks that ``rules`` (a ``Rules``, a preset name, or None for the rules it was trained
    on) give the observation size it was trained on. ``act(observation, action_mask)`` takes
    an observation of any env of the package (the multi-player env's inner Dict or its whole
    ``{"observation", "action_mask"}``, or the solitaire env's) and returns a legal position:
    the most likely one, or with ``explore=True`` a sample from the masked distribution
    (greedy play of a weak policy can retry one mismatched pair forever, so cap the game
    length when playing it greedily). ``reset_batch``/``act_batch``/``keep`` serve the
    baselines' batched harness (``baselines.evaluate.play``). ``seat`` (an index or agent name) picks that seat's module when the run
    trained one policy per seat.
    """

    def __init__(
        self, checkpoint: str | Path, rules: Rules | str | None = None, *, seat: int | str = 0, explore: bool = False
    ):
        require_ray()
        from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE
        from ray.rllib.core.rl_module.rl_module import RLModule

        checkpoint = Path(checkpoint).absolute()
        if not is_checkpoint(checkpoint):
            raise ValueError(f"{checkpoint}: not a checkpoint of scripts/train_rllib.py (no {CONFIG_FILE})")
        self.config = RLlibConfig.from_yaml(checkpoint / CONFIG_FILE)
        trained = self.config.game_rules()
        self.rules = trained if rules is None else resolve_rules(rules, num_players=trained.num_players)
        seat = seat_of(seat, trained.num_players, "seat")
        module_id = self.config.module_ids()[0 if self.config.policy == "shared" else seat]
        path = checkpoint / COMPONENT_LEARNER_GROUP / COMPONENT_LEARNER / COMPONENT_RL_MODULE / module_id
        self.module = RLModule.from_checkpoint(str(path))
        self.module.eval()
        self._space = observed_space(self.rules)
        size, trained_size = flat_space(self._space).shape[0], self.module.observation_space[OBS_KEY].shape[0]
        if size != trained_size:
            raise ValueError(
                f"rules {self.rules} give observations of size {size}, but the checkpoint was trained "
                f"on size {trained_size} (its rules: {trained})"
            )
        self.name = f"rllib:{checkpoint.name}"
        self.explore = explore
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        """Start a game; ``seed`` seeds the sampling used with ``explore=True``."""
        self.reset_batch([seed])

    def reset_batch(self, seeds) -> None:
        """Start ``len(seeds)`` games at once (the policy keeps no memory; this seeds sampling)."""
        self._rng = np.random.default_rng([seed for seed in seeds if seed is not None] or None)

    def keep(self, rows: np.ndarray) -> None:
        """Drop finished games from the batch (the harness's call; this policy holds no
        per-game state, its choice depends on the observation alone)."""

    def act(self, observation: dict, action_mask: np.ndarray) -> int:
        """The position to flip."""
        if "observation" in observation:
            observation = observation["observation"]
        if not np.any(action_mask):
            raise ValueError("action_mask allows no flip; this seat is not on turn")
        batch = {key: np.asarray(observation[key])[None] for key in self._space}
        batch[MASK_KEY] = np.asarray(action_mask)[None]
        return int(self.act_batch(batch)[0])

    def act_batch(self, observations: dict) -> np.ndarray:
        """Positions to flip for a batch of ``(B, n)`` observations with their ``action_mask``
        (a row with no legal flip, a finished game, gets position 0)."""
        import torch
        from ray.rllib.core.columns import Columns

        mask = np.asarray(observations[MASK_KEY], dtype=np.float32)
        rows = [encode(self._space, {key: observations[key][b] for key in self._space}) for b in range(len(mask))]
        batch = {Columns.OBS: {OBS_KEY: torch.from_numpy(np.stack(rows)), MASK_KEY: torch.from_numpy(mask)}}
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].numpy()
        if self.explore:  # Gumbel-max: a sample from the softmax of the logits
            logits = logits + self._rng.gumbel(size=logits.shape)
        return np.where(mask > 0, logits, -np.inf).argmax(axis=1)

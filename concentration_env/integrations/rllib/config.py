"""The run config of the RLlib integration (no Ray needed): :class:`RLlibConfig`, read from
YAML; an unknown key fails naming it, a bad value names the key and what is allowed."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from concentration_env.game.checks import check_choice, check_int, check_number, is_int, reject_unknown
from concentration_env.game.overrides import apply_overrides
from concentration_env.game.rules import Rules, load_yaml_mapping, resolve_rules
from concentration_env.game.seats import agent_name, check_observation_mode

SHARED_MODULE = "shared"  # module id of the self-play policy every seat uses
FROZEN_PREFIX = "frozen_"  # module ids frozen_0, frozen_1, ...: snapshots of the shared policy
LEARNER = "learner"  # agent id of the learner's seat in league games
POLICY_SHARING = ("shared", "per_seat")
# network -> tier: "engineered" reads hand-made per-card features (the match relation made
# explicit); "raw" reads the env's observation alone.
NETWORK_TIERS = {"per_card": "engineered", "card_attention": "raw", "mlp": "raw"}
INT_MINIMA = {
    "num_players": 2,
    "num_env_runners": 0,
    "num_envs_per_env_runner": 1,
    "iterations": 1,
    "seed": 0,
    "train_batch_size": 1,
    "minibatch_size": 1,
    "num_epochs": 1,
    "checkpoint_every": 0,
    "pool_size": 0,
    "snapshot_every": 1,
    "d_model": 1,
    "layers": 1,
    "heads": 1,
    "max_env_runner_restarts": 0,
}
FLOAT_RANGES = {
    "lr": (0.0, 1.0),
    "gamma": (0.0, 1.0),
    "gae_lambda": (0.0, 1.0),
    "entropy_coeff": (0.0, 1.0),
    "greedy_share": (0.0, 1.0),
    "self_play_share": (0.0, 1.0),
}


@dataclass(frozen=True)
class RLlibConfig:
    """One RLlib training run; every field is a key of the YAML config."""

    rules: str | dict | None = None  # a preset name, a mapping of Rules fields, or None (defaults)
    num_players: int = 2
    observation_mode: str = "memory"
    policy: str = "shared"  # "shared": one self-play policy; "per_seat": one policy per seat
    network: str = "mlp"  # per_card (engineered tier) | card_attention (raw) | mlp (raw)
    num_env_runners: int = 2  # sampling actors; 0 samples in the driver
    num_envs_per_env_runner: int = 1
    env_runner_resources: dict = field(default_factory=dict)  # custom Ray resources per runner
    max_env_runner_restarts: int = 100  # restart a failed env runner up to this many times
    iterations: int = 20
    seed: int = 0
    checkpoint_dir: str = "runs/rllib/concentration_2p"
    checkpoint_every: int = 0  # save every this many iterations (0: only at the end)
    train_batch_size: int = 4000  # env steps per training iteration
    minibatch_size: int = 256
    num_epochs: int = 10
    lr: float = 3e-4
    gamma: float = 0.99
    gae_lambda: float = 1.0  # RLlib's PPO default
    entropy_coeff: float = 0.01
    hidden: tuple[int, ...] = field(default=(256, 256))  # mlp layers; per_card uses the first width
    d_model: int = 64  # card_attention token width
    layers: int = 2  # card_attention layers
    heads: int = 4  # card_attention heads
    # League (shared policy only): each game seats the learner at a random seat; the other
    # seats are greedy (with probability greedy_share, played inside the env), the learner
    # itself (self_play_share of the rest) or a frozen snapshot drawn from the pool.
    greedy_share: float = 0.0
    self_play_share: float = 1.0
    pool_size: int = 0  # frozen snapshots of the learner kept as opponents
    snapshot_every: int = 5  # iterations between snapshots (the oldest slot is replaced)

    def __post_init__(self) -> None:
        check_observation_mode(self.observation_mode)
        check_choice("policy", self.policy, POLICY_SHARING)
        check_choice("network", self.network, tuple(NETWORK_TIERS))
        for name, low in INT_MINIMA.items():
            check_int(name, getattr(self, name), low)
        for name, (minimum, maximum) in FLOAT_RANGES.items():
            check_number(name, getattr(self, name), minimum, maximum)
        if not isinstance(self.checkpoint_dir, str) or not self.checkpoint_dir:
            raise ValueError(f"invalid checkpoint_dir={self.checkpoint_dir!r}; allowed: a directory path")
        if not isinstance(self.hidden, (tuple, list)) or not all(is_int(h) and h > 0 for h in self.hidden):
            raise ValueError(f"invalid hidden={self.hidden!r}; allowed: a list of positive layer sizes")
        if not self.hidden:
            raise ValueError("invalid hidden=[]; allowed: a list of positive layer sizes")
        resources = self.env_runner_resources
        if not isinstance(resources, dict) or not all(
            isinstance(k, str) and isinstance(v, (int, float)) and v > 0 for k, v in resources.items()
        ):
            raise ValueError(f"invalid env_runner_resources={resources!r}; allowed: a mapping of name to amount > 0")
        if self.d_model % self.heads:
            raise ValueError(f"invalid heads={self.heads}; allowed: a divisor of d_model={self.d_model}")
        if self.league and self.policy != "shared":
            raise ValueError("invalid policy='per_seat' with a league (greedy_share or pool_size); allowed: shared")
        object.__setattr__(self, "hidden", tuple(self.hidden))
        self.game_rules()  # a bad rules entry fails here, naming the rule field

    @property
    def tier(self) -> str:
        """``engineered`` or ``raw``: what the network reads (see :data:`NETWORK_TIERS`)."""
        return NETWORK_TIERS[self.network]

    @property
    def league(self) -> bool:
        """Whether games seat the learner against greedy or frozen snapshots (not pure self-play)."""
        return self.greedy_share > 0 or self.pool_size > 0

    @classmethod
    def from_mapping(cls, data: dict, source: str = "config") -> RLlibConfig:
        """Build from a mapping; an unknown key raises ValueError naming it and the allowed keys.
        A ``tier`` key (written into saved configs) must agree with the network."""
        data = dict(data)
        tier = data.pop("tier", None)
        allowed = [f.name for f in dataclasses.fields(cls)]
        reject_unknown(source, sorted(set(data) - set(allowed)), "key", [*allowed, "tier"])
        try:
            config = cls(**data)
        except ValueError as error:
            raise ValueError(f"{source}: {error}") from None
        if tier is not None and tier != config.tier:
            raise ValueError(f"{source}: tier={tier!r} but network {config.network!r} is tier {config.tier!r}")
        return config

    @classmethod
    def from_yaml(cls, path: str | Path, overrides: Sequence[str] = ()) -> RLlibConfig:
        """Read a YAML config file, with ``key=value`` overrides (errors name the file)."""
        path = Path(path)
        return cls.from_mapping(apply_overrides(load_yaml_mapping(path), overrides), source=str(path))

    def to_mapping(self) -> dict:
        """Plain data for YAML (the inverse of :meth:`from_mapping`), with the tier."""
        data = dataclasses.asdict(self)
        data["hidden"] = list(self.hidden)
        data["tier"] = self.tier
        return data

    def game_rules(self) -> Rules:
        """The resolved rules of the game, for ``num_players`` seats."""
        if isinstance(self.rules, dict):
            if "num_players" in self.rules:
                raise ValueError("invalid rules: set num_players as a top-level key, not inside rules")
            return Rules.from_mapping({**self.rules, "num_players": self.num_players}, source="rules")
        return resolve_rules(self.rules, num_players=self.num_players)

    def env_config(self) -> dict:
        """What RLlib hands to the env creator on every env runner."""
        return {
            "rules": self.game_rules(),
            "observation_mode": self.observation_mode,
            "network": self.network,
            "league": self.league,
            "greedy_share": self.greedy_share,
        }

    def module_ids(self) -> list[str]:
        """The RLModules this run trains."""
        if self.policy == "shared":
            return [SHARED_MODULE]
        return [agent_name(seat) for seat in range(self.num_players)]

    def frozen_ids(self) -> list[str]:
        """The frozen snapshot modules of the league (never trained)."""
        return [f"{FROZEN_PREFIX}{slot}" for slot in range(self.pool_size)]

"""Training configs: a flat YAML mapping, validated in full when it is loaded.

Every key is listed in :data:`KEYS` with its default and what it accepts; an unknown key or
a bad value raises one ``ValueError`` that names the file and the key. ``--set key=value``
overrides (``hyperparameters.learning_rate=1e-4`` reaches into a mapping) are applied before
validation, so they are checked the same way. No torch here: loading a config is cheap.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from concentration_env.envs.policy_specs import check_policy_name
from concentration_env.game.checks import check_bool, check_choice, check_int
from concentration_env.game.overrides import apply_overrides
from concentration_env.game.overrides import parse_override as parse_override  # re-exported
from concentration_env.game.rules import Rules, load_yaml_mapping, resolve_rules
from concentration_env.game.seats import OBSERVATION_MODES
from concentration_env.training.config_values import (
    ATTENTION_SIZES,
    ATTENTION_SWITCHES,
    finite,
    hyperparameter_values,
    non_negative,
    one_of,
    policy_kwargs_values,
    section_mapping,
    whole_number,
)
from concentration_env.training.restart import RestartConfig, attempt_seed, parse_restart

ALGOS = ("maskable_ppo", "ppo", "dqn", "recurrent_ppo")
MASKED_ALGOS = ("maskable_ppo", "recurrent_ppo")  # the others flip blind; illegal flips follow illegal_action
FEATURES = ("raw", "card_features", "count_features", "count_lead_features")
RAW_MEMORY_NETWORKS = ("card_memory", "card_max_memory", "card_recall_attention")  # recurrent_ppo's raw-tier networks
NETWORKS = ("mlp", "per_card", "card_attention", *RAW_MEMORY_NETWORKS)
RAW_MEMORY_SETTINGS = ("value_trunk", "value_scale")  # hyperparameters only those networks read
VEC_ENVS = ("dummy", "subproc", "native")


@dataclass(frozen=True)
class TrainConfig:
    """One training run. See ``configs/train/*.yaml`` for commented examples.

    - ``algo``: ``maskable_ppo`` (default; sb3-contrib, masks from ``action_masks()``),
      ``ppo`` or ``dqn`` (SB3, unmasked: illegal flips follow the rules' ``illegal_action``),
      or ``recurrent_ppo`` (this package's compact recurrent PPO for ``visible`` mode).
    - ``rules``: a preset name or a mapping of rule fields (optionally with ``preset``).
    - ``observation_mode``: ``memory`` or ``visible``.
    - ``features``: ``raw`` observation, or an engineered feature set of
      ``concentration_env.envs.features``: ``card_features``, or ``count_features`` (the same
      plus one-hot public counts: unseen pairs and lone known cards), or ``count_lead_features``
      (the counts plus the one-hot lead in points; games of 2 or more players).
    - ``network``: ``mlp`` (SB3's default policy; for ``recurrent_ppo``, its engineered
      network), ``per_card`` (shared per-card scorer; needs a feature set),
      ``card_attention`` (self-attention over per-card tokens of the raw observation,
      ``concentration_env.training.attention``; needs ``raw``), ``card_memory``,
      ``card_max_memory`` or ``card_recall_attention`` (``recurrent_ppo``'s raw-tier networks:
      per-card memories and attention across cards on the raw observation; need ``raw``).
    - ``num_envs``, ``vec_env`` (``dummy``, ``subproc`` or ``native``: the batched
      ``concentration_env.integrations.sb3`` VecEnv, solitaire or versus), ``total_timesteps``, ``seed``.
    - ``policy_kwargs``, ``hyperparameters``: passed to the learner (names are checked).
    - ``opponents``: policies for the other seat of a 2-player game (the
      ``ConcentrationVs-v0`` env): baseline names (``baselines.make_policy``) or saved
      models' files (a frozen earlier agent, for league-style training); training envs
      cycle through them and alternate the agent's seat.
    - ``eval_freq`` (env steps), ``eval_episodes``, ``checkpoint_freq`` (env steps).
    - ``league``: self-play against a pool of the learner's frozen past versions and fixed
      members (:class:`LeagueConfig`, :mod:`concentration_env.training.league`); it then
      replaces ``opponents`` in training (evaluations still play the first of ``opponents``).
    - ``learning_rate_decay_from``: the env step from which the learner's (SB3's or recurrent_ppo's)
      ``hyperparameters.learning_rate`` falls linearly to ``learning_rate_final`` at
      ``total_timesteps`` (``null``, the default: a constant learning rate). The schedule is a
      function of the env step, so a resumed run carries on along it.
    - ``end_stalled_games``: with 2 or more players on ``vec_env: native``, a training game in
      which every seat has passed in a row (captured nothing, shown nothing new) ends there,
      scored as it stands, as evaluations score it (``VersusBatch``'s ``end_stalled``); by
      default (``false``) it runs on to the episode cap. The optimum passes on purpose where
      revealing only helps the other player, so without it a learner is never paid for a stall.
    - ``torch_threads``: torch's intra-op threads while training (default 1: on a small shared
      CPU one thread per process beats contention between them; 2 uses both cores of an idle
      2-core machine).
    - ``restart``: ``null`` (the default) or ``{at, moves_above, tries}``: a solitaire run whose
      first evaluation at or after ``at`` env steps is above ``moves_above`` moves starts again
      with a new seed, at most ``tries`` times (:mod:`concentration_env.training.restart`).
    """

    algo: str = "maskable_ppo"
    rules: Any = "standard"
    observation_mode: str = "memory"
    features: str = "raw"
    network: str = "mlp"
    num_envs: int = 8
    vec_env: str = "dummy"
    total_timesteps: int = 100_000
    seed: int = 0
    policy_kwargs: dict = field(default_factory=dict)
    hyperparameters: dict = field(default_factory=dict)
    opponents: tuple = ("greedy",)
    eval_freq: int = 20_000
    eval_episodes: int = 100
    checkpoint_freq: int = 100_000
    league: LeagueConfig | None = None
    learning_rate_decay_from: int | None = None
    learning_rate_final: float = 0.0
    end_stalled_games: bool = False
    torch_threads: int = 1
    restart: RestartConfig | None = None

    @cached_property
    def resolved_rules(self) -> Rules:
        """The rule set this config plays, resolved once (every layer reads this one)."""
        return rules_from_config(self.rules)

    @property
    def tier(self) -> str:
        """``raw`` when the network sees the env's observation and nothing else (any
        encoding, a generic architecture, no hand-built targets); ``engineered`` otherwise."""
        return "raw" if not self.engineered_by else "engineered"

    @property
    def engineered_by(self) -> tuple[str, ...]:
        """What makes the run engineered (empty for the raw tier)."""
        reasons = []
        if self.features != "raw":
            reasons.append(f"features: {self.features} (rules-derived per-card features)")
        if self.network == "per_card":
            reasons.append("network: per_card (scores the engineered features)")
        if self.algo == "recurrent_ppo" and self.network == "mlp":
            reasons.append("recurrent_ppo's mlp network (match-table scoring, self-supervised face read-out)")
        return tuple(reasons)

    @property
    def masked(self) -> bool:
        """Whether the learner sees the action mask."""
        return self.algo in MASKED_ALGOS

    def to_dict(self) -> dict[str, Any]:
        """Plain data, as written to a run's ``config.yaml``."""
        data = dataclasses.asdict(self)
        data["opponents"] = list(self.opponents)
        if self.league is not None:
            data["league"]["baselines"] = list(self.league.baselines)
        return data


SCHEMES = ("pfsp", "uniform")


@dataclass(frozen=True)
class LeagueConfig:
    """The ``league`` section of a config (see :mod:`concentration_env.training.league`).

    - ``snapshot_every``: env steps between snapshots of the learner (each joins the pool);
    - ``pool_size``: how many of the newest snapshots the pool keeps;
    - ``baselines``: fixed members: baseline names (``optimal`` needs 2 players) or saved models' files;
    - ``scheme``: ``pfsp`` (prioritised fictitious self-play: members the learner beats least
      are met most) or ``uniform``; ``exponent``: PFSP's exponent;
    - ``fixed_share``: the fixed members' share of the games once a snapshot joins (each group
      split by its weights), or ``None``: every member weighed against every other;
    - ``eval_games``: seeded games per seat when the learner's win share against every
      member is estimated (at the start and after each snapshot).
    """

    snapshot_every: int = 50_000
    pool_size: int = 8
    baselines: tuple = ("greedy", "safe_first", "forgetful")
    scheme: str = "pfsp"
    exponent: float = 2.0
    fixed_share: float | None = None
    eval_games: int = 50


LEAGUE_CHECKS: dict[str, Callable[[Any], Any]] = {
    "snapshot_every": lambda v: check_int("league.snapshot_every", v, 1, whole_floats=True),
    "pool_size": lambda v: check_int("league.pool_size", v, 1, whole_floats=True),
    "baselines": lambda v: _opponents(v) if v != [] else (),
    "scheme": lambda v: check_choice("league.scheme", v, SCHEMES),
    "exponent": lambda v: finite("league.exponent", v, 0.0),
    "fixed_share": lambda v: None if v is None else finite("league.fixed_share", v, 0.0, maximum=1.0),
    "eval_games": lambda v: check_int("league.eval_games", v, 1, whole_floats=True),
}


def _league(value: Any) -> LeagueConfig | None:
    if value is None:
        return None
    values = section_mapping(value, LEAGUE_CHECKS)
    return LeagueConfig(**{key: LEAGUE_CHECKS[key](v) for key, v in values.items()})


KEYS = tuple(f.name for f in dataclasses.fields(TrainConfig))


def rules_from_config(value: Any) -> Rules:
    """A config's ``rules`` entry (a preset name or a mapping of fields) as ``Rules``."""
    if isinstance(value, str):
        return resolve_rules(value)
    if isinstance(value, Mapping):
        fields = dict(value)
        preset = fields.pop("preset", None)
        if "layout" in fields and isinstance(fields["layout"], list):
            fields["layout"] = tuple(fields["layout"])
        return resolve_rules(preset, **fields)
    raise ValueError(f"expected a preset name or a mapping of rule fields, got {value!r}")


def _opponents(value: Any) -> tuple:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not names or not all(isinstance(n, str) for n in names):
        raise ValueError(
            f"expected a policy (baseline name or saved model file) or a non-empty list of them, got {value!r}"
        )
    return tuple(check_policy_name(name) for name in names)


MAX_SEED = 2**32 - 1  # SB3 and torch seed NumPy's legacy generator, which takes 32 bits


CHECKS: dict[str, Callable[[Any], Any]] = {
    "algo": one_of("algo", ALGOS),
    "rules": lambda v: (rules_from_config(v), v)[1],
    "observation_mode": one_of("observation_mode", OBSERVATION_MODES),
    "features": one_of("features", FEATURES),
    "network": one_of("network", NETWORKS),
    "num_envs": whole_number("num_envs"),
    "vec_env": one_of("vec_env", VEC_ENVS),
    "total_timesteps": whole_number("total_timesteps"),
    "seed": lambda value: check_int("seed", value, 0, MAX_SEED, whole_floats=True),
    "policy_kwargs": policy_kwargs_values,
    "hyperparameters": hyperparameter_values,
    "opponents": _opponents,
    "eval_freq": whole_number("eval_freq"),
    "eval_episodes": whole_number("eval_episodes"),
    "checkpoint_freq": whole_number("checkpoint_freq"),
    "league": _league,
    "learning_rate_decay_from": lambda v: (
        None if v is None else check_int("learning_rate_decay_from", v, 0, whole_floats=True)
    ),
    "learning_rate_final": non_negative("learning_rate_final"),
    "end_stalled_games": lambda v: check_bool("end_stalled_games", v),
    "torch_threads": whole_number("torch_threads"),
    "restart": parse_restart,
}


def config_from_mapping(data: Mapping[str, Any], source: str = "config") -> TrainConfig:
    """Validate a mapping of config keys; errors read ``<source>: key 'k': <why>``."""
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise ValueError(f"{source}: unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(KEYS)}")
    values = {}
    for key, value in data.items():
        try:
            values[key] = CHECKS[key](value)
        except ValueError as error:
            raise ValueError(f"{source}: key {key!r}: {error}") from None
    config = TrainConfig(**values)
    _check_combination(config, source)
    _check_learner_arguments(config, source)
    return config


def _check_combination(config: TrainConfig, source: str) -> None:
    """Checks that involve more than one key."""
    if config.network == "per_card" and config.features == "raw":
        raise ValueError(
            f"{source}: key 'network': 'per_card' needs features: {', '.join(FEATURES[1:-1])} or {FEATURES[-1]}"
        )
    if config.network == "mlp" and "hidden" in config.policy_kwargs:
        raise ValueError(
            f"{source}: key 'policy_kwargs': 'hidden' is the width of network: per_card; "
            "SB3's mlp policies take net_arch"
        )
    if config.network == "card_attention" and config.features != "raw":
        raise ValueError(
            f"{source}: key 'network': 'card_attention' reads the raw observation; it needs features: raw, "
            f"not {config.features!r}"
        )
    if config.network == "card_attention":
        _check_attention_sizes(config.policy_kwargs, source)
    if config.network in RAW_MEMORY_NETWORKS and config.features != "raw":
        raise ValueError(f"{source}: key 'network': {config.network!r} needs features: raw (it sees raw observations)")
    if config.network in RAW_MEMORY_NETWORKS and config.algo != "recurrent_ppo":
        raise ValueError(f"{source}: key 'network': {config.network!r} is implemented for algo: recurrent_ppo")
    if config.network in ("per_card", "card_attention") and config.algo != "maskable_ppo":
        raise ValueError(f"{source}: key 'network': {config.network!r} is implemented for algo: maskable_ppo")
    raw_only = sorted(set(config.hyperparameters) & set(RAW_MEMORY_SETTINGS))
    if config.algo == "recurrent_ppo" and config.network not in RAW_MEMORY_NETWORKS and raw_only:
        raise ValueError(
            f"{source}: key 'hyperparameters': {', '.join(raw_only)} set the value trunk of network: "
            f"{' or '.join(RAW_MEMORY_NETWORKS)}; network {config.network!r} has none"
        )
    hyper = config.hyperparameters
    if (
        hyper.get("policy_from") is not None
        and config.network != "card_recall_attention"
        and config.algo != "maskable_ppo"
    ):
        raise ValueError(
            f"{source}: key 'hyperparameters': policy_from is read by algo: maskable_ppo (any network) or "
            "network: card_recall_attention only"
        )
    if hyper.get("policy_frozen_steps", 0) and config.network != "card_recall_attention":
        raise ValueError(
            f"{source}: key 'hyperparameters': policy_frozen_steps is read by network: card_recall_attention only"
        )
    if config.features == "count_lead_features" and config.resolved_rules.num_players < 2:
        raise ValueError(
            f"{source}: key 'features': count_lead_features reads the players' scores; it needs rules "
            "with num_players >= 2"
        )
    if config.end_stalled_games and (config.resolved_rules.num_players < 2 or config.vec_env != "native"):
        raise ValueError(
            f"{source}: key 'end_stalled_games': it ends stalled games of the batched versus env; it needs "
            "rules with num_players >= 2 and vec_env: native"
        )
    if config.algo == "recurrent_ppo" and config.resolved_rules.num_players != 1:
        raise ValueError(f"{source}: key 'algo': recurrent_ppo trains solitaire (rules with num_players: 1)")
    if not config.masked and config.resolved_rules.illegal_action == "raise":
        raise ValueError(
            f"{source}: key 'algo': {config.algo!r} flips without the action mask, and rules with "
            "illegal_action: raise would stop the run at its first illegal flip; use illegal_action: end_turn "
            f"or a masked algo ({', '.join(MASKED_ALGOS)})"
        )
    if config.league is not None:
        _check_league(config, source)
    if config.learning_rate_decay_from is not None:
        _check_decay(config, source)
    if config.algo == "recurrent_ppo" and config.vec_env == "subproc":
        raise ValueError(f"{source}: key 'vec_env': recurrent_ppo steps games in-process; use dummy or native")
    if config.restart is not None:
        _check_restart(config, config.restart, source)


def _check_restart(config: TrainConfig, restart: RestartConfig, source: str) -> None:
    """A restart reads solitaire moves at a step the run reaches, and its seeds stay 32-bit."""
    if config.resolved_rules.num_players != 1:
        raise ValueError(f"{source}: key 'restart': it reads solitaire moves; it needs rules with num_players: 1")
    if restart.at >= config.total_timesteps:
        raise ValueError(
            f"{source}: key 'restart': at={restart.at} must be below total_timesteps, {config.total_timesteps}"
        )
    if attempt_seed(config.seed, restart.tries) > MAX_SEED:
        raise ValueError(
            f"{source}: key 'restart': seed {config.seed} with {restart.tries} tries gives attempt seeds above "
            f"{MAX_SEED}; use a smaller seed or fewer tries"
        )


def _check_decay(config: TrainConfig, source: str) -> None:
    """A decay needs a learning rate to start from and steps left to fall over."""
    key = "learning_rate_decay_from"
    if "learning_rate" not in config.hyperparameters:
        raise ValueError(f"{source}: key {key!r}: a decay starts from hyperparameters.learning_rate; set it")
    if config.learning_rate_decay_from >= config.total_timesteps:  # type: ignore[operator]  # the caller checked
        raise ValueError(
            f"{source}: key {key!r}: {config.learning_rate_decay_from} must be below total_timesteps, "
            f"{config.total_timesteps}"
        )
    if config.learning_rate_final > config.hyperparameters["learning_rate"]:
        raise ValueError(
            f"{source}: key 'learning_rate_final': {config.learning_rate_final} is above the learning rate it "
            f"decays from, {config.hyperparameters['learning_rate']}"
        )


def _check_attention_sizes(sizes: dict, source: str) -> None:
    """``policy_kwargs`` of network: card_attention: whole sizes, the width split evenly by the heads."""
    unknown = sorted(set(sizes) - set(ATTENTION_SIZES))
    if unknown:
        raise ValueError(
            f"{source}: key 'policy_kwargs': unknown name(s) {', '.join(map(repr, unknown))} for network "
            f"card_attention; allowed: {', '.join(ATTENTION_SIZES)}"
        )
    try:
        checked = {
            name: check_int(name, value, 0 if name == "value_layers" else 1)
            for name, value in sizes.items()
            if name not in ATTENTION_SWITCHES
        }
    except ValueError as error:
        raise ValueError(f"{source}: key 'policy_kwargs': {error}") from None
    if not isinstance(sizes.get("shared", False), bool):
        raise ValueError(f"{source}: key 'policy_kwargs': shared must be true or false, got {sizes['shared']!r}")
    if "value_scale" in sizes:
        finite("value_scale", sizes["value_scale"], 0.0, above=True)
    if sizes.get("shared", False) and checked.get("value_layers", checked.get("layers", 2)) != checked.get("layers", 2):
        raise ValueError(f"{source}: key 'policy_kwargs': value_layers needs a value trunk of its own (shared: false)")
    d_model, heads = checked.get("d_model", 64), checked.get("heads", 4)
    if d_model % heads:
        raise ValueError(f"{source}: key 'policy_kwargs': d_model={d_model} must be a multiple of heads={heads}")


def _check_league(config: TrainConfig, source: str) -> None:
    """A league trains SB3 learners on the batched versus game; ``optimal`` is the 2-player DP."""
    if config.resolved_rules.num_players < 2 or config.vec_env != "native" or config.algo == "recurrent_ppo":
        raise ValueError(
            f"{source}: key 'league': league training needs rules with num_players >= 2, vec_env: native "
            "and an SB3 algo (maskable_ppo, ppo, dqn)"
        )
    assert config.league is not None  # the caller checked
    if "optimal" in config.league.baselines and config.resolved_rules.num_players != 2:
        raise ValueError(f"{source}: key 'league': baseline 'optimal' plays 2-player games only")


def _check_learner_arguments(config: TrainConfig, source: str) -> None:
    """Reject hyperparameter names the learner does not take (without importing torch)."""
    from concentration_env.training.learners import learner_arguments

    allowed = learner_arguments(config.algo)
    unknown = sorted(set(config.hyperparameters) - set(allowed))
    if unknown:
        raise ValueError(
            f"{source}: key 'hyperparameters': unknown name(s) {', '.join(map(repr, unknown))} for "
            f"algo {config.algo!r}; allowed: {', '.join(sorted(allowed))}"
        )


def load_config(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> TrainConfig:
    """Read, override and validate a training config file."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such config file")
    data = load_yaml_mapping(path)
    for text in overrides:
        keys, _ = parse_override(text)
        if keys[0] == "rules" and len(keys) > 1 and isinstance(data.get("rules"), str):
            # ``rules: toddler`` and ``rules.matching=...``: one field of the preset changes
            data = {**data, "rules": {"preset": data["rules"]}}
        data = apply_overrides(data, [text])
    return config_from_mapping(data, source=str(path))

"""The learner suite's config (``configs/benchmark/suite.yaml``), validated in full at load.

A suite trains every learner on every game variant it applies to, with several seeds at one
budget of env steps, and evaluates the models next to the baselines on seeded deals that
training never used::

    budget: 200000          # env steps per learner, per variant and seed
    seeds: [0, 1, 2]
    eval_games: 1000        # evaluation deals per model (and per baseline)
    eval_seed: 1000000      # deal g of the evaluation is seeded eval_seed + g
    curve_points: 10        # evaluations during training (the learning curves)
    output: benchmarks/suite
    models: models/suite    # models/suite/<variant>/<learner>/seed<k>/
    baselines: [random, greedy, {policy: forgetful, capacity: 4, forget: 0}]
    learners:
      raw_mlp: {config: configs/train/solitaire_raw_mlp.yaml, tier: raw, mode: memory}
    variants:
      memory_rank52: {rules: {matching: rank}, mode: memory}

A learner names a training config (``configs/train/*.yaml``), its tier (``raw``: the network
sees the env's observation only; ``engineered``: hand-made features or memory), the
observation mode it plays (it is trained on the variants of that mode), how the main table
shows it (``play: deterministic`` or ``sampled``; both are always measured), ``set``:
``key=value`` overrides of its config (as ``--set`` of ``scripts/train.py``), and optionally
its own ``budget`` of env steps per variant and seed (a learner that needs more play than the
suite's default states it here; the table shows every learner's env steps), and for a
``card_recall_attention`` learner ``start_from``: a memory-mode learner of the suite whose
selected model on the memory-mode variant with the same rules, same seed, each run's policy
starts from (``hyperparameters.policy_from``; that run must be trained first). A variant gives
its rules and mode, optionally the learners it gets (default: every learner of its mode), ``set: {learner:
[key=value, ...]}``: overrides for those learners' runs on this variant alone (a bound that
depends on the game, say; the suite's own keys still win), and optionally ``extend: {learner: steps}``: those learners' runs on this variant carry on past
their budget to ``steps`` env steps in all, resumed from the budget's final model with the same
settings (so the first segment is the same run as on every other variant; the table shows each
cell's env steps); ``extend: {learner: {steps: N, set: [key=value, ...]}}`` changes settings
for the resumed segment (a learning-rate decay, say).
A learner whose config does not load (e.g. a network this build lacks) is kept, marked with
why, and shown as "learner not available in this build"; every other bad entry is one
``ValueError`` naming the file and the key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from concentration_env.game.checks import check_choice, check_int
from concentration_env.game.overrides import apply_overrides
from concentration_env.game.rules import Rules, load_yaml_mapping
from concentration_env.game.seats import OBSERVATION_MODES
from concentration_env.training.config import TrainConfig, config_from_mapping, load_config, rules_from_config
from concentration_env.training.run import EVAL_SEED_OFFSET

REQUIRED = ("budget", "seeds", "eval_games", "eval_seed", "output", "models", "baselines", "learners", "variants")
TOP_KEYS = REQUIRED + ("curve_points",)
LEARNER_KEYS = ("config", "tier", "mode", "label", "play", "set", "budget", "start_from")
VARIANT_KEYS = ("rules", "mode", "label", "learners", "set", "extend")
TIERS = ("raw", "engineered")
PLAYS = ("deterministic", "sampled")


@dataclass(frozen=True)
class Learner:
    """One learner of the suite; ``base`` is its loaded config, or None with ``unavailable`` saying why."""

    name: str
    label: str
    config: str
    tier: str
    mode: str
    play: str
    overrides: tuple[str, ...]
    base: TrainConfig | None
    unavailable: str | None
    budget: int | None = None  # env steps per variant and seed; None: the suite's
    start_from: str | None = None  # a memory-mode learner whose model on the twin variant each run starts from


@dataclass(frozen=True)
class Variant:
    """One game variant: a row of the table."""

    name: str
    label: str
    rules: Rules
    rules_entry: Any  # as written in the file, for the training configs
    mode: str
    learners: tuple[str, ...]
    extend: dict[str, Extension] = field(default_factory=dict)  # learner -> its runs' resumed segment
    overrides: dict[str, tuple[str, ...]] = field(default_factory=dict)  # learner -> settings of its runs here


@dataclass(frozen=True)
class Extension:
    """A resumed segment past a learner's budget: env steps in all, and overrides for it alone."""

    steps: int
    overrides: tuple[str, ...] = ()


@dataclass(frozen=True)
class Baseline:
    """A baseline policy by name with its keyword arguments."""

    policy: str
    kwargs: dict
    label: str


@dataclass(frozen=True)
class Suite:
    """A validated suite config."""

    source: str
    budget: int
    seeds: tuple[int, ...]
    eval_games: int
    eval_seed: int
    curve_points: int
    output: Path
    models: Path
    baselines: tuple[Baseline, ...]
    learners: dict[str, Learner] = field(default_factory=dict)
    variants: tuple[Variant, ...] = ()

    def model_dir(self, variant: Variant, learner: Learner, seed: int) -> Path:
        """Where the model of one run lives: ``<models>/<variant>/<learner>/seed<k>``."""
        return self.models / variant.name / learner.name / f"seed{seed}"

    def learner_budget(self, learner: Learner) -> int:
        """The env steps of a learner's runs (the first segment of an extended run)."""
        return self.budget if learner.budget is None else learner.budget

    def memory_twin(self, variant: Variant) -> Variant | None:
        """The memory-mode variant with ``variant``'s rules, if the suite has one."""
        return next((v for v in self.variants if v.mode == "memory" and v.rules == variant.rules), None)

    def start_model(self, variant: Variant, learner: Learner, seed: int) -> Path | None:
        """The model a run of a ``start_from`` learner starts from: the selected model of the
        same seed of that learner on the memory-mode twin variant (None for other learners);
        a ``ValueError`` when that run is missing or kept no selection."""
        if learner.start_from is None:
            return None
        from concentration_env.training.run_folder import selected_model

        twin = self.memory_twin(variant)
        assert twin is not None, "checked at load"
        folder = self.model_dir(twin, self.learners[learner.start_from], seed)
        if not (folder / "training.json").is_file():
            raise ValueError(f"{learner.name} on {variant.name} starts from {folder}, which holds no trained run")
        selected = selected_model(folder)
        if selected is None:
            raise ValueError(f"{learner.name} on {variant.name} starts from {folder}, which kept no selected model")
        return selected[0]

    def train_config(self, variant: Variant, learner: Learner, seed: int) -> TrainConfig:
        """The learner's config with the variant's rules and mode, its budget and the seed
        (for an extended run, its first segment's), and the model it starts from, if any."""
        assert learner.base is not None, "an unavailable learner is never trained"
        budget = self.learner_budget(learner)
        data = self.variant_config(variant, learner).to_dict()
        start = self.start_model(variant, learner, seed)
        if start is not None:
            data["hyperparameters"] = {**data["hyperparameters"], "policy_from": str(start)}
        data.update(
            rules=variant.rules_entry,
            observation_mode=variant.mode,
            total_timesteps=budget,
            seed=seed,
            eval_freq=max(1, budget // self.curve_points),
            checkpoint_freq=budget,
        )
        return config_from_mapping(data, source=f"{self.source}: learner {learner.name!r} on {variant.name!r}")

    def variant_config(self, variant: Variant, learner: Learner) -> TrainConfig:
        """The learner's config with the variant's ``set`` overrides for it (its own when none)."""
        assert learner.base is not None, "an unavailable learner is never trained"
        overrides = variant.overrides.get(learner.name, ())
        if not overrides:
            return learner.base
        where = f"{self.source}: key 'variants.{variant.name}.set.{learner.name}'"
        try:
            data = apply_overrides(learner.base.to_dict(), overrides)
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
        return config_from_mapping(data, source=where)

    def extension_config(self, variant: Variant, learner: Learner, seed: int) -> TrainConfig:
        """The config of an extended run's resumed segment: the first segment's, carried on to
        the extension's steps with its overrides."""
        extension = variant.extend[learner.name]
        data = {**self.train_config(variant, learner, seed).to_dict(), "total_timesteps": extension.steps}
        where = f"{self.source}: key 'variants.{variant.name}.extend.{learner.name}'"
        return config_from_mapping(apply_overrides(data, extension.overrides), source=where)


def _fail(source: str, key: str, why: str) -> NoReturn:
    raise ValueError(f"{source}: key {key!r}: {why}")


def _mapping(source: str, key: str, value: Any, allowed: tuple[str, ...], required: tuple[str, ...]) -> dict:
    if not isinstance(value, Mapping):
        _fail(source, key, f"expected a mapping, got {value!r}")
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        _fail(source, key, f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(allowed)}")
    missing = [k for k in required if k not in value]
    if missing:
        _fail(source, key, f"missing key(s) {', '.join(map(repr, missing))}")
    return dict(value)


def _check_writable(source: str, key: str, path: Path) -> None:
    """The folder exists as a writable folder, or can be made under a writable one."""
    probe = path
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        _fail(source, key, f"{probe} is a file, not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        _fail(source, key, f"{probe} is not writable")


def _learner(source: str, name: str, value: Any) -> Learner:
    where = f"learners.{name}"
    entry = _mapping(source, where, value, LEARNER_KEYS, ("config", "tier", "mode"))
    try:
        tier = check_choice("tier", entry["tier"], TIERS)
        mode = check_choice("mode", entry["mode"], OBSERVATION_MODES)
        play = check_choice("play", entry.get("play", "deterministic"), PLAYS)
        budget = None if entry.get("budget") is None else check_int("budget", entry["budget"], 1, whole_floats=True)
    except ValueError as error:
        _fail(source, where, str(error))
    overrides = entry.get("set", [])
    if not isinstance(overrides, list) or not all(isinstance(o, str) for o in overrides):
        _fail(source, f"{where}.set", "expected a list of key=value overrides")
    if not isinstance(entry["config"], str):
        _fail(source, f"{where}.config", "expected the path of a training config")
    base, unavailable = None, None
    try:
        base = load_config(entry["config"], overrides)
    except ValueError as error:
        unavailable = str(error)
    if base is not None and base.resolved_rules.num_players != 1:
        _fail(source, f"{where}.config", "the suite trains solitaire learners (num_players: 1)")
    start_from = entry.get("start_from")
    if start_from is not None and (base is None or base.network != "card_recall_attention"):
        _fail(source, f"{where}.start_from", "only a learner with network: card_recall_attention starts from a model")
    label = str(entry.get("label", name))
    return Learner(
        name, label, entry["config"], tier, mode, play, tuple(overrides), base, unavailable, budget, start_from
    )


def _variant(source: str, name: str, value: Any, learners: dict[str, Learner]) -> Variant:
    where = f"variants.{name}"
    entry = _mapping(source, where, value, VARIANT_KEYS, ("rules", "mode"))
    try:
        rules = rules_from_config(entry["rules"])
        mode = check_choice("mode", entry["mode"], OBSERVATION_MODES)
    except ValueError as error:
        _fail(source, where, str(error))
    if rules.num_players != 1:
        _fail(source, f"{where}.rules", "the suite plays solitaire (num_players: 1)")
    names = entry.get("learners", [n for n, learner in learners.items() if learner.mode == mode])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        _fail(source, f"{where}.learners", "expected a list of learner names")
    for learner in names:
        if learner not in learners:
            _fail(source, f"{where}.learners", f"unknown learner {learner!r}; allowed: {', '.join(learners)}")
        if learners[learner].mode != mode:
            _fail(source, f"{where}.learners", f"{learner!r} plays {learners[learner].mode} mode, this is {mode}")
    extend = entry.get("extend", {})
    if not isinstance(extend, Mapping):
        _fail(source, f"{where}.extend", f"expected a mapping of learner names to env steps, got {extend!r}")
    for learner in extend:
        if learner not in names:
            _fail(
                source, f"{where}.extend", f"{learner!r} is not a learner of this variant; allowed: {', '.join(names)}"
            )
    extensions = {
        str(learner): _extension(source, f"{where}.extend.{learner}", value) for learner, value in extend.items()
    }
    label = str(entry.get("label", name))
    overrides = _variant_overrides(source, f"{where}.set", entry.get("set", {}), names)
    return Variant(name, label, rules, entry["rules"], mode, tuple(names), extensions, overrides)


def _variant_overrides(source: str, where: str, value: Any, names: list[str]) -> dict[str, tuple[str, ...]]:
    """``{learner: [key=value, ...]}`` for learners of the variant."""
    if not isinstance(value, Mapping):
        _fail(source, where, f"expected a mapping of learner names to lists of key=value overrides, got {value!r}")
    for learner, overrides in value.items():
        if learner not in names:
            _fail(source, where, f"{learner!r} is not a learner of this variant; allowed: {', '.join(names)}")
        if not isinstance(overrides, list) or not all(isinstance(text, str) for text in overrides):
            _fail(source, f"{where}.{learner}", f"expected a list of key=value overrides, got {overrides!r}")
    return {str(learner): tuple(overrides) for learner, overrides in value.items()}


def _extension(source: str, where: str, value: Any) -> Extension:
    """``steps`` or ``{steps: N, set: [key=value, ...]}``."""
    entry = (
        _mapping(source, where, value, ("steps", "set"), ("steps",)) if isinstance(value, Mapping) else {"steps": value}
    )
    overrides = entry.get("set", [])
    if not isinstance(overrides, list) or not all(isinstance(text, str) for text in overrides):
        _fail(source, f"{where}.set", f"expected a list of key=value overrides, got {overrides!r}")
    try:
        return Extension(check_int("steps", entry["steps"], 1, whole_floats=True), tuple(overrides))
    except ValueError as error:
        _fail(source, where, str(error))


def _baseline(source: str, index: int, value: Any, rules: Rules) -> Baseline:
    from baselines import make_policy

    where = f"baselines[{index}]"
    if isinstance(value, str):
        value = {"policy": value}
    if not isinstance(value, Mapping) or "policy" not in value:
        _fail(source, where, f"expected a policy name or a mapping with 'policy', got {value!r}")
    kwargs = {k: v for k, v in value.items() if k not in ("policy", "label")}
    try:
        make_policy(value["policy"], rules, **kwargs)
    except (TypeError, ValueError) as error:
        _fail(source, where, str(error))
    arguments = ", ".join(f"{k}={v}" for k, v in kwargs.items())
    label = str(value.get("label", f"{value['policy']}({arguments})" if arguments else value["policy"]))
    return Baseline(value["policy"], kwargs, label)


def load_suite(path: str | Path, overrides: Mapping[str, Any] | None = None, train: bool = False) -> Suite:
    """Read and validate a suite config (``overrides`` replace top-level keys); with ``train``
    the models folder must be writable too."""
    source = str(path)
    data = {**load_yaml_mapping(Path(path)), **(overrides or {})}
    data = _mapping(source, "(top level)", data, TOP_KEYS, REQUIRED)
    numbers = {}
    for key, minimum in (("budget", 1), ("eval_games", 2), ("eval_seed", 0), ("curve_points", 1)):
        try:
            numbers[key] = check_int(key, data.get(key, 10), minimum, whole_floats=True)
        except ValueError as error:
            _fail(source, key, str(error))
    seeds = data["seeds"]
    if not isinstance(seeds, list) or not seeds or len(set(map(str, seeds))) != len(seeds):
        _fail(source, "seeds", f"expected a non-empty list of distinct seeds, got {seeds!r}")
    try:
        seeds = [check_int("seed", s, 0) for s in seeds]
    except ValueError as error:
        _fail(source, "seeds", str(error))
    for key in ("learners", "variants"):
        if not isinstance(data[key], Mapping) or not data[key]:
            _fail(source, key, "expected a mapping of names to entries")
    learners = {str(name): _learner(source, str(name), value) for name, value in data["learners"].items()}
    variants = tuple(_variant(source, str(name), value, learners) for name, value in data["variants"].items())
    if not isinstance(data["baselines"], list):
        _fail(source, "baselines", "expected a list of policies")
    baselines = tuple(_baseline(source, i, v, variants[0].rules) for i, v in enumerate(data["baselines"]))
    episodes = max((lr.base.eval_episodes for lr in learners.values() if lr.base is not None), default=0)
    # Training evaluates on deals seeded seed + EVAL_SEED_OFFSET + g: the suite's deals lie above.
    lowest = max(seeds) + EVAL_SEED_OFFSET + episodes
    if numbers["eval_seed"] < lowest:
        _fail(source, "eval_seed", f"must be >= {lowest}: training evaluates on deals seeded up to {lowest - 1}")
    output, models = Path(str(data["output"])), Path(str(data["models"]))
    _check_writable(source, "output", output)
    if train:
        _check_writable(source, "models", models)
    suite = Suite(
        source,
        numbers["budget"],
        tuple(seeds),
        numbers["eval_games"],
        numbers["eval_seed"],
        numbers["curve_points"],
        output,
        models,
        baselines,
        learners,
        variants,
    )
    for name, learner in learners.items():
        if learner.start_from is not None:
            _check_start(suite, name, learner.start_from)
    for variant in variants:
        for name in variant.overrides:
            if learners[name].base is not None:
                suite.variant_config(variant, learners[name])  # its overrides load
        for name, extension in variant.extend.items():
            if extension.steps <= (budget := suite.learner_budget(learners[name])):
                _fail(
                    source,
                    f"variants.{variant.name}.extend.{name}",
                    f"{extension.steps} must exceed the budget, {budget}",
                )
            if learners[name].base is not None:
                suite.extension_config(variant, learners[name], suite.seeds[0])  # its overrides load
    return suite


def _check_start(suite: Suite, name: str, start_from: str) -> None:
    """A ``start_from`` learner exists, plays memory mode, and every variant of ``name`` has a
    memory-mode twin (the same rules) that it plays."""
    where = f"learners.{name}.start_from"
    if start_from not in suite.learners or suite.learners[start_from].mode != "memory":
        memory = [n for n, lr in suite.learners.items() if lr.mode == "memory"]
        _fail(suite.source, where, f"unknown memory-mode learner {start_from!r}; allowed: {', '.join(memory)}")
    for variant in (v for v in suite.variants if name in v.learners):
        twin = suite.memory_twin(variant)
        if twin is None or start_from not in twin.learners:
            _fail(
                suite.source,
                where,
                f"variant {variant.name!r} has no memory-mode variant with its rules where {start_from!r} plays",
            )

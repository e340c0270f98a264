"""League self-play: the learner plays the batched versus game against a pool of its own
frozen past versions and fixed members (baselines, saved models).

Every ``snapshot_every`` env steps the model is saved as ``league/snapshot_<steps>.zip`` in
the run folder and joins the pool (the newest ``pool_size`` snapshots stay in it, beside
every fixed member). Then the learner's win share ``p_i`` against each member ``i`` is
estimated on the same seeded deals each time (``eval_games`` per seat, every seat, see
:mod:`concentration_env.training.crosstable`), and the games of the batched env are dealt
out to the members in proportion to their sampling weights:

- ``pfsp`` (prioritised fictitious self-play): ``w_i = (1 - p_i + EPSILON) ** exponent``,
  so the members the learner beats least are met most, and one it always beats is still
  met now and then (``exponent = 0`` is uniform);
- ``uniform``: ``w_i = 1``.

With ``fixed_share`` set, the fixed members together get that share of the weight once the
pool holds a snapshot, and the snapshots the rest, each group split by the weights above: a
learner that beats its baselines then keeps meeting them however its snapshots fare.
Member ``i`` gets about ``num_envs * w_i / sum(w)`` games (largest remainders), in one
block of consecutive games, whose learner seats take turns as in any versus config. A game
changes opponent only when it is next dealt (``VersusBatch.set_opponents``).
``league/pool.json`` records the pool, the estimates and the weights of every update, so a
run resumed from its folder (``--resume``) carries on with the same pool.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from concentration_env.game.rules import Rules
from concentration_env.training.config import TrainConfig
from concentration_env.training.crosstable import Entrant, win_share
from concentration_env.training.evaluation import training_cap

EPSILON = 0.05  # PFSP's floor: a member the learner always beats keeps a small weight
LEAGUE_SEED_OFFSET = 20_000  # the league's evaluation deals, apart from training and eval.csv
POOL_FILE = "pool.json"


def sampling_weights(shares: np.ndarray, scheme: str, exponent: float) -> np.ndarray:
    """Each member's sampling weight from the learner's win shares against it (module docstring)."""
    shares = np.asarray(shares, dtype=float)
    if scheme == "uniform":
        return np.ones_like(shares)
    return (1.0 - shares + EPSILON) ** exponent


def allot(weights: np.ndarray, games: int) -> np.ndarray:
    """Whole numbers of games in proportion to ``weights``, summing to ``games`` (the largest
    remainders round up)."""
    exact = games * np.asarray(weights, dtype=float) / np.sum(weights)
    counts = np.floor(exact).astype(int)
    counts[np.argsort(counts - exact)[: games - counts.sum()]] += 1
    return counts


class League:
    """The pool of a run folder's league: fixed members and snapshots, with the learner's
    latest win shares against them; :meth:`update` adds a snapshot and re-deals the games."""

    def __init__(self, config: TrainConfig, rules: Rules, run_dir: Path):
        assert config.league is not None  # only league configs build one
        self.config, self.rules, self.settings = config, rules, config.league
        self.folder = Path(run_dir) / "league"
        self.folder.mkdir(parents=True, exist_ok=True)
        # ModelPolicy reads the config beside a model file: the snapshots share the run's.
        (self.folder / "config.yaml").write_text((Path(run_dir) / "config.yaml").read_text())
        self.snapshots: list[str] = []  # file names in the league folder, oldest first
        self.shares: dict[str, float] = {}
        self.history: list[dict[str, Any]] = []
        self.last_snapshot = 0
        self._built: dict[str, Any] = {}  # each member's one policy object in the env
        path = self.folder / POOL_FILE
        if path.is_file():
            saved = json.loads(path.read_text())
            self.snapshots, self.shares = saved["snapshots"], saved["shares"]
            self.history, self.last_snapshot = saved["history"], saved["last_snapshot"]

    def members(self) -> list[str]:
        """The pool: fixed members, then the snapshots' file names (kept relative, so a run
        folder resumes wherever it is moved)."""
        return [*self.settings.baselines, *self.snapshots]

    def spec(self, member: str) -> str:
        """What :func:`resolve_policy` builds ``member`` from."""
        return str(self.folder / member) if member in self.snapshots else member

    def weights(self) -> np.ndarray:
        shares = np.array([self.shares.get(member, 0.5) for member in self.members()])
        weights = sampling_weights(shares, self.settings.scheme, self.settings.exponent)
        fixed, share = len(self.settings.baselines), self.settings.fixed_share
        if share is None or not self.snapshots or not fixed:
            return weights
        weights[:fixed] *= share / weights[:fixed].sum()
        weights[fixed:] *= (1.0 - share) / weights[fixed:].sum()
        return weights

    def due(self, timesteps: int) -> bool:
        """Whether a snapshot is due at ``timesteps``."""
        return timesteps - self.last_snapshot >= self.settings.snapshot_every

    def snapshot(self, model: Any, timesteps: int) -> Path:
        """Save ``model`` into the pool; the oldest snapshot leaves a full pool (its file stays)."""
        name = f"snapshot_{timesteps}.zip"
        model.save(str(self.folder / name))
        self.snapshots = [*self.snapshots, name][-self.settings.pool_size :]
        self.last_snapshot = timesteps
        return self.folder / name

    def estimate(self, model: Any, timesteps: int) -> None:
        """The learner's win share against every member, on the league's seeded deals."""
        from concentration_env.envs.opponents import resolve_policy
        from concentration_env.training.model_policy import ModelPolicy

        rules, seed = self.rules, self.config.seed + LEAGUE_SEED_OFFSET
        learner = Entrant("learner", self.config.tier, lambda: ModelPolicy.of_model(model, self.config, rules))
        self.shares = {}
        for member in self.members():
            opponent = Entrant(member, "member", partial(resolve_policy, self.spec(member), rules))
            games = self.settings.eval_games
            self.shares[member] = win_share(rules, learner, opponent, games, seed, training_cap(rules))
        self.history.append(
            {
                "timesteps": timesteps,
                "shares": {Path(m).stem: round(s, 4) for m, s in self.shares.items()},
                "weights": {Path(m).stem: round(float(w), 4) for m, w in zip(self.members(), self.weights())},
            }
        )

    def assign(self, batch: Any) -> None:
        """Deal the games of ``batch`` (a ``VersusBatch``) out to the members by weight."""
        from concentration_env.envs.opponents import resolve_policy

        members = self.members()
        self._built = {m: self._built.get(m) or resolve_policy(self.spec(m), self.rules) for m in members}
        start = 0
        for member, count in zip(members, allot(self.weights(), batch.num_envs)):
            if count:
                batch.set_opponents(np.arange(start, start + count), self._built[member])
            start += count

    def update(self, model: Any, timesteps: int, batch: Any, snapshot: bool = True) -> None:
        """Snapshot (unless ``snapshot`` is False), re-estimate, re-deal, save ``pool.json``."""
        if snapshot:
            self.snapshot(model, timesteps)
        self.estimate(model, timesteps)
        self.assign(batch)
        self.save()

    def save(self) -> None:
        state = {
            "snapshots": self.snapshots,
            "shares": self.shares,
            "last_snapshot": self.last_snapshot,
            "scheme": self.settings.scheme,
            "fixed_share": self.settings.fixed_share,
            "history": self.history,
        }
        (self.folder / POOL_FILE).write_text(json.dumps(state, indent=2) + "\n")


def league_callback(league: League) -> Any:
    """An SB3 callback running ``league``: an estimate and a first deal at the start (none
    when a resumed run's pool already has its estimates), then :meth:`League.update` once a
    snapshot is due."""
    from stable_baselines3.common.callbacks import BaseCallback

    from concentration_env.integrations.sb3 import ConcentrationVsSB3VecEnv

    class LeagueCallback(BaseCallback):
        def _batch(self) -> Any:
            env = self.training_env.unwrapped
            assert isinstance(env, ConcentrationVsSB3VecEnv)  # a league config trains on vec_env: native
            return env.batch

        def _on_training_start(self) -> None:
            if set(league.shares) != set(league.members()):
                league.update(self.model, self.num_timesteps, self._batch(), snapshot=False)
            else:
                league.assign(self._batch())

        def _on_step(self) -> bool:
            if league.due(self.num_timesteps):
                league.update(self.model, self.num_timesteps, self._batch())
            return True

    return LeagueCallback()

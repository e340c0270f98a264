"""Seeding many games at once the way Gymnasium seeds a list of single envs: game ``i`` of a
batch seeded with ``seed`` gets ``seed + i``, each with its own generator."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from concentration_env.game.checks import check_seed, fail, is_int


def generator(seed: int | None = None) -> np.random.Generator:
    """A PCG64 generator from ``seed`` (fresh entropy for None): the construction of
    Gymnasium's ``seeding.np_random``, so a batch's games deal like single envs."""
    seed = check_seed(seed)
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))


def reseed(seed: int | Sequence[int | None] | None, rngs: list) -> tuple[list[int | None], list]:
    """Seeds for a batch of ``len(rngs)`` games and their new generators: an int seeds game
    ``i`` with ``seed + i``; a list gives each game its own seed (None keeps that game's
    generator going, as a single env's ``reset(seed=None)`` does)."""
    seeds: list[int | None]
    if seed is None:
        seeds = [None] * len(rngs)
    elif is_int(seed, numpy=True):
        first = check_seed(seed)
        assert first is not None  # an int, checked above
        seeds = [first + i for i in range(len(rngs))]
    elif isinstance(seed, (list, tuple, np.ndarray)):
        seeds = [check_seed(s, f"seed[{i}]") for i, s in enumerate(seed)]
        if len(seeds) != len(rngs):
            raise ValueError(f"got {len(seeds)} seeds for num_envs={len(rngs)}; pass one per game or an int")
    else:
        fail("seed", seed, "None, an int >= 0, or a list of one seed (or None) per game")
    return seeds, [rng if s is None else generator(s) for s, rng in zip(seeds, rngs)]


def fill_generators(rngs: list, rows: np.ndarray) -> None:
    """Give games ``rows`` that have no generator yet a randomly seeded one (a first reset
    without a seed, as a single env does)."""
    for i in rows:
        if rngs[i] is None:
            rngs[i] = generator()

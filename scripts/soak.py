"""Soak test: a million-plus flips across every preset in the single, vector and
multi-player envs, with random legal and illegal flips, watching speed and memory.

Each round plays every preset in every kind of env; rounds repeat so that memory after
the first round can be compared with memory after the last (it must not grow). Not part
of the test suite: run it by hand and copy its summary into the README.

    python scripts/soak.py                 # default budget: >= 1,000,000 flips
    python scripts/soak.py --rounds 2 --json soak.json
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from dataclasses import asdict, dataclass

import gymnasium as gym
import numpy as np

import concentration_env  # noqa: F401  (registers the ids)
from concentration_env import concentration_v0, duel_v0
from concentration_env.envs.registration import preset_env_id
from concentration_env.game.rules import preset_names

ILLEGAL_SHARE = 0.1  # share of flips drawn from every position, legal or not
PAGE = resource.getpagesize()
MEMORY_GROWTH_LIMIT_MIB = 16.0  # allowed drift between the first and the last round


def rss_mib() -> float:
    """Resident memory of this process now, in MiB."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE / 2**20


def pick(rng: np.random.Generator, mask: np.ndarray) -> int:
    """A random legal flip, or now and then any position at all."""
    if rng.random() < ILLEGAL_SHARE:
        return int(rng.integers(len(mask)))
    return int(rng.choice(np.flatnonzero(mask)))


def soak_single(env_id: str, flips: int, rng: np.random.Generator) -> int:
    env = gym.make(env_id)
    obs, info = env.reset(seed=int(rng.integers(2**31)))
    for _ in range(flips):
        obs, reward, terminated, truncated, info = env.step(pick(rng, info["action_mask"]))
        if terminated or truncated:
            obs, info = env.reset()
    env.close()
    return flips


def soak_vector(env_id: str, steps: int, rng: np.random.Generator, num_envs: int) -> int:
    envs = gym.make_vec(env_id, num_envs=num_envs)
    obs, infos = envs.reset(seed=int(rng.integers(2**31)))
    n = envs.single_action_space.n
    for _ in range(steps):
        mask = obs["action_mask"].astype(bool)
        # random legal flip per game (argmax of random keys over the legal set) ...
        actions = np.argmax(np.where(mask, rng.random(mask.shape), -1.0), axis=1)
        # ... except a share of games that flip any position at all
        wild = rng.random(num_envs) < ILLEGAL_SHARE
        actions[wild] = rng.integers(n, size=int(wild.sum()))
        obs, rewards, terminated, truncated, infos = envs.step(actions)
    envs.close()
    return steps * num_envs


def soak_aec(make_env, flips: int, rng: np.random.Generator) -> int:
    env = make_env()
    env.reset(seed=int(rng.integers(2**31)))
    done = 0
    while done < flips:
        for _agent in env.agent_iter():
            obs, reward, termination, truncation, info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            env.step(pick(rng, obs["action_mask"]))
            done += 1
            if done >= flips:
                break
        env.reset()
    env.close()
    return done


@dataclass
class Phase:
    name: str
    flips: int
    seconds: float
    rss_before_mib: float
    rss_after_mib: float

    @property
    def rate(self) -> float:
        return self.flips / self.seconds


def run_round(args: argparse.Namespace, rng: np.random.Generator) -> list[Phase]:
    jobs = []
    for preset in preset_names():
        env_id = preset_env_id(preset)
        jobs.append((f"single {preset}", lambda i=env_id: soak_single(i, args.single_flips, rng)))
        jobs.append((f"vector {preset}", lambda i=env_id: soak_vector(i, args.vector_steps, rng, args.num_envs)))
        for players in (2, 3):
            jobs.append(
                (
                    f"aec{players} {preset}",
                    lambda p=preset, k=players: soak_aec(
                        lambda: concentration_v0.env(rules=p, num_players=k), args.aec_flips, rng
                    ),
                )
            )
    jobs.append(("duel", lambda: soak_aec(duel_v0.env, args.aec_flips, rng)))
    phases = []
    for name, job in jobs:
        before, start = rss_mib(), time.perf_counter()
        flips = job()
        phases.append(Phase(name, flips, time.perf_counter() - start, before, rss_mib()))
    return phases


def summarise(kind: str, phases: list[Phase]) -> tuple[int, float]:
    chosen = [p for p in phases if p.name.startswith(kind)]
    flips = sum(p.flips for p in chosen)
    return flips, flips / sum(p.seconds for p in chosen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--single-flips", type=int, default=6_000, help="per preset and round")
    parser.add_argument("--vector-steps", type=int, default=100, help="per preset and round")
    parser.add_argument("--num-envs", type=int, default=256)
    parser.add_argument("--aec-flips", type=int, default=1_500, help="per preset, player count and round")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    if args.rounds < 2:
        parser.error("--rounds must be at least 2 to compare memory between rounds")

    rng = np.random.default_rng(args.seed)
    rounds, memory = [], []
    for index in range(args.rounds):
        phases = run_round(args, rng)
        rounds.append(phases)
        memory.append(rss_mib())
        print(f"round {index + 1}: {sum(p.flips for p in phases):,} flips, resident memory {memory[-1]:.1f} MiB")

    everything = [p for phases in rounds for p in phases]
    print()
    for kind in ("single", "vector", "aec", "duel"):
        flips, rate = summarise(kind, everything)
        print(
            f"{kind:>7}: {flips:>11,} flips, {rate:>12,.0f} flips/s "
            f"(first round {summarise(kind, rounds[0])[1]:,.0f}, last round {summarise(kind, rounds[-1])[1]:,.0f})"
        )
    total = sum(p.flips for p in everything)
    growth = memory[-1] - memory[0]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"\ntotal: {total:,} flips; resident memory after round 1 {memory[0]:.1f} MiB, "
        f"after round {args.rounds} {memory[-1]:.1f} MiB (growth {growth:+.1f} MiB); peak {peak:.1f} MiB"
    )
    if args.json:
        with open(args.json, "w") as out:
            json.dump(
                {
                    "rounds": [[asdict(p) for p in phases] for phases in rounds],
                    "memory_after_round_mib": memory,
                    "peak_mib": peak,
                    "total_flips": total,
                },
                out,
                indent=1,
            )
    if growth > MEMORY_GROWTH_LIMIT_MIB:
        raise SystemExit(f"memory grew by {growth:.1f} MiB between the first and the last round")


if __name__ == "__main__":
    main()

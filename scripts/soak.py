"""Soak test: a million-plus flips across every preset in the single, vector, multi-player
and versus envs, with random legal and illegal flips, watching speed and memory.

Each round plays every preset in every kind of env; rounds repeat so that memory after
the first round can be compared with memory after the last (it must not grow). Halfway
through every phase the env is pickled and unpickled, and the copy must continue flip for
flip as the original does (same random flips, same observations, rewards and ends); a copy
that cannot be made or that drifts is reported by phase, and the run then fails. Not part
of the test suite: run it by hand and copy its summary into docs/reliability.md.

    python scripts/soak.py                 # default budget: >= 1,000,000 flips
    python scripts/soak.py --rounds 2 --json soak.json
"""

from __future__ import annotations

import argparse
import json
import pickle
import resource
import time
from dataclasses import asdict, dataclass

import gymnasium as gym
import numpy as np

import concentration_env  # noqa: F401  (registers the ids)
from concentration_env import concentration_v0, duel_v0
from concentration_env.envs.registration import VERSUS_ID, preset_env_id
from concentration_env.game.rules import preset_names

ILLEGAL_SHARE = 0.1  # share of flips drawn from every position, legal or not
PAGE = resource.getpagesize()
MEMORY_GROWTH_LIMIT_MIB = 16.0  # allowed drift between the first and the last round
TWIN_FLIPS = 50  # flips an env and its pickled copy are compared over, once per phase


def rss_mib() -> float:
    """Resident memory of this process now, in MiB."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE / 2**20


def pick(rng: np.random.Generator, mask: np.ndarray) -> int:
    """A random legal flip, or now and then any position at all."""
    if rng.random() < ILLEGAL_SHARE:
        return int(rng.integers(len(mask)))
    return int(rng.choice(np.flatnonzero(mask)))


def same(a, b) -> bool:
    """Whether two observations, infos or step results are equal, arrays compared by value."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(map(same, a, b))
    return np.array_equal(a, b)


def twin_check(env, play, rng: np.random.Generator) -> tuple[str | None, list | None]:
    """Pickle ``env`` and let ``play(env, rng)`` go on in it and in the copy with the same
    random flips. Returns what went wrong (None: the copy did exactly what the original did)
    and what ``play`` gave in the original (None if it was not played)."""
    seed = int(rng.integers(2**31))
    try:
        twin = pickle.loads(pickle.dumps(env))
    except Exception as error:  # reported, not raised: the soak goes on with the other envs
        return f"cannot pickle: {type(error).__name__}: {error}", None
    ours = play(env, np.random.default_rng(seed))
    try:
        theirs = play(twin, np.random.default_rng(seed))
    except Exception as error:
        return f"the copy cannot continue: {type(error).__name__}: {error}", ours
    finally:
        twin.close()
    return (None if same(ours, theirs) else f"the copy continued differently within {TWIN_FLIPS} flips"), ours


def play_gym(env, rng: np.random.Generator) -> list:
    """TWIN_FLIPS random flips in a single-agent env (new games as they end); what each gave."""
    results = []
    for _ in range(TWIN_FLIPS):
        result = env.step(pick(rng, env.unwrapped.action_masks()))
        results.append(result)
        if result[2] or result[3]:
            results.append(env.reset())
    return results


def play_vector(envs, rng: np.random.Generator) -> list:
    """TWIN_FLIPS steps of any positions at all in a vector env (it resets games itself)."""
    n = envs.single_action_space.n
    return [envs.step(rng.integers(n, size=envs.num_envs)) for _ in range(TWIN_FLIPS)]


def play_aec(env, rng: np.random.Generator) -> list:
    """TWIN_FLIPS random flips in an AEC env (a new game when one ends); each ``last()``."""
    results = []
    while len(results) < TWIN_FLIPS:
        last = env.last()
        results.append((env.agent_selection, last))
        if last[2] or last[3]:
            env.reset()
        else:
            env.step(pick(rng, last[0]["action_mask"]))
    return results


def soak_gym(env, flips: int, rng: np.random.Generator) -> tuple[int, str | None]:
    obs, info = env.reset(seed=int(rng.integers(2**31)))
    problem = None
    for flip in range(flips):
        if flip == flips // 2:
            problem, played = twin_check(env, play_gym, rng)
            info = info if played is None else played[-1][-1]  # a step's or a reset's info
        obs, reward, terminated, truncated, info = env.step(pick(rng, info["action_mask"]))
        if terminated or truncated:
            obs, info = env.reset()
    env.close()
    return flips + TWIN_FLIPS, problem


def soak_vector(env_id: str, steps: int, rng: np.random.Generator, num_envs: int) -> tuple[int, str | None]:
    envs = gym.make_vec(env_id, num_envs=num_envs)
    obs, infos = envs.reset(seed=int(rng.integers(2**31)))
    n = envs.single_action_space.n
    problem = None
    for step in range(steps):
        if step == steps // 2:
            problem, played = twin_check(envs, play_vector, rng)
            obs = obs if played is None else played[-1][0]
        mask = obs["action_mask"].astype(bool)
        # random legal flip per game (argmax of random keys over the legal set) ...
        actions = np.argmax(np.where(mask, rng.random(mask.shape), -1.0), axis=1)
        # ... except a share of games that flip any position at all
        wild = rng.random(num_envs) < ILLEGAL_SHARE
        actions[wild] = rng.integers(n, size=int(wild.sum()))
        obs, rewards, terminated, truncated, infos = envs.step(actions)
    envs.close()
    return (steps + TWIN_FLIPS) * num_envs, problem


def soak_aec(make_env, flips: int, rng: np.random.Generator) -> tuple[int, str | None]:
    env = make_env()
    env.reset(seed=int(rng.integers(2**31)))
    done, problem, checked = 0, None, False
    while done < flips:
        for _agent in env.agent_iter():
            obs, reward, termination, truncation, info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            if done == flips // 2 and not checked:
                problem, checked = twin_check(env, play_aec, rng)[0], True
                break  # the check played on in this env: iterate afresh from where it is
            env.step(pick(rng, obs["action_mask"]))
            done += 1
            if done >= flips:
                break
        else:
            env.reset()
    env.close()
    return done + TWIN_FLIPS, problem


@dataclass
class Phase:
    name: str
    flips: int
    seconds: float
    rss_before_mib: float
    rss_after_mib: float
    pickle_problem: str | None  # None: the pickled copy continued exactly as the env did

    @property
    def rate(self) -> float:
        return self.flips / self.seconds


def run_round(args: argparse.Namespace, rng: np.random.Generator) -> list[Phase]:
    jobs = []
    for preset in preset_names():
        env_id = preset_env_id(preset)
        jobs.append((f"single {preset}", lambda i=env_id: soak_gym(gym.make(i), args.single_flips, rng)))
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
        versus = dict(rules=preset, opponents="random")
        jobs.append((f"versus {preset}", lambda v=versus: soak_gym(gym.make(VERSUS_ID, **v), args.versus_flips, rng)))
    jobs.append(("duel", lambda: soak_aec(duel_v0.env, args.aec_flips, rng)))
    phases = []
    for name, job in jobs:
        before, start = rss_mib(), time.perf_counter()
        flips, problem = job()
        phases.append(Phase(name, flips, time.perf_counter() - start, before, rss_mib(), problem))
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
    parser.add_argument("--versus-flips", type=int, default=1_500, help="learner flips per preset and round")
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
    for kind in ("single", "vector", "aec", "versus", "duel"):
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
    failed = [p for p in everything if p.pickle_problem]
    print(f"pickle round-trip: {len(everything) - len(failed)} of {len(everything)} phases continued identically")
    for problem in sorted({f"{p.name}: {p.pickle_problem}" for p in failed}):
        print(f"  {problem}")
    failures = []
    if growth > MEMORY_GROWTH_LIMIT_MIB:
        failures.append(f"memory grew by {growth:.1f} MiB between the first and the last round")
    if failed:
        failures.append(f"{len(failed)} phase(s) whose pickled env did not continue as the original")
    if failures:
        raise SystemExit("; ".join(failures))


if __name__ == "__main__":
    main()

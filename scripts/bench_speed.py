"""Speed benchmark: this package's envs against peer environments, in one run on this machine.

Every workload plays random legal moves. Only the time spent inside the environment is
counted (step, reset, and for the SB3 adapter the ``env_method("action_masks")`` call that
MaskablePPO makes every step); choosing the random move is not. Workloads run in
interleaved rounds, each round cycling through all of them in short slices (so a busy
machine slows them alike); the median of the rounds is reported, and each of ours is
compared with its peer by the median of their within-round ratios:

- the single env through ``gym.make`` and the native vector env vs POPGym's
  ``ConcentrationHard`` (one env, 52 cards; its observation is thinner and it has no masks),
  both through ``gym.make`` with default wrappers (like for like) and as the bare class;
- the PettingZoo AEC env (2 players) vs PettingZoo's ``connect_four_v3``.

It also reports how the cost per flip grows with the deck (20, 52, 104, 216 cards) and the
peak memory of a 4096-game vector env. ``--train`` measures MaskablePPO training
throughput on the SB3 adapter with ``configs/train/maskable_throughput.yaml``.

    python scripts/bench_speed.py                 # the table (about a minute)
    python scripts/bench_speed.py --json out.json # also write the numbers
    python scripts/bench_speed.py --train         # training throughput
    python scripts/bench_speed.py --only single --only AEC   # those workloads and their peers

The peers come with the optional ``bench`` extra (``pip install -e .[bench]``); a missing
peer or env is skipped with the reason printed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import gymnasium as gym  # noqa: E402

import concentration_env  # noqa: E402,F401
from concentration_env import Rules  # noqa: E402
from concentration_env.game import core  # noqa: E402

clock = time.perf_counter
VECTOR_SIZES = (1, 64, 1024, 4096)
SB3_ENVS = 64
CORE_BATCHES = (1, 4096)
DECK_SIZES = {20: {"rules": "toddler"}, 52: {}, 104: {"rules": "two_decks"}, 216: {"deck": "pictures", "pairs": 108}}
SCALING_VECTOR_ENVS = 1024
MEMORY_ENVS = 4096
MEMORY_STEPS = 100
TRAIN_CONFIG = ROOT / "configs" / "train" / "maskable_throughput.yaml"
REFERENCE_TRAIN_STEPS = 2048  # one rollout and update of SB3's default MaskablePPO on one env
CHUNK = 64  # steps between deadline checks
SLICES = 8  # each workload's time in a round is cut into this many slices, interleaved
POPGYM_ID = "popgym-ConcentrationHard-v0"
POPGYM_MADE = "popgym ConcentrationHard (gym.make)"
POPGYM_CLASS = "popgym ConcentrationHard (class)"
CONNECT_FOUR = "pettingzoo connect_four_v3"
PEERS = (POPGYM_MADE, POPGYM_CLASS, CONNECT_FOUR)
# The same 4096-game workload timed by this process's CPU time: the absolute rate the
# machine gives one busy core, however many other jobs share it (a step takes ~1 ms, so
# the costlier CPU clock does not distort it). Ratios use wall time for every row alike.
VECTOR_CPU = "vector env x4096 (per CPU second)"
TARGETS = {  # the ratios to a peer that the issue asks for
    "single env (gym.make)": 1.5,
    "vector env x4096": 15.0,
    "PettingZoo AEC (2 players)": 3.0,
}
VECTOR_TARGET_FLIPS = 2_000_000


class Skip(Exception):
    """A workload that cannot run here (a missing optional package or env)."""


# -- random legal moves ------------------------------------------------------------------------
def pick_one(rng: np.random.Generator, mask: np.ndarray) -> int:
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(len(legal))]) if len(legal) else 0


def pick_many(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """One random legal position per row (0 for rows without a legal move)."""
    scores = rng.random(masks.shape, dtype=np.float32)
    scores *= masks
    return scores.argmax(axis=1)


# -- workloads: each returns a callable that plays for ``seconds`` and returns (steps, env time) --
Runner = Callable[[float], tuple[int, float]]


def gym_runner(env: gym.Env, mask_of: Callable) -> Runner:
    """A single Gymnasium env; ``mask_of(env, info)`` gives the legal moves."""
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    state = {"info": info}

    def run(seconds: float) -> tuple[int, float]:
        steps, spent, info = 0, 0.0, state["info"]
        deadline = clock() + seconds
        while clock() < deadline:
            for _ in range(CHUNK):
                action = pick_one(rng, mask_of(env, info))
                start = clock()
                _, _, terminated, truncated, info = env.step(action)
                if terminated or truncated:
                    _, info = env.reset()
                spent += clock() - start
            steps += CHUNK
        state["info"] = info
        return steps, spent

    return run


def optional(load: Callable, why: str):
    """``load()``, or a Skip naming what is missing."""
    try:
        return load()
    except ImportError as error:
        raise Skip(f"{why} ({error})") from None


def popgym_legal(env: gym.Env, info: dict) -> np.ndarray:
    """POPGym has no masks: the legal flips are the cards neither captured nor flipped this turn."""
    deck = env.unwrapped.deck
    mask = np.ones(env.action_space.n, dtype=bool)
    mask[deck["face_up_idx"]] = False
    mask[deck["in_play_idx"]] = False
    return mask


def popgym_runner(through_make: bool) -> Runner:
    """POPGym's ConcentrationHard: the class itself, or through ``gym.make`` like ours."""
    concentration = optional(
        lambda: __import__("popgym.envs.concentration", fromlist=["x"]), "popgym not installed; pip install -e .[bench]"
    )
    env = gym.make(POPGYM_ID) if through_make else concentration.ConcentrationHard()
    return gym_runner(env, popgym_legal)


def single_runner(**kwargs) -> Runner:
    return gym_runner(gym.make("Concentration-v0", **kwargs), lambda env, info: info["action_mask"])


def vector_runner(num_envs: int, timer: Callable[[], float] = clock, **kwargs) -> Runner:
    envs = gym.make_vec("Concentration-v0", num_envs=num_envs, **kwargs)
    rng = np.random.default_rng(0)
    _, info = envs.reset(seed=0)
    state = {"info": info}

    def run(seconds: float) -> tuple[int, float]:
        steps, spent, info = 0, 0.0, state["info"]
        deadline = clock() + seconds
        while clock() < deadline:
            actions = pick_many(rng, info["action_mask"])
            start = timer()
            _, _, _, _, info = envs.step(actions)
            spent += timer() - start
            steps += num_envs
        state["info"] = info
        return steps, spent

    return run


def sb3_runner(num_envs: int) -> Runner:
    sb3 = optional(
        lambda: __import__("concentration_env.integrations.sb3", fromlist=["x"]), "stable-baselines3 not installed"
    )
    make_sb3_vec_env = sb3.make_sb3_vec_env
    venv = make_sb3_vec_env(num_envs)
    venv.seed(0)
    venv.reset()
    rng = np.random.default_rng(0)

    def run(seconds: float) -> tuple[int, float]:
        steps, spent = 0, 0.0
        deadline = clock() + seconds
        while clock() < deadline:
            start = clock()
            masks = np.stack(venv.env_method("action_masks"))  # as MaskablePPO asks for them
            spent += clock() - start
            actions = pick_many(rng, masks)
            start = clock()
            venv.step(actions)
            spent += clock() - start
            steps += num_envs
        return steps, spent

    return run


def core_runner(batch: int) -> Runner:
    """The raw core: ``step_observe`` on a batch, redealing finished games."""
    game = core.compile_rules(Rules())
    deal_rng, rng = np.random.default_rng(0), np.random.default_rng(1)
    state = core.new_state(game, np.stack([core.deal(game, deal_rng) for _ in range(batch)]))
    masks = core.legal_mask(state)

    def run(seconds: float) -> tuple[int, float]:
        nonlocal masks
        steps, spent = 0, 0.0
        deadline = clock() + seconds
        while clock() < deadline:
            actions = pick_many(rng, masks)
            start = clock()
            _, obs = core.step_observe(game, state, actions, True)
            if state.done.any():
                rows = np.flatnonzero(state.done)
                state.assign(core.new_state(game, np.stack([core.deal(game, deal_rng) for _ in rows])), rows)
                obs = core.observe(game, state, True)
            spent += clock() - start
            masks = obs["action_mask"]
            steps += batch
        return steps, spent

    return run


def aec_runner(make_env: Callable) -> Runner:
    """A PettingZoo AEC env; the mask is in the observation dict (classic style) or the info."""
    env = make_env()
    env.reset(seed=0)
    rng = np.random.default_rng(0)

    def run(seconds: float) -> tuple[int, float]:
        steps, spent = 0, 0.0
        deadline = clock() + seconds
        while clock() < deadline:
            for _ in range(CHUNK):
                start = clock()
                obs, _, terminated, truncated, info = env.last()
                spent += clock() - start
                if terminated or truncated:
                    action = None
                else:
                    mask = obs["action_mask"] if isinstance(obs, dict) and "action_mask" in obs else info["action_mask"]
                    action = pick_one(rng, mask)
                start = clock()
                env.step(action)
                if not env.agents:
                    env.reset()
                spent += clock() - start
            steps += CHUNK
        return steps, spent

    return run


def ours_aec_runner() -> Runner:
    from concentration_env import concentration_v0

    return aec_runner(lambda: concentration_v0.env(num_players=2))


def connect_four_runner() -> Runner:
    with warnings.catch_warnings():  # PettingZoo warns about its module-level creation API
        warnings.simplefilter("ignore", DeprecationWarning)
        connect_four = optional(
            lambda: __import__("pettingzoo.classic.connect_four_v3", fromlist=["x"]),
            "pettingzoo classic not importable",
        )
    return aec_runner(connect_four.env)


# -- measuring -------------------------------------------------------------------------------------
def workloads() -> dict[str, Callable[[], Runner]]:
    table: dict[str, Callable[[], Runner]] = {}
    for batch in CORE_BATCHES:
        table[f"core step_observe x{batch}"] = lambda batch=batch: core_runner(batch)
    table["single env (gym.make)"] = single_runner
    for size in VECTOR_SIZES:
        table[f"vector env x{size}"] = lambda size=size: vector_runner(size)
    table[f"SB3 VecEnv adapter x{SB3_ENVS}"] = lambda: sb3_runner(SB3_ENVS)
    table["PettingZoo AEC (2 players)"] = ours_aec_runner
    table[VECTOR_CPU] = lambda: vector_runner(VECTOR_SIZES[-1], timer=time.process_time)
    table[POPGYM_MADE] = lambda: popgym_runner(through_make=True)
    table[POPGYM_CLASS] = lambda: popgym_runner(through_make=False)
    table["pettingzoo connect_four_v3"] = connect_four_runner
    return table


def measure(factories: dict[str, Callable[[], Runner]], rounds: int, seconds: float) -> tuple[dict, dict]:
    """Steps/s of each workload in every interleaved round; and the skipped ones with why."""
    runners, skipped = {}, {}
    for name, factory in factories.items():
        try:
            runners[name] = factory()
            runners[name](min(seconds, 0.2))  # warm-up: compilation, caches, first resets
        except Skip as why:
            skipped[name] = str(why)
            print(f"  skipped {name}: {why}", flush=True)
    samples: dict[str, list[float]] = {name: [] for name in runners}
    for round_index in range(rounds):
        # Each round cycles through the workloads in short slices, so that a change in the
        # machine's load within the round reaches every workload alike.
        totals = {name: [0, 0.0] for name in runners}
        for _ in range(SLICES):
            for name, run in runners.items():
                steps, spent = run(seconds / SLICES)
                totals[name][0] += steps
                totals[name][1] += spent
        for name, (steps, spent) in totals.items():
            samples[name].append(steps / spent)
        print(f"  round {round_index + 1}/{rounds} done", flush=True)
    return samples, skipped


def selected(factories: dict[str, Callable[[], Runner]], only: list[str] | None) -> dict[str, Callable[[], Runner]]:
    """The workloads whose name contains one of ``only`` (all when None), and the peers."""
    if not only:
        return factories
    ours = [name for name in factories if name not in PEERS]
    unmatched = [text for text in only if not any(text in name for name in ours)]
    if unmatched:
        raise SystemExit(f"--only {unmatched[0]!r} matches no workload; allowed: parts of {', '.join(ours)}")
    return {name: factory for name, factory in factories.items() if name in PEERS or any(text in name for text in only)}


def medians(samples: dict[str, list[float]]) -> dict[str, float]:
    return {name: statistics.median(values) for name, values in samples.items()}


def ratios(samples: dict[str, list[float]]) -> list[dict]:
    """Each of ours over its peers (POPGym through gym.make and as the bare class for the
    solitaire workloads, connect four for the AEC env): the median over rounds of the ratio
    within a round, so that both sides of a ratio saw the same load."""
    out = []
    for name, values in samples.items():
        if name in PEERS or name == VECTOR_CPU:
            continue
        peers = (CONNECT_FOUR,) if "AEC" in name else (POPGYM_MADE, POPGYM_CLASS)
        for peer in peers:
            if peer in samples:
                per_round = [ours / theirs for ours, theirs in zip(values, samples[peer])]
                out.append(
                    {
                        "ours": name,
                        "peer": peer,
                        "ratio": statistics.median(per_round),
                        "min": min(per_round),
                        "max": max(per_round),
                        "target": TARGETS.get(name),
                    }
                )
    return out


def deck_scaling(rounds: int, seconds: float) -> list[dict]:
    """ns per flip against the number of cards, for the single env and the vector env."""
    factories = {}
    for cards, kwargs in DECK_SIZES.items():
        factories[f"single {cards}"] = lambda kwargs=kwargs: single_runner(**kwargs)
        factories[f"vector {cards}"] = lambda kwargs=kwargs: vector_runner(SCALING_VECTOR_ENVS, **kwargs)
    rates = medians(measure(factories, rounds, seconds)[0])
    rows = []
    for cards in DECK_SIZES:
        rows.append(
            {
                "cards": cards,
                "single_ns_per_flip": 1e9 / rates[f"single {cards}"],
                "vector_ns_per_flip": 1e9 / rates[f"vector {cards}"],
            }
        )
    return rows


def vector_peak_memory() -> dict:
    """Peak traced memory (numpy included) while building and stepping a 4096-game vector env."""
    tracemalloc.start()
    envs = gym.make_vec("Concentration-v0", num_envs=MEMORY_ENVS)
    _, info = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(MEMORY_STEPS):
        _, _, _, _, info = envs.step(pick_many(rng, info["action_mask"]))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    state_bytes = envs.unwrapped.batch.state.buffer.nbytes  # every array of the games' state lives in it
    return {"num_envs": MEMORY_ENVS, "peak_mib": peak / 2**20, "state_mib": state_bytes / 2**20}


# -- training throughput -------------------------------------------------------------------------
def timed_learn(model, steps: int) -> tuple[float, float]:
    """Env-steps per second of ``model.learn(steps)``: of wall time, and of this process's
    CPU time (the fairer figure on a shared machine)."""
    wall, cpu = clock(), time.process_time()
    model.learn(total_timesteps=steps)
    return model.num_timesteps / (clock() - wall), model.num_timesteps / (time.process_time() - cpu)


def train_throughput(config_path: Path, threads: int) -> dict:
    """MaskablePPO training throughput with the config's settings on the SB3 adapter, and
    with SB3's defaults on one ordinary ``gym.make`` env for comparison."""
    import torch
    import yaml
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    from concentration_env.integrations.sb3 import make_sb3_vec_env

    torch.set_num_threads(threads)
    config = yaml.safe_load(config_path.read_text())
    venv = VecMonitor(
        make_sb3_vec_env(config["num_envs"], rules=config["rules"], observation_mode=config["observation_mode"])
    )
    venv.seed(config["seed"])
    model = MaskablePPO(
        "MultiInputPolicy",
        venv,
        policy_kwargs=config["policy_kwargs"],
        seed=config["seed"],
        device="cpu",
        **config["hyperparameters"],
    )
    wall, cpu = timed_learn(model, config["total_timesteps"])
    reference_env = DummyVecEnv([lambda: gym.make("Concentration-v0", rules=config["rules"])])
    reference = MaskablePPO("MultiInputPolicy", reference_env, seed=config["seed"], device="cpu")
    reference_wall, reference_cpu = timed_learn(reference, REFERENCE_TRAIN_STEPS)
    return {
        "config": str(config_path.relative_to(ROOT)),
        "torch_threads": threads,
        "steps_per_s": wall,
        "steps_per_cpu_s": cpu,
        "default_one_env_steps_per_s": reference_wall,
        "default_one_env_steps_per_cpu_s": reference_cpu,
    }


# -- report ------------------------------------------------------------------------------------------
def print_table(rates: dict[str, float], relative: list[dict]) -> None:
    print(f"\n{'workload':38s} {'flips/s':>14s}")
    for name, rate in rates.items():
        print(f"{name:38s} {rate:14,.0f}")
    print(f"\n{'ours':32s} {'peer':38s} {'ratio':>8s} {'rounds range':>15s} {'target':>7s}")
    for row in relative:
        target = f"{row['target']:6.1f}x" if row["target"] else ""
        spread = f"{row['min']:.2f}-{row['max']:.2f}x"
        print(f"{row['ours']:32s} {row['peer']:38s} {row['ratio']:7.2f}x {spread:>15s} {target:>7s}")
    for name in ("vector env x4096", VECTOR_CPU):
        if name in rates:
            verdict = "met" if rates[name] >= VECTOR_TARGET_FLIPS else "NOT met"
            print(f"{name}: {rates[name]:,.0f} flips/s; target {VECTOR_TARGET_FLIPS:,} {verdict}")


def scaling_and_memory(rounds: int, seconds: float) -> dict:
    """Measure and print the cost per flip against the deck and the vector env's memory."""
    print("\ncost per flip vs cards (ns per flip; median of rounds):", flush=True)
    scaling = deck_scaling(max(3, rounds // 2), seconds)
    base = next(row for row in scaling if row["cards"] == 52)
    for row in scaling:
        print(
            f"  {row['cards']:4d} cards: single env {row['single_ns_per_flip']:9,.0f} ns "
            f"({row['single_ns_per_flip'] / base['single_ns_per_flip']:.2f}x of 52)   "
            f"vector x{SCALING_VECTOR_ENVS} {row['vector_ns_per_flip']:7,.1f} ns "
            f"({row['vector_ns_per_flip'] / base['vector_ns_per_flip']:.2f}x of 52)"
        )
    memory = vector_peak_memory()
    print(
        f"\npeak memory of a {memory['num_envs']}-game vector env over {MEMORY_STEPS} steps: "
        f"{memory['peak_mib']:.1f} MiB traced (game state {memory['state_mib']:.2f} MiB)"
    )
    return {"deck_scaling": scaling, "memory": memory}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (median reported)")
    parser.add_argument("--seconds", type=float, default=0.4, help="time per workload per round")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument(
        "--only",
        action="append",
        metavar="TEXT",
        help="measure only the workloads whose name contains TEXT (repeatable), with their "
        "peers; skips the deck scaling and memory figures",
    )
    parser.add_argument("--train", action="store_true", help="measure MaskablePPO training throughput instead")
    parser.add_argument("--config", type=Path, default=TRAIN_CONFIG, help="training config for --train")
    parser.add_argument("--threads", type=int, default=1, help="torch threads for --train")
    args = parser.parse_args(argv)

    if args.train:
        result = {"train": train_throughput(args.config.resolve(), args.threads)}
        train = result["train"]
        print(
            f"MaskablePPO on the SB3 adapter ({train['config']}, {args.threads} torch thread(s)): "
            f"{train['steps_per_s']:,.0f} env-steps/s of wall time, {train['steps_per_cpu_s']:,.0f} per CPU second\n"
            f"MaskablePPO defaults on one gym.make env: {train['default_one_env_steps_per_s']:,.0f} per wall second, "
            f"{train['default_one_env_steps_per_cpu_s']:,.0f} per CPU second"
        )
    else:
        print(f"measuring {args.rounds} interleaved rounds of {args.seconds}s per workload ...", flush=True)
        samples, skipped = measure(selected(workloads(), args.only), args.rounds, args.seconds)
        rates, relative = medians(samples), ratios(samples)
        print_table(rates, relative)
        result = {
            "flips_per_s": rates,
            "flips_per_s_rounds": samples,
            "ratios": relative,
            "skipped": skipped,
            "rounds": args.rounds,
            "seconds": args.seconds,
        }
        if not args.only:
            result |= scaling_and_memory(args.rounds, args.seconds)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()

"""Training throughput of the raw attention learners against the current MaskablePPO learner.

The learners are built exactly as ``scripts/train.py`` builds them (``configs/train/
raw_attention_standard.yaml``, the suite's raw attention learner; ``configs/train/
raw_attention_fast.yaml``, the same network narrowed and trained on wide batches with two
torch threads; ``configs/train/maskable_throughput.yaml``, an MLP: 52 cards, memory mode,
the batched SB3 VecEnv) and trained in the same process, each with its config's torch
threads, in alternating rounds of whole rollouts and updates, so that a busy machine slows
them alike. It prints each learner's median env-steps per wall second and per CPU second,
their ratios to ``maskable_throughput``, the load average it started on (the issue's target
is for an idle 2-core machine), and a cProfile summary of one iteration of the fast
learner: rollout (of which the env and the policy's forward) vs update. Last, each
learner's *network ceiling*, with 1 and 2 torch threads: samples per second of its policy's
forward pass on batches of ``num_envs`` (no gradient: what one rollout step runs) and of one
update step on minibatches of ``batch_size`` (``evaluate_actions``, backward, the
optimizer's step), on the observations of its last rollout. Every env step costs one
forward and ``n_epochs`` update passes, so ``1 / (1 / forward + n_epochs / update)`` is the
env-steps/s that training would reach if the network were all it ran: a free env and free
SB3 code would not take it past that (up to the timing noise of a shared machine).

    python scripts/bench_train_speed.py [--rounds 3] [--iterations 1]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from concentration_env.training.config import load_config  # noqa: E402

LEARNERS = {
    "raw attention": ROOT / "configs" / "train" / "raw_attention_standard.yaml",
    "raw attention, fast": ROOT / "configs" / "train" / "raw_attention_fast.yaml",
    "maskable_throughput": ROOT / "configs" / "train" / "maskable_throughput.yaml",
}
FAST = "raw attention, fast"  # the learner the target is read off, and the one profiled
PEER = "maskable_throughput"
TARGET_STEPS_PER_S = 20_000  # the goal for the raw learner on an idle 2-core machine
CEILING_THREADS = (1, 2)  # this machine's cores
CEILING_SECONDS = 2.0  # each network timing runs at least this long
# Where one iteration's time goes: (label, function name, file the function is in).
PHASES = (
    ("rollout", "collect_rollouts", "ppo_mask.py"),
    ("  env steps", "step_wait", "integrations/sb3.py"),
    ("  policy forward", "forward", "maskable/policies.py"),
    ("update", "train", "ppo_mask.py"),
)


def build(path: Path):
    """The config's model on its vec env, warmed by one iteration (compiling, allocating);
    returns the model, its steps per iteration (one rollout) and its torch threads."""
    from concentration_env.training.envs import make_vec_env
    from concentration_env.training.learners import build_sb3

    config = load_config(path)
    model = build_sb3(config, make_vec_env(config, config.resolved_rules, config.num_envs, config.seed), None)
    steps = config.num_envs * config.hyperparameters["n_steps"]
    learn_more(model, steps, config.torch_threads)
    return model, steps, config.torch_threads


def learn_more(model, steps: int, threads: int) -> None:
    """``steps`` more training on ``threads`` torch threads: the learners share one process, so
    each sets its config's threads before it runs."""
    import torch

    torch.set_num_threads(threads)
    model.learn(steps, reset_num_timesteps=False)


def timed(model, steps: int, threads: int) -> tuple[float, float]:
    """Env-steps per wall second and per CPU second of ``steps`` more training."""
    wall, cpu = time.perf_counter(), time.process_time()
    learn_more(model, steps, threads)
    return steps / (time.perf_counter() - wall), steps / (time.process_time() - cpu)


def profile(model, steps: int, threads: int) -> None:
    """Print where one iteration's time goes, then the functions that spend the most."""
    profiler = cProfile.Profile()
    profiler.enable()
    learn_more(model, steps, threads)
    profiler.disable()
    stats = pstats.Stats(profiler)
    table = stats.stats  # type: ignore[attr-defined]  # pstats keeps its table untyped
    total = max(entry[3] for entry in table.values())
    print(f"\none {FAST} iteration ({steps:,} env steps, {threads} thread(s)) under cProfile: {total:.2f} s")
    for label, name, where in PHASES:
        seconds = sum(entry[3] for (file, _, func), entry in table.items() if func == name and file.endswith(where))
        print(f"  {label:18s} {seconds:8.2f} s  {100 * seconds / total:5.1f}%")
    print("\nmost time spent inside (tottime):")
    stats.sort_stats("tottime").print_stats(8)


def samples_per_second(work) -> float:
    """Samples per second of ``work()`` (which returns the samples it did), after one warm-up call."""
    work()
    done, began = 0, time.perf_counter()
    while time.perf_counter() - began < CEILING_SECONDS:
        done += work()
    return done / (time.perf_counter() - began)


def ceilings(model) -> dict[int, tuple[float, float, float]]:
    """Per torch thread count: the policy's forward and update samples per second on its last
    rollout, and the env-steps/s they leave room for (see the module docstring)."""
    import torch

    policy, buffer, batch_size = model.policy, model.rollout_buffer, model.batch_size
    sample = next(buffer.get(batch_size))
    masked = hasattr(sample, "action_masks")

    def rows(count: int) -> tuple[dict, dict]:
        obs = {key: value[:count] for key, value in sample.observations.items()}
        return obs, ({"action_masks": sample.action_masks[:count]} if masked else {})

    step_obs, step_masks = rows(model.n_envs)
    update_obs, update_masks = rows(batch_size)
    actions = sample.actions.long().flatten()

    def forward() -> int:
        with torch.no_grad():
            policy(step_obs, **step_masks)
        return model.n_envs

    def update() -> int:
        values, log_prob, entropy = policy.evaluate_actions(update_obs, actions, **update_masks)
        loss = values.pow(2).mean() - log_prob.mean() - (0.0 if entropy is None else entropy.mean())
        policy.optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), model.max_grad_norm)
        policy.optimizer.step()
        return batch_size

    found = {}
    for threads in CEILING_THREADS:
        torch.set_num_threads(threads)
        ahead, back = samples_per_second(forward), samples_per_second(update)
        found[threads] = (ahead, back, 1.0 / (1.0 / ahead + model.n_epochs / back))
    return found


def print_ceilings(models: dict) -> None:
    print("\nnetwork ceilings: samples/s of the policy alone, and the env-steps/s they leave room for")
    for name, (model, _, _) in models.items():
        for threads, (ahead, back, bound) in ceilings(model).items():
            print(
                f"  {name:20s} {threads} thread(s): forward {ahead:9,.0f} (batch {model.n_envs}), "
                f"update {back:9,.0f} (batch {model.batch_size}) x {model.n_epochs} epochs -> {bound:9,.0f} env-steps/s"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="alternating timed rounds per learner")
    parser.add_argument("--iterations", type=int, default=1, help="rollouts and updates per timed round")
    args = parser.parse_args()
    if args.rounds < 1 or args.iterations < 1:
        parser.exit(2, "bench_train_speed.py: --rounds and --iterations must be at least 1\n")
    load = f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "unknown"
    models = {name: build(path) for name, path in LEARNERS.items()}
    rates: dict[str, list[tuple[float, float]]] = {name: [] for name in models}
    for _ in range(args.rounds):
        for name, (model, steps, threads) in models.items():
            rates[name].append(timed(model, steps * args.iterations, threads))
    medians = {
        name: (statistics.median(r[0] for r in rounds), statistics.median(r[1] for r in rounds))
        for name, rounds in rates.items()
    }
    print(f"training env-steps/s, median of {args.rounds} rounds (1-minute load average at the start: {load}):")
    theirs = medians[PEER]
    for name, (wall, cpu) in medians.items():
        threads = models[name][2]
        print(
            f"  {name:20s} {threads} thread(s) {wall:10,.0f} per wall second {cpu:10,.0f} per CPU second  "
            f"{wall / theirs[0]:6.3f}x {PEER} (wall)  ({LEARNERS[name].name})"
        )
    fast = medians[FAST][0]
    verdict = "met" if fast >= TARGET_STEPS_PER_S else f"NOT met ({fast / TARGET_STEPS_PER_S:.2f} of it)"
    print(f"target {TARGET_STEPS_PER_S:,} env-steps per wall second for the raw learner ({FAST}): {verdict}")
    profile(*models[FAST])
    print_ceilings(models)


if __name__ == "__main__":
    main()

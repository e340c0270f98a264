"""RLlib on a Ray cluster of three nodes on this machine: a head and two worker nodes
(``ray.cluster_utils.Cluster``). One module-scoped cluster serves every test here:

- env runners are placed on the worker nodes (they ask for a custom resource only those
  nodes hold) and say which node they ran on; the checkpoint is restored in a fresh process,
  which plays the baselines' harness and computes the same logits as the trained module;
- a worker node is removed mid-training: RLlib restarts its env runner on a replacement
  node, training finishes, and the result counts the restart;
- a training driver that checkpoints every iteration is SIGKILLed; a new driver with
  ``--resume`` goes on from its last checkpoint and the iteration count continues.

Needs the ``rllib`` extra (``make test`` runs this file in ``.venv-rllib``); the main venv
skips it, saying why. Every run is a few tiny iterations on an 8-card deck.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason='ray is not installed (the "rllib" extra; make test runs it in .venv-rllib)')

from concentration_env.integrations.rllib import (  # noqa: E402
    RLlibConfig,
    build_algorithm,
    episode_stats,
    latest_checkpoint,
    read_progress,
    save_checkpoint,
)
from tests.helpers.rllib import tiny_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SLOT = "rllib_test_slot"  # the custom resource only worker nodes hold: one env runner each
OBJECT_STORE_BYTES = 80 * 1024**2
SPAWN_TIMEOUT_S = 240


def cluster_config(tmp_path: Path, **fields) -> RLlibConfig:
    """The tiny run with its two env runners on the worker nodes (their custom resource)."""
    return tiny_config(tmp_path, **{"num_env_runners": 2, "env_runner_resources": {SLOT: 1}, "iterations": 2, **fields})


def child_env() -> dict:
    """The environment of a child process: this checkout first on the path, one torch thread."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env.update(OMP_NUM_THREADS="1", RAY_USAGE_STATS_ENABLED="0")
    return env


@pytest.fixture(scope="module")
def cluster():
    from ray.cluster_utils import Cluster

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])  # worker processes
    node_args = {"num_cpus": 1, "object_store_memory": OBJECT_STORE_BYTES}
    cluster = Cluster(initialize_head=True, head_node_args={**node_args, "include_dashboard": False})
    workers = [cluster.add_node(**node_args, resources={SLOT: 1}) for _ in range(2)]
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        yield cluster, workers
    finally:
        ray.shutdown()
        cluster.shutdown()


def runner_nodes(algorithm) -> list[str]:
    """The node id each remote env runner is on, asked of the runners themselves."""
    return algorithm.env_runner_group.foreach_env_runner(
        lambda runner: ray.get_runtime_context().get_node_id(), local_env_runner=False
    )


PLAY_IN_FRESH_PROCESS = """
import json, sys
import numpy as np, torch
from baselines import make_policy
from baselines.evaluate import play
from concentration_env.integrations.rllib import RLlibPolicy
policy = RLlibPolicy(sys.argv[1], explore=True)
results = play(policy.rules, [policy, make_policy("greedy", policy.rules)], games=6, seed=7)
batch = {key: np.asarray(value) for key, value in json.loads(sys.argv[2]).items()}
print(json.dumps({
    "tier": policy.tier,
    "cleared": bool(results.cleared.all()),
    "pairs": results.scores.sum(axis=1).tolist(),
    "logits": policy.logits(batch).tolist(),
    "ray_started": __import__("ray").is_initialized(),
}))
"""


def test_runners_on_worker_nodes_then_restore_and_play_in_a_fresh_process(cluster, tmp_path):
    from concentration_env.integrations.rllib import RLlibPolicy

    _, workers = cluster
    config = cluster_config(tmp_path)
    algorithm = build_algorithm(config)
    try:
        assert sorted(runner_nodes(algorithm)) == sorted(node.node_id for node in workers)
        for _ in range(config.iterations):
            stats = episode_stats(algorithm.train())
        assert stats["num_env_steps_sampled_lifetime"] >= config.iterations * config.train_batch_size
        assert stats["healthy_env_runners"] == 2 and stats["env_runner_restarts"] == 0
        path = save_checkpoint(algorithm, config, progress={"iteration": config.iterations})
    finally:
        algorithm.stop()

    in_driver = RLlibPolicy(path)
    rng = np.random.default_rng(0)
    mask = (rng.random((3, 8)) < 0.7).astype(np.int8)
    mask[:, 0] = 1
    batch = {"cards": np.zeros((3, 8), np.int64), "face_up": np.zeros((3, 8), np.int8), "removed": 1 - mask, MASK: mask}
    batch["cards"][0, 2] = 1  # one remembered face
    done = subprocess.run(
        [sys.executable, "-c", PLAY_IN_FRESH_PROCESS, str(path), json.dumps({k: v.tolist() for k, v in batch.items()})],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=SPAWN_TIMEOUT_S,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    played = json.loads(done.stdout.strip().splitlines()[-1])
    assert played["tier"] == "engineered" and not played["ray_started"]
    assert played["cleared"] and all(total == 4 for total in played["pairs"])  # 8 cards: 4 pairs per game
    np.testing.assert_allclose(played["logits"], in_driver.logits(batch), rtol=1e-5, atol=1e-5)


MASK = "action_mask"


def test_a_lost_worker_node_is_replaced_and_training_finishes(cluster, tmp_path):
    lab, workers = cluster
    config = cluster_config(tmp_path, iterations=3)
    algorithm = build_algorithm(config)
    try:
        episode_stats(algorithm.train())
        doomed = workers.pop()
        lab.remove_node(doomed, allow_graceful=False)  # the node dies with its env runner
        workers.append(lab.add_node(num_cpus=1, object_store_memory=OBJECT_STORE_BYTES, resources={SLOT: 1}))
        lab.wait_for_nodes()
        for _ in range(config.iterations - 1):
            stats = episode_stats(algorithm.train())
        deadline = time.monotonic() + 60
        while stats["env_runner_restarts"] < 1 and time.monotonic() < deadline:  # the restart lands asynchronously
            stats = episode_stats(algorithm.train())
        assert stats["env_runner_restarts"] >= 1
        assert stats["num_env_steps_sampled_lifetime"] >= config.iterations * config.train_batch_size
        nodes = runner_nodes(algorithm)
        assert doomed.node_id not in nodes and workers[-1].node_id in nodes
    finally:
        algorithm.stop()


def test_a_killed_driver_resumes_from_its_last_checkpoint(cluster, tmp_path):
    lab, _ = cluster
    run = tmp_path / "run.yaml"
    config = cluster_config(tmp_path, iterations=1000, checkpoint_every=1, num_env_runners=1)
    import yaml

    run.write_text(yaml.safe_dump({k: v for k, v in config.to_mapping().items() if k != "tier"}))
    command = [sys.executable, str(ROOT / "scripts" / "train_rllib.py"), "--config", str(run), "--address", lab.address]
    driver = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=child_env())
    try:
        deadline = time.monotonic() + SPAWN_TIMEOUT_S
        while time.monotonic() < deadline:
            found = latest_checkpoint(config.checkpoint_dir)
            if found is not None and read_progress(found).get("iteration", 0) >= 2:
                break
            assert driver.poll() is None, driver.stdout.read()[-3000:]
            time.sleep(0.5)
        else:
            pytest.fail("the driver wrote no second checkpoint in time")
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    last = read_progress(latest_checkpoint(config.checkpoint_dir))
    done_before = last["iteration"]
    target = done_before + 2
    resumed = subprocess.run(
        [*command, "--resume", "--set", f"iterations={target}"],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=SPAWN_TIMEOUT_S,
    )
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert f"at iteration {done_before}" in resumed.stdout
    assert (
        f"iteration {done_before + 1}/{target}" in resumed.stdout and f"iteration {target}/{target}" in resumed.stdout
    )
    final = read_progress(latest_checkpoint(config.checkpoint_dir))
    assert final["iteration"] == target and final["env_steps"] > last["env_steps"]
    assert final["tier"] == "engineered"

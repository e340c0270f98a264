"""The speed benchmark script's workload selection (``--only``); the timings are not tested."""

import importlib.util
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def bench_speed():
    spec = importlib.util.spec_from_file_location("bench_speed", Path("scripts/bench_speed.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_only_keeps_the_matching_workloads_and_every_peer(bench_speed):
    chosen = bench_speed.selected(bench_speed.workloads(), ["single", "AEC"])
    assert set(chosen) == {"single env (gym.make)", "PettingZoo AEC (2 players)", *bench_speed.PEERS}
    assert set(bench_speed.selected(bench_speed.workloads(), None)) == set(bench_speed.workloads())


def test_only_that_matches_nothing_names_what_is_allowed(bench_speed):
    with pytest.raises(SystemExit, match=r"--only 'singel' matches no workload; allowed: parts of .*single env"):
        bench_speed.selected(bench_speed.workloads(), ["single", "singel"])

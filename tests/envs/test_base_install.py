"""On a base install (no pygame, the ``render`` extra missing) the envs list only the render
modes they can draw, so Gymnasium's and PettingZoo's checkers pass, and asking for the window
still names the extra. pygame is hidden from a fresh interpreter to stand for that install."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_without_pygame(code: str) -> str:
    script = "import sys\nsys.modules['pygame'] = None  # import pygame now fails, as without the extra\n"
    out = subprocess.run(
        [sys.executable, "-c", script + textwrap.dedent(code)], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_env_checkers_pass_and_the_window_names_its_extra_without_pygame():
    out = run_without_pygame(
        """
        import gymnasium as gym
        from gymnasium.error import DependencyNotInstalled
        from gymnasium.utils.env_checker import check_env
        from pettingzoo.test import api_test

        import concentration_env
        from concentration_env import concentration_v0, duel_v0

        env = gym.make("Concentration-v0")
        print(env.metadata["render_modes"])
        check_env(env.unwrapped)
        check_env(gym.make("ConcentrationVs-v0").unwrapped)
        api_test(concentration_v0.env(num_players=2, ranks=2), num_cycles=20)
        api_test(duel_v0.env(ranks=2), num_cycles=20)
        from concentration_env.envs.solitaire import ConcentrationEnv

        # (gym.make itself would wrap an rgb_array env in its HumanRendering instead)
        for make in (lambda: ConcentrationEnv(render_mode="human"),
                     lambda: concentration_v0.env(render_mode="human")):
            try:
                make()
            except DependencyNotInstalled as error:
                print("window:", error)
        """
    )
    lines = out.strip().splitlines()
    assert lines[0] == "['ansi', 'rgb_array']"
    windows = [line for line in lines if line.startswith("window:")]
    assert len(windows) == 2 and all("concentration-env[render]" in line for line in windows)


def test_the_window_is_listed_where_pygame_is_installed():
    import pytest

    pytest.importorskip("pygame")
    import gymnasium as gym

    import concentration_env  # noqa: F401

    assert gym.make("Concentration-v0").metadata["render_modes"] == ["ansi", "rgb_array", "human"]

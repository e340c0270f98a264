"""Recording a game as an animated GIF: one frame per flip, from the deal to the end.

Pillow (from the ``render`` extra) writes the file; it is imported only when a GIF is saved.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from concentration_env.envs.opponents import resolve_policy
from concentration_env.game.checks import check_int
from concentration_env.game.policy import Policy
from concentration_env.game.rules import Rules
from concentration_env.play.seated import Result, SeatedGame, play_out
from concentration_env.render.window import RENDER_EXTRA

DEFAULT_GIF_FPS = 2
MAX_GIF_FPS = 100  # GIF frame times are whole hundredths of a second
MS_PER_SECOND = 1000


def record_gif(
    rules: Rules,
    bots: Sequence[Policy | str],
    path: str | Path,
    *,
    seed: int | None = None,
    table_shape: str = "grid",
    fps: int = DEFAULT_GIF_FPS,
    max_flips: int | None = None,
    observation_mode: str = "memory",
) -> tuple[Result, int]:
    """Have ``bots`` (one per seat) play a game of ``rules`` and write it to ``path`` as a GIF
    with a frame for the deal and one after every flip. Returns the game's result and how
    many frames the GIF holds. A bot may be given by name (a baseline name or a saved
    model's file), as the command lines take them; ``ValueError`` for a bad one or a bad
    ``fps``, before anything is played."""
    check_int("fps", fps, 1, MAX_GIF_FPS)
    players = [resolve_policy(str(bot), rules) if isinstance(bot, (str, Path)) else bot for bot in bots]
    match = SeatedGame(rules, "rgb_array", table_shape=table_shape, observation_mode=observation_mode, seed=seed)
    for seat, player in enumerate(players):
        player.reset(seed=None if seed is None else seed + seat)
    frames = [match.render()]
    result = play_out(match, players, max_flips, on_flip=lambda _: frames.append(match.render()))
    match.close()
    save_gif(frames, path, fps)
    return result, len(frames)


def save_gif(frames: Sequence[np.ndarray], path: str | Path, fps: int = DEFAULT_GIF_FPS) -> None:
    """Save RGB ``frames`` to ``path`` as a GIF that loops forever at ``fps`` frames a second.
    Raises Gymnasium's ``DependencyNotInstalled`` naming the extra when Pillow is missing."""
    try:
        from PIL import Image
    except ImportError as error:
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled(
            f"writing GIFs needs Pillow, which is not installed; run {RENDER_EXTRA}"
        ) from error
    images = [Image.fromarray(frame) for frame in frames]
    # A flip always changes the table or the status line, so no two frames in a row are
    # equal and Pillow keeps every one instead of merging repeats into a longer frame.
    images[0].save(path, save_all=True, append_images=images[1:], duration=int(MS_PER_SECOND / fps), loop=0)

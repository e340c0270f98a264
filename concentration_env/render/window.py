"""The pygame window of ``render_mode="human"`` and the checks an env makes of its render mode.

pygame is optional (the ``render`` extra) and imported only when a window opens, so every
other render mode works without it.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

RENDER_EXTRA = "pip install 'concentration-env[render]'"
WINDOW_MODE = "human"
PICTURE_MODES = ("ansi", "rgb_array")  # drawn without any optional dependency


def available_render_modes() -> list[str]:
    """The render modes of this install, for the envs' ``metadata``: ``"human"`` only where
    pygame is installed. Gymnasium's env checker makes the env in every listed mode, so it
    passes on a base install too; asking for the window without pygame still says which
    extra to install (:func:`check_render_mode`)."""
    window = [WINDOW_MODE] if importlib.util.find_spec("pygame") is not None else []
    return [*PICTURE_MODES, *window]


def check_render_mode(render_mode: str | None, metadata: dict) -> str | None:
    """``render_mode`` itself if None or listed in the env's ``metadata``; the missing
    extra for the window, ``ValueError`` for any other mode."""
    if render_mode == WINDOW_MODE and render_mode not in metadata["render_modes"]:
        import_pygame()  # raises DependencyNotInstalled naming the extra
    if render_mode is not None and render_mode not in metadata["render_modes"]:
        raise ValueError(f"invalid render_mode={render_mode!r}; allowed: None | {metadata['render_modes']}")
    return render_mode


def import_pygame():
    """The pygame module; when it is missing, Gymnasium's ``DependencyNotInstalled`` naming the extra."""
    try:
        import pygame
    except ImportError as error:
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled(
            f"render_mode='human' and --window need pygame, which is not installed; run {RENDER_EXTRA}"
        ) from error
    return pygame


class Screen:
    """A window that shows RGB frames, at most ``fps`` a second, and reports clicks."""

    def __init__(self, fps: int, caption: str = "Concentration"):
        self.pygame = import_pygame()
        self.fps = fps
        self.caption = caption
        self._window: Any = None  # pygame's Surface and Clock, once the window opens
        self._clock: Any = None

    def __getstate__(self) -> dict:
        return {"fps": self.fps, "caption": self.caption}  # a copy opens its own window when shown

    def __setstate__(self, saved: dict) -> None:
        Screen.__init__(self, saved["fps"], saved["caption"])

    def show(self, frame: np.ndarray) -> None:
        """Put ``frame`` on screen, opening the window or fitting it to the frame's size first,
        then hold it for the rest of the frame time."""
        pygame = self.pygame
        size = (frame.shape[1], frame.shape[0])
        if self._window is None:
            pygame.display.init()  # display only: no audio devices to open
            pygame.display.set_caption(self.caption)
            self._clock = pygame.time.Clock()
        if self._window is None or self._window.get_size() != size:
            self._window = pygame.display.set_mode(size)
        pygame.event.pump()  # keep the window responsive between frames
        surface = pygame.surfarray.make_surface(np.ascontiguousarray(frame.transpose(1, 0, 2)))
        self._window.blit(surface, (0, 0))
        pygame.display.flip()
        self._clock.tick(self.fps)

    def wait_click(self) -> tuple[int, int] | None:
        """Wait for the next left click and return its pixel; None when the window is closed instead."""
        pygame = self.pygame
        while True:
            event = pygame.event.wait()
            if event.type == pygame.QUIT:
                return None
            if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
                return event.pos

    def close(self) -> None:
        """Close the window; closing it again does nothing."""
        if self._window is not None:
            self.pygame.display.quit()
            self._window = None

"""Whether the compiled kernels are cached on disk: :data:`CACHE`, for every ``njit`` here.

numba's ``cache=True`` raises ``cannot cache function`` at import when none of the folders
it would cache in can be written (a read-only install with a read-only home folder). The
kernels then compile in memory on every start instead, which is slower to start but plays
the same.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from numba import config
from numba.misc.appdirs import AppDirs


def cache_folders(source_dir: Path, configured: str) -> list[Path]:
    """The folders numba would cache kernels from ``source_dir`` in, in its order: the
    user's ``NUMBA_CACHE_DIR``, the source's ``__pycache__``, the user's cache folder."""
    folders = [Path(configured)] if configured else []
    return [*folders, source_dir / "__pycache__", Path(AppDirs(appname="numba", appauthor=False).user_cache_dir)]


def writable(folder: Path) -> bool:
    """Whether a file can be written in ``folder`` (made if missing), as numba checks it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


def can_cache(folders: list[Path]) -> bool:
    """Whether numba can cache in one of ``folders``."""
    return any(writable(folder) for folder in folders)


CACHE = can_cache(cache_folders(Path(__file__).resolve().parent, config.CACHE_DIR))  # type: ignore[attr-defined]  # numba.core.config sets it at import

"""The kernels are cached only where numba can write, so a read-only install still imports.

The tests run as root, which ignores permission bits: a folder is made unwritable for them
by a regular file standing where the folder (or its parent) would be, which makes
``mkdir`` fail for every user. So these tests prove what happens when numba finds no
folder to cache in, which is the state a read-only install with a read-only home leaves it
in; they do not exercise permission bits themselves.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from concentration_env.game import jit

PACKAGE = Path(jit.__file__).resolve().parents[1]


@pytest.fixture
def blocked(tmp_path):
    """A folder path that cannot be made or written: its parent is a file."""
    (tmp_path / "file").write_text("")
    return tmp_path / "file" / "folder"


def test_no_cache_when_no_folder_can_be_written(blocked):
    assert not jit.writable(blocked)
    assert not jit.can_cache([blocked, blocked.parent])


def test_a_cache_when_any_folder_can_be_written(blocked, tmp_path):
    assert jit.can_cache([blocked, tmp_path / "cache"])
    assert (tmp_path / "cache").is_dir()


def test_numbas_folders_are_asked_in_its_order(tmp_path):
    mine = jit.cache_folders(tmp_path, "/my/cache")
    assert mine[:2] == [Path("/my/cache"), tmp_path / "__pycache__"]
    assert jit.cache_folders(tmp_path, "")[0] == tmp_path / "__pycache__"


def test_a_copy_whose_cache_folders_are_all_unwritable_imports_and_plays(tmp_path):
    copy = tmp_path / "install"
    shutil.copytree(PACKAGE, copy / PACKAGE.name, ignore=shutil.ignore_patterns("__pycache__"))
    for folder in [copy / PACKAGE.name, *(copy / PACKAGE.name).rglob("*")]:
        if folder.is_dir():
            (folder / "__pycache__").write_text("")  # no __pycache__ folder can be made here
    home = tmp_path / "home"
    home.write_text("")  # nor a cache folder in the home folder
    environ = {key: value for key, value in os.environ.items() if key not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    environ |= {"HOME": str(home), "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    code = (
        "import gymnasium as gym, concentration_env\n"
        "from concentration_env.game import jit\n"
        "env = gym.make('Concentration-v0', ranks=2)\n"
        "env.reset(seed=0)\n"
        "env.step(0)\n"
        "print(concentration_env.__file__, jit.CACHE)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=environ, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(copy / PACKAGE.name / "__init__.py"), "False"]

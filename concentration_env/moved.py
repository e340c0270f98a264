"""Import paths of the flat layout before the package was split into layers.

``import concentration_env.sb3`` (and the other names below) still works and gives the
module at its new place: the very same module object, so classes, pickles and
``isinstance`` checks agree whichever path was used. New code imports the new paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

MOVED_MODULES = {
    f"concentration_env.{old}": f"concentration_env.{new}"
    for old, new in {
        "batch": "game.batch",
        "cards": "game.cards",
        "core": "game.core",
        "multiplayer": "envs.multiplayer",
        "policy": "envs.opponents",
        "rllib": "integrations.rllib",
        "rules": "game.rules",
        "sb3": "integrations.sb3",
        "scoring": "game.scoring",
        "session": "play.session",
        "solitaire": "envs.solitaire",
        "spaces": "envs.spaces",
        "vector": "envs.vector",
        "versus": "envs.versus",
        "wrappers": "envs.features",
    }.items()
}


class _AliasLoader(importlib.abc.Loader):
    """Loads an old path as the module at its new place."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the target module was executed when it was imported."""


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of :data:`MOVED_MODULES`."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED_MODULES.get(fullname)
        return None if new is None else importlib.util.spec_from_loader(fullname, _AliasLoader(new))


def install() -> None:
    """Put the finder on ``sys.meta_path`` once."""
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())

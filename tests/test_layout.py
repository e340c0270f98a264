"""The package's layout holds: the game layer imports no RL framework and nothing above it,
no import cycle exists anywhere (imports inside functions counted), and the paths of the
flat layout still import the moved modules."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("concentration_env", "baselines")
FRAMEWORKS = ("gymnasium", "pettingzoo", "torch", "stable_baselines3", "sb3_contrib", "ray", "tianshou", "torchrl")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: frozenset[str] = frozenset()) -> set[str]:
    """Every module an import statement in ``path`` names, at any depth of the code
    (``from package import module`` names the module, not the package, when it is one of
    ``modules``)."""
    found = set()
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            submodules = {f"{base}.{alias.name}" for alias in node.names} & modules
            found.update(submodules)
            if len(submodules) < len(node.names):
                found.add(base)
    return found


def internal_graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        targets = set()
        for imported in imports_of(path, frozenset(modules)):
            # an import of a.b.c names the module a.b.c (or the deepest one of it that exists)
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                targets.add(imported)
        graph[name] = targets
    return graph


def test_the_game_layer_imports_no_framework_and_nothing_above_it():
    for path in (ROOT / "concentration_env" / "game").rglob("*.py"):
        for imported in imports_of(path):
            top = imported.split(".")[0]
            assert top not in FRAMEWORKS, f"{path.relative_to(ROOT)} imports {imported}"
            if top == "concentration_env":
                assert imported.startswith("concentration_env.game"), f"{path.relative_to(ROOT)} imports {imported}"
            assert top != "baselines", f"{path.relative_to(ROOT)} imports {imported}"


def test_no_import_cycle():
    graph = internal_graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycle = path[path.index(target) :] + [target]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_modules_stay_small():
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            lines = len(path.read_text().splitlines())
            assert lines <= 450, f"{path.relative_to(ROOT)} has {lines} lines; split it by concern"


@pytest.mark.parametrize("old", sorted(importlib.import_module("concentration_env.moved").MOVED_MODULES))
def test_the_flat_layout_paths_give_the_moved_modules(old):
    from concentration_env.moved import MOVED_MODULES

    assert importlib.import_module(old) is importlib.import_module(MOVED_MODULES[old])

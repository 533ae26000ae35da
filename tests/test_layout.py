"""model/'s rooms: every module lives in a room that says what it holds, and code outside model/ uses only
the modules a room offers (its ``__all__``), so a room's own pieces can move without breaking the app."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "model"
ROOMS_WITH_PUBLIC_MODULES = ("edit", "runtime", "checkpoint")


def _rooms() -> list[Path]:
    return sorted(p.parent for p in MODEL.glob("*/__init__.py"))


def test_every_module_lives_in_a_room_that_says_what_it_holds():
    loose = sorted(p.name for p in MODEL.glob("*.py") if p.name not in {"__init__.py", "errors.py"})
    assert loose == [], f"modules outside a room: {loose}"
    rooms = _rooms()
    assert {r.name for r in rooms} >= {"edit", "runtime", "checkpoint", "server", "training"}
    for room in rooms:
        docstring = ast.get_docstring(ast.parse((room / "__init__.py").read_text()))
        assert docstring and len(docstring.split()) >= 20, f"model/{room.name}/__init__.py does not say what it holds"


def test_room_all_names_only_its_own_modules():
    for name in ROOMS_WITH_PUBLIC_MODULES:
        room = importlib.import_module(f"model.{name}")
        for module in room.__all__:
            assert (MODEL / name / f"{module}.py").is_file(), f"model.{name}.__all__ names {module}, not a module there"


def _imported_modules(path: Path) -> set[str]:
    """Every ``model.room.module`` a file imports, by ``import`` or ``from ... import``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _private_reaches(paths: list[Path]) -> list[str]:
    """Imports of a room's module that the room's ``__all__`` does not offer."""
    public = {name: set(importlib.import_module(f"model.{name}").__all__) for name in ROOMS_WITH_PUBLIC_MODULES}
    offenders = []
    for path in paths:
        for module in sorted(_imported_modules(path)):
            parts = module.split(".")
            reaches_in = len(parts) >= 3 and parts[0] == "model" and parts[1] in public
            if reaches_in and (MODEL / parts[1] / f"{parts[2]}.py").is_file() and parts[2] not in public[parts[1]]:
                offenders.append(f"{path.name} imports {'.'.join(parts[:3])}")
    return sorted(set(offenders))


def test_code_outside_model_uses_only_what_rooms_offer():
    paths = [path for folder in ("app", "bench", "scripts", "packaging") for path in (ROOT / folder).rglob("*.py")]
    assert len(paths) > 40
    assert _private_reaches(sorted(paths)) == []


def test_the_check_sees_a_reach_into_a_private_module(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from model.edit.draws import sample_accepted\nfrom model.edit import bans, engine\n")
    assert _private_reaches([probe]) == ["probe.py imports model.edit.bans", "probe.py imports model.edit.draws"]


# -- app/'s rooms, import cycles and module sizes (#45) ---------------------------------------------------------

APP = ROOT / "app"
APP_ROOMS = {"window", "rewrite", "documents", "model_sources", "command_line", "dialogs"}
MAX_LOOSE_APP_MODULES = 8  # app/'s top: the entry points and the names outside callers import from there
MAX_MODULE_LINES = 500


def test_app_modules_live_in_rooms_that_say_what_they_hold():
    loose = sorted(p.name for p in APP.glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= MAX_LOOSE_APP_MODULES, f"{len(loose)} modules loose at app/'s top: {loose}"
    rooms = {p.parent.name: p for p in APP.glob("*/__init__.py")}
    assert set(rooms) == APP_ROOMS, f"app/'s rooms changed: {sorted(rooms)}; name the new one here"
    for name, init in rooms.items():
        docstring = ast.get_docstring(ast.parse(init.read_text()))
        assert docstring and len(docstring.split()) >= 15, f"app/{name}/__init__.py does not say what it holds"
    nested = sorted(str(p.relative_to(ROOT)) for p in APP.glob("*/*/*.py"))
    assert nested == [], f"rooms inside rooms: {nested}"


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(paths: list[Path], root: Path = ROOT) -> dict[str, set[str]]:
    """Which of ``paths``' modules each imports: at the top, inside functions, under TYPE_CHECKING, relative
    or absolute; ``from package import module`` counts as importing the module."""
    modules = {_module_name(path, root): path for path in paths}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            graph[name].update(target for target in targets if target in modules and target != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted: every import cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph[node]):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _sources() -> list[Path]:
    return sorted(path for folder in (APP, MODEL) for path in folder.rglob("*.py"))


def test_no_import_cycle_in_app_or_model():
    graph = import_graph(_sources())
    assert len(graph) > 100
    assert cycles(graph) == []


def test_the_cycle_check_sees_a_cycle_hidden_in_a_function(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "first.py").write_text("from pkg import second\n")
    (package / "second.py").write_text("def later():\n    from .first import thing\n")
    (package / "third.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.second\n")
    graph = import_graph(sorted(package.glob("*.py")), root=tmp_path)
    assert cycles(graph) == [["pkg.first", "pkg.second"]]
    assert graph["pkg.third"] == {"pkg.second"}


def test_no_module_in_app_or_model_is_over_500_lines():
    long = {str(path.relative_to(ROOT)): n for path in _sources() if (n := len(path.read_text().splitlines())) > 500}
    assert long == {}, f"split by responsibility: {long}"

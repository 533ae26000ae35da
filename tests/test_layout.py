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

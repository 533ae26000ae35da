"""Compile ahead the Python modules a Redraft run imports, into the Windows payload's lib folder.

    python packaging/windows/compile_startup.py PAYLOAD_LIB     (packaging/windows/build runs it)

Without them the installed app compiled every module it imported on its first start (the installed
self-test took 89 s under Wine, the next command 36 s). Every module would be 9,928 files and 236 MB of
.pyc, most of them transformers' other models and torch's tests, never imported; so this lists what a
run imports, here, in the build environment, which holds the lock's versions of the same packages:
every module of ``app`` and ``model`` (the editor's included; the training and serving rooms are skipped
where they need build-only packages) and what ``redraft --self-test`` (the model loaded, one gap filled)
imports. Each module found in the payload is compiled there: 2,227 modules, 56 MiB of .pyc, 11 MiB more
installer. Modules only Windows imports (16 in the self-test under Wine) compile on the first run.

The .pyc are ``unchecked-hash``: Python never compares them with their sources, which stay as installed
(an update replaces lib wholesale), so no file time has to survive the installer. The build's Python
must be the payload's minor version (3.11): its bytecode is what the file names promise.
"""

from __future__ import annotations

import importlib
import io
import os
import pkgutil
import py_compile
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAYLOAD_PYTHON = (3, 11)


def imported_by_a_run() -> list[str]:
    """The names of the modules that the app's own modules and a self-test import, from their sources here."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import app
    import model

    for package in (app, model):
        for found in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            try:
                importlib.import_module(found.name)
            except ImportError:  # a build-only dependency (gguf, vLLM): not in the payload either
                continue
    from app.command_line.selftest import self_test

    report = io.StringIO()
    if self_test(report) != 0:
        raise SystemExit(f"the self-test failed here, so its imports are not known:\n{report.getvalue()}")
    return sorted(name for name, module in sys.modules.items() if getattr(module, "__file__", None))


def source_in(lib: Path, name: str) -> Path | None:
    """The payload's source file of module ``name``, if the payload has one."""
    parts = name.split(".")
    for candidate in (lib.joinpath(*parts).with_suffix(".py"), lib.joinpath(*parts, "__init__.py")):
        if candidate.is_file():
            return candidate
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    if sys.version_info[:2] != PAYLOAD_PYTHON:
        wanted = ".".join(map(str, PAYLOAD_PYTHON))
        print(f"needs Python {wanted}, the payload's; this is {sys.version}", file=sys.stderr)
        return 2
    names = imported_by_a_run()
    compiled = compile_into(Path(argv[0]).resolve(), names)
    size = sum(path.stat().st_size for path in compiled)
    print(f"compiled {len(compiled)} of the {len(names)} modules a run imports ({size / 2**20:.1f} MiB of .pyc); "
          "the rest are built in, in python311.zip, or not in the payload")  # fmt: skip
    return 0


def compile_into(lib: Path, names: list[str]) -> list[Path]:
    """Compile the sources in ``lib`` of the modules ``names`` (those it has) beside them; their .pyc paths."""
    compiled = []
    for name in names:
        source = source_in(lib, name)
        if source is not None:
            mode = py_compile.PycInvalidationMode.UNCHECKED_HASH
            written = py_compile.compile(str(source), doraise=True, invalidation_mode=mode)
            assert written is not None  # doraise: a failure raises instead
            compiled.append(Path(written))
    return compiled


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

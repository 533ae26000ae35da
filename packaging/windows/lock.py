"""Write requirements/lock-windows.txt: the Windows (CPython 3.11, win_amd64) twin of requirements/lock.txt.

    python packaging/windows/lock.py    (needs uv; packaging/windows/build runs it when the file is missing)

uv resolves Redraft's dependencies plus its `bundle` extra for Windows wheels only, constrained by
the Linux lock, so both platforms ship the same releases of everything the two locks share; what only
Windows needs (colorama, pefile, pywin32-ctypes, ...) gets the release pip picks today, pinned here.
The Linux lock's torch is the local build `2.13.0+cpu`; on Windows PyPI's plain `2.13.0` is the CPU build.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import tomllib
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
LINUX_LOCK = ROOT / "requirements" / "lock.txt"
WINDOWS_LOCK = ROOT / "requirements" / "lock-windows.txt"
# Linux-only pins that would make a Windows resolve fail or pull nothing useful.
LINUX_ONLY = {"triton"}


def windows_constraints(linux_lock: str) -> list[str]:
    """The Linux pins as Windows constraints: no local build tags, no Linux-only packages."""
    pins = []
    for line in linux_lock.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name = re.split(r"[=<>!~ ;\[]", line, maxsplit=1)[0]
        if name.lower() in LINUX_ONLY:
            continue
        pins.append(re.sub(r"\+[A-Za-z0-9.]+$", "", line))
    return pins


def torch_pin(linux_lock: str) -> str:
    for pin in windows_constraints(linux_lock):
        if pin.lower().startswith("torch=="):
            return pin
    raise SystemExit(f"no torch pin in {LINUX_LOCK}")


def top_level(pyproject: str) -> list[str]:
    """Redraft's own requirements and its ``bundle`` extra (PyInstaller), plus pip for enable-gpu."""
    project = tomllib.loads(pyproject)["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["bundle"], "pip"]


def main() -> None:
    linux_lock = LINUX_LOCK.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as scratch:
        constraints = Path(scratch) / "constraints.txt"
        constraints.write_text("\n".join(windows_constraints(linux_lock)) + "\n", encoding="utf-8")
        requirements = Path(scratch) / "requirements.in"
        requirements.write_text("\n".join(top_level((ROOT / "pyproject.toml").read_text())) + "\n")
        # uv, not pip: pip evaluates environment markers for the machine it runs on, so a Windows
        # resolve on Linux would drag in torch's Linux-only CUDA wheels; uv resolves for the target.
        pins = subprocess.run(
            [
                "uv", "pip", "compile", str(requirements), "-c", str(constraints),
                "--python-platform", "x86_64-pc-windows-msvc", "--python-version", "3.11",
                "--only-binary", ":all:", "--no-header", "--no-annotate", "--quiet",
            ],
            check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
    header = [
        "# Redraft's Windows lock: every dependency of the Windows build, at an exact version.",
        f"# CPython 3.11 on Windows x86_64 (win_amd64 wheels); generated {date.today()} by packaging/windows/lock.py",
        "# from requirements/lock.txt's pins (do not edit by hand). packaging/windows/build and",
        "# .github/workflows/windows.yml install exactly these: pip install --no-deps -r requirements/lock-windows.txt",
    ]
    lines = [line.strip() for line in pins.splitlines() if line.strip() and not line.startswith("#")]
    WINDOWS_LOCK.write_text("\n".join([*header, *lines]) + "\n", encoding="utf-8")
    print(f"wrote {WINDOWS_LOCK.relative_to(ROOT)} ({len(lines)} packages)")


if __name__ == "__main__":
    main()

"""Check the installed .deb's Depends against what its ELF files really load (packaging/check runs it).

    python3 packaging/linux/depends.py REPORT_FILE

For every shared library that an ELF file under /opt/redraft loads from outside the bundle (ldd, with
the library path the frozen app runs with), the
Debian package that owns it (dpkg -S) must be in the .deb's Depends or pulled in by one of them
(apt-cache depends --recurse). Exit 1 names each package that only happened to be installed here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

BUNDLE = Path("/opt/redraft")
# PyInstaller's bootloader puts _internal/ first on the library path: resolve libraries as it does.
RUNTIME_ENV = {**os.environ, "LD_LIBRARY_PATH": str(BUNDLE / "_internal")}
# Always present: glibc's own libraries come with libc6, which every Debian system has.
ESSENTIAL = {"libc6", "libgcc-s1", "libstdc++6"}


def elf_files(root: Path) -> list[Path]:
    files = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as handle:
                if handle.read(4) == b"\x7fELF":
                    files.append(path)
    return files


def external_libraries(files: list[Path]) -> set[str]:
    """Resolved paths of libraries outside the bundle that these files load."""
    found: set[str] = set()
    for start in range(0, len(files), 50):
        result = subprocess.run(
            ["ldd", *map(str, files[start : start + 50])], capture_output=True, text=True, env=RUNTIME_ENV
        )
        for match in re.finditer(r"=> (/\S+) \(", result.stdout):
            path = match.group(1)
            if not path.startswith(str(BUNDLE)):
                found.add(path)
    return found


def owner(library: str) -> str | None:
    for candidate in (library, str(Path(library).resolve())):
        result = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if result.returncode == 0:
            return result.stdout.split(":", 1)[0].strip()
        # /lib is a link to /usr/lib on merged-/usr systems; dpkg knows one of the two spellings
        alternative = candidate.removeprefix("/usr") if candidate.startswith("/usr/") else "/usr" + candidate
        result = subprocess.run(["dpkg", "-S", alternative], capture_output=True, text=True)
        if result.returncode == 0:
            return result.stdout.split(":", 1)[0].strip()
    return None


def declared_closure() -> tuple[set[str], set[str]]:
    depends = subprocess.run(
        ["dpkg-query", "-W", "-f=${Depends}", "redraft"], capture_output=True, text=True, check=True
    ).stdout
    declared = {re.split(r"[ (]", item.strip(), maxsplit=1)[0] for item in depends.split(",") if item.strip()}
    tree = subprocess.run(
        ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
         "--no-breaks", "--no-replaces", "--no-enhances", "--installed", *sorted(declared)],
        capture_output=True, text=True,
    ).stdout  # fmt: skip
    closure = {line.strip() for line in tree.splitlines() if line and not line.startswith(" ")}
    closure |= {line.split(":", 1)[1].strip() for line in tree.splitlines() if "Depends:" in line}
    return declared, {name.strip("<>") for name in closure}


def main(report: Path) -> int:
    libraries = external_libraries(elf_files(BUNDLE))
    owners = {library: owner(library) for library in sorted(libraries)}
    packages = {name.split(":")[0] for name in owners.values() if name}
    declared, closure = declared_closure()
    undeclared = sorted(packages - closure - ESSENTIAL)
    unowned = sorted(library for library, name in owners.items() if name is None)
    lines = [
        f"depends: {len(libraries)} system libraries from {len(packages)} packages; "
        f"{len(declared)} declared, {len(closure)} with their own dependencies"
    ]
    if undeclared:
        lines.append("depends: NOT DECLARED (only happen to be installed here): " + ", ".join(undeclared))
    if unowned:
        lines.append("depends: libraries no package owns: " + ", ".join(unowned))
    unused = sorted(declared - packages - {"libc6"})
    if unused:
        lines.append("depends: declared, the bundle has its own copy or loads it indirectly: " + ", ".join(unused))
    report.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 1 if undeclared or unowned else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))

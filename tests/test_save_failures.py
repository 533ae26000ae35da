"""Saving when the disk says no: the file on disk stays whole, the message says why and what to do.

Disk full and read-only disks are real tmpfs mounts, permission denied a real other user (when the
tests run as root, as on CI) — no mocked system calls. A save killed mid-write, 50 times over, leaves
the complete old text or the complete new one, and its temporary file goes at the next save or open.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from figures import FIGURES

from app.documents.fileio import (
    TEMP_SUFFIX,
    FileError,
    TextDocument,
    read_document,
    remove_stale_temporaries,
    save_document,
)

ROOT = Path(__file__).resolve().parent.parent
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _temporaries(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(TEMP_SUFFIX)]


@pytest.fixture()
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs of our own (root only)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if not IS_ROOT or shutil.which("mount") is None:
        pytest.skip("mounting a small disk needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_disk_full(small_disk: Path) -> None:
    path = small_disk / "chapter.md"
    save_document(path, TextDocument("The old chapter.\n"))
    with open(small_disk / "filler", "wb", buffering=0) as filler, contextlib.suppress(OSError):
        while True:  # the rest of the disk
            filler.write(b"x" * 4096)
    with pytest.raises(FileError, match="is full; free some space, or use Save As"):
        save_document(path, TextDocument("A much longer new chapter. " * 2000))
    assert path.read_text() == "The old chapter.\n"
    assert _temporaries(small_disk) == []


def test_read_only_disk(small_disk: Path) -> None:
    path = small_disk / "chapter.md"
    save_document(path, TextDocument("The old chapter.\n"))
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    with pytest.raises(FileError, match="read-only disk; use Save As"):
        save_document(path, TextDocument("New.\n"))
    assert path.read_text() == "The old chapter.\n"


def test_read_only_file_is_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "chapter.md"
    path.write_text("Locked.\n")
    path.chmod(0o444)
    with pytest.raises(FileError, match="is read-only; use Save As"):
        save_document(path, TextDocument("New.\n"))
    assert path.read_text() == "Locked.\n" and _temporaries(tmp_path) == []


PROBE = """
import sys
from pathlib import Path
from app.documents.fileio import FileError, TextDocument, save_document
try:
    save_document(Path(sys.argv[1]), TextDocument("Mine."))
except FileError as error:
    print(error)
    sys.exit(3)
"""


def _save_as_another_user(path: Path) -> subprocess.CompletedProcess[str]:
    """Save ``path`` from a process running as uid 65534 (root) or as ourselves (otherwise).

    The probe runs from a world-readable copy of app/, with the base interpreter: a checkout inside a
    folder other users cannot enter (a ``mktemp -d`` folder is 0700) is out of that user's reach.
    """
    copy = Path(tempfile.mkdtemp(prefix="redraft-probe-"))
    try:
        shutil.copytree(ROOT / "app", copy / "app", ignore=shutil.ignore_patterns("__pycache__"))
        for folder, _dirs, _files in os.walk(copy):
            os.chmod(folder, 0o755)
        command = [os.path.realpath(sys.executable), "-c", PROBE, str(path)]
        if IS_ROOT:  # root may write anywhere: save as an ordinary user
            if shutil.which("setpriv") is None:
                pytest.skip("needs setpriv to act as another user")
            command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
        env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
        return subprocess.run(command, capture_output=True, text=True, cwd=copy, env=env)
    finally:
        shutil.rmtree(copy)


def test_permission_denied() -> None:
    folder = Path(tempfile.mkdtemp(prefix="redraft-perm-"))
    try:
        path = folder / "chapter.md"
        path.write_text("Theirs.\n")
        folder.chmod(0o755 if IS_ROOT else 0o555)
        path.chmod(0o644)
        done = _save_as_another_user(path)
        assert done.returncode == 3, done.stderr
        assert "you do not have permission to write in" in done.stdout and "Save As" in done.stdout
        assert path.read_text() == "Theirs.\n"
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)


def test_a_file_of_another_user_in_a_shared_folder_is_not_replaced() -> None:
    # The folder lets everyone write (a shared folder), the file is its owner's alone (0644): a rename would
    # replace it and make the saver its owner, dropping its group and ACLs.
    if not IS_ROOT:
        pytest.skip("needs root to own a file as one user and save it as another")
    folder = Path(tempfile.mkdtemp(prefix="redraft-shared-"))
    try:
        path = folder / "chapter.md"
        path.write_text("Theirs.\n")
        path.chmod(0o644)
        os.chown(path, 0, 4)
        folder.chmod(0o1777 & ~0o1000)  # writable by all, without the sticky bit that would refuse the rename
        before = path.stat()
        done = _save_as_another_user(path)
        assert done.returncode == 3, done.stderr
        assert "you do not have permission to change" in done.stdout and "Save As" in done.stdout
        after = path.stat()
        assert path.read_text() == "Theirs.\n" and (after.st_uid, after.st_gid, after.st_ino) == (0, 4, before.st_ino)
        assert _temporaries(folder) == []
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)


def test_file_deleted_between_open_and_save(tmp_path: Path) -> None:
    path = tmp_path / "notes" / "chapter.md"
    path.parent.mkdir()
    path.write_text("Opened.\n")
    document = read_document(path)
    path.unlink()  # another program deleted it: saving puts it back
    save_document(path, TextDocument(document.text + "More.\n"))
    assert path.read_text() == "Opened.\nMore.\n"
    shutil.rmtree(path.parent)  # and now its folder is gone too
    with pytest.raises(FileError, match="no longer exists; use Save As"):
        save_document(path, TextDocument("Again.\n"))


def test_temporaries_of_dead_saves_go_and_live_ones_stay(tmp_path: Path) -> None:
    path = tmp_path / "chapter.md"
    path.write_text("x")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (tmp_path / f".chapter.md.{dead.stdout.strip()}.abc{TEMP_SUFFIX}").write_text("half")
    (tmp_path / f".chapter.md.{os.getpid()}.def{TEMP_SUFFIX}").write_text("in progress")
    (tmp_path / f".other.md.1.ghi{TEMP_SUFFIX}").write_text("another file's")
    assert remove_stale_temporaries(path) == 1
    assert sorted(_temporaries(tmp_path)) == [f".chapter.md.{os.getpid()}.def{TEMP_SUFFIX}",
                                              f".other.md.1.ghi{TEMP_SUFFIX}"]


SAVER = """
import sys
from pathlib import Path
from app.documents.fileio import TextDocument, save_document
path, texts = Path(sys.argv[1]), [Path(sys.argv[2]).read_text(), Path(sys.argv[3]).read_text()]
print("ready", flush=True)
turn = 0
while True:
    save_document(path, TextDocument(texts[turn % 2]))
    turn += 1
"""


def test_a_save_killed_at_any_moment_leaves_the_old_or_the_new_text(tmp_path: Path) -> None:
    old, new = ("Old line of the chapter.\n" * 40000), ("New line, longer than the old one.\n" * 40000)
    (tmp_path / "old.txt").write_text(old)
    (tmp_path / "new.txt").write_text(new)
    folder = tmp_path / "docs"
    folder.mkdir()
    path = folder / "chapter.md"
    path.write_text(old)
    rng = random.Random(7)
    kills, torn, leftovers = 50, 0, 0
    for _ in range(kills):
        saver = subprocess.Popen([sys.executable, "-c", SAVER, str(path), str(tmp_path / "old.txt"),
                                  str(tmp_path / "new.txt")], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                                 env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
        assert saver.stdout is not None and saver.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.08))
        saver.send_signal(signal.SIGKILL)
        saver.wait()
        text = path.read_text()
        torn += text not in (old, new)
        leftovers += len(_temporaries(folder))
        read_document(path)  # the next open cleans what the killed save left
        assert _temporaries(folder) == []
    FIGURES["saves killed mid-write"] = (
        f"{kills} kills, {torn} torn files, {leftovers} temporary files left by the kills and removed at the next "
        "open"
    )
    assert torn == 0

"""The recovery area: one locked folder per running instance, whole records, orphans of dead instances."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from app.documents.recovery import RECORD_SUFFIX, RecoveryArea

ROOT = Path(__file__).resolve().parent.parent

INSTANCE = """
import sys, time
from pathlib import Path
from app.documents.recovery import RECORD_SUFFIX, RecoveryArea
area = RecoveryArea(Path(sys.argv[1]))
area.write("doc-1", "Chapter one, unsaved.\\n", path=Path("/books/one.md"), title="one.md", newline="\\r\\n")
area.write("untitled-1", "An untitled draft ✍️", path=None, title="Untitled")
print("written", flush=True)
time.sleep(600)
"""


def _instance(root: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen([sys.executable, "-c", INSTANCE, str(root)], cwd=ROOT, stdout=subprocess.PIPE,
                               text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert process.stdout is not None and process.stdout.readline().strip() == "written"
    return process


def test_records_are_written_only_when_the_text_changed(tmp_path: Path) -> None:
    area = RecoveryArea(tmp_path)
    assert area.write("doc", "one", path=None, title="Untitled")
    assert not area.write("doc", "one", path=None, title="Untitled")
    assert area.write("doc", "one two", path=None, title="Untitled")
    assert area.folder is not None
    assert [p.name for p in area.folder.glob("*" + RECORD_SUFFIX)] == ["doc" + RECORD_SUFFIX]
    area.remove("doc")
    assert list(area.folder.glob("*" + RECORD_SUFFIX)) == []
    area.release()
    assert list(tmp_path.iterdir()) == []


def test_a_running_instance_is_not_an_orphan_and_a_killed_one_is(tmp_path: Path) -> None:
    running = _instance(tmp_path)
    try:
        assert RecoveryArea(tmp_path).orphans() == []
        running.send_signal(signal.SIGKILL)
        running.wait()
        area = RecoveryArea(tmp_path)
        area.claim()  # this instance's own folder is never its own orphan
        found = area.orphans()
        assert [(d.title, d.path, d.text, d.newline) for d in found] == [
            ("one.md", Path("/books/one.md"), "Chapter one, unsaved.\n", "\r\n"),
            ("Untitled", None, "An untitled draft ✍️", "\n"),
        ]
        assert "one.md (/books/one.md), 3 words, autosaved" in found[0].describe()
        area.discard(found)
        assert RecoveryArea(tmp_path).orphans() == []
        assert [p for p in tmp_path.iterdir()] == [area.folder]  # the dead folder went, ours stays
    finally:
        running.kill()
        running.wait()


def test_a_torn_record_is_skipped_not_fatal(tmp_path: Path) -> None:
    dead = tmp_path / "12345-deadbeef"
    dead.mkdir()
    (dead / "lock").write_text("{}")
    (dead / ("doc" + RECORD_SUFFIX)).write_bytes(b'{"bytes": 100, "written_at": 1}\nonly half of the')
    assert RecoveryArea(tmp_path).orphans() == []


CLAIM_ONLY = """
import sys, time
from pathlib import Path
from app.documents.recovery import RecoveryArea
area = RecoveryArea(Path(sys.argv[1]))
area.claim()  # an instance with nothing unsaved: a folder and its lock, no record
print("claimed", flush=True)
time.sleep(600)
"""


def test_a_dead_instance_with_nothing_unsaved_leaves_no_folder_behind(tmp_path: Path) -> None:
    ended = subprocess.Popen([sys.executable, "-c", CLAIM_ONLY, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE,
                             text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert ended.stdout is not None and ended.stdout.readline().strip() == "claimed"
    with_records = _instance(tmp_path)
    ended.send_signal(signal.SIGTERM)  # no handler: it ends without releasing its folder
    with_records.send_signal(signal.SIGKILL)
    ended.wait()
    with_records.wait()
    empty, kept = sorted(tmp_path.iterdir(), key=lambda folder: any(folder.glob("*" + RECORD_SUFFIX)))
    assert not any(empty.glob("*" + RECORD_SUFFIX)) and any(kept.glob("*" + RECORD_SUFFIX))
    # An instance between creating its lock file and locking it (the file still empty) is left alone.
    starting = tmp_path / "99999-starting"
    starting.mkdir()
    (starting / "lock").touch()

    area = RecoveryArea(tmp_path)
    area.claim()  # the next start
    assert sorted(tmp_path.iterdir()) == sorted([kept, starting, area.folder])  # the empty dead folder went
    assert len(area.orphans()) == 2  # the killed instance's records are still offered
    old = time.time() - 120
    os.utime(starting / "lock", (old, old))  # a minute later an empty, unlocked lock file is a dead one
    area.sweep()
    assert sorted(tmp_path.iterdir()) == sorted([kept, area.folder])

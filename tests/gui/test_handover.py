"""A later start hands its files to the Redraft already running (app/window/handover.py, app.gui): the door
and the knock across real processes, a crashed Redraft's socket, a message that is not a start's, and where the
files open: a window showing one already comes forward, a blank window takes the first, the rest get their own."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gui_helpers import SIGNAL_TIMEOUT_MS
from PySide6.QtNetwork import QLocalSocket

from app.gui import open_handed_over
from app.window.handover import Door, door_name, hand_over
from app.window.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]
KNOCK = "import sys; from pathlib import Path; from app.window.handover import hand_over; " \
        "print(hand_over([Path(p) for p in sys.argv[2:]], sys.argv[1]))"  # fmt: skip
# The real editor started as a file manager starts it (no --model: the settings' model), writing its open windows'
# titles to OUT/windows.json every 50 ms and quitting when OUT/quit appears.
EDITOR = """
import json, sys
from pathlib import Path
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from app.gui import run_editor
from app.settings import SettingsStore
from app.window.main_window import MainWindow

out = Path(sys.argv[1])
app = QApplication(sys.argv)
SettingsStore().update(model=sys.argv[2], device="cpu")

def report():
    windows = [w for w in app.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
    (out / "windows.json").write_text(json.dumps([w.windowTitle() for w in windows]))
    if (out / "quit").exists():
        for window in windows:
            window.editor.document().setModified(False)
        app.quit()
    QTimer.singleShot(50, report)

QTimer.singleShot(0, report)
run_editor()
"""


@pytest.fixture()
def door_at(tmp_path: Path) -> str:
    """A door's name of the test's own: a socket in the test's folder (Unix) or a pipe name (Windows)."""
    return str(tmp_path / "door") if sys.platform != "win32" else f"redraft-test-{os.getpid()}"


def knock(name: str, *files: str, cwd: Path = ROOT) -> subprocess.Popen[str]:
    """hand_over from another process (this one's event loop is the door's)."""
    return subprocess.Popen([sys.executable, "-c", KNOCK, name, *files], cwd=cwd, text=True,  # noqa: S603
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE)  # fmt: skip


def test_a_later_start_hands_its_files_through_the_door(qtbot: Any, door_at: str, tmp_path: Path) -> None:
    door = Door()
    assert door.open(door_at)
    (tmp_path / "here").mkdir()
    with qtbot.waitSignal(door.filesArrived, timeout=SIGNAL_TIMEOUT_MS) as arrived:
        started = knock(door_at, "chapter.md", "/notes/ideas.md", "/notes/Br\udce9f.md", cwd=tmp_path / "here")
    # As that start meant them: relative to its folder, a Latin-1 name's byte kept (os.fsencode gives it back).
    assert arrived.args[0] == [tmp_path / "here" / "chapter.md", Path("/notes/ideas.md"), Path("/notes/Br\udce9f.md")]
    assert os.fsencode(arrived.args[0][2]) == b"/notes/Br\xe9f.md"
    qtbot.waitUntil(lambda: started.poll() is not None, timeout=SIGNAL_TIMEOUT_MS)
    assert started.returncode == 0 and started.stdout is not None and started.stdout.read().strip() == "True"
    assert not Door().open(door_at)  # one door: a second Redraft keeps to itself rather than take it
    door.close()
    assert not hand_over([Path("x.md")], door_at)  # none running: the start goes on as a Redraft of its own


@pytest.mark.skipif(sys.platform == "win32", reason="a named pipe leaves nothing behind")
def test_the_socket_a_killed_redraft_left_is_taken_over(qtbot: Any, door_at: str) -> None:
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(door_at)  # bound, never listened on: as a Redraft killed with -9 leaves it
    stale.close()
    assert not hand_over([], door_at)  # nothing answers behind it
    door = Door()
    assert door.open(door_at)
    with qtbot.waitSignal(door.filesArrived, timeout=SIGNAL_TIMEOUT_MS) as arrived:
        knock(door_at)
    assert arrived.args[0] == []  # a start without files: a window asked for
    door.close()


def test_a_message_that_is_not_a_starts_is_dropped_and_the_door_stays_open(qtbot: Any, door_at: str) -> None:
    door = Door()
    assert door.open(door_at)
    arrived: list[Any] = []
    door.filesArrived.connect(arrived.append)
    for message in (b"not json\n", b'{"files": "one.md"}\n', b'{"files": [1]}\n', b"[" * 100_000 + b"\n"):
        visitor = QLocalSocket()
        visitor.connectToServer(door_at)
        assert visitor.waitForConnected(1000)
        visitor.write(message)
        visitor.flush()
        qtbot.waitUntil(lambda visitor=visitor: visitor.state() == QLocalSocket.LocalSocketState.UnconnectedState,
                        timeout=SIGNAL_TIMEOUT_MS)  # fmt: skip
    assert arrived == []
    with qtbot.waitSignal(door.filesArrived, timeout=SIGNAL_TIMEOUT_MS):
        knock(door_at, "after.md")
    door.close()


def test_the_door_is_the_settings_folders_and_the_users_own(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if sys.platform == "win32":
        pytest.skip("a pipe's name")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.setenv("REDRAFT_HOME", str(tmp_path / "one"))
    one = door_name()
    monkeypatch.setenv("REDRAFT_HOME", str(tmp_path / "two"))
    assert door_name() != one and Path(one).parent == tmp_path  # a portable copy has its own
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    own = Path(door_name()).parent
    assert own == tmp_path / f"redraft-{os.getuid()}" and own.stat().st_mode & 0o777 == 0o700
    own.chmod(0o755)  # another user could list it: not used
    assert Path(door_name()).parent == Path(".")


def test_files_open_beside_the_writers_never_over_them(
    make_window: Callable[..., MainWindow], qtbot: Any, tmp_path: Path
) -> None:
    first = make_window()
    chapter, notes = tmp_path / "chapter.md", tmp_path / "notes.md"
    chapter.write_text("The chapter.\n", encoding="utf-8")
    notes.write_text("The notes.\n", encoding="utf-8")
    windows = open_handed_over(first, [chapter, notes])
    assert windows[0] is first and first.path == chapter  # the blank window took the first
    assert windows[1] is not first and windows[1].path == notes
    first.editor.insertPlainText("Unsaved words. ")
    assert open_handed_over(first, [chapter, chapter]) == [first, first]  # shown already: brought forward
    assert first.editor.plain_text().startswith("Unsaved words.") and first.isWindowModified()
    (other,) = open_handed_over(first, [])  # no files: a new window, beside the last one made
    assert other not in windows and other.path is None and other.isVisible()
    assert open_handed_over(first, []) == [other]  # and while that one is still blank, it again
    first.editor.document().setModified(False)
    assert first.close()  # the first window closed (hidden, it holds the model thread for the others)
    ideas = tmp_path / "ideas.md"
    ideas.write_text("Ideas.\n", encoding="utf-8")
    (shown,) = open_handed_over(first, [ideas])
    assert shown is other and other.path == ideas and not first.isVisible()  # into a window the writer sees
    twice = open_handed_over(first, [chapter, chapter])  # one window for it, not a blank one left beside it
    assert twice[0] is twice[1] and twice[0].path == chapter and twice[0] not in (windows[1], other)
    for window in (windows[1], other, twice[0]):
        window.close()


def test_a_second_start_opens_in_the_running_redraft(tiny_checkpoint: Path, tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "REDRAFT_HOME": str(tmp_path / "home"),
           "XDG_RUNTIME_DIR": str(tmp_path / "run"), "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}  # fmt: skip
    chapter = tmp_path / "chapter.md"
    chapter.write_text("The chapter.\n", encoding="utf-8")
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(tmp_path), str(tiny_checkpoint)], cwd=ROOT,
                              env=env, stderr=subprocess.PIPE)  # fmt: skip

    def titles() -> list[str]:
        try:
            return json.loads((tmp_path / "windows.json").read_text())
        except (OSError, ValueError):
            return []

    try:
        deadline = time.monotonic() + 120
        while not titles():
            assert editor.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        started = time.monotonic()
        second = subprocess.run([sys.executable, "-m", "app.cli", "edit", str(chapter)], cwd=ROOT, env=env,
                                capture_output=True, text=True, timeout=120)  # fmt: skip
        assert second.returncode == 0 and "Opened in the Redraft already running." in second.stdout, second.stderr
        assert second.stderr == ""  # nothing of Qt's in the writer's terminal
        while not any("chapter.md" in title for title in titles()):
            assert time.monotonic() - started < 30
            time.sleep(0.05)
        assert len(titles()) == 1  # the untitled window took it: one process, one window
    finally:
        (tmp_path / "quit").touch()
        editor.wait(timeout=60)
    assert editor.returncode == 0, editor.stderr.read().decode() if editor.stderr else ""


def test_without_qts_network_library_each_start_is_a_redraft_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    from PySide6.QtWidgets import QApplication

    from app.cli import _handed_over
    from app.gui import opened_door

    monkeypatch.setitem(sys.modules, "PySide6.QtNetwork", None)  # as where libQt6Network cannot load
    monkeypatch.delitem(sys.modules, "app.window.handover")
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    assert not _handed_over([Path("chapter.md")]) and opened_door(app) is None  # the editor starts all the same


def test_the_start_is_answered_before_its_files_open(qtbot: Any, door_at: str) -> None:
    door = Door()
    assert door.open(door_at)
    starts: list[subprocess.Popen[str]] = []
    ended_first: list[bool] = []

    def opening(_files: list[Path]) -> None:  # as long as an encoding question the writer takes a while over
        try:
            starts[0].wait(timeout=30)
            ended_first.append(True)
        except subprocess.TimeoutExpired:
            ended_first.append(False)

    door.filesArrived.connect(opening)
    with qtbot.waitSignal(door.filesArrived, timeout=SIGNAL_TIMEOUT_MS):
        starts.append(knock(door_at, "latin1.txt"))
    assert ended_first == [True] and starts[0].stdout is not None
    assert starts[0].stdout.read().strip() == "True"  # it had its answer at once and ended: no second Redraft
    door.close()

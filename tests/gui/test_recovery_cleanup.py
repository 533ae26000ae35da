"""An editor ended by SIGTERM (a logout, `kill`, a service manager) leaves no recovery folder for good.

Two real Redraft processes, as tests/gui/test_kill_recovery.py drives them: the first, with nothing
unsaved, is ended by SIGTERM and cannot remove its recovery folder; the next start must.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 120
EDITOR = "import sys; from app.cli import main; sys.exit(main(sys.argv[1:]))"


def _claimed(recovery: Path) -> set[Path]:
    """Folders whose owner has locked them (it writes its lock file only then)."""
    if not recovery.is_dir():
        return set()
    return {lock.parent for lock in recovery.glob("*/lock") if lock.stat().st_size > 0}


def _start_editor(model: Path, env: dict[str, str], recovery: Path) -> tuple[subprocess.Popen[bytes], Path]:
    before = _claimed(recovery)
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, "edit", "--model", str(model)], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + START_TIMEOUT_S
    while not (_claimed(recovery) - before):
        assert editor.poll() is None, editor.communicate()[1].decode()
        assert time.monotonic() < deadline, "the editor never claimed its recovery folder"
        time.sleep(0.05)
    (folder,) = _claimed(recovery) - before
    return editor, folder


def test_the_next_start_removes_the_empty_folder_of_an_editor_ended_by_sigterm(
    tiny_checkpoint: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    recovery = home / "recovery"  # app.userdirs under REDRAFT_HOME
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "REDRAFT_HOME": str(home),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}  # fmt: skip
    first, first_folder = _start_editor(tiny_checkpoint, env, recovery)
    first.send_signal(signal.SIGTERM)
    first.wait(timeout=60)
    assert not list(first_folder.glob("*.record"))  # it had nothing unsaved

    second, second_folder = _start_editor(tiny_checkpoint, env, recovery)
    try:
        deadline = time.monotonic() + 30
        while sorted(recovery.iterdir()) != [second_folder] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sorted(recovery.iterdir()) == [second_folder]  # the first's empty folder is gone, not offered
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=60)

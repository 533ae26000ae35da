"""scripts/setup speaks to the writer in a few lines and keeps pip's noise in a log (#46), run here with a
stand-in Python whose pip prints as much as the real one does (no network, no real install)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# A stand-in for python3: answers the version check, makes a "venv" holding a copy of itself, and plays
# pip: 80 lines of warnings per install, failing where FAIL_ON names the package.
FAKE_PYTHON = r"""#!/usr/bin/env bash
if [ "$1" = "-c" ]; then exit 0; fi
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then mkdir -p "$3/bin"; cp "$0" "$3/bin/python"; exit 0; fi
for i in $(seq 80); do echo "WARNING: pip noise line $i for $*"; done
echo "********************************************************************************"
echo "!! SetuptoolsDeprecationWarning: a boxed notice"
if [ -n "${FAIL_ON:-}" ] && [[ "$*" == *" $FAIL_ON"* ]]; then
    echo "ERROR: no matching distribution for $FAIL_ON" >&2
    exit 1
fi
exit 0
"""


def _run(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    fake = tmp_path / "python3"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    environment = {**os.environ, "PYTHON": str(fake), "REDRAFT_VENV": str(tmp_path / "venv"), **env}
    return subprocess.run(
        ["bash", str(ROOT / "scripts" / "setup")], capture_output=True, text=True, env=environment, timeout=60
    )


def test_a_first_setup_says_each_step_in_a_few_lines_and_logs_pips_output(tmp_path: Path) -> None:
    done = _run(tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Setting up Redraft (first run, 2–3 minutes")
    assert [line.strip()[:5] for line in lines[1:5]] == ["[1/4]", "[2/4]", "[3/4]", "[4/4]"]
    assert len(lines) <= 6 and "WARNING" not in done.stdout + done.stderr and "!!" not in done.stdout
    log = (tmp_path / "venv-setup.log").read_text()
    assert log.count("WARNING: pip noise") == 3 * 80 + 80  # three installs and pip check, all kept
    again = _run(tmp_path)  # set up already: silent
    assert again.returncode == 0 and again.stdout == "" and again.stderr == ""


def test_a_failed_step_names_it_the_log_and_shows_its_tail(tmp_path: Path) -> None:
    done = _run(tmp_path, FAIL_ON="torch")
    assert done.returncode == 1
    assert "failed at: Installing PyTorch" in done.stderr
    assert str(tmp_path / "venv-setup.log") in done.stderr
    assert "ERROR: no matching distribution for torch" in done.stderr  # the log's tail
    assert len(done.stderr.splitlines()) <= 30
    assert not (tmp_path / "venv" / ".redraft-installed").exists()
    retry = _run(tmp_path)  # the next run starts again where it is needed, with the environment kept
    assert retry.returncode == 0 and retry.stdout.startswith("Updating Redraft's libraries")

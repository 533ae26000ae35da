"""scripts/setup speaks to the writer in a few lines and keeps pip's noise in a log (#46), run here with a
stand-in Python whose pip prints as much as the real one does (no network, no real install)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# A stand-in for python3: answers the version check, makes a "venv" holding a copy of itself, and plays
# pip: its command line is checked by the real pip's own parser (an option pip refuses, or one put before
# the subcommand where pip does not take it, fails as it would: a looser stand-in once let set-up pass
# here while real pip refused it), then 80 lines of warnings per install, failing where FAIL_ON names
# the package.
PIP_PARSER = """
import sys
from pip._internal.cli.main_parser import parse_command
from pip._internal.commands import create_command
name, args = parse_command(sys.argv[1:])
create_command(name).parse_args(args)
"""
FAKE_PYTHON = r"""#!/usr/bin/env bash
if [ "$1" = "-c" ]; then exit 0; fi
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then mkdir -p "$3/bin"; cp "$0" "$3/bin/python"; exit 0; fi
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then
    shift 2
    "$REAL_PYTHON" -c "$PIP_PARSER" "$@" || exit 2
fi
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
    environment = {
        **os.environ, "PYTHON": str(fake), "REDRAFT_VENV": str(tmp_path / "venv"), "REAL_PYTHON": sys.executable,
        "PIP_PARSER": PIP_PARSER, **env,
    }
    return subprocess.run(
        ["bash", env.get("SETUP_SCRIPT", str(ROOT / "scripts" / "setup"))],
        capture_output=True, text=True, env=environment, timeout=60,
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


def test_the_stand_in_pip_refuses_what_real_pip_refuses(tmp_path: Path) -> None:
    # The check above is only as good as its stand-in: an option before pip's subcommand that pip does not
    # take there (what set-up once passed) must fail the set-up here too.
    setup = (ROOT / "scripts" / "setup").read_text()
    broken = tmp_path / "scripts" / "setup"
    broken.parent.mkdir()
    (tmp_path / "requirements").mkdir()
    for name in ("pyproject.toml", "requirements/lock.txt"):
        (tmp_path / name).write_text((ROOT / name).read_text())
    broken.write_text(setup.replace("--disable-pip-version-check --no-input", "--progress-bar off --no-input"))
    done = _run(tmp_path, SETUP_SCRIPT=str(broken))
    assert done.returncode == 1 and "failed at: Updating pip and setuptools" in done.stderr
    assert "no such option: --progress-bar" in (tmp_path / "venv-setup.log").read_text()

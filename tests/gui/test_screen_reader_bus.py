"""A screen reader's own view of Redraft, over the real accessibility bus (AT-SPI), as Orca reads it: the
window's controls by name, a rewrite driven and heard end to end, and the Outline followed from the keys
(tests/gui/atspi_reader.py, run by the system's Python with Debian's python3-pyatspi; .ci/run installs it with
at-spi2-core, Xvfb and xdotool)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gui_helpers import DOCUMENT

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = Path("/usr/libexec/at-spi-bus-launcher")
SYSTEM_PYTHON = Path("/usr/bin/python3")


def _has_pyatspi() -> bool:
    if not SYSTEM_PYTHON.exists():
        return False
    return subprocess.run([str(SYSTEM_PYTHON), "-c", "import pyatspi"], capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not LAUNCHER.exists() or shutil.which("Xvfb") is None
    or shutil.which("dbus-run-session") is None or not _has_pyatspi(),
    reason="needs Debian's at-spi2-core, python3-pyatspi, dbus and xvfb (.ci/run installs them)",
)


def listen(tmp_path: Path, document: Path, select: str, *reader_options: str) -> dict[str, Any]:
    """What tests/gui/atspi_reader.py heard and read of the editor on ``document``, selecting ``select`` ("-":
    nothing)."""
    report_path = tmp_path / "report.json"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "REDRAFT_HOME": str(tmp_path / "home")}
    run = subprocess.run(
        ["dbus-run-session", "--", str(SYSTEM_PYTHON), str(ROOT / "tests/gui/atspi_reader.py"), *reader_options,
         str(report_path), select, sys.executable, "-m", "app.cli", "edit", str(document)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert report_path.exists(), run.stdout + run.stderr
    report: dict[str, Any] = json.loads(report_path.read_text(encoding="utf-8"))
    return report


def read_aloud(tmp_path: Path, *reader_options: str) -> dict[str, Any]:
    """What the reader heard and read of a rewrite of "climbed the stairs" in DOCUMENT."""
    letter = tmp_path / "letter.md"
    letter.write_text(DOCUMENT, encoding="utf-8")
    report = listen(tmp_path, letter, "climbed the stairs", *reader_options)
    # Rewrite is pressed until it is heard (it is enabled a moment after the selection), then Accept once.
    assert report["steps"][-1] == "pressed Accept" and set(report["steps"]) == {"pressed Rewrite", "pressed Accept"}
    return report


def test_a_screen_reader_reads_the_window_and_hears_a_rewrite_through_to_its_accept(tmp_path: Path) -> None:
    report = read_aloud(tmp_path)
    controls = report["controls"]
    assert ["text", "Document"] in controls
    for name in ("Rewrite", "Fill", "Accept", "Reject"):
        assert ["push button", name] in controls
    assert all(name.strip() for role, name in controls if role != "text"), controls  # nothing unnamed

    heard = [text for text, _politeness in report["heard"]]
    assert heard[0].startswith("Model ready: Demo model")
    assert heard[1] == "Developing…"
    draft = heard[2]
    assert draft.startswith("Draft 1 of ") or draft.startswith("Draft: ")
    assert heard[3:] == ["Enter in the draft: accept, Esc: reject, Ctrl+Shift+R: regenerate",
                         "Rewrite accepted (Ctrl+Z undoes it)."]  # fmt: skip
    # The draft heard is the one accepted into the text, which the reader reads back.
    words = draft.split(": ", 1)[1]
    before, after = DOCUMENT.split("climbed the stairs")
    assert report["text"] == before + words + after


def test_a_screen_reader_that_reads_no_announcements_hears_the_rewrite_as_notifications(tmp_path: Path) -> None:
    # Listening as Orca 43 does (Debian 12's): the editor asks the bus's registry, finds no listener for
    # announcements, and shows each message as a notification in the status bar instead (app/window/speech_route.py).
    report = read_aloud(tmp_path, "--as-orca-43")
    heard = [text for text, _politeness in report["heard"]]
    assert heard[0] == "Model ready: Demo model, CPU."
    keys = " Enter in the draft: accept, Esc: reject, Ctrl+Shift+R: regenerate."
    # The draft's words and its keys in one notification (one would cut the other off), "Developing…" before
    # them or with them.
    draft = next(text for text in heard if keys in text)
    assert draft.endswith(keys) and "Draft 1 of " in draft
    assert heard[-1] == "Rewrite accepted (Ctrl+Z undoes it)."
    words = draft.split(": ", 1)[1].removesuffix(keys)
    before, after = DOCUMENT.split("climbed the stairs")
    # The words heard are those accepted into the text (joined() ends a message without a full stop with one).
    assert report["text"] in (before + words + after, before + words.removesuffix(".") + after)


@pytest.mark.skipif(shutil.which("xdotool") is None, reason="needs xdotool to press keys (.ci/run installs it)")
def test_a_screen_reader_follows_the_outline_from_the_keys(tmp_path: Path) -> None:
    # F6 to the Outline, Down to the next heading, Left out to its part, Left again to fold it: each row is said by
    # its title, level and words (not by its indent), and the fold, which moves no focus, is said aloud.
    book = tmp_path / "book.md"
    book.write_text("# Part One\n\n## Storm\n\nRain.\n\n## Light\n\nHeld.\n\n# Part Two\n\nQuiet.\n", encoding="utf-8")
    report = listen(tmp_path, book, "-", "--outline")
    assert report["steps"] == ["pressed F6", "pressed Down", "pressed Left", "pressed Left"], report
    rows = [focus for focus in report["focused"] if focus[0] != "text"]
    part_one = ["table cell", "Part One", "level 1, open, 4 words"]
    assert rows == [["tree", "Outline", ""], part_one, ["table cell", "Storm", "level 2, 1 word"], part_one], report
    heard = [text for text, _politeness in report["heard"]]
    assert any(text.startswith("In the Outline: Up and Down choose a heading") for text in heard), heard
    assert heard[-1] == "“Part One” folded", heard


@pytest.mark.skipif(shutil.which("xdotool") is None, reason="needs xdotool to press keys (.ci/run installs it)")
def test_a_screen_reader_hears_each_draft_from_the_keys_and_enter_accepts_it(tmp_path: Path) -> None:
    # The rewrite heard, then F6 to the drafts, Down to the second, Enter: each draft is said by its number, score
    # and words as the keys come to it, and the one accepted is the one heard last.
    letter = tmp_path / "letter.md"
    letter.write_text(DOCUMENT, encoding="utf-8")
    settings = tmp_path / "home" / "settings" / "Redraft.ini"
    settings.parent.mkdir(parents=True)
    settings.write_text("[rewrite]\ncandidates=3\nfewer_drafts_when_slow=false\n", encoding="utf-8")  # three, always
    report = listen(tmp_path, letter, "climbed the stairs", "--drafts")
    assert report["steps"][-3:] == ["pressed F6", "pressed Down", "pressed Return"], report
    drafts = [focus for focus in report["focused"] if focus[1].startswith("Draft ")]
    assert [name.split(", score")[0] for _role, name, _words in drafts] == ["Draft 1 of 3", "Draft 2 of 3"], report
    assert all(name.endswith(", in the text") and words for _role, name, words in drafts), report
    heard = [text for text, _politeness in report["heard"]]
    assert any(text.startswith("In the Drafts: Up and Down put a draft in the text") for text in heard), heard
    assert heard[-1] == "Rewrite accepted (Ctrl+Z undoes it).", heard
    before, after = DOCUMENT.split("climbed the stairs")
    assert report["text"] == before + drafts[-1][2] + after  # the words heard last are those accepted

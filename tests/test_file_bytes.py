"""What opening and saving do to a file's bytes: kept exactly where the editor can, named on open where not.

Also the save's own traces on disk: its temporary file's name (exact to the document, so two documents
whose names share a prefix never clean up each other's saves, checked with two real processes), the
mode a new file gets under the umask, and the folder flushed after the rename (watched with strace).
"""

from __future__ import annotations

import codecs
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.documents.fileio import (
    TEMP_SUFFIX,
    BinaryFileError,
    TextDocument,
    decode_document,
    encode_document,
    read_document,
    remove_stale_temporaries,
    save_document,
)

ROOT = Path(__file__).resolve().parent.parent
TEXT = "Dear diary,\nthe café was shut — again.\n"


def round_trip(data: bytes, encoding: str | None = None) -> tuple[TextDocument, bytes]:
    document = decode_document(data, encoding)
    return document, encode_document(document)


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_bom_opens_by_itself_and_saves_byte_for_byte(encoding: str) -> None:
    data = TEXT.encode(encoding)
    document, again = round_trip(data)
    assert (document.text, document.encoding, document.bom) == (TEXT, encoding, False)
    assert again == data and document.notes == ()


@pytest.mark.parametrize(("bom", "encoding"), [(codecs.BOM_UTF16_BE, "utf-16-be"), (b"", "utf-16-be"),
                                               (codecs.BOM_UTF16_LE, "utf-16-le"), (b"", "utf-16-le")])  # fmt: skip
def test_choosing_utf16_keeps_the_byte_order_and_adds_no_bom(bom: bytes, encoding: str) -> None:
    data = bom + TEXT.encode(encoding)
    document, again = round_trip(data, "utf-16")
    assert document.text == TEXT and document.encoding == encoding and again == data


def test_zero_bytes_that_do_not_read_as_text_are_still_binary() -> None:
    with pytest.raises(BinaryFileError):
        decode_document(bytes(range(1, 40)) * 100 + b"\x00\x00\x01\x00" * 200)


def test_a_clean_file_has_nothing_to_say() -> None:
    for data in (TEXT.encode(), TEXT.replace("\n", "\r\n").encode(), codecs.BOM_UTF8 + TEXT.encode(),
                 TEXT.encode("cp1252", "replace")):  # fmt: skip
        encoding = None if data != TEXT.encode("cp1252", "replace") else "cp1252"
        document, again = round_trip(data, encoding)
        assert document.notes == () and again == data


def test_mixed_line_endings_are_named_once_on_open() -> None:
    data = b"one\r\ntwo\r\nthree\rfour\r\n"
    document, again = round_trip(data)
    assert document.notes == ("it mixes line endings (3 Windows (CRLF), 1 old Mac (CR)); saving writes every one "
                              "as Windows (CRLF)",)  # fmt: skip
    assert again == b"one\r\ntwo\r\nthree\r\nfour\r\n"


def test_characters_the_editor_shows_as_line_breaks_are_named_on_open() -> None:
    document = decode_document("a\u2028b\u2029c\ufdd0d\ufdd1e\u2028".encode())
    (note,) = document.notes
    assert "2 U+2028, 1 U+2029, 1 U+FDD0, 1 U+FDD1" in note and "saving writes them as ordinary line breaks" in note


def test_bytes_an_encoding_cannot_give_back_are_named_on_open() -> None:
    document = decode_document(b"Le prix: " + b"\x87\x90 10", "cp932")  # NEC's "≒", written back as JIS's
    (note,) = document.notes
    assert "no exact cp932 form: saving changes them (the first at byte 9)" in note


def test_a_new_file_gets_the_umask_mode_and_a_replaced_one_keeps_its_mode(tmp_path: Path) -> None:
    if sys.platform == "win32":
        pytest.skip("POSIX modes")
    old = os.umask(0o022)
    try:
        save_document(tmp_path / "new.md", TextDocument(TEXT))
        os.umask(0o077)
        save_document(tmp_path / "private.md", TextDocument(TEXT))
    finally:
        os.umask(old)
    assert (tmp_path / "new.md").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "private.md").stat().st_mode & 0o777 == 0o600
    shared = tmp_path / "shared.md"
    shared.write_text("old")
    shared.chmod(0o664)
    save_document(shared, TextDocument(TEXT))
    assert shared.stat().st_mode & 0o777 == 0o664 and shared.read_text() == TEXT


def test_cleaning_up_notes_leaves_the_temporary_files_of_notes_txt_alone(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = dead.stdout.strip()
    theirs = [f".notes.txt.{pid}.k3j9x2ab{TEMP_SUFFIX}", f".notes.7.{pid}.k3j9x2ab{TEMP_SUFFIX}"]
    for name in theirs:
        (tmp_path / name).write_text("another document's save")
    (tmp_path / f".notes.{pid}.a1b2c3d4{TEMP_SUFFIX}").write_text("a dead save of notes")
    assert remove_stale_temporaries(tmp_path / "notes") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(theirs)


SAVER = """
import sys, time
from pathlib import Path
from app.documents.fileio import FileError, TextDocument, save_document
path, text, seconds = Path(sys.argv[1]), sys.argv[2] * 200000, float(sys.argv[3])
saves, failures, end = 0, [], time.monotonic() + seconds
while time.monotonic() < end:
    try:
        save_document(path, TextDocument(text))
        saves += 1
    except FileError as error:
        failures.append(str(error))
print(saves, len(failures), failures[:1])
"""


def test_two_redrafts_saving_notes_and_notes_txt_side_by_side_never_disturb_each_other(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    savers = [
        subprocess.Popen([sys.executable, "-c", SAVER, str(tmp_path / name), letter, "4"], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        for name, letter in (("notes.txt", "t"), ("notes", "n"))
    ]
    outputs = [saver.communicate(timeout=120) for saver in savers]
    for (out, err), saver in zip(outputs, savers, strict=True):
        assert saver.returncode == 0, err
        saves, failed, first = out.split(" ", 2)
        assert int(saves) > 0 and failed == "0", first
    assert (tmp_path / "notes.txt").read_text() == "t" * 200000 and (tmp_path / "notes").read_text() == "n" * 200000
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(TEMP_SUFFIX)] == []


@pytest.fixture()
def strace() -> Iterator[str]:
    if shutil.which("strace") is None or sys.platform != "linux":
        pytest.skip("needs strace to watch the system calls")
    probe = subprocess.run(["strace", "-o", os.devnull, "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"strace cannot trace here: {probe.stderr.decode().strip()}")
    yield "strace"


WRITERS = {
    "a save": "from app.documents.fileio import TextDocument, save_document; "
    "save_document(path, TextDocument('words'))",
    "a recovery record": "from app.documents.recovery import write_atomically; write_atomically(path, b'words')",
}


@pytest.mark.parametrize("writer", WRITERS)
def test_the_folder_is_flushed_after_the_rename(tmp_path: Path, strace: str, writer: str) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    log = tmp_path / "calls.log"
    script = f"import sys; from pathlib import Path; path = Path(sys.argv[1]); {WRITERS[writer]}"
    subprocess.run([strace, "-f", "-e", "trace=openat,fsync,rename,renameat,renameat2,close", "-o", str(log),
                    sys.executable, "-c", script, str(folder / "chapter.md")], check=True, cwd=ROOT,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    calls = [line.split(None, 1)[1] for line in log.read_text().splitlines() if " " in line]
    renamed = next(i for i, call in enumerate(calls) if call.startswith("rename") and 'chapter.md"' in call)
    opened = [i for i, call in enumerate(calls) if i > renamed and call.startswith("openat")
              and f'"{folder}"' in call and "O_DIRECTORY" in call]  # fmt: skip
    assert opened, "the folder is not opened after the rename"
    handle = re.search(r"= (\d+)$", calls[opened[0]])
    assert handle is not None
    assert any(call.startswith(f"fsync({handle.group(1)})") for call in calls[opened[0] + 1 :])


def test_a_reread_file_keeps_its_bytes_through_read_document(tmp_path: Path) -> None:
    path = tmp_path / "utf16.txt"
    data = TEXT.replace("\n", "\r\n").encode("utf-16-be")
    path.write_bytes(data)
    document = read_document(path)
    save_document(path, document)
    assert path.read_bytes() == data

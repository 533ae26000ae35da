"""Property-based fuzzing of the Word and OpenDocument readers: LibreOffice's files (tests/fixtures) with one
part damaged at random (an attribute's value swapped for anything, the part cut short, bytes spliced in, the
part replaced). Each opens as text or is refused in words (``FileError``): never another exception, never
more text than the file could hold. The counts are printed in the run's summary."""

from __future__ import annotations

import io
import re
import zipfile
from collections import Counter
from pathlib import Path

from figures import FIGURES
from hypothesis import given, settings
from hypothesis import strategies as st

from app.documents.fileio import FileError
from app.documents.odf_import import read_odf_text
from app.documents.word_import import read_word_document

FIXTURES = Path(__file__).parent / "fixtures"
FILES = {
    "docx": (FIXTURES / "lighthouse-libreoffice.docx", ("word/document.xml", "word/styles.xml", "word/numbering.xml",
                                                        "_rels/.rels", "word/_rels/document.xml.rels")),
    "odt": (FIXTURES / "lighthouse-libreoffice.odt", ("content.xml", "styles.xml", "META-INF/manifest.xml",
                                                      "mimetype")),
}  # fmt: skip
ATTRIBUTE = re.compile(rb'="[^"]*"')
counts: Counter[str] = Counter()
values = st.one_of(st.integers(-(2**40), 2**40).map(str), st.text(max_size=8), st.sampled_from(["", "x", "1e9"]))


@st.composite
def damaged(draw: st.DrawFn) -> tuple[str, bytes]:
    kind = draw(st.sampled_from(sorted(FILES)))
    path, parts = FILES[kind]
    part = draw(st.sampled_from(parts))
    with zipfile.ZipFile(path) as package:
        members = {name: package.read(name) for name in package.namelist()}
    data = members.get(part, b"")
    how = draw(st.sampled_from(["attribute", "cut", "splice", "replace"]))
    if how == "attribute" and ATTRIBUTE.search(data):
        spots = list(ATTRIBUTE.finditer(data))
        spot = spots[draw(st.integers(0, len(spots) - 1))]
        value = draw(values).encode("utf-8", "surrogatepass").replace(b'"', b"&quot;").replace(b"<", b"&lt;")
        data = data[: spot.start()] + b'="' + value + b'"' + data[spot.end() :]
    elif how == "cut":
        data = data[: draw(st.integers(0, len(data)))]
    elif how == "splice":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(max_size=24)) + data[at:]
    else:
        data = draw(st.binary(max_size=64))
    members[part] = data
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        for name, content in members.items():
            package.writestr(name, content)
    return kind, buffer.getvalue()


@settings(max_examples=300, deadline=None)
@given(case=damaged(), accept_changes=st.booleans())
def test_a_damaged_document_opens_or_is_refused_in_words(case: tuple[str, bytes], accept_changes: bool,
                                                         tmp_path_factory) -> None:  # fmt: skip
    kind, data = case
    path = tmp_path_factory.mktemp("damaged") / f"manuscript.{kind}"
    path.write_bytes(data)
    counts[kind] += 1
    try:
        imported = (read_word_document if kind == "docx" else read_odf_text)(path, accept_changes)
    except FileError as error:
        assert str(error) and "Traceback" not in str(error)
        counts["refused"] += 1
    else:
        assert len(imported.text) < 20_000  # the story is 400 characters; a number read as a size went no further
    FIGURES["documents fuzzed"] = (
        f"{counts['docx']} damaged Word documents and {counts['odt']} OpenDocument texts "
        f"({counts['refused']} refused in words, the rest opened); nothing else raised"
    )

"""Opening a Word 97–2003 document (app/documents/doc_import.py): LibreOffice's own .doc files read as the same
Markdown as the .odt or .docx they were saved from (tracked changes with their authors, comments, footnotes,
lists, tables, links, headings by their built-in style, Unicode beyond the Basic Multilingual Plane); damaged,
hostile and mistaken files are refused in words, never with another exception."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from figures import FIGURES
from hypothesis import given, settings
from hypothesis import strategies as st
from test_odf_import import FIXTURES, STORY

from app.documents.compound_file import CompoundFile
from app.documents.critic_markup import reviewed, settle
from app.documents.doc_binary import Style
from app.documents.doc_import import ParagraphProperties, is_doc_file, paragraph_of, read_doc
from app.documents.fileio import FileError
from app.documents.markdown_blocks import OLE_MAGIC, UnreadableDocument, field_link
from app.documents.odf_import import read_odf_text
from app.documents.word_import import read_word_document

RETURNED = FIXTURES / "returned-libreoffice.doc"


def word_stream_at(data: bytes) -> int:
    """Where the WordDocument stream starts in a fixture (in one piece: LibreOffice writes its sectors in order)."""
    stream = CompoundFile(data).stream("WordDocument")
    assert stream is not None
    return data.index(stream[:64])


def test_libreoffices_doc_reads_as_the_story_it_was_saved_from() -> None:
    imported = read_doc(FIXTURES / "lighthouse-libreoffice.doc")
    assert imported.text == STORY and imported.notes == ()


def test_an_editors_return_reads_as_its_odt_both_ways() -> None:
    for accepted in (True, False):
        from_doc = read_doc(RETURNED, accept_changes=accepted)
        from_odt = read_odf_text(FIXTURES / "returned-libreoffice.odt", accept_changes=accepted)
        assert replace(from_doc, revisions=()) == replace(from_odt, revisions=())
        assert [(r.inserted, r.author, r.words.strip()) for r in from_doc.revisions] == \
            [(False, "Maya", "slowly"), (True, "Maya", "quickly")]  # fmt: skip
    assert read_doc(RETURNED).text == (
        "# The Lighthouse\n\nThe keeper quickly climbed the stairs <!-- Maya: Every single one? -->every evening.\n\n"
        "He kept the log[^1] because the sea was easier to bear — written down.\n\n"
        "[^1]: His father had kept it too.\n"
    )
    assert read_doc(RETURNED, accept_changes=False).text.startswith("# The Lighthouse\n\nThe keeper slowly climbed")


def test_two_editors_changes_keep_their_authors_as_the_docx_they_came_from() -> None:
    for accepted in (True, False):
        from_doc = read_doc(FIXTURES / "two-editors-libreoffice.doc", accept_changes=accepted)
        from_docx = read_word_document(FIXTURES / "two-editors-redraft.docx", accept_changes=accepted)
        assert from_doc == from_docx
    assert [(r.inserted, r.author) for r in from_doc.revisions] == [
        (False, "Maya Jones"), (True, "Maya Jones"), (True, "Ed Park"), (False, "Ed Park"), (True, "Maya Jones"),
        (True, "Ed Park"),
    ]  # fmt: skip
    assert from_doc.notes[0].endswith("(4 insertions, 2 deletions, by Maya Jones and Ed Park)")


def test_whole_paragraphs_added_and_taken_out_review_as_they_were_marked() -> None:
    """Export as Word Document (Keep Tracked) of the text below, saved as .doc by LibreOffice: the paragraph
    marks tracked with their words, so Review Each marks the paragraphs whole, each by whoever made it."""
    marked = ("# The Lighthouse\n\nThe keeper climbed.{++\n\nA new paragraph, by Ed.++}{>>Ed<<}\n\nHe lit the lamp."
              "{--\n\nA paragraph taken out.--}{>>Maya<<}\n\nThe end{++ came++}{>>Ed<<}.\n")  # fmt: skip
    path = FIXTURES / "paragraphs-libreoffice.doc"
    accepted, before = read_doc(path), read_doc(path, accept_changes=False)
    assert accepted.text == settle(marked, accept=True) and before.text == settle(marked, accept=False)
    review = reviewed(accepted, before)
    assert review is not None and review.text == marked


def test_title_contents_headings_unicode_hidden_text_lists_quote_breaks_pictures_styles_and_links() -> None:
    imported = read_doc(FIXTURES / "features-libreoffice.doc")
    assert imported.text == (
        "# Tales of the Coast\n\nThe beginning\t1\n\nDeeper\t2\n\n## Ἀρχή: the beginning\n\n"  # its contents: no links
        "Snow fell on 東京 and on the café 🙂; the keeper wrote *a\\*b* \\<tag> and \\`x\\`.\n\n"  # "secret" hidden
        "Line one\\\nline two\n\n1. Three\n2. Four\n\n- Dot\n\n> Be brief.\n\n#### Deeper\n\n"
        "After the break.\n\nA picture:\n\nA **strong** word and an *emphasised* one.\n\n"
        "See [the map](https://example.org/map).\n\nThe end.\n"
    )
    assert imported.notes == ("1 picture left out",)


def test_which_files_are_for_the_doc_reader(tmp_path: Path) -> None:
    zipped = tmp_path / "renamed.doc"
    zipped.write_bytes((FIXTURES / "lighthouse-libreoffice.docx").read_bytes())
    ole = tmp_path / "manuscript"
    ole.write_bytes(RETURNED.read_bytes())
    assert is_doc_file(RETURNED) and is_doc_file(ole) and is_doc_file(tmp_path / "missing.doc")
    assert not is_doc_file(zipped) and not is_doc_file(FIXTURES / "lighthouse-libreoffice.odt")


def renamed_stream(data: bytes, old: str, new: str) -> bytes:
    """The compound file with its directory entry ``old`` renamed ``new`` (its length field too)."""
    at = data.index(old.encode("utf-16-le") + b"\0\0")
    name = new.encode("utf-16-le") + b"\0\0"
    entry = bytearray(data[at : at + 128])
    entry[:64] = name.ljust(64, b"\0")
    entry[0x40:0x42] = len(name).to_bytes(2, "little")
    return data[:at] + bytes(entry) + data[at + 128 :]


def patched(data: bytes, at: int, value: bytes) -> bytes:
    return data[:at] + value + data[at + len(value) :]


def fat_loop(data: bytes) -> bytes:
    """The directory's sector chain, in the file allocation table, made to go round: it never ends."""
    fat_sector = int.from_bytes(data[0x4C:0x50], "little")
    directory = int.from_bytes(data[0x30:0x34], "little")
    return patched(data, (fat_sector + 1) * 512 + 4 * directory, directory.to_bytes(4, "little"))


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda data: b"just some words", "not a Word 97–2003 document"),
        (lambda data: (FIXTURES / "lighthouse-libreoffice.docx").read_bytes(), "rename it to .docx"),
        (lambda data: (FIXTURES / "returned-libreoffice.rtf").read_bytes(), "rename it to .rtf"),
        (lambda data: OLE_MAGIC + b"\0" * 600, "compound file structure"),
        (lambda data: data[: len(data) // 2], "damaged"),
        (fat_loop, "damaged"),
        (lambda data: renamed_stream(data, "WordDocument", "Workbook"), "an Office file of another kind"),
        (lambda data: renamed_stream(data, "WordDocument", "EncryptedPackage"), "protected with a password"),
        (lambda data: patched(data, word_stream_at(data) + 2, (104).to_bytes(2, "little")), "Word 6 or Word 95"),
        (lambda data: patched(data, word_stream_at(data) + 0x0B, bytes([data[word_stream_at(data) + 0x0B] | 1])),
         "protected with a password"),
        (lambda data: renamed_stream(data, "1Table", "2Table"), "its 1Table stream is missing"),
    ],
)
def test_damaged_hostile_and_mistaken_files_are_refused_in_words(tmp_path: Path, make, said: str) -> None:
    path = tmp_path / "manuscript.doc"
    path.write_bytes(make(RETURNED.read_bytes()))
    with pytest.raises(UnreadableDocument, match=said):
        read_doc(path)


def test_a_file_that_cannot_be_read_says_what_the_disk_said(tmp_path: Path) -> None:
    with pytest.raises(FileError, match="No such file"):
        read_doc(tmp_path / "gone.doc")


counts: Counter[str] = Counter()


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["lighthouse-libreoffice.doc", "returned-libreoffice.doc", "features-libreoffice.doc"]),
       st.lists(st.tuples(st.integers(0, 2**20), st.binary(min_size=1, max_size=8)), min_size=1, max_size=6),
       st.booleans(), st.data())  # fmt: skip
def test_damaged_doc_reads_or_is_refused_in_words(tmp_path_factory, name: str, spots, cut: bool, data) -> None:
    """Bytes overwritten anywhere (the header, the directory, the FIB, the piece table, the formatting pages, the
    text), or the file cut short: it opens as text no longer than the file could hold, or is refused in words."""
    original = (FIXTURES / name).read_bytes()
    damaged = bytearray(original)
    for at, value in spots:
        at %= len(damaged)
        damaged[at : at + len(value)] = value[: len(damaged) - at]
    if cut:
        damaged = damaged[: data.draw(st.integers(0, len(damaged)))]
    path = tmp_path_factory.mktemp("fuzz") / name
    path.write_bytes(bytes(damaged))
    try:
        imported = read_doc(path)
    except FileError:
        counts["refused in words"] += 1
        return
    counts["read"] += 1
    assert len(imported.text) <= 4 * len(original)
    FIGURES["damaged .doc files"] = f"{counts['read']} read, {counts['refused in words']} refused in words"


def test_a_paragraph_takes_its_list_and_outline_from_its_style_unless_it_says_otherwise() -> None:
    """Word's List Bullet and List Number number by their style, and a custom style can carry an outline level:
    the style's paragraph properties, over its base's, under the paragraph's own."""
    numbered = (0x460B).to_bytes(2, "little") + (3).to_bytes(2, "little")  # sprmPIlfo 3: the third list
    outline = (0x2640).to_bytes(2, "little") + bytes([1])  # sprmPOutLvl 1: a second-level heading
    not_listed = (0x460B).to_bytes(2, "little") + (0).to_bytes(2, "little")
    styles = [
        Style("normal", 0),
        Style("list number", 4094, base=0, paragraph=numbered),
        Style("chapter part", 4094, base=3, paragraph=outline),
        Style("looped", 4094, base=2),  # a damaged file: bases that go round
    ]

    def of(istd: int, own: bytes = b"") -> ParagraphProperties:
        return paragraph_of(istd.to_bytes(2, "little") + own, styles)

    assert of(1).list_entry == 3 and of(1).style == 1
    assert of(1, not_listed).list_entry == 0  # the paragraph's own word is last
    assert of(2).outline == 1 and of(2).list_entry == 0
    assert of(0) == ParagraphProperties()


@pytest.mark.parametrize(
    ("instruction", "address"),
    [
        (' HYPERLINK "https://example.org/log?a=1" ', "https://example.org/log?a=1"),
        ('HYPERLINK "http://x" \\o "a tip"', "http://x"),
        ('HYPERLINK \\o "a tip" "http://y"', "http://y"),
        ("HYPERLINK http://z", "http://z"),
        (' hyperlink "mailto:ed@example.org"', "mailto:ed@example.org"),
        ('HYPERLINK \\l "_Toc12"', ""),  # a table of contents' entry: within the document
        ('HYPERLINK "#top"', ""),
        ("PAGEREF _Toc1 \\h", ""),
        ("", ""),
    ],
)
def test_a_fields_link_is_its_address_outside_the_document(instruction: str, address: str) -> None:
    assert field_link(instruction) == address

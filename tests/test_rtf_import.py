"""Opening an RTF file (app/documents/rtf_import.py): LibreOffice's own RTF reads as the same Markdown as the
.odt it was saved from, tracked changes, comments and footnotes included; TextEdit's and Word's ways of writing
it (code pages, Unicode, lists, pictures) read too; damaged and hostile files are refused in words."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_odf_import import FIXTURES, STORY

from app.documents.fileio import FileError
from app.documents.markdown_blocks import UnreadableDocument
from app.documents.odf_import import read_odf_text
from app.documents.rtf_import import is_rtf, read_rtf


def rtf(tmp_path: Path, source: str, name: str = "story.rtf") -> Path:
    path = tmp_path / name
    path.write_bytes(source.encode("latin-1"))
    return path


def test_libreoffices_rtf_reads_as_the_story_it_was_saved_from() -> None:
    imported = read_rtf(FIXTURES / "lighthouse-libreoffice.rtf")
    assert imported.text == STORY and imported.notes == ()


def test_an_editors_return_reads_as_its_odt_both_ways() -> None:
    for accepted in (True, False):
        from_rtf = read_rtf(FIXTURES / "returned-libreoffice.rtf", accept_changes=accepted)
        from_odt = read_odf_text(FIXTURES / "returned-libreoffice.odt", accept_changes=accepted)
        assert replace(from_rtf, revisions=()) == replace(from_odt, revisions=())
        # Each change, whose and what it says, for Review Each to sign; the two formats space a deletion apart.
        assert [(r.inserted, r.author, r.words.strip()) for r in from_rtf.revisions] == \
            [(r.inserted, r.author, r.words.strip()) for r in from_odt.revisions] == \
            [(False, "Maya", "slowly"), (True, "Maya", "quickly")]  # fmt: skip
    accepted_text = read_rtf(FIXTURES / "returned-libreoffice.rtf").text
    assert accepted_text == (
        "# The Lighthouse\n\nThe keeper quickly climbed the stairs <!-- Maya: Every single one? -->every evening.\n\n"
        "He kept the log[^1] because the sea was easier to bear — written down.\n\n"
        "[^1]: His father had kept it too.\n"
    )
    assert from_rtf.tracked_changes == 2 and from_rtf.text.startswith("# The Lighthouse\n\nThe keeper slowly climbed")
    assert from_rtf.notes[0].endswith("(1 insertion, 1 deletion, by Maya)")  # the revision table's name


def test_textedits_rtf_its_code_page_unicode_and_backslash_paragraphs(tmp_path: Path) -> None:
    # As macOS TextEdit writes it: Cocoa's header, a bold font of its own, \uc0 Unicode, a backslash at each
    # line's end for a paragraph.
    source = (
        "{\\rtf1\\ansi\\ansicpg1252\\cocoartf2761\n\\cocoatextscaling0\\cocoaplatform0{\\fonttbl\\f0\\fswiss"
        "\\fcharset0 Helvetica;\\f1\\fswiss\\fcharset0 Helvetica-Bold;\\f2\\fmodern\\fcharset0 Courier;}\n"
        "{\\colortbl;\\red255\\green255\\blue255;}\n{\\*\\expandedcolortbl;;}\n"
        "\\paperw11900\\paperh16840\\margl1440\\margr1440\\vieww11520\\viewh8400\\viewkind0\n"
        "\\pard\\tx566\\tx1133\\pardirnatural\\partightenfactor0\n\n"
        "\\f0\\fs24 \\cf0 The keeper climbed \\'96 slowly \\uc0\\u8212  the stairs \\'93every\\'94 evening.\\\n"
        "\\\n\\f1\\b Bold\n\\f0\\b0  and \\f2 make\\f0  and \\i slanted\\i0 .\\\n"
        "Caf\\'e9 and an emoji: \\uc0\\u55356 \\u57248 .}"
    )
    imported = read_rtf(rtf(tmp_path, source))
    assert imported.text == (
        "The keeper climbed – slowly — the stairs “every” evening.\n\n**Bold** and `make` and *slanted*.\n\n"
        "Café and an emoji: 🎠.\n"
    )


def test_words_rtf_lists_pictures_hidden_text_and_another_code_page(tmp_path: Path) -> None:
    picture_bytes = "{}\\{{}}"  # raw bytes after \\bin: braces in them are not groups
    source = (
        "{\\rtf1\\ansi\\ansicpg1251\\deff0{\\fonttbl{\\f0\\froman Times New Roman;}{\\f1\\fnil Symbol;}}"
        "{\\stylesheet{\\s0 Normal;}{\\s1\\outlinelevel0 heading 1;}{\\*\\cs10 Default Paragraph Font;}"
        "{\\s2 Block Text;}}"
        "{\\*\\generator Microsoft Word 11;}{\\info{\\title Secret title}{\\author Maya}}"
        "{\\header \\pard\\plain Running head\\par}"
        "\\pard\\plain \\s1 \\'cf\\'f0\\'e8\\'e2\\'e5\\'f2\\par"  # Привет, in Windows' Cyrillic code page
        "\\pard\\plain {\\pntext\\f1\\'b7\\tab}{\\*\\pn\\pnlvlblt{\\pntxtb\\'b7}}\\ls1 first\\par"
        "\\pard\\plain {\\listtext 2.\\tab}\\ls2 second{\\v  hidden}\\par"
        "\\pard\\plain \\s2 Quoted {\\*\\bkmkstart here}words{\\*\\bkmkend here}.\\par"
        # A table of contents' entry: a link within the document (\\l), so no link; a tooltip's switch (\\o).
        "\\pard\\plain {\\field{\\*\\fldinst HYPERLINK \\\\l \"_Toc1\"}{\\fldrslt Chapter One}}\\tab 3\\par"
        "\\pard\\plain {\\field{\\*\\fldinst HYPERLINK \"https://example.org\" \\\\o \"tip\"}{\\fldrslt site}}\\par"
        "\\pard\\plain A {\\pict\\pngblip\\picw10\\pich10 89504e47}picture, "
        f"{{\\*\\shppict{{\\pict\\wmetafile8\\bin7 {picture_bytes}}}}}{{\\nonshppict{{\\pict 00}}}}twice.\\par"
        "\\pard\\plain \\trowd\\cellx1000\\cellx2000\\intbl One\\cell Two | three\\cell\\row"
        "\\pard\\plain After.\\par}"
    )
    imported = read_rtf(rtf(tmp_path, source, "from word.doc.rtf"))
    assert imported.text == (
        "# Привет\n\n- first\n\n2. second\n\n> Quoted words.\n\nChapter One\t3\n\n[site](https://example.org)\n\n"
        "A picture, twice.\n\n"
        "| One | Two \\| three |\n|---|---|\n\nAfter.\n"
    )
    assert imported.notes == ("2 pictures left out",)


def test_a_title_page_is_front_matter(tmp_path: Path) -> None:
    source = (
        "{\\rtf1\\ansi{\\stylesheet{\\s0 Normal;}{\\s1 Title;}{\\s2 Subtitle;}{\\s3 Author;}"
        "{\\s4\\outlinelevel0 heading 1;}}"
        "\\pard\\plain\\s1 The Lighthouse\\par\\pard\\plain\\s2 A novel\\par"
        "\\pard\\plain\\s3 Maya Okafor\\par\\pard\\plain\\s4 One\\par\\pard\\plain Body.\\par}"
    )
    imported = read_rtf(rtf(tmp_path, source, "titled.rtf"))
    front = "---\ntitle: The Lighthouse\nsubtitle: A novel\nauthor: Maya Okafor\n---\n"
    assert imported.text == front + "\n# One\n\nBody.\n"


def test_a_file_that_is_not_rtf_or_is_damaged_says_why_and_never_crashes(tmp_path: Path) -> None:
    with pytest.raises(UnreadableDocument, match="not RTF"):
        read_rtf(rtf(tmp_path, "Just some words with a .rtf name."))
    with pytest.raises(UnreadableDocument, match="nested too deeply"):
        read_rtf(rtf(tmp_path, "{\\rtf1 " + "{" * 5000 + "deep"))
    with pytest.raises(FileError):
        read_rtf(tmp_path / "missing.rtf")
    cut = read_rtf(rtf(tmp_path, "{\\rtf1\\ansi\\ansicpg99999 Cut off \\b mid"))  # no end, an unknown code page
    assert cut.text == "Cut off **mid**\n"
    assert read_rtf(rtf(tmp_path, "{\\rtf1 \\u99999999999 ?\\bin-5 x\\'zz \\}}")).text.endswith("xzz }\n")
    assert is_rtf(tmp_path / "story.rtf") and not is_rtf(tmp_path / "notes.txt")
    named_otherwise = rtf(tmp_path, "{\\rtf1 Hello.}", "from scrivener")
    assert is_rtf(named_otherwise) and read_rtf(named_otherwise).text == "Hello.\n"


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_damaged_rtf_reads_or_is_refused_in_words(tmp_path_factory, data) -> None:
    source = (FIXTURES / "returned-libreoffice.rtf").read_bytes()
    start = data.draw(st.integers(0, len(source) - 1))
    length = data.draw(st.integers(0, 64))
    spliced = data.draw(st.binary(max_size=64))
    path = tmp_path_factory.mktemp("fuzz") / "damaged.rtf"
    path.write_bytes(source[:start] + spliced + source[start + length :])
    try:
        imported = read_rtf(path)
    except UnreadableDocument:
        return
    assert isinstance(imported.text, str)

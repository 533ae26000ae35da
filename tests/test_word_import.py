"""Opening a Word document (app.documents.word_import): what Word's parts say, as the Markdown the editor holds.

Two producers: python-docx, whose blank document is Word's own template (Word's style ids, names and list
styles), and packages written here part by part where a case needs XML that python-docx cannot make (tracked
changes, fields, footnotes, comments, translated style ids, hostile parts)."""

from __future__ import annotations

import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE

from app.documents import markdown_blocks
from app.documents.front_matter import TitlePage, read_front_matter
from app.documents.markdown_blocks import Revision, UnreadableDocument
from app.documents.word_import import is_word_file, read_word_document

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
PACKAGE_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
    'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/officeDocument" Target="word/document.xml"/></Relationships>'
)


def package(path: Path, body: str, **parts: str) -> Path:
    """A .docx of ``body`` (document.xml's body) and any other parts, named as in the zip (``word/styles.xml``
    is passed as ``styles``, ``word/_rels/document.xml.rels`` as ``links``)."""
    names = {"styles": "word/styles.xml", "numbering": "word/numbering.xml", "footnotes": "word/footnotes.xml",
             "comments": "word/comments.xml", "links": "word/_rels/document.xml.rels"}  # fmt: skip
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("_rels/.rels", PACKAGE_RELS)
        zf.writestr("word/document.xml", f'<w:document xmlns:w="{W_NS}" xmlns:r="{R_NS}"><w:body>{body}</w:body>'
                                         "</w:document>")  # fmt: skip
        for key, xml in parts.items():
            zf.writestr(names[key], xml)
    return path


def p(inner: str, properties: str = "") -> str:
    return f"<w:p>{f'<w:pPr>{properties}</w:pPr>' if properties else ''}{inner}</w:p>"


def r(text: str, properties: str = "") -> str:
    formats = f"<w:rPr>{properties}</w:rPr>" if properties else ""
    return f'<w:r>{formats}<w:t xml:space="preserve">{escape(text)}</w:t></w:r>'


def test_a_document_made_from_words_own_template_keeps_its_structure(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("The Lighthouse", level=0)  # the Title style
    document.add_heading("One", level=1)
    body = document.add_paragraph("The keeper ")
    body.add_run("climbed").bold = True
    body.add_run(" the stairs ")
    body.add_run("every").italic = True
    body.add_run(" evening.")
    document.add_paragraph("the lamp", style="List Number")
    document.add_paragraph("the log", style="List Number")
    document.add_paragraph("a pencil", style="List Bullet 2")
    document.add_paragraph("Keep the light.", style="Quote")
    document.add_heading("Two", level=2)
    table = document.add_table(rows=2, cols=2)
    for cell, text in zip(table._cells, ["Tool", "Use", "lamp", "light | heat"], strict=True):
        cell.text = text
    path = tmp_path / "lighthouse.docx"
    document.save(str(path))

    imported = read_word_document(path)

    assert imported.text == (
        "# The Lighthouse\n\n## One\n\nThe keeper **climbed** the stairs *every* evening.\n\n"  # under the Title
        "1. the lamp\n2. the log\n   - a pencil\n\n> Keep the light.\n\n### Two\n\n"
        "| Tool | Use |\n|---|---|\n| lamp | light \\| heat |\n"
    )
    assert imported.notes == ()


def test_a_title_page_under_the_title_is_front_matter_and_the_chapters_keep_their_level(tmp_path: Path) -> None:
    """Title, Subtitle, Author and Date paragraphs, as Pandoc's and Redraft's Word exports write a title page, come
    back as the front matter they were written from, and the Heading 1s stay chapters (an e-book cuts at them)."""
    document = docx.Document()
    for style in ("Author", "Date"):
        document.styles.add_style(style, WD_STYLE_TYPE.PARAGRAPH)
    document.add_heading("The Salt Road: *Book* One", level=0)
    document.add_paragraph("A novel", style="Subtitle")
    document.add_paragraph("Maya Okafor", style="Author")
    document.add_paragraph("Tom Reyes", style="Author")
    document.add_paragraph("2026-12-05", style="Date")
    document.add_heading("One", level=1)
    document.add_paragraph("It began.")
    document.add_paragraph("5 December", style="Date")  # a letter's date further on is the text's
    path = tmp_path / "salt road.docx"
    document.save(str(path))

    imported = read_word_document(path).text

    found = read_front_matter(imported)
    assert found is not None
    assert found.page == TitlePage("The Salt Road: *Book* One", "A novel", ("Maya Okafor", "Tom Reyes"), "2026-12-05")
    assert imported[found.end :] == "\n# One\n\nIt began.\n\n5 December\n"


@pytest.mark.parametrize(
    "opening",
    [
        [("Title", "The Salt Road")],  # a lone Title: the top heading, as before
        [("Title", "The Salt Road"), ("Subtitle", "A novel"), ("Subtitle", "Or, the sea")],  # not one page's
        [("Normal", "Draft 3"), ("Title", "The Salt Road"), ("Subtitle", "A novel")],  # words before the title
    ],
    ids=["lone-title", "two-subtitles", "words-first"],
)
def test_no_title_page_no_front_matter(tmp_path: Path, opening: list[tuple[str, str]]) -> None:
    document = docx.Document()
    for style, words in opening:
        document.add_paragraph(words, style=style)
    document.add_heading("One", level=1)
    path = tmp_path / "draft.docx"
    document.save(str(path))
    imported = read_word_document(path).text
    assert read_front_matter(imported) is None and "# The Salt Road\n\n" in imported and "## One" in imported


def test_hyperlink_fields_are_links_and_a_table_of_contents_entry_is_not(tmp_path: Path) -> None:
    """Word writes some links as fields (documents once .doc, tables of contents): the field's result, linked."""

    def field(instruction: str, result: str) -> str:
        return ('<w:r><w:fldChar w:fldCharType="begin"/></w:r>'
                f'<w:r><w:instrText xml:space="preserve">{escape(instruction)}</w:instrText></w:r>'
                '<w:r><w:fldChar w:fldCharType="separate"/></w:r>' + result
                + '<w:r><w:fldChar w:fldCharType="end"/></w:r>')  # fmt: skip

    body = (
        p(r("See ") + field(' HYPERLINK "https://example.org/log" \\o "the log" ', r("the ") + r("log", "<w:i/>"))
          + r(" and ") + '<w:fldSimple w:instr=\' HYPERLINK "mailto:ed@example.org" \'>' + r("Ed") + "</w:fldSimple>"
          + r("."))
        + p(field(' HYPERLINK \\l "_Toc1" ', r("Chapter One")) + r(" ") + field(" PAGEREF _Toc1 \\h ", r("3")))
    )  # fmt: skip

    imported = read_word_document(package(tmp_path / "linked.docx", body))

    assert imported.text == (
        "See [the *log*](https://example.org/log) and [Ed](mailto:ed@example.org).\n\nChapter One 3\n"
    )


def test_tracked_changes_read_accepted_and_what_is_left_out_is_counted(tmp_path: Path) -> None:
    body = (
        p(r("Kept ") + f'<w:ins w:id="1" w:author="Ed">{r("added ")}</w:ins>'
          f'<w:del w:id="2" w:author="Sam"><w:r><w:delText>removed </w:delText></w:r></w:del>' + r("end."))
        + p(r("Page ") + '<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> PAGE </w:instrText></w:r>'
            '<w:r><w:fldChar w:fldCharType="separate"/></w:r>' + r("7") + '<w:r><w:fldChar w:fldCharType="end"/></w:r>'
            + '<w:fldSimple w:instr=" NUMPAGES ">' + r(" of 9") + "</w:fldSimple>")
        + p(r("Seen") + r(" hidden", "<w:vanish/>") + r(" and noted")
            + '<w:r><w:footnoteReference w:id="2"/></w:r>' + r("."))
        + p(r("A picture: ") + "<w:r><w:drawing/></w:r>" + r("there.")
            + '<w:commentRangeStart w:id="0"/><w:r><w:commentReference w:id="0"/></w:r>')
    )  # fmt: skip
    footnotes = (f'<w:footnotes xmlns:w="{W_NS}"><w:footnote w:type="separator" w:id="-1">{p(r("—"))}'
                 f'</w:footnote><w:footnote w:id="2">{p(r("A note"))}{p(r("in two parts."))}</w:footnote>'
                 "</w:footnotes>")  # fmt: skip
    comments = f'<w:comments xmlns:w="{W_NS}"><w:comment w:id="0" w:author="Ed">{p(r("Why -- here?"))}' \
               f'</w:comment><w:comment w:id="1">{p(r("Cut"))}</w:comment></w:comments>'  # fmt: skip

    imported = read_word_document(package(tmp_path / "edited.docx", body, footnotes=footnotes, comments=comments))

    assert imported.text == (
        "Kept added end.\n\nPage 7 of 9\n\nSeen and noted[^1].\n\nA picture: there.<!-- Ed: Why – here? -->\n\n"
        "[^1]: A note in two parts.\n"
    )
    assert imported.notes == (
        "its tracked changes are shown accepted (1 insertion, 1 deletion, by Ed and Sam)",  # who made them
        "1 comment kept where it was made, as a <!-- … --> note",
        "1 comment, 1 picture left out",  # a comment the text does not refer to
    )
    assert imported.revisions == (Revision(True, "Ed", "added "), Revision(False, "Sam", "removed "))  # whose each is
    before = read_word_document(tmp_path / "edited.docx", accept_changes=False)  # as it was before the changes
    assert before.text.startswith("Kept removed end.\n\nPage 7 of 9") and before.tracked_changes == 2
    assert before.notes[0] == ("its tracked changes are left out: it reads as it was before them "
                               "(1 insertion, 1 deletion, by Ed and Sam)")


def test_headings_by_name_or_outline_level_and_characters_markdown_would_take_as_marks(tmp_path: Path) -> None:
    # German Word: the style's id is translated, its name is not.
    styles = (f'<w:styles xmlns:w="{W_NS}"><w:style w:type="paragraph" w:styleId="berschrift1">'
              '<w:name w:val="heading 1"/></w:style><w:style w:type="paragraph" w:styleId="Code">'
              '<w:name w:val="Source Code"/></w:style></w:styles>')  # fmt: skip
    links = ('<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
             'relationships"><Relationship Id="rId9" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
             'relationships/hyperlink" Target="https://example.org/a_(b)" TargetMode="External"/>'
             "</Relationships>")  # fmt: skip
    body = (
        p(r("Kapitel ") + r("Eins", "<w:b/>"), '<w:pStyle w:val="berschrift1"/>')
        + p(r("Set by hand as a heading"), '<w:outlineLvl w:val="2"/>')
        + p("<w:r><w:tab/></w:r>" + r("# not a heading, *nor* 2 * 3 = 6"))
        + p(r("- a dash, not a list"))
        + p(r("1. not a list either"))
        + p(r("* * *"))
        + p(r("Roses are red,") + "<w:r><w:br/></w:r>" + r("violets ", "<w:i/>") + r("blue.", "<w:i/>"))
        + p(r("Run ") + r("make all", '<w:rFonts w:ascii="Consolas"/>') + r(" and read ")
            + f'<w:hyperlink r:id="rId9">{r("the notes")}</w:hyperlink>' + r(" <b>."))
        + p(r("  if x:"), '<w:pStyle w:val="Code"/>') + p("", '<w:pStyle w:val="Code"/>')
        + p(r("    y()"), '<w:pStyle w:val="Code"/>')
        + p(r("Set in from both margins."), '<w:ind w:left="1440" w:right="720"/>')
        + p(r("Only a first-line indent."), '<w:ind w:firstLine="720"/>')
    )  # fmt: skip

    imported = read_word_document(package(tmp_path / "marks.docx", body, styles=styles, links=links))

    assert imported.text == "\n\n".join([
        "# Kapitel Eins",
        "### Set by hand as a heading",
        "\\# not a heading, \\*nor\\* 2 \\* 3 = 6",
        "\\- a dash, not a list",
        "1\\. not a list either",
        "* * *",  # a scene break stays one (Markdown's rule)
        "Roses are red,\\\n*violets blue.*",
        "Run `make all` and read [the notes](https://example.org/a_(b%29) \\<b>.",
        "```\n  if x:\n\n    y()\n```",
        "> > Set in from both margins.",
        "Only a first-line indent.\n",
    ])  # fmt: skip


def test_lists_count_from_their_own_start_and_nest_under_their_parents_text(tmp_path: Path) -> None:
    numbering = (
        f'<w:numbering xmlns:w="{W_NS}"><w:abstractNum w:abstractNumId="0">'
        '<w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/></w:lvl>'
        '<w:lvl w:ilvl="1"><w:numFmt w:val="bullet"/></w:lvl>'
        '<w:lvl w:ilvl="2"><w:start w:val="1"/><w:numFmt w:val="lowerLetter"/></w:lvl></w:abstractNum>'
        '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>'
        '<w:num w:numId="2"><w:abstractNumId w:val="0"/><w:lvlOverride w:ilvl="0"><w:startOverride w:val="8"/>'
        "</w:lvlOverride></w:num></w:numbering>"
    )

    def item(text: str, num: int, level: int) -> str:
        return p(r(text), f'<w:numPr><w:ilvl w:val="{level}"/><w:numId w:val="{num}"/></w:numPr>')

    body = (item("one", 1, 0) + item("bullet", 1, 1) + item("deep", 1, 2) + item("two", 1, 0) + item("again", 1, 2)
            + item("eight", 2, 0) + item("nine", 2, 0) + p(r("After."))
            + p(r("No list"), '<w:numPr><w:ilvl w:val="0"/><w:numId w:val="0"/></w:numPr>'))  # fmt: skip

    imported = read_word_document(package(tmp_path / "lists.docx", body, numbering=numbering))

    assert imported.text == (
        "1. one\n   - bullet\n     1. deep\n2. two\n   1. again\n\n8. eight\n9. nine\n\nAfter.\n\nNo list\n"
    )


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"just some words, renamed", "not a Word document"),
        (bytes.fromhex("d0cf11e0a1b11ae1") + b"\0" * 512, r"old-format Word document \(\.doc\) or a password"),
    ],
)
def test_files_that_are_not_a_docx_say_what_they_are(tmp_path: Path, content: bytes, said: str) -> None:
    path = tmp_path / "manuscript.docx"
    path.write_bytes(content)
    with pytest.raises(UnreadableDocument, match=said):
        read_word_document(path)


def test_damaged_and_hostile_packages_are_refused_with_the_reason(tmp_path: Path, monkeypatch) -> None:
    broken = package(tmp_path / "broken.docx", "<w:p><w:r><w:t>unclosed</w:r></w:p>")
    with pytest.raises(UnreadableDocument, match=r"damaged \(word/document.xml"):
        read_word_document(broken)
    with zipfile.ZipFile(tmp_path / "empty.docx", "w") as zf:
        zf.writestr("_rels/.rels", PACKAGE_RELS)
    with pytest.raises(UnreadableDocument, match="no document part"):
        read_word_document(tmp_path / "empty.docx")
    laughs = '<!DOCTYPE w:document [<!ENTITY a "ha"><!ENTITY b "&a;&a;&a;">]>'
    with zipfile.ZipFile(tmp_path / "laughs.docx", "w") as zf:
        zf.writestr("word/document.xml", f'{laughs}<w:document xmlns:w="{W_NS}"><w:body><w:p><w:r><w:t>&b;'
                                         "</w:t></w:r></w:p></w:body></w:document>")  # fmt: skip
    with pytest.raises(UnreadableDocument, match="declares entities"):
        read_word_document(tmp_path / "laughs.docx")
    big = package(tmp_path / "big.docx", p(r("word " * 2000)))
    monkeypatch.setattr(markdown_blocks, "MAX_PART_BYTES", 4096)  # a bomb's part, to scale
    with pytest.raises(UnreadableDocument, match="too large to open"):
        read_word_document(big)


def test_which_files_are_read_as_word_documents(tmp_path: Path) -> None:
    docx_named_txt = package(tmp_path / "sent-as.txt", p(r("Hello")))
    assert is_word_file(docx_named_txt)  # a .docx under another name is still read as one
    assert read_word_document(docx_named_txt).text == "Hello\n"
    assert is_word_file(tmp_path / "absent.docx")  # by its name: opening it then says it is missing
    other_zip = tmp_path / "pictures.zip"
    with zipfile.ZipFile(other_zip, "w") as zf:
        zf.writestr("a.txt", "a")
    text = tmp_path / "notes.md"
    text.write_text("# Notes\n")
    assert not is_word_file(other_zip) and not is_word_file(text)


def test_an_editors_comment_stays_where_it_was_made(tmp_path: Path) -> None:
    document = docx.Document()
    paragraph = document.add_paragraph("The keeper climbed the stairs ")
    commented = paragraph.add_run("every evening")
    paragraph.add_run(".")
    document.add_comment(commented, text="Every single one?", author="Maya Editor", initials="ME")
    path = tmp_path / "returned.docx"
    document.save(str(path))

    imported = read_word_document(path)

    assert imported.text == "The keeper climbed the stairs every evening<!-- Maya Editor: Every single one? -->.\n"
    assert imported.notes == ("1 comment kept where it was made, as a <!-- … --> note",)


def test_damaged_numbers_and_nesting_are_read_or_refused_never_a_crash(tmp_path: Path) -> None:
    numbering = (f'<w:numbering xmlns:w="{W_NS}"><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0">'
                 '<w:start w:val="x"/><w:numFmt w:val="decimal"/></w:lvl></w:abstractNum>'
                 '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>')  # fmt: skip
    body = (
        p(r("odd"), '<w:numPr><w:ilvl w:val="deep"/><w:numId w:val="1"/></w:numPr>')
        + p(r("heading?"), '<w:outlineLvl w:val="one"/>')
        + '<w:tbl><w:tr><w:tc><w:tcPr><w:gridSpan w:val="1000000000"/></w:tcPr>' + p(r("wide")) + "</w:tc></w:tr>"
        "</w:tbl>"
    )  # fmt: skip
    imported = read_word_document(package(tmp_path / "odd.docx", body, numbering=numbering))
    assert imported.text.startswith("1. odd\n\nheading?\n\n| wide |")  # defaults where the numbers are nonsense
    assert len(imported.text) < 1000  # a billion columns asked for: Word's 63 at most
    nested = "<w:sdt><w:sdtContent>" * 5000 + p(r("lost")) + "</w:sdtContent></w:sdt>" * 5000
    with pytest.raises(UnreadableDocument, match="nested too deeply"):
        read_word_document(package(tmp_path / "nested.docx", nested))

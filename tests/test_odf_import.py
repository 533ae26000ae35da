"""Opening an OpenDocument text (app.documents.odf_import): LibreOffice's own files (tests/fixtures, made where
LibreOffice runs), and packages written here part by part for what a case needs (tracked changes, comments,
footnotes, hostile parts). The same story from Word and from LibreOffice reads as the same Markdown."""

from __future__ import annotations

import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

from app.documents.markdown_blocks import UnreadableDocument
from app.documents.odf_import import is_odf_text, read_odf_text
from app.documents.word_import import read_word_document

FIXTURES = Path(__file__).parent / "fixtures"
NAMESPACES = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
    'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:dc="http://purl.org/dc/elements/1.1/" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"'
)
STORY = """# The Lighthouse

The keeper **climbed** the stairs *every* evening, ~~twice~~, with [the log](https://example.org/log?a=1).

#1 priority: the lamp \\* not the oil.

## Things to carry

1. the lamp
2. the log
   - a pencil

> Keep the light.

Roses are red,\\
Violets are blue.

* * *

| Tool | Use |
|---|---|
| lamp | *light* |
"""


def odt(path: Path, body: str, automatic: str = "", styles: str = "", manifest: str = "") -> Path:
    """An .odt whose text is ``body``, with automatic styles (content.xml) and named ones (styles.xml)."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        zf.writestr("content.xml", f"<office:document-content {NAMESPACES}><office:automatic-styles>{automatic}"
                                   f"</office:automatic-styles><office:body><office:text>{body}</office:text>"
                                   "</office:body></office:document-content>")  # fmt: skip
        zf.writestr("styles.xml", f"<office:document-styles {NAMESPACES}><office:styles>{styles}</office:styles>"
                                  "</office:document-styles>")  # fmt: skip
        if manifest:
            zf.writestr("META-INF/manifest.xml", manifest)
    return path


def p(inner: str, style: str = "Standard") -> str:
    return f'<text:p text:style-name="{style}">{inner}</text:p>'


def text_style(name: str, properties: str, family: str = "text") -> str:
    return (
        f'<style:style style:name="{name}" style:family="{family}"><style:text-properties {properties}/></style:style>'
    )


def test_libreoffices_own_files_read_as_the_story_they_were_made_from() -> None:
    from_odt = read_odf_text(FIXTURES / "lighthouse-libreoffice.odt")
    from_docx = read_word_document(FIXTURES / "lighthouse-libreoffice.docx")
    assert from_odt.text == STORY and from_odt.notes == ()
    assert from_docx.text == STORY and from_docx.notes == ()


def test_headings_runs_and_what_markdown_would_misread(tmp_path: Path) -> None:
    styles = (
        '<style:style style:name="Heading_20_2" style:display-name="Heading 2" style:family="paragraph"/>'
        '<style:style style:name="Chapter" style:family="paragraph" style:default-outline-level="1"/>'
        '<style:style style:name="Quotations" style:family="paragraph"/>'
        '<style:style style:name="Preformatted_20_Text" style:display-name="Preformatted Text" '
        'style:family="paragraph"/>'
        '<style:style style:name="Emphasis" style:family="text"><style:text-properties fo:font-style="italic"/>'
        "</style:style>"
    )
    automatic = (
        '<style:font-face style:name="Mono" svg:font-family="&apos;Liberation Mono&apos;"/>'
        + text_style("T1", 'fo:font-weight="bold"')
        + text_style("T2", 'style:text-line-through-style="solid"')
        + text_style("T3", 'style:font-name="Mono"')
        + text_style("T4", 'fo:font-style="normal"')
        + '<style:style style:name="P1" style:family="paragraph" style:parent-style-name="Chapter"/>'
        + '<style:style style:name="P2" style:family="paragraph"><style:text-properties fo:font-style="italic"/>'
        "</style:style>"
    )  # fmt: skip
    body = (
        '<text:h text:outline-level="1">Part <text:span text:style-name="T1">One</text:span></text:h>'
        + p("A chapter by its style", "P1")
        + p("Two by name", "Heading_20_2")
        + p('<text:tab/>The   keeper\n  <text:span text:style-name="Emphasis">climbed</text:span>'
            '<text:s text:c="2"/><text:span text:style-name="T2">twice</text:span>, ran '
            '<text:span text:style-name="T3">make</text:span>'
            ' and <text:a xlink:href="https://example.org/">read</text:a>.')
        + p("All of it slanted, <text:span text:style-name=\"T4\">and this too</text:span>", "P2")
        + p("# not a heading, and 2 * 3")
        + p("- a dash")
        + p("Roses,<text:line-break/>violets.")
        + p("Keep the light.", "Quotations")
        + p("  if x:", "Preformatted_20_Text") + p("", "Preformatted_20_Text")
        + p("<text:s text:c=\"4\"/>y()", "Preformatted_20_Text")
        + '<text:table-of-content><text:index-body>' + p("Part One 1") + "</text:index-body></text:table-of-content>"
        + '<text:section text:name="S1">' + p("In a section.") + "</text:section>"
    )  # fmt: skip

    imported = read_odf_text(odt(tmp_path / "marks.odt", body, automatic, styles))

    assert imported.text == "\n\n".join([
        "# Part One",
        "# A chapter by its style",
        "## Two by name",
        "The keeper *climbed*  ~~twice~~, ran `make` and [read](https://example.org/).",
        "*All of it slanted,* and this too",  # the paragraph's own italic, undone in a span
        "\\# not a heading, and 2 \\* 3",
        "\\- a dash",
        "Roses,\\\nviolets.",
        "> Keep the light.",
        "```\n  if x:\n\n    y()\n```",
        "In a section.\n",  # the table of contents left out: the headings are the document's own
    ])  # fmt: skip


def test_a_title_page_is_front_matter_as_pandocs_opendocument_writer_sets_it(tmp_path: Path) -> None:
    styles = "".join(f'<style:style style:name="{name}" style:family="paragraph"/>'
                     for name in ("Title", "Subtitle", "Author", "Date"))  # fmt: skip
    body = (p("The Lighthouse", "Title") + p("A novel", "Subtitle") + p("Maya Okafor", "Author")
            + '<text:h text:outline-level="1">One</text:h>' + p("Body."))  # fmt: skip

    imported = read_odf_text(odt(tmp_path / "titled.odt", body, styles=styles))

    front = "---\ntitle: The Lighthouse\nsubtitle: A novel\nauthor: Maya Okafor\n---\n"
    assert imported.text == front + "\n# One\n\nBody.\n"  # the chapter keeps its level


def test_a_title_is_the_one_top_heading_and_the_headings_sit_under_it(tmp_path: Path) -> None:
    # As LibreOffice 7.4 writes a Word document's Title and Heading 1: a paragraph in its Title style, then a heading.
    styles = '<style:style style:name="Title" style:family="paragraph" style:class="chapter"/>'
    body = (p("The Lighthouse", "Title") + '<text:h text:outline-level="1">One</text:h>' + p("Body.")
            + '<text:h text:outline-level="6">Deepest</text:h>')  # fmt: skip

    imported = read_odf_text(odt(tmp_path / "titled.odt", body, styles=styles))

    assert imported.text == "# The Lighthouse\n\n## One\n\nBody.\n\n###### Deepest\n"  # no seventh level
    untitled = read_odf_text(odt(tmp_path / "untitled.odt", '<text:h text:outline-level="1">One</text:h>'))
    assert untitled.text == "# One\n"


def test_lists_nest_and_a_list_that_continues_another_goes_on_counting(tmp_path: Path) -> None:
    automatic = (
        '<text:list-style style:name="L1"><text:list-level-style-number text:level="1" style:num-format="1"/>'
        '<text:list-level-style-bullet text:level="2" text:bullet-char="•"/>'
        '<text:list-level-style-number text:level="3" text:start-value="3" style:num-format="a"/></text:list-style>'
    )

    def items(*texts: str) -> str:
        return "".join(f"<text:list-item>{t if t.startswith('<') else p(t)}</text:list-item>" for t in texts)

    body = (
        f'<text:list text:style-name="L1">{items("one")}'
        f'<text:list-item>{p("two")}<text:list><text:list-item>{p("bullet")}<text:list>{items("c-th", "d-th")}'
        "</text:list></text:list-item></text:list></text:list-item></text:list>"
        + p("Between.")
        + f'<text:list text:style-name="L1" text:continue-numbering="true">{items("three")}</text:list>'
        + f'<text:list text:style-name="L1">{items("fresh")}</text:list>'
    )  # fmt: skip

    imported = read_odf_text(odt(tmp_path / "lists.odt", body, automatic))

    assert imported.text == (
        "1. one\n2. two\n   - bullet\n     3. c-th\n     4. d-th\n\nBetween.\n\n3. three\n\n1. fresh\n"
    )


def test_tracked_changes_comments_footnotes_and_what_is_left_out(tmp_path: Path) -> None:
    body = (
        '<text:tracked-changes><text:changed-region text:id="c1"><text:insertion/></text:changed-region>'
        # The deleted words keep their own space, as LibreOffice writes them ("slowly " in the fixture).
        f'<text:changed-region text:id="c2"><text:deletion>{p("removed ")}</text:deletion></text:changed-region>'
        "</text:tracked-changes>"
        + p('Kept <text:change-start text:change-id="c1"/>added <text:change-end text:change-id="c1"/>'
            '<text:change text:change-id="c2"/>end.')
        + p('The stairs <office:annotation office:name="a1"><dc:creator>Maya</dc:creator>'
            f"{p('Every -- single one?')}</office:annotation>every evening"
            '<office:annotation-end office:name="a1"/>, and <office:annotation><text:p>Why?</text:p>'
            "</office:annotation>the lamp.")
        + p('Seen<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation>'
            f"<text:note-body>{p('A note')}{p('in two parts.')}</text:note-body></text:note>.")
        + p('A map: <draw:frame draw:name="map"/> and <draw:frame><draw:text-box>'
            f"{p('boxed')}</draw:text-box></draw:frame>there.")
        + f"<table:table><table:table-row><table:table-cell>{p('a')}</table:table-cell><table:table-cell>"
          f"{p(escape('b | c'))}</table:table-cell></table:table-row><table:table-row><table:table-cell "
          f'table:number-columns-spanned="2">{p("wide")}</table:table-cell><table:covered-table-cell/>'
          "</table:table-row></table:table>"
    )  # fmt: skip

    imported = read_odf_text(odt(tmp_path / "returned.odt", body))

    assert imported.text == (
        "Kept added end.\n\n"
        "The stairs every evening<!-- Maya: Every – single one? -->, and <!-- Why? -->the lamp.\n\n"
        "Seen[^1].\n\nA map:  and there.\n\n| a | b \\| c |\n|---|---|\n| wide |  |\n\n[^1]: A note in two parts.\n"
    )
    assert imported.notes == (
        "its tracked changes are shown accepted (1 insertion, 1 deletion)",
        "2 comments kept where they were made, as <!-- … --> notes",
        "1 picture, 1 text box left out",
    )
    before = read_odf_text(tmp_path / "returned.odt", accept_changes=False)  # the insertion out, the deletion back
    assert before.text.startswith("Kept removed end.\n\nThe stairs") and before.tracked_changes == 2


def test_libreoffices_reading_of_our_tracked_word_export_keeps_every_change_and_author() -> None:
    """What LibreOffice made of Export as Word Document (Keep Tracked) of
    "The keeper {--walked--}{>>Maya<<}{++climbed++}{>>Ed<<} up." and a footnote
    "His {--father's --}{>>Ed<<}note, {++kept ++}{>>Maya<<}dry.": each change, its author, its own spaces."""
    path = FIXTURES / "tracked-export-libreoffice.odt"
    accepted, before = read_odf_text(path), read_odf_text(path, accept_changes=False)
    assert accepted.text == (
        "# The Lighthouse\n\nThe keeper climbed up.\n\nHe kept the log[^1].\n\n[^1]: His note, kept dry.\n")
    assert before.text == (  # a deletion put back with its own spaces, not one more ("walked  up")
        "# The Lighthouse\n\nThe keeper walked up.\n\nHe kept the log[^1].\n\n[^1]: His father's note, dry.\n")
    assert [(r.inserted, r.author, r.words.strip()) for r in accepted.revisions] == [
        (False, "Maya", "walked"), (True, "Ed", "climbed"), (False, "Ed", "father's"), (True, "Maya", "kept")]


def test_files_that_cannot_be_read_say_why(tmp_path: Path) -> None:
    not_zip = tmp_path / "novel.odt"
    not_zip.write_text("plain words")
    with pytest.raises(UnreadableDocument, match="not an OpenDocument text"):
        read_odf_text(not_zip)
    locked = odt(tmp_path / "locked.odt", p("x"), manifest='<manifest:manifest xmlns:manifest="urn:oasis:names:tc:'
                 'opendocument:xmlns:manifest:1.0"><manifest:file-entry><manifest:encryption-data/>'
                 "</manifest:file-entry></manifest:manifest>")  # fmt: skip
    with pytest.raises(UnreadableDocument, match="password-protected"):
        read_odf_text(locked)
    with zipfile.ZipFile(tmp_path / "hollow.odt", "w") as zf:
        zf.writestr("mimetype", "application/vnd.oasis.opendocument.text")
    with pytest.raises(UnreadableDocument, match="no content part"):
        read_odf_text(tmp_path / "hollow.odt")
    with pytest.raises(UnreadableDocument, match=r"damaged \(content.xml"):
        read_odf_text(odt(tmp_path / "broken.odt", "<text:p>unclosed"))


def test_an_odt_is_known_by_its_name_or_its_mimetype(tmp_path: Path) -> None:
    renamed = odt(tmp_path / "sent as.zip", p("Hello"))
    assert is_odf_text(renamed) and read_odf_text(renamed).text == "Hello\n"
    assert is_odf_text(tmp_path / "absent.odt")
    with zipfile.ZipFile(tmp_path / "sheet.ods", "w") as zf:
        zf.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
    assert not is_odf_text(tmp_path / "sheet.ods") and not is_odf_text(FIXTURES / "lighthouse-libreoffice.docx")


def test_damaged_numbers_and_nesting_are_read_or_refused_never_a_crash(tmp_path: Path) -> None:
    automatic = '<text:list-style style:name="L1"><text:list-level-style-number text:level="1" text:start-value="y"/>' \
                "</text:list-style>"  # fmt: skip
    body = (
        '<text:h text:outline-level="x">Heading</text:h>'
        + p('a<text:s text:c="1000000000"/>b<text:s text:c="many"/>c')
        + f'<text:list text:style-name="L1"><text:list-item>{p("first")}</text:list-item></text:list>'
    )  # fmt: skip
    imported = read_odf_text(odt(tmp_path / "odd.odt", body, automatic))
    assert imported.text == f"# Heading\n\na{' ' * 1000}b c\n\n1. first\n"  # spaces capped; defaults elsewhere
    nested = '<text:p>' + '<text:span>' * 5000 + "lost" + "</text:span>" * 5000 + "</text:p>"
    with pytest.raises(UnreadableDocument, match="nested too deeply"):
        read_odf_text(odt(tmp_path / "nested.odt", nested))

"""File ▸ Export as PDF… (app/window/pdf_export.py) through the window, read back with pypdf: the pages, the
words on them, the title and the paper, what a pending rewrite exports, and a failed export in words."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from pypdf import PdfReader
from PySide6.QtCore import QLocale
from PySide6.QtGui import QTextDocument
from test_rewrite import finish

from app.dialogs.settings_controls import FOUNDRY, font_box, text_family
from app.documents.markdown_blocks import escape_inline
from app.window.editor_widget import Phase
from app.window.pdf_export import MARGIN_MM, paper_for, read_markdown

BODY = "The keeper counted the steps as his father had done before him, and the lights came on one by one. " * 12
STORY = (
    "# The Lighthouse\n\nThe keeper **climbed** the stairs *every* evening.\n\n- the lamp\n- the log\n\n"
    "> Keep the light.\n\n" + "\n\n".join([BODY] * 8) + "\n"
)


def words_of(path: Path) -> tuple[PdfReader, str]:
    """The PDF, and every word in its pages' text in reading order, out of sight or not, but the page numbers
    below the text."""
    reader = PdfReader(path)
    margin = MARGIN_MM / 25.4 * 72
    lines: list[str] = []

    def visit(text: str, matrix: list[float], text_matrix: list[float], _font: object, _size: float) -> None:
        if text.strip() and text_matrix[5] * matrix[3] + matrix[5] >= margin - 1:
            lines.append(" ".join(text.split()))

    for page in reader.pages:
        page.extract_text(visitor_text=visit)
    return reader, " ".join(lines)


@pytest.mark.parametrize("suffix", [".md", ".txt"])
def test_each_line_is_in_the_pdf_once_where_pages_break(document_window, tmp_path: Path, suffix: str) -> None:
    # Qt drew a paragraph's line before a page break on the next page too (out of sight, but a reader's search
    # and copy found it twice): numbered words show every one once, in order, over the pages.
    paragraphs = [f"Part {i}: " + " ".join(f"w{i}x{j}" for j in range(45 + i % 7)) for i in range(60)]
    source = tmp_path / f"numbered{suffix}"
    source.write_text("# Numbered\n\n- *first* w0 item\n- second\n\n" + "\n\n".join(paragraphs) + "\n", "utf-8")
    window = document_window()
    assert window.open_path(source)
    target = tmp_path / "numbered.pdf"
    assert window.export_to(target)
    reader, words = words_of(target)
    assert len(reader.pages) >= 6
    numbered = re.compile(r"w\d+x\d+|Part \d+")
    assert numbered.findall(words) == numbered.findall(source.read_text("utf-8"))


def test_a_markdown_document_is_typeset_on_pages_without_its_marks(document_window, tmp_path: Path) -> None:
    tmp_path = tmp_path / "writing"  # beside the test's settings folder
    tmp_path.mkdir()
    source = tmp_path / "lighthouse.md"
    source.write_text(STORY, encoding="utf-8")
    window = document_window()
    assert window.open_path(source)
    target = tmp_path / "lighthouse.pdf"
    assert window.export_to(target)
    reader, words = words_of(target)
    assert len(reader.pages) >= 2 and window.statusBar().currentMessage() == (
        f"Exported lighthouse.pdf ({len(reader.pages)} pages)"
    )
    assert reader.metadata.title == "The Lighthouse"  # the first heading, not the file's name
    assert "The Lighthouse The keeper climbed the stairs every evening." in words
    assert "the lamp" in words and "Keep the light." in words
    assert "**" not in words and "# " not in words and "> Keep" not in words
    assert words.count("his father had done before him") == 12 * 8  # every word of the body, over the pages
    assert not window.editor.document().isModified() and window.path == source  # the document is still the .md
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lighthouse.md", "lighthouse.pdf"]  # no temporary left


def test_a_text_file_keeps_its_characters_and_its_name_is_the_title(document_window, tmp_path: Path) -> None:
    source = tmp_path / "notes.txt"
    source.write_text("# not a heading\nA *plain* line with **stars**.\n", encoding="utf-8")
    window = document_window()
    assert window.open_path(source)
    target = tmp_path / "notes.pdf"
    target.write_bytes(b"an older export")
    assert window.export_to(target)
    reader, words = words_of(target)
    assert "# not a heading A *plain* line with **stars**." in words
    assert reader.metadata.title == "notes" and len(reader.pages) == 1
    assert window.statusBar().currentMessage() == "Exported notes.pdf (1 page)"


def test_html_in_markdown_is_printed_as_written_and_loses_nothing(document_window, tmp_path: Path) -> None:
    source = tmp_path / "angles.md"
    source.write_text("He wrote <angle> & <em>this</em> here.\n\n<!-- a note to self -->\n\nThe end.\n", "utf-8")
    window = document_window()
    assert window.open_path(source)
    assert window.export_to(tmp_path / "angles.pdf")
    _, words = words_of(tmp_path / "angles.pdf")
    assert words == "He wrote <angle> & <em>this</em> here. The end."  # Qt's reader dropped all after "<angle>"


def test_paper_is_the_countrys() -> None:
    a4, letter = paper_for(QLocale.Country.Germany), paper_for(QLocale.Country.UnitedStates)
    assert a4.sizePoints().toTuple() == (595, 842) and letter.sizePoints().toTuple() == (612, 792)
    assert paper_for(QLocale.Country.Canada).sizePoints() == letter.sizePoints()


def test_a_pending_rewrite_exports_as_its_original_and_stays_pending(document_window, qtbot, tmp_path) -> None:
    window = document_window()
    editor = window.editor
    start = editor.plain_text().index("climbed the stairs")
    editor.select_range(start, start + len("climbed the stairs"))
    window.rewrite_selection()
    result = finish(qtbot, window)
    assert window.export_to(tmp_path / "draft.pdf")
    _, words = words_of(tmp_path / "draft.pdf")
    assert "The lighthouse keeper climbed the stairs every evening." in words  # as Save would write it
    assert window.run is not None and editor.phase is Phase.REVIEW
    assert result.texts[window.run.candidate] in editor.plain_text()


def test_a_failed_export_says_why_and_leaves_nothing_behind(document_window, tmp_path: Path) -> None:
    window = document_window()
    folder = tmp_path / "writing" / "gone"
    assert not window.export_to(folder / "story.pdf")
    said = window.message_bar.label.text()
    assert said.startswith("Could not save story.pdf: the folder") and "export again" in said, said
    assert not window.message_bar.isHidden() and not window.statusBar().currentMessage().startswith("Exported")
    assert not (tmp_path / "writing").exists()  # no temporary, no folder made


def test_the_texts_typeface_is_the_editors_and_the_pdfs(document_window, tmp_path: Path) -> None:
    window = document_window()
    window.resize(2400, 900)  # wider than the text's column: margins beside it
    default_width = window.editor.viewportMargins().left()
    assert default_width > 0
    window.apply_preferences(replace(window.prefs, font_family="DejaVu Sans Mono"))
    assert window.editor.font().families()[:2] == ["DejaVu Sans Mono", "Charter"]  # the book serifs behind it
    assert window.editor.viewportMargins().left() != default_width  # the column is so many of its characters
    assert window.export_to(tmp_path / "mono.pdf")
    fonts = {str(font["/BaseFont"]) for page in PdfReader(tmp_path / "mono.pdf").pages
             for font in page["/Resources"]["/Font"].values()}  # fmt: skip
    assert any("DejaVuSansMono" in name for name in fonts), fonts
    window.apply_preferences(replace(window.prefs, font_family=""))
    assert window.editor.font().families()[0] == "Charter"


def test_the_font_choice_lists_text_families_once_each(qtbot) -> None:
    box = font_box("A Family Not Installed")
    families = [box.itemData(index) for index in range(box.count())]
    assert families[0] == "" and box.itemText(0).startswith("Book serif")  # the default first
    assert "A Family Not Installed" in families and box.currentData() == "A Family Not Installed"
    assert len(families) == len(set(families)) and not any(FOUNDRY.search(family) for family in families)
    assert all(text_family(family) for family in families[1:] if family != "A Family Not Installed")


def test_pictures_are_on_the_pages_and_missing_ones_named(document_window, tmp_path: Path) -> None:
    from PySide6.QtGui import QColor, QImage

    for name, size in (("map.png", (200, 100)), ("tall.png", (300, 3000))):
        image = QImage(*size, QImage.Format.Format_RGB32)
        image.fill(QColor("teal"))
        assert image.save(str(tmp_path / name))
    text = ("# Pictures\n\nThe map: ![the map](map.png) beside the words.\n\n![tall](tall.png)\n\n"
            "![gone](gone.png) is gone.\n")  # fmt: skip
    window = document_window()
    source = tmp_path / "story.md"
    source.write_text(text, encoding="utf-8")
    assert window.open_path(source) and window.export_to(tmp_path / "story.pdf")
    reader, words = words_of(tmp_path / "story.pdf")
    pictures = [(page_number, image) for page_number, page in enumerate(reader.pages) for image in page.images]
    # Both read pictures drawn, each once; the one taller than a page scaled to fit one, on a page of its own.
    assert [image.image.size for _, image in pictures] == [(200, 100), (300, 3000)]
    assert [page_number for page_number, _ in pictures] == [0, 1] and len(reader.pages) == 2
    assert "The map: beside the words." in words and "[gone.png] is gone." in words
    said = window.message_bar.label.text()
    assert "without 1 picture it could not read (gone.png)" in said, said


def test_footnotes_are_numbered_in_the_text_and_set_as_notes_at_the_end(document_window, tmp_path: Path) -> None:
    from PySide6.QtGui import QTextCharFormat

    from app.window.pdf_export import typeset

    text = ("# Notes test\n\nThe keeper[^a] climbed the stairs[^b], again[^a]. Not one: [^zz].\n\n"
            "[^a]: First note, with *emphasis*.\n[^b]: Second note.\n")  # fmt: skip
    document = typeset(text, markdown=True)
    raised = []
    block = document.begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            if fragment.charFormat().verticalAlignment() == QTextCharFormat.VerticalAlignment.AlignSuperScript:
                raised.append(fragment.text())
            fragments += 1
        block = block.next()
    assert raised == ["1", "2", "3"]  # each reference its number, raised; a label used twice, two notes
    source = tmp_path / "notes.md"
    source.write_text(text, encoding="utf-8")
    window = document_window()
    assert window.open_path(source) and window.export_to(tmp_path / "notes.pdf")
    _reader, words = words_of(tmp_path / "notes.pdf")
    assert "[^a]" not in words and "[^b]" not in words and "[^zz]" in words  # an undefined one stays as written
    notes = words[words.index("Notes", words.index("zz")) :]
    assert re.findall(r"First note, with emphasis|Second note", notes) == [
        "First note, with emphasis", "Second note", "First note, with emphasis",
    ], notes  # fmt: skip


@pytest.mark.parametrize(
    "typed",
    ["_0_ and __init__", "~so~ and ~~struck~~", "snake_case_ names", "a*b* 2~3~4 <b>bold</b>", "\\_still_\\"],
)
def test_a_word_documents_marks_are_its_characters_in_the_exports(qapp, typed: str) -> None:
    """A Word document's literal underscores and tildes came out of the exports as italic and struck words,
    their marks gone: the importers escape them as they escape stars (snake_case left as typed)."""
    document = QTextDocument()
    read_markdown(document, escape_inline(typed))
    assert document.toPlainText() == typed
    fragments = document.firstBlock().begin()
    while not fragments.atEnd():
        style = fragments.fragment().charFormat()
        assert not style.fontItalic() and not style.fontStrikeOut() and style.fontWeight() <= 400
        fragments += 1
    assert escape_inline("snake_case and 2~3") == "snake_case and 2~3"  # inside a word: no mark, no backslash


def test_a_note_not_yet_written_keeps_its_number_and_the_next_its_own() -> None:
    from app.window.pdf_export import typeset

    document = typeset("One.[^1] Two.[^2]\n\n[^1]: \n[^2]: The second note.\n", markdown=True)
    block, items = document.begin(), []
    while block.isValid():
        if block.textList() is not None:
            items.append((block.textList().itemText(block), block.text().strip()))
        block = block.next()
    assert items == [("1.", ""), ("2.", "The second note.")]

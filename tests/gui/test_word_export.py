"""File ▸ Export as Word Document… in a real window: the .docx read back with python-docx, an independent reader
of the format (its paragraphs and their styles, runs, lists, links, tables, page and properties)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import docx
import pytest
from docx.document import Document
from docx.oxml.ns import qn
from PySide6.QtCore import QLocale
from PySide6.QtWidgets import QFileDialog

from app.window.docx_export import DEFAULT_FAMILY, paper_twips, word_language

STORY = """# The Lighthouse

The keeper **climbed** the stairs *every* evening, ~~twice~~, with `the key` and [the log](https://example.org/log?a=1&b=2).
He wrote <angle> & "more" — café 🌊.

## Things to carry

1. the lamp
2. the log
   - a pencil

- [ ] oil
- [x] wick

> Keep the light.

<!-- a note to self -->

```
code line

  indented
```

| Tool | Use |
|------|-----|
| lamp | *light* |

3. three
4. four
"""

WRAPPED = (
    "It was a dark and stormy night; the rain fell in torrents, except at\n"
    "occasional intervals, when it was checked by a violent gust of wind which\n"
    "swept up the streets (for it is in London that our scene lies), rattling\n"
    "along the housetops.\n\nRoses are red,\nViolets are blue.\n\nBell\x07 & <b>\n"
)

FRENCH = (
    "Le gardien montait les marches chaque soir, et il allumait la lampe avant que la nuit ne tombe sur la mer. "
    "Il écrivait dans son journal ce que le vent avait fait pendant la journée, puis il regardait les bateaux qui "
    "rentraient au port. Sa fille lui apportait du pain et des nouvelles du village, et ils parlaient longtemps "
    "de la tempête qui venait.\n"
)


def numbering_of(paragraph: docx.text.paragraph.Paragraph) -> tuple[int, int] | None:
    """(numId, level) of a list item, else None."""
    properties = paragraph._p.pPr
    if properties is None or properties.numPr is None:
        return None
    return int(properties.numPr.numId.val), int(properties.numPr.ilvl.val)


def export(window, tmp_path: Path, name: str, text: str) -> Document:
    source = tmp_path / name
    source.write_text(text, encoding="utf-8")
    assert window.open_path(source)
    target = source.with_suffix(".docx")
    assert window.export_to(target)
    assert window.statusBar().currentMessage() == f"Exported {target.name}"
    assert not window.editor.document().isModified() and window.path == source  # still the writer's file
    return docx.Document(str(target))


def test_a_markdown_document_keeps_its_structure_as_words(document_window, tmp_path: Path) -> None:
    tmp_path = tmp_path / "writing"  # beside the test's settings folder
    tmp_path.mkdir()
    document = export(document_window(), tmp_path, "lighthouse.md", STORY)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lighthouse.docx", "lighthouse.md"]  # no temporary left
    assert document.core_properties.title == "The Lighthouse"
    paragraphs = document.paragraphs
    texts = [p.text for p in paragraphs]
    assert [(p.style.name, p.text) for p in paragraphs if p.style.name.startswith("Heading")] == [
        ("Heading 1", "The Lighthouse"), ("Heading 2", "Things to carry"),
    ]  # fmt: skip
    body = paragraphs[1]
    formats = {run.text: (run.bold, run.italic, run.font.strike, run.font.name) for run in body.runs}
    assert formats["climbed"][0] and formats["every"][1] and formats["twice"][2]
    assert formats["the key"][3] == "Courier New"
    assert [(link.text, link.address) for link in body.hyperlinks] == [("the log", "https://example.org/log?a=1&b=2")]
    # Markdown joins a paragraph's lines; HTML stays the writer's words (Qt's reader lost the rest at "<angle>").
    assert body.text.endswith('. He wrote <angle> & "more" — café 🌊.')
    assert "a note to self" not in "".join(texts)
    items = {p.text: numbering_of(p) for p in paragraphs if numbering_of(p) is not None}
    assert items["the lamp"] == items["the log"] and items["the lamp"][1] == 0
    assert items["a pencil"] == (1, 1)  # bullets, one level in
    assert items["☐ oil"] == items["☑ wick"] == (1, 0)  # a task list's boxes as characters
    assert items["three"] == items["four"] != items["the lamp"]  # a list of its own: Word counts it from its start
    starts = document.part.numbering_part.element.findall(qn("w:num"))
    start_of = {
        int(num.get(qn("w:numId"))): int(num.find(f"{qn('w:lvlOverride')}/{qn('w:startOverride')}").get(qn("w:val")))
        for num in starts
        if num.find(qn("w:lvlOverride")) is not None
    }
    assert start_of[items["the lamp"][0]] == 1 and start_of[items["three"][0]] == 3
    quote = next(p for p in paragraphs if p.text == "Keep the light.")
    assert quote.paragraph_format.left_indent.twips == 720  # set in, as the PDF sets it
    code = [p for p in paragraphs if p.style.name == "Source Code"]
    assert [p.text for p in code] == ["code line", "", "  indented"]  # its blank line kept
    (table,) = document.tables
    assert [[cell.text for cell in row.cells] for row in table.rows] == [["Tool", "Use"], ["lamp", "light"]]
    assert all(run.bold for cell in table.rows[0].cells for run in cell.paragraphs[0].runs)  # the header row
    assert table.rows[1].cells[1].paragraphs[0].runs[0].italic


def test_a_plain_texts_paragraphs_are_joined_where_hand_wrapped(document_window, tmp_path: Path) -> None:
    document = export(document_window(), tmp_path, "night.txt", WRAPPED)
    texts = [p.text for p in document.paragraphs]
    assert texts[0].startswith("It was a dark and stormy night; the rain fell in torrents, except at occasional")
    assert texts[0].endswith("rattling along the housetops.")  # Word wraps it itself
    assert texts[1] == "Roses are red,\nViolets are blue."  # not hand-wrapped: its lines kept
    assert texts[2] == "Bell & <b>" and len(texts) == 3  # a control character XML cannot hold is left out
    assert document.core_properties.title == "night"  # a text file's name
    styles = document.styles.element
    fonts = styles.find(f"{qn('w:docDefaults')}/{qn('w:rPrDefault')}/{qn('w:rPr')}")
    assert fonts.find(qn("w:rFonts")).get(qn("w:ascii")) == DEFAULT_FAMILY
    assert fonts.find(qn("w:sz")).get(qn("w:val")) == "24"  # 12 pt


def test_a_plain_texts_chapter_lines_are_words_headings(document_window, tmp_path: Path) -> None:
    """A novel kept as plain text: its parts and chapters in Word's navigation pane, as a Markdown text's # lines."""
    novel = (
        "PART ONE\n\nCHAPTER I\n\n Introduction\n\nThe Time Traveller (for so it will be convenient to speak of him) "
        "was\nexpounding a recondite matter to us. His grey eyes shone and twinkled,\nand his usually pale face was "
        "flushed and animated.\n\nCHAPTER II.\nThe Period\n\nPart of the crowd moved away.\n"
    )
    document = export(document_window(), tmp_path, "novel.txt", novel)
    assert [(p.style.name, p.text) for p in document.paragraphs] == [
        ("Heading 1", "PART ONE"),
        ("Heading 2", "CHAPTER I\nIntroduction"),  # its title under it, on a line of the heading's own
        ("Normal", "The Time Traveller (for so it will be convenient to speak of him) was expounding a recondite "
                   "matter to us. His grey eyes shone and twinkled, and his usually pale face was flushed and "
                   "animated."),
        ("Heading 2", "CHAPTER II.\nThe Period"),
        ("Normal", "Part of the crowd moved away."),  # prose that starts with a kind of chapter is prose
    ]  # fmt: skip


def test_the_text_is_marked_in_its_language_for_words_spelling(document_window, tmp_path: Path) -> None:
    window = document_window()
    document = export(window, tmp_path, "lettre.txt", FRENCH)
    assert window.spelling.language == "fr"  # read as French when it opened (app/window/spelling.py)
    defaults = document.styles.element.find(f"{qn('w:docDefaults')}/{qn('w:rPrDefault')}/{qn('w:rPr')}")
    assert defaults.find(qn("w:lang")).get(qn("w:val")) == "fr-FR"


def test_the_language_is_in_the_writers_own_country_where_it_can_be() -> None:
    british = QLocale(QLocale.Language.English, QLocale.Country.UnitedKingdom)
    assert word_language("en", british) == word_language("", british) == "en-GB"
    assert word_language("fr", british) == "fr-FR"  # a French text on a British computer
    assert word_language("de", QLocale(QLocale.Language.German, QLocale.Country.Austria)) == "de-AT"
    assert word_language("", QLocale.c()) == "en-US"  # LANG=C: Qt's "C" is no language tag, its words English


def test_the_page_is_the_countrys_and_the_typeface_the_writers(document_window, tmp_path: Path) -> None:
    letter, a4 = paper_twips(QLocale.Country.UnitedStates), paper_twips(QLocale.Country.France)
    assert letter == (12240, 15840) and a4 == (11906, 16838)
    window = document_window()
    window.apply_preferences(replace(window.prefs, font_family="DejaVu Sans"))
    document = export(window, tmp_path, "plain.txt", "One line.\n")
    section = document.sections[0]
    assert (section.page_width.twips, section.page_height.twips) in (letter, a4)
    assert section.left_margin.mm == pytest.approx(25, abs=0.1) == section.bottom_margin.mm
    footer = section.footer.paragraphs[0]._p.xml
    assert "PAGE" in footer  # the page number, centred below
    defaults = document.styles.element.find(f"{qn('w:docDefaults')}/{qn('w:rPrDefault')}/{qn('w:rPr')}")
    assert defaults.find(qn("w:rFonts")).get(qn("w:ascii")) == "DejaVu Sans"


def test_the_file_menu_names_a_docx_and_a_failure_says_why(document_window, tmp_path: Path, monkeypatch) -> None:
    window = document_window()
    assert window.export_word_action in window.menuBar().actions()[0].menu().actions()
    chosen = tmp_path / "for the editor"  # the writer typed no suffix
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_args: (str(chosen), ""))
    assert window.export_word()
    assert docx.Document(str(chosen.with_suffix(".docx"))).paragraphs[0].text.startswith("The lighthouse keeper")
    gone = tmp_path / "gone" / "story.docx"
    assert not window.export_to(gone)
    said = window.message_bar.label.text()
    assert said.startswith("Could not save story.docx: the folder") and "export again" in said, said
    assert not gone.parent.exists()


def test_pictures_beside_the_document_go_in_and_missing_ones_are_named(document_window, tmp_path: Path) -> None:
    from PySide6.QtGui import QColor, QImage

    folder = tmp_path / "images"
    folder.mkdir()

    def picture(name: str, width: int, height: int, kind: str) -> bytes:
        image = QImage(width, height, QImage.Format.Format_RGB32)
        image.fill(QColor("teal"))
        assert image.save(str(folder / name), kind)
        return (folder / name).read_bytes()

    small, wide = picture("map.png", 200, 100, "PNG"), picture("wide.jpg", 3000, 1500, "JPEG")
    picture("old.bmp", 40, 40, "BMP")
    text = ("# Pictures\n\nThe map: ![the map](images/map.png) beside the words.\n\n![wide](images/wide.jpg)\n\n"
            "![old](images/old.bmp)\n\n![gone](images/gone.png) and ![web](https://example.org/x.png)\n")  # fmt: skip
    window = document_window()
    source = tmp_path / "story.md"
    source.write_text(text, encoding="utf-8")
    assert window.open_path(source)
    target = tmp_path / "out" / "story.docx"
    target.parent.mkdir()
    assert window.export_to(target)
    document = docx.Document(str(target))
    shapes = document.inline_shapes
    assert len(shapes) == 3
    # At its own size (a screen's 96 dpi, as Qt saved it), in the paragraph it stood in; the wide one scaled down
    # to the text's width, its shape kept; the BMP as a PNG, which Word shows.
    assert abs(shapes[0].width - 200 * 9525) < 2 * 9525 and abs(shapes[0].height - 100 * 9525) < 2 * 9525
    section = document.sections[0]
    room = section.page_width - section.left_margin - section.right_margin
    assert abs(shapes[1].width - room) <= 635 and abs(shapes[1].height * 2 - shapes[1].width) <= 2 * 635
    parts = [document.part.related_parts[shape._inline.graphic.graphicData.pic.blipFill.blip.embed] for shape in shapes]
    assert parts[0].blob == small and parts[1].blob == wide
    assert [part.content_type for part in parts] == ["image/png", "image/jpeg", "image/png"]
    assert document.paragraphs[1].text.startswith("The map: ") and "beside the words" in document.paragraphs[1].text
    # The two it could not carry: their names mark their places, and the writer is told which.
    assert document.paragraphs[-1].text == "[images/gone.png] and [https://example.org/x.png]"
    said = window.message_bar.label.text()
    assert "without 2 pictures it could not read (images/gone.png, https://example.org/x.png)" in said, said


def test_a_picture_named_by_a_windows_path_is_read_as_a_file_not_a_web_address(qapp, tmp_path: Path) -> None:
    from PySide6.QtGui import QColor, QImage

    from app.window.export_pictures import read_picture

    image = QImage(30, 20, QImage.Format.Format_RGB32)
    image.fill(QColor("teal"))
    name = "C:\\Pictures\\map.png"  # here a file's name (backslashes and all); on Windows its absolute path
    assert image.save(str(tmp_path / name), "PNG")
    picture = read_picture(name, tmp_path)
    assert picture is not None and picture.extension == "png"
    assert read_picture("https://example.org/map.png", tmp_path) is None  # the web: never fetched


def test_markdown_footnotes_become_words_own_footnotes(document_window, tmp_path: Path) -> None:
    from app.documents.word_import import read_word_document

    text = ("The keeper[^a] climbed the stairs[^b], again[^a]. Not one: [^zz].\n\n```\n[^a]: inside code\n```\n\n"
            "[^a]: First note, with *emphasis* and `code`.\n[^b]: Second \\* note.\n"
            "[^unused]: Nobody refers to me.\n")  # fmt: skip
    document = export(document_window(), tmp_path, "notes.md", text)
    body = document.paragraphs[0]
    assert body.text == "The keeper climbed the stairs, again. Not one: [^zz]."  # numbers are Word's to draw
    assert body._p.xml.count("<w:footnoteReference") == 3  # a label used twice: two footnotes, one place each
    assert "[^a]: inside code" in [p.text for p in document.paragraphs]  # code is never a footnote
    assert not any("Nobody" in p.text or "First note" in p.text for p in document.paragraphs)
    footnotes = next(part for part in document.part.package.parts if part.partname == "/word/footnotes.xml")
    xml = footnotes.blob.decode()
    assert xml.count("<w:footnote ") == 5 and "Nobody" not in xml  # Word's two separators, then three notes
    assert "<w:i/>" in xml and "Courier New" in xml and "Second * note." in xml  # formats kept, escapes undone
    assert read_word_document(tmp_path / "notes.docx").text == (
        "The keeper[^1] climbed the stairs[^2], again[^3]. Not one: [^zz].\n\n```\n[^a]: inside code\n```\n\n"
        "[^1]: First note, with *emphasis* and `code`.\n[^2]: Second \\* note.\n"
        "[^3]: First note, with *emphasis* and `code`.\n"
    )  # and back: Word's numbers as the labels


def test_a_picture_alone_with_words_is_a_figure_in_every_export(document_window, tmp_path: Path) -> None:
    import zipfile

    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor, QImage, QTextFormat

    from app.window.export_pictures import FIGURE_PART
    from app.window.pdf_export import typeset

    image = QImage(120, 80, QImage.Format.Format_RGB32)
    image.fill(QColor("teal"))
    assert image.save(str(tmp_path / "bay.png"))
    text = "Before.\n\n![The bay in 1877](bay.png)\n\nIn a line ![inline](bay.png) here.\n\n![](bay.png)\n"
    # Typeset (the PDF's, the e-book's, a copy's): the picture centred, its caption under it in italic.
    document = typeset(text, markdown=True)
    blocks = []
    block = document.begin()
    while block.isValid():
        blocks.append((block.text(), block.blockFormat().property(FIGURE_PART), block.blockFormat().alignment()))
        block = block.next()
    assert [(words, part) for words, part, _ in blocks] == [
        ("Before.", None), ("\ufffc", "Figure"), ("The bay in 1877", "Caption"),
        ("In a line \ufffc here.", None), ("\ufffc", None),  # in a sentence, or no words: no figure
    ]  # fmt: skip
    assert all(align & Qt.AlignmentFlag.AlignHCenter for _, part, align in blocks if part)
    caption = document.findBlockByNumber(2)
    assert caption.begin().fragment().charFormat().fontItalic()
    assert caption.previous().begin().fragment().charFormat().toImageFormat().property(
        QTextFormat.Property.ImageAltText) == "The bay in 1877"
    # Word: Word's Figure and Caption styles, the picture described by its caption for a screen reader.
    word = export(document_window(), tmp_path, "bay.md", text)
    styled = [(paragraph.style.name, paragraph.text) for paragraph in word.paragraphs]
    assert ("Figure", "") in styled and ("Caption", "The bay in 1877") in styled
    assert word.inline_shapes[0]._inline.docPr.get("descr") == "The bay in 1877"
    assert len(word.inline_shapes) == 3  # the one with empty brackets too: Qt's reader dropped it, unsaid
    # The e-book: the same, as classes, and the caption as the picture's alt text.
    window = document_window()
    assert window.open_path(tmp_path / "bay.md") and window.export_to(tmp_path / "bay.epub")
    page = zipfile.ZipFile(tmp_path / "bay.epub").read("OEBPS/text/part0.xhtml").decode()
    assert '<p class="figure"><img src="../images/picture1.png" alt="The bay in 1877"/></p>' in page
    assert '<p class="caption"><em>The bay in 1877</em></p>' in page

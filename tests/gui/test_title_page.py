"""Front matter and the writer's name in the exports (app/window/title_page.py): a Pandoc block at a Markdown text's
top is never printed as words; its title block opens the PDF, the Word document and the e-book, and its title,
authors and language go into each file's properties; the writer's name (Settings ▸ Documents) is the author
where it names none; a text that only opens with a rule keeps every word (Qt would take it for front matter).
The editor shows the block quiet, and Go to Heading skips its YAML comments."""

from __future__ import annotations

import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from PySide6.QtGui import QPalette, QTextCursor
from test_pdf_export import words_of

from app.dialogs.settings import SettingsDialog
from app.documents.front_matter import read_front_matter
from app.settings import Preferences
from app.window.headings import headings

DC = "{http://purl.org/dc/elements/1.1/}"
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
XHTML = "{http://www.w3.org/1999/xhtml}"
FRONT = (
    "---\ntitle: The *Salt* Road\nsubtitle: A novel\nauthor:\n  - Maya Okafor\n  - Tom Reyes\ndate: 2026-12-05\n"
    "lang: en-GB\n# a note to self, not a heading\n---\n\n# Chapter One\n\nThe keeper climbed the stairs.\n"
)
YAML_WORDS = ("subtitle:", "author:", "lang:", "en-GB", "a note to self")


def _exported(document_window: Any, tmp_path: Path, text: str, suffix: str, **overrides: Any) -> Path:
    source = tmp_path / "novel.md"
    source.write_text(text, encoding="utf-8")
    window = document_window(text="", **overrides)
    assert window.open_path(source)
    target = tmp_path / f"novel{suffix}"
    assert window.export_to(target)
    return target


def _docx_paragraphs(path: Path) -> list[tuple[str, str]]:
    """Each paragraph of a .docx's body: its style, its words."""
    body = ElementTree.fromstring(zipfile.ZipFile(path).read("word/document.xml"))
    found = []
    for paragraph in body.iter(f"{W}p"):
        style = paragraph.find(f"{W}pPr/{W}pStyle")
        words = "".join(t.text or "" for t in paragraph.iter(f"{W}t"))
        found.append((style.get(f"{W}val") if style is not None else "", words))
    return found


def test_the_pdf_opens_with_the_title_block_and_names_title_and_authors(document_window, tmp_path: Path) -> None:
    reader, words = words_of(_exported(document_window, tmp_path, FRONT, ".pdf", author_name="Someone Else"))
    assert words.startswith("The Salt Road A novel Maya Okafor Tom Reyes 2026-12-05 Chapter One The keeper")
    assert not any(yaml in words for yaml in YAML_WORDS) and "---" not in words
    assert reader.metadata.title == "The Salt Road"  # the front matter's, not the first heading's
    assert reader.metadata.author == "Maya Okafor, Tom Reyes"  # the front matter's, over the writer's name


def test_the_writers_name_is_the_author_where_no_front_matter_names_one(document_window, tmp_path: Path) -> None:
    plain = "# Chapter One\n\nThe keeper climbed the stairs.\n"
    reader, words = words_of(_exported(document_window, tmp_path, plain, ".pdf", author_name="Maya Okafor"))
    assert reader.metadata.author == "Maya Okafor" and reader.metadata.title == "Chapter One"
    assert words.startswith("Chapter One The keeper")  # no title block where there is no front matter
    (tmp_path / "unnamed").mkdir()
    unnamed = words_of(_exported(document_window, tmp_path / "unnamed", plain, ".pdf", author_name=""))[0]
    assert not unnamed.metadata.author


def test_a_text_that_opens_with_a_rule_keeps_every_word(document_window, tmp_path: Path) -> None:
    # Qt's Markdown reader (6.10 and later) takes any ---…--- at the top for front matter and drops it.
    scene = "---\nThe storm had passed by morning.\n\nThe lamp was out.\n---\n\nThe keeper slept.\n"
    assert words_of(_exported(document_window, tmp_path, scene, ".pdf"))[1] == (
        "The storm had passed by morning. The lamp was out. The keeper slept."
    )
    assert [words for _style, words in _docx_paragraphs(_exported(document_window, tmp_path, scene, ".docx"))
            if words] == ["The storm had passed by morning.", "The lamp was out.", "The keeper slept."]  # fmt: skip


def test_the_word_document_sets_the_block_in_words_styles_and_its_properties(
    document_window, tmp_path: Path
) -> None:
    path = _exported(document_window, tmp_path, FRONT, ".docx", author_name="Someone Else")
    paragraphs = [paragraph for paragraph in _docx_paragraphs(path) if paragraph[1]]
    assert paragraphs == [("Title", "The Salt Road"), ("Subtitle", "A novel"), ("Author", "Maya Okafor"),
                          ("Author", "Tom Reyes"), ("Date", "2026-12-05"), ("Heading1", "Chapter One"),
                          ("", "The keeper climbed the stairs.")]  # fmt: skip
    package = zipfile.ZipFile(path)
    styles = ElementTree.fromstring(package.read("word/styles.xml"))
    defined = {style.get(f"{W}styleId") for style in styles.iter(f"{W}style")}
    assert {"Title", "Subtitle", "Author", "Date"} <= defined  # every style a paragraph names exists
    body = ElementTree.fromstring(package.read("word/document.xml"))
    opening = [p for p in body.iter(f"{W}p") if p.find(f"{W}pPr/{W}pStyle") is not None][:5]
    direct = [mark.tag for p in opening for mark in p.iter() if mark.tag in (f"{W}b", f"{W}i")]
    assert direct == []  # the block's look is its styles' alone: a writer restyling Title in Word sees it follow
    language = next(styles.iter(f"{W}lang")).get(f"{W}val")
    assert language == "en-GB"  # the front matter's lang
    core = ElementTree.fromstring(package.read("docProps/core.xml"))
    assert next(core.iter(f"{DC}title")).text == "The Salt Road"
    assert next(core.iter(f"{DC}creator")).text == "Maya Okafor; Tom Reyes"


def test_the_e_book_names_each_author_and_opens_with_the_title_page(document_window, tmp_path: Path) -> None:
    package = zipfile.ZipFile(_exported(document_window, tmp_path, FRONT, ".epub"))
    opf = ElementTree.fromstring(package.read("OEBPS/content.opf"))
    assert [creator.text for creator in opf.iter(f"{DC}creator")] == ["Maya Okafor", "Tom Reyes"]
    assert next(opf.iter(f"{DC}language")).text == "en-GB"
    assert next(opf.iter(f"{DC}title")).text == "The Salt Road"
    opening = ElementTree.fromstring(package.read("OEBPS/text/part0.xhtml"))
    classes = [(p.get("class"), "".join(p.itertext())) for p in opening.iter(f"{XHTML}p")]
    assert classes == [("title", "The Salt Road"), ("subtitle", "A novel"), ("author", "Maya Okafor"),
                       ("author", "Tom Reyes"), ("date", "2026-12-05")]  # fmt: skip
    assert [e.tag for p in opening.iter(f"{XHTML}p") for e in p.iter() if e.tag != f"{XHTML}p"] == []  # classes'
    book = " ".join("".join(ElementTree.fromstring(package.read(n)).itertext()) for n in package.namelist()
                    if n.startswith("OEBPS/text/"))  # fmt: skip
    assert not any(yaml in book for yaml in YAML_WORDS)
    no_front = zipfile.ZipFile(_exported(document_window, tmp_path, "# One\n\nText.\n", ".epub", author_name="Maya"))
    opf = ElementTree.fromstring(no_front.read("OEBPS/content.opf"))
    assert [creator.text for creator in opf.iter(f"{DC}creator")] == ["Maya"]


def test_the_editor_shows_the_block_quiet_from_its_closing_line_on(document_window, qtbot: Any) -> None:
    window = document_window(text="---\ntitle: Salt\nauthor: Maya\n\n# Chapter\n\nText.\n")
    editor = window.editor
    quiet = editor.palette().color(QPalette.ColorRole.PlaceholderText)

    def ink(line: int) -> Any:
        block = editor.document().findBlockByNumber(line)
        layout_formats = block.layout().formats()
        return layout_formats[0].format.foreground().color() if layout_formats else None

    assert ink(1) != quiet  # no closing line yet: the writer's text
    cursor = QTextCursor(editor.document().findBlockByNumber(2))
    cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)
    cursor.insertText("\n---")  # the block closes: the lines above it turn quiet
    qtbot.waitUntil(lambda: ink(1) == quiet and ink(0) == quiet and ink(3) == quiet)
    assert ink(5) is None or ink(5) != quiet  # the heading after it is a heading again
    cursor.insertText("x")  # "---x" closes nothing: the text is back
    qtbot.waitUntil(lambda: ink(1) != quiet)
    assert headings(editor.toPlainText(), markdown=True)[0].title == "Chapter"


def test_go_to_heading_skips_the_blocks_yaml_comments() -> None:
    found = headings(FRONT, markdown=True)
    assert [heading.title for heading in found] == ["Chapter One"]
    assert FRONT[found[0].position :].startswith("# Chapter One")  # no emoji before it: positions agree
    assert [h.title for h in headings("# a heading\n---\ntitle: x\n---\n", markdown=True)] == ["a heading"]


def test_the_writers_name_is_a_setting_kept_by_restore_defaults(qtbot: Any) -> None:
    dialog = SettingsDialog(replace(Preferences(), author_name="Maya Okafor"))
    qtbot.addWidget(dialog)
    assert dialog.pages["Documents"].isAncestorOf(dialog.author_name)
    dialog.author_name.setText("  Maya   Okafor-Reyes ")
    assert dialog.preferences().author_name == "Maya Okafor-Reyes"  # one line, spaces as one
    dialog.restore_defaults()  # who the writer is is no preference to reset
    assert dialog.preferences().author_name == "Maya Okafor"


def test_the_word_count_leaves_the_front_matter_out(document_window) -> None:
    window = document_window(text=FRONT)
    window._update_counts()
    assert window.counts_label.text().startswith("7 words")  # "Chapter One" (its mark is no word) and five
    window.editor.setPlainText("---\nIntro after a rule.\n---\n\nText.\n")  # no front matter: every word counts
    window._update_counts()
    assert window.counts_label.text().startswith("5 words")  # the rules are no words either


def test_the_word_count_leaves_a_markdown_texts_notes_out(document_window, tmp_path: Path) -> None:
    """Notes, an editor's comments among them, print in no export: the counts leave them out, as Word its comments;
    in a plain text the same signs are the writer's words."""
    text = "The keeper<!-- Ed: which keeper? --> climbed.\n\n<!-- TODO: a storm\nhere -->\nIt held.\n"
    window = document_window(text=text)
    window._update_counts()
    assert window.counts_label.text() == "5 words · 31 characters"
    cursor = window.editor.textCursor()
    cursor.setPosition(0)
    cursor.setPosition(text.index(" climbed"), cursor.MoveMode.KeepAnchor)
    window.editor.setTextCursor(cursor)
    window._update_counts()
    assert window.counts_label.text() == "2 of 5 words · 10 of 31 characters"
    plain = tmp_path / "notes.txt"
    plain.write_text(text, encoding="utf-8")
    assert window.open_path(plain)
    window._update_counts()
    assert window.counts_label.text().startswith("12 words")


def test_a_title_page_comes_back_from_word_as_the_front_matter_it_was(document_window, tmp_path: Path) -> None:
    """The writer's way round: a Markdown novel out to an editor as a Word document, and back into Redraft."""
    exported = _exported(document_window, tmp_path, FRONT, ".docx")
    returned = document_window(text="")
    assert returned.open_path(exported)
    text = returned.editor.plain_text()
    found, sent = read_front_matter(text), read_front_matter(FRONT)
    assert found is not None and sent is not None
    assert found.page == replace(sent.page, language="")  # the language went as Word's, not as a paragraph
    assert text[found.end :].strip() == "# Chapter One\n\nThe keeper climbed the stairs."  # still a chapter

"""File ▸ Open on a Word document in a real window: its words come in as Markdown, the .docx is never written
over, and Export as Word Document gives the same structure back."""

from __future__ import annotations

from pathlib import Path

import docx
import pytest
from PySide6.QtWidgets import QFileDialog

STORY = """# The Lighthouse

The keeper **climbed** the stairs *every* evening, with [the log](https://example.org/log).

## Things to carry

1. the lamp
2. the log
   - a pencil

> Keep the light.

| Tool | Use |
|---|---|
| lamp | *light* |
"""


def structure(path: Path) -> list[tuple[str, str]]:
    """A .docx's paragraphs as Word shows them: (style, text), read by python-docx."""
    return [(paragraph.style.name, paragraph.text) for paragraph in docx.Document(str(path)).paragraphs]


def test_a_word_document_opens_as_markdown_and_is_never_saved_over(document_window, tmp_path, monkeypatch) -> None:
    window = document_window()
    source = tmp_path / "lighthouse.md"
    source.write_text(STORY, encoding="utf-8")
    assert window.open_path(source)
    word = tmp_path / "from the agent.docx"
    assert window.export_to(word)
    exported = word.read_bytes()

    assert window.open_path(word)

    assert window.editor.plain_text() == STORY  # what was exported comes back as it was written
    assert window.path is None and window.imported_from == word
    assert window.windowTitle() == "from the agent.docx (imported)[*] — Redraft"
    said = window.message_bar.label.text()
    assert window.message_bar.isVisible() and "opened from Word as Markdown" in said
    assert "from the agent.md" in said  # where Save will put it
    asked: list[str] = []

    def save_dialog(_parent, _title, suggested, _filters):
        asked.append(suggested)
        return suggested, ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_dialog)
    cursor = window.editor.textCursor()
    cursor.movePosition(cursor.MoveOperation.End)
    cursor.insertText("\nA new line.\n")
    assert window.save()
    assert asked == [str(tmp_path / "from the agent.md")]  # beside the .docx, named as it is
    assert word.read_bytes() == exported  # the Word document untouched
    assert (tmp_path / "from the agent.md").read_text(encoding="utf-8") == STORY + "\nA new line.\n"
    assert window.path == tmp_path / "from the agent.md" and window.imported_from is None
    assert not window.message_bar.isVisible()  # what it said of Save is done

    again = tmp_path / "again.docx"
    assert window.export_to(again)
    assert structure(again)[:-1] == structure(word)  # the same headings, lists, quote and table; one more line
    assert structure(again)[-1] == ("Normal", "A new line.")


def test_exports_of_an_imported_document_are_named_after_it(document_window, tmp_path, monkeypatch) -> None:
    window = document_window()
    word = tmp_path / "chapter.docx"
    document = docx.Document()
    document.add_heading("Chapter One", level=1)
    document.add_paragraph("It begins.")
    document.save(str(word))
    assert window.open_path(word)
    assert window.editor.plain_text() == "# Chapter One\n\nIt begins.\n"
    offered: list[str] = []

    def export_dialog(_parent, _title, suggested, _filters):
        offered.append(suggested)
        return "", ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", export_dialog)
    window.export_pdf()
    window.export_word()
    assert offered == [str(tmp_path / "chapter.pdf"), str(tmp_path / "chapter.docx")]  # the dialog confirms overwrite


def test_a_damaged_word_document_leaves_the_open_text_alone(document_window, tmp_path) -> None:
    window = document_window()
    before = window.editor.plain_text()
    broken = tmp_path / "broken.docx"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    assert not window.open_path(broken)
    said = window.message_bar.label.text()
    assert said.startswith("Could not open broken.docx: the Word document is damaged")
    assert window.editor.plain_text() == before and window.path is None and window.imported_from is None


def test_a_libreoffice_document_opens_the_same_way(document_window, tmp_path, monkeypatch) -> None:
    window = document_window()
    odt = tmp_path / "lighthouse.odt"
    odt.write_bytes((Path(__file__).parents[1] / "fixtures" / "lighthouse-libreoffice.odt").read_bytes())
    assert window.open_path(odt)
    assert window.editor.plain_text().startswith("# The Lighthouse\n\nThe keeper **climbed** the stairs *every*")
    assert window.windowTitle() == "lighthouse.odt (imported)[*] — Redraft"
    assert "lighthouse.odt opened from OpenDocument as Markdown" in window.message_bar.label.text()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda _p, _t, suggested, _f: (suggested, ""))
    assert window.save()
    assert (tmp_path / "lighthouse.md").read_text(encoding="utf-8") == window.editor.plain_text()


def test_f8_goes_through_the_notes_an_editors_comments_became(document_window, tmp_path) -> None:
    window = document_window("One <!-- Maya: why? --> two.\n\nNo note here.\n\nThree <!-- Maya: cut -->.\n")
    editor = window.editor
    assert window.notes.action.shortcut().toString() == "F8"
    assert window.notes.select_next()
    assert editor.textCursor().selectedText() == "<!-- Maya: why? -->"
    assert window.statusBar().currentMessage() == "Note 1 of 2: Delete removes it."
    assert window.notes.select_next()
    assert editor.textCursor().selectedText() == "<!-- Maya: cut -->"
    editor.textCursor().removeSelectedText()  # answered: the writer deletes it
    assert window.notes.select_next()
    assert editor.textCursor().selectedText() == "<!-- Maya: why? -->"  # round again from the top
    assert window.statusBar().currentMessage() == "Note 1 of 1: Delete removes it."
    editor.textCursor().removeSelectedText()
    assert not window.notes.select_next()
    assert window.statusBar().currentMessage().startswith("No notes in the text.")
    assert editor.plain_text() == "One  two.\n\nNo note here.\n\nThree .\n"


def test_ctrl_alt_m_writes_a_note_that_goes_to_word_as_the_writers_comment(document_window, tmp_path,
                                                                             monkeypatch) -> None:  # fmt: skip
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QMessageBox

    window = document_window("The 🗼 keeper climbed the stairs every evening.\n", author_name="Ann Lee")
    editor = window.editor
    start = editor.plain_text().index("every evening") + 1  # Qt counts the lighthouse as two
    editor.select_range(start, start + len("every eveni"))  # the words the note is about, the last in part
    QTest.keyClick(editor, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier)
    marked = "The 🗼 keeper climbed the stairs every evening<!--  -->.\n"  # after the words
    assert editor.plain_text() == marked
    between = editor.textCursor().position()
    assert between == marked.index(" -->") + 1 and not editor.textCursor().hasSelection()
    editor.undo()  # one step
    assert editor.plain_text() == "The 🗼 keeper climbed the stairs every evening.\n"
    editor.redo()
    cursor = editor.textCursor()
    cursor.setPosition(between)
    editor.setTextCursor(cursor)
    QTest.keyClicks(editor, "Every single one?")
    assert editor.plain_text() == "The 🗼 keeper climbed the stairs every evening<!-- Every single one? -->.\n"
    assert window.statusBar().currentMessage().startswith("Type the note.")
    QTest.keyClick(editor, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier)
    assert window.statusBar().currentMessage().startswith("The cursor is inside a note already")
    monkeypatch.setattr(QMessageBox, "question", lambda *_args: QMessageBox.StandardButton.Yes)
    target = tmp_path / "for the editor.docx"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_args: (str(target), ""))
    assert window.export_word()
    sent = docx.Document(str(target))
    assert [(c.author, c.text) for c in sent.comments] == [("Ann Lee", "Every single one?")]
    assert [p.text for p in sent.paragraphs] == ["The 🗼 keeper climbed the stairs every evening."]
    plain = tmp_path / "plain.txt"
    plain.write_text("A plain text.\n", encoding="utf-8")
    assert window.open_path(plain)
    assert not window.notes.write_new()
    assert window.statusBar().currentMessage().startswith("Notes are Markdown's")
    assert editor.plain_text() == "A plain text.\n"


def test_an_editors_comments_go_back_to_word_as_comments_when_asked(document_window, tmp_path, monkeypatch) -> None:
    from PySide6.QtWidgets import QMessageBox

    returned = tmp_path / "returned.docx"
    document = docx.Document()
    paragraph = document.add_paragraph("The keeper climbed the stairs ")
    commented = paragraph.add_run("every evening")
    paragraph.add_run(".")
    document.add_comment(commented, text="Every single one?", author="Maya Editor", initials="ME")
    document.save(str(returned))
    window = document_window(author_name="Ann Lee")  # Settings ▸ Documents: the writer's name
    assert window.open_path(returned)
    assert window.editor.plain_text() == "The keeper climbed the stairs every evening<!-- Maya Editor: Every single " \
                                         "one? -->.\n"  # fmt: skip
    cursor = window.editor.textCursor()
    cursor.movePosition(cursor.MoveOperation.End)
    cursor.insertText("\n<!-- my own reminder, on its own line -->\n\nHe lit the lamp.<!-- every one of them -->\n")
    questions: list[str] = []
    answers = iter([QMessageBox.StandardButton.Yes, QMessageBox.StandardButton.No])

    def ask(_parent, _title, text, *_buttons):
        questions.append(text)
        return next(answers)

    targets = iter([tmp_path / "with comments.docx", tmp_path / "without.docx"])
    monkeypatch.setattr(QMessageBox, "question", ask)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_args: (str(next(targets)), ""))
    assert window.export_word() and window.export_word()
    assert questions[0].startswith("This text has 2 notes (<!-- … -->)")  # the line of its own is not one

    kept = docx.Document(str(tmp_path / "with comments.docx"))
    assert [(c.author, c.initials, c.text) for c in kept.comments] == [
        ("Maya Editor", "ME", "Every single one?"), ("Ann Lee", "AL", "every one of them"),  # no name: the writer's
    ]  # fmt: skip
    assert [p.text for p in kept.paragraphs] == ["The keeper climbed the stairs every evening.", "He lit the lamp."]
    assert "commentReference" in kept.paragraphs[0]._p.xml  # anchored in its paragraph
    left = docx.Document(str(tmp_path / "without.docx"))
    assert list(left.comments) == [] and [p.text for p in left.paragraphs] == [p.text for p in kept.paragraphs]
    assert window.open_path(tmp_path / "with comments.docx")  # and round again: the notes as they were
    assert window.editor.plain_text() == (
        "The keeper climbed the stairs every evening<!-- Maya Editor: Every single one? -->.\n\n"
        "He lit the lamp.<!-- Ann Lee: every one of them -->\n"
    )


def test_a_note_that_names_no_one_is_redrafts_where_the_writer_has_no_name() -> None:
    from app.window.docx_comments import Comments

    for writer, signed in (("", "Redraft"), ("  ", "Redraft"), ("Jo March", "Jo March")):
        comments = Comments(writer)
        comments.mark("One<!-- TODO: check --> two<!-- Maya: why? --> three<!-- plain -->.")
        assert comments.notes == [(signed, "TODO: check"), ("Maya", "why?"), (signed, "plain")]


def edited_docx(path: Path) -> Path:
    """A Word document with two tracked changes by Maya: "slowly " deleted, "quickly " inserted."""
    document = docx.Document()
    paragraph = document.add_paragraph("The keeper ")
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    paragraph._p.append(docx.oxml.parse_xml(
        f'<w:del xmlns:w="{w}" w:id="1" w:author="Maya"><w:r><w:delText>slowly </w:delText></w:r></w:del>'))
    paragraph._p.append(docx.oxml.parse_xml(
        f'<w:ins xmlns:w="{w}" w:id="2" w:author="Maya"><w:r><w:t xml:space="preserve">quickly </w:t></w:r></w:ins>'))
    paragraph.add_run("climbed.")
    document.save(str(path))
    return path


def answering(monkeypatch, *answers: str) -> list[str]:
    """Answer each tracked-changes question with the button named next (None: Enter, the default button);
    the questions asked, in order."""
    from PySide6.QtWidgets import QMessageBox

    asked: list[str] = []
    queue = iter(answers)

    def exec_(box: QMessageBox) -> int:
        asked.append(box.text())
        name = next(queue)
        button = box.defaultButton() if name is None else next(b for b in box.buttons() if b.text() == name)
        button.click()
        return 0

    monkeypatch.setattr(QMessageBox, "exec", exec_)
    return asked


def test_tracked_changes_open_for_review_accepted_or_as_the_text_was_before_them(document_window, tmp_path,
                                                                                 monkeypatch) -> None:  # fmt: skip
    edited = edited_docx(tmp_path / "edited.docx")
    asked = answering(monkeypatch, None, "&Accept All", "&Before Them")
    window = document_window()

    assert window.open_path(edited)  # Enter: each change marked in the text, to decide one by one
    assert window.editor.plain_text() == "The keeper {~~slowly~>quickly~~}{>>Maya<<} climbed.\n"
    assert asked[0].startswith("edited.docx has 2 tracked changes.")
    assert "marked in the text, to accept or reject one by one (1 insertion, 1 deletion, by Maya)" in (
        window.message_bar.label.text())  # fmt: skip
    assert window.open_path(edited)
    assert window.editor.plain_text() == "The keeper quickly climbed.\n"
    assert window.open_path(edited)
    assert window.editor.plain_text() == "The keeper slowly climbed.\n"
    assert "it reads as it was before them (1 insertion, 1 deletion, by Maya)" in window.message_bar.label.text()
    plain = tmp_path / "plain.docx"
    docx.Document().save(str(plain))
    assert window.open_path(plain) and len(asked) == 3  # no changes: no question


@pytest.mark.parametrize(
    ("fixture", "name", "kind"),
    [
        ("returned-libreoffice.rtf", "returned.rtf", "RTF"),
        ("returned-libreoffice.doc", "returned.doc", "Word 97–2003"),
        ("returned-libreoffice.rtf", "returned.doc", "RTF"),  # WordPad's RTF under a .doc name reads as RTF
    ],
)
def test_an_rtf_or_old_word_document_opens_as_markdown_with_its_changes_to_review_and_is_never_saved_over(
        document_window, tmp_path, monkeypatch, fixture: str, name: str, kind: str) -> None:  # fmt: skip
    import shutil

    returned = tmp_path / name
    shutil.copy(Path(__file__).parent.parent / "fixtures" / fixture, returned)
    asked = answering(monkeypatch, None)
    window = document_window()
    suggested: list[str] = []

    def save_dialog(_parent, _title, name, _filters):
        suggested.append(name)
        return "", ""  # cancelled

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_dialog)

    assert window.open_path(returned)  # Enter: Review Each
    assert asked[0].startswith(f"{name} has 2 tracked changes.")
    assert window.editor.plain_text().startswith(
        "# The Lighthouse\n\nThe keeper {~~slowly~>quickly~~}{>>Maya<<} climbed the stairs "
        "<!-- Maya: Every single one? -->")
    assert window.path is None and window.imported_from == returned
    assert f"{name} opened from {kind} as Markdown" in window.message_bar.label.text()
    before = returned.read_bytes()
    assert not window.save()  # the Save dialog, cancelled: it suggested a Markdown file beside the original
    assert suggested == [str(tmp_path / "returned.md")] and returned.read_bytes() == before

"""An editor's tracked changes reviewed one by one in the real window (app/window/text_changes.py): a Word
document opened with Review Each, its changes marked in the text and painted, stepped through and decided with
the writer's keys, each decision one undo step; Accept All and Reject All in one."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import docx
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest
from test_word_open import answering

from app.window.main_window import MainWindow
from app.window.theme import change_colors

ALT, CTRL = Qt.KeyboardModifier.AltModifier, Qt.KeyboardModifier.ControlModifier
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
MARKED = "The keeper {~~slowly~>quickly~~}{>>Maya<<} climbed.\n\nHe lit the lamp{++ every evening++}{>>Ed<<}.\n"


def returned_manuscript(path: Path) -> Path:
    """A manuscript back from two editors: "slowly" replaced by "quickly" (Maya), and "every evening" added
    (Ed)."""
    document = docx.Document()
    first = document.add_paragraph("The keeper ")
    first._p.append(docx.oxml.parse_xml(
        f'<w:del xmlns:w="{W}" w:id="1" w:author="Maya"><w:r><w:delText>slowly </w:delText></w:r></w:del>'))
    first._p.append(docx.oxml.parse_xml(
        f'<w:ins xmlns:w="{W}" w:id="2" w:author="Maya"><w:r><w:t xml:space="preserve">quickly </w:t></w:r></w:ins>'))
    first.add_run("climbed.")
    second = document.add_paragraph("He lit the lamp")
    second._p.append(docx.oxml.parse_xml(
        f'<w:ins xmlns:w="{W}" w:id="3" w:author="Ed"><w:r><w:t xml:space="preserve"> every evening</w:t></w:r>'
        "</w:ins>"))
    second.add_run(".")
    document.save(str(path))
    return path


def opened_for_review(qtbot, document_window, tmp_path: Path, monkeypatch) -> MainWindow:
    answering(monkeypatch, "&Review Each")
    window = document_window()
    window.show()
    qtbot.waitExposed(window)
    assert window.open_path(returned_manuscript(tmp_path / "returned.docx"))
    assert window.editor.plain_text() == MARKED
    return window


def test_a_document_opened_with_changes_counts_them_at_once_and_qt_says_nothing(qtlog, document_window, tmp_path,
                                                                              monkeypatch) -> None:  # fmt: skip
    answering(monkeypatch, "&Review Each")
    window = document_window()
    assert window.open_path(returned_manuscript(tmp_path / "returned.docx"))
    # The whole text came in at once: its braces seen straight away, not after the pause a typed key waits for.
    assert window.tracked_changes.in_text.count == 2 and window.tracked_changes.in_text.available()
    assert window.editor.text_between(0, 10**6) == MARKED  # an end past the text is the text's end
    assert not [record.message for record in qtlog.records if "out of range" in record.message]


def key(qtbot, window: MainWindow, pressed: Qt.Key, modifiers: Qt.KeyboardModifier) -> None:
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    QTest.keyClick(window.editor, pressed, modifiers)


def selected(window: MainWindow) -> str:
    return window.editor.textCursor().selectedText().replace("\u2029", "\n")


def test_each_change_is_stepped_to_and_decided_with_the_keys_one_undo_step_each(qtbot, document_window, tmp_path,
                                                                                monkeypatch) -> None:  # fmt: skip
    window = opened_for_review(qtbot, document_window, tmp_path, monkeypatch)
    status = window.statusBar()
    cursor = window.editor.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.Start)
    window.editor.setTextCursor(cursor)

    key(qtbot, window, Qt.Key.Key_Right, ALT)  # Next Change
    assert selected(window) == "{~~slowly~>quickly~~}{>>Maya<<}"
    assert status.currentMessage().startswith("Change 1 of 2 (replacement, by Maya)")
    key(qtbot, window, Qt.Key.Key_Delete, ALT)  # Reject Change: the old word stays, and the next is selected
    assert window.editor.plain_text() == "The keeper slowly climbed.\n\nHe lit the lamp{++ every evening++}{>>Ed<<}.\n"
    assert selected(window) == "{++ every evening++}{>>Ed<<}"
    assert status.currentMessage().startswith("Change rejected. Change 1 of 1 (insertion, by Ed)")
    key(qtbot, window, Qt.Key.Key_Return, ALT)  # Accept Change
    assert window.editor.plain_text() == "The keeper slowly climbed.\n\nHe lit the lamp every evening.\n"
    assert "that was the last" in status.currentMessage()
    assert not window.tracked_changes.next_action.isEnabled()  # nothing left to step to

    key(qtbot, window, Qt.Key.Key_Z, CTRL)
    assert window.editor.plain_text() == "The keeper slowly climbed.\n\nHe lit the lamp{++ every evening++}{>>Ed<<}.\n"
    key(qtbot, window, Qt.Key.Key_Z, CTRL)
    assert window.editor.plain_text() == MARKED

    key(qtbot, window, Qt.Key.Key_Left, ALT)  # Previous Change: Undo left the caret after the first change
    assert selected(window) == "{~~slowly~>quickly~~}{>>Maya<<}"
    key(qtbot, window, Qt.Key.Key_Left, ALT)  # and round past the top to the last
    assert selected(window) == "{++ every evening++}{>>Ed<<}"


def test_a_caret_outside_every_change_is_shown_the_next_before_anything_is_decided(qtbot, document_window, tmp_path,
                                                                                  monkeypatch) -> None:  # fmt: skip
    window = opened_for_review(qtbot, document_window, tmp_path, monkeypatch)
    cursor = window.editor.textCursor()
    cursor.setPosition(MARKED.index("climbed"))
    window.editor.setTextCursor(cursor)
    key(qtbot, window, Qt.Key.Key_Return, ALT)
    assert window.editor.plain_text() == MARKED  # nothing decided unseen
    assert selected(window) == "{++ every evening++}{>>Ed<<}"
    assert window.statusBar().currentMessage().startswith("This is the next change")
    cursor.setPosition(MARKED.index("slowly"))  # a caret inside a change: that one
    window.editor.setTextCursor(cursor)
    key(qtbot, window, Qt.Key.Key_Return, ALT)
    assert window.editor.plain_text().startswith("The keeper quickly climbed.")


def test_accept_all_and_reject_all_are_one_undo_step_each(qtbot, document_window, tmp_path, monkeypatch) -> None:
    window = opened_for_review(qtbot, document_window, tmp_path, monkeypatch)
    in_text = window.tracked_changes.in_text
    assert in_text.accept_all_action.isEnabled()
    in_text.accept_all_action.trigger()
    assert window.editor.plain_text() == "The keeper quickly climbed.\n\nHe lit the lamp every evening.\n"
    assert window.statusBar().currentMessage().startswith("2 changes accepted")
    assert not in_text.accept_all_action.isEnabled()
    window.editor.undo()
    assert window.editor.plain_text() == MARKED
    window.tracked_changes.in_text.recount()
    in_text.reject_all_action.trigger()
    assert window.editor.plain_text() == "The keeper slowly climbed.\n\nHe lit the lamp.\n"
    menu_titles = [action.text() for action in window.edit_menu.actions()]
    assert "Tracked C&hanges" in menu_titles


def test_the_marks_are_painted_as_changes_even_across_a_paragraph_break(qtbot, document_window) -> None:
    window = document_window("One {++added\n\nover two++} and {--gone--} words.\n")
    colors = change_colors(dark=False)
    painted: dict[str, tuple[str, bool, bool]] = {}
    block = window.editor.document().begin()
    while block.isValid():
        for part in block.layout().formats():
            words = block.text()[part.start : part.start + part.length]
            text_format = part.format
            painted[words] = (text_format.foreground().color().name(), text_format.fontUnderline(),
                              text_format.fontStrikeOut())  # fmt: skip
        block = block.next()
    added, removed = colors.added.name(), colors.removed.name()
    assert painted["added"] == (added, True, False)
    assert painted["over two"] == (added, True, False)  # the block after the break is still inside the mark
    assert painted["gone"] == (removed, False, True)
    assert "words." not in painted and " and " not in painted  # outside the marks: the text's own ink


def test_words_between_two_replacements_are_not_struck_as_markdowns_strikethrough(qtbot, document_window) -> None:
    # "~~}, kept {~~" would read as Markdown's ~~struck~~ words: the signs of two changes are no such pair.
    window = document_window("The {~~old~>new~~}, kept and {~~grey~>blue~~} words, ~~struck~~ too.\n")
    block = window.editor.document().begin()
    struck = {block.text()[part.start : part.start + part.length] for part in block.layout().formats()
              if part.format.fontStrikeOut()}  # fmt: skip
    assert struck == {"old", "grey", "~~struck~~"}


def test_an_export_asks_how_to_settle_the_changes_left_and_never_prints_their_signs(qtbot, document_window, tmp_path,
                                                                                   monkeypatch) -> None:  # fmt: skip
    from pypdf import PdfReader
    from PySide6.QtWidgets import QFileDialog

    window = opened_for_review(qtbot, document_window, tmp_path, monkeypatch)
    asked = answering(monkeypatch, "&Before Them", "&Accept All", "Cancel")
    targets = iter([tmp_path / "before.docx", tmp_path / "accepted.pdf", tmp_path / "never.pdf"])
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_args: (str(next(targets)), ""))

    assert window.export_word()
    assert asked[0].startswith("This text has 2 tracked changes still to decide.")
    paragraphs = [p.text for p in docx.Document(str(tmp_path / "before.docx")).paragraphs]
    assert paragraphs == ["The keeper slowly climbed.", "He lit the lamp."]
    assert window.export_pdf()
    pages = PdfReader(str(tmp_path / "accepted.pdf")).pages
    printed = " ".join(" ".join(page.extract_text().split()) for page in pages)  # words, however spaced
    assert "quickly climbed" in printed and "every evening" in printed and "{" not in printed
    assert not window.export_pdf()  # Cancel: nothing written, not even the save dialog
    assert not (tmp_path / "never.pdf").exists() and len(asked) == 3
    assert window.editor.plain_text() == MARKED  # the text keeps its changes to decide


def test_changes_kept_tracked_in_a_word_export_come_back_as_they_were(qtbot, document_window, tmp_path,
                                                                      monkeypatch) -> None:  # fmt: skip
    from PySide6.QtWidgets import QFileDialog

    # Each change signed by its editor but the last, which goes to Word as Redraft's.
    marked = ("# The {~~Lighthouse~>Lamp~~}{>>Maya<<}\n\nThe keeper **{++quickly ++}{>>Ed<<}climbed**.{++\n\nA new "
              "paragraph, *whole*.++}{>>Maya<<}\n\nHe lit {--the --}{>>Ed<<}[the lamp](https://example.org).{--\n\nA "
              "paragraph taken out.--}{>>Maya<<}\n\nHe kept the log[^1].\n\n| Tool | Use |\n|---|---|\n"
              "| lamp | {~~light~>fire~~} |\n\n"
              "[^1]: His {--father's --}{>>Ed<<}note, {++kept ++}{>>Maya<<}dry.\n")  # fmt: skip
    window = document_window(marked)
    asked = answering(monkeypatch, "&Keep Tracked")
    target = tmp_path / "for the editor.docx"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_args: (str(target), ""))
    assert window.export_word()
    assert asked[0].startswith("This text has 8 tracked changes still to decide. Keep them in the Word document")

    body = docx.Document(str(target)).element.body.xml
    assert body.count("<w:ins ") >= 4 and body.count("<w:del ") >= 4
    authors = re.findall(r'<w:(?:ins|del) [^>]*w:author="([^"]*)"', body)
    assert {"Maya", "Ed", "Redraft"} == set(authors) and authors[0] == "Maya" and authors[-1] == "Redraft"
    assert "\ue004" not in body and "{++" not in body
    with zipfile.ZipFile(target) as package:  # the footnote's changes tracked in Word's footnote, by their authors
        notes = package.read("word/footnotes.xml").decode()
    assert re.findall(r'<w:(ins|del) [^>]*w:author="([^"]*)"', notes) == [("del", "Ed"), ("ins", "Maya")]
    assert "<w:delText xml:space=\"preserve\">father's </w:delText>" in notes and "\ue004" not in notes
    from app.documents.critic_markup import settle
    from app.documents.word_import import read_word_document

    assert read_word_document(target).text == settle(marked, accept=True)  # as Word shows it, all accepted
    assert read_word_document(target, accept_changes=False).text == settle(marked, accept=False)  # all rejected
    answering(monkeypatch, "&Review Each")
    assert window.open_path(target)
    # Reviewed again: the same changes where they were, by the same people; the unsigned one now Redraft's.
    assert window.editor.plain_text() == marked.replace("~~} |", "~~}{>>Redraft<<} |")


def test_a_rewrite_or_fill_across_a_change_to_decide_is_refused(qtbot, document_window, tmp_path, monkeypatch) -> None:
    window = opened_for_review(qtbot, document_window, tmp_path, monkeypatch)
    cursor = window.editor.textCursor()
    cursor.setPosition(MARKED.index("keeper"))
    cursor.setPosition(MARKED.index("climbed"), QTextCursor.MoveMode.KeepAnchor)  # across the first change
    window.editor.setTextCursor(cursor)
    assert window.rewrites.start("rewrite") is None
    assert window.statusBar().currentMessage().startswith("This passage holds a tracked change still to decide")
    cursor.setPosition(MARKED.index("quickly") + 2)
    window.editor.setTextCursor(cursor)
    assert window.rewrites.start("fill") is None
    assert window.statusBar().currentMessage().startswith("The cursor is inside a tracked change")
    assert window.editor.plain_text() == MARKED and window.editor.live_span is None


def test_a_pdf_can_show_the_changes_left_struck_through_and_underlined(qtbot, document_window, tmp_path,
                                                                       monkeypatch) -> None:  # fmt: skip
    from pypdf import PdfReader
    from PySide6.QtWidgets import QFileDialog

    from app.window.pdf_export import typeset

    window = opened_for_review(qtbot, document_window, tmp_path, monkeypatch)
    asked = answering(monkeypatch, "&Show Changes")
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_args: (str(tmp_path / "review copy.pdf"), ""))
    assert window.export_pdf()
    assert "Show them in the PDF struck through and underlined" in asked[0]
    printed = " ".join(" ".join(page.extract_text().split()) for page in PdfReader(tmp_path / "review copy.pdf").pages)
    assert "keeper slowly quickly climbed" in printed and "lamp every evening" in printed
    assert not any(sign in printed for sign in ("{", "~>", "\ue004", "\ue006"))

    document = typeset(MARKED, markdown=True, show_changes=True)
    shown: dict[str, tuple[bool, bool]] = {}
    block = document.begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            shown[fragment.text()] = (fragment.charFormat().fontStrikeOut(), fragment.charFormat().fontUnderline())
            fragments += 1
        block = block.next()
    assert shown["slowly"] == (True, False) and shown["quickly"] == (False, True)
    assert shown[" every evening"] == (False, True) and shown["The keeper "] == (False, False)


def test_a_right_click_on_a_change_offers_to_accept_or_reject_it(qtbot, document_window, tmp_path, monkeypatch) -> None:
    from PySide6.QtWidgets import QMenu

    window = opened_for_review(qtbot, document_window, tmp_path, monkeypatch)
    pointer = window.editor.textCursor()
    pointer.setPosition(MARKED.index("every evening"))
    menu = QMenu()
    window.tracked_changes.in_text.offer(menu, pointer)
    assert [action.text() for action in menu.actions()][:2] == ["Acc&ept Change", "Reject C&hange"]
    menu.actions()[1].trigger()
    assert window.editor.plain_text() == "The keeper {~~slowly~>quickly~~}{>>Maya<<} climbed.\n\nHe lit the lamp.\n"
    pointer.setPosition(MARKED.index("He lit"))  # outside every change: nothing offered
    plain = QMenu()
    window.tracked_changes.in_text.offer(plain, pointer)
    assert plain.actions() == []


def test_one_editors_changes_are_accepted_or_rejected_all_at_once(qtbot, document_window) -> None:
    from PySide6.QtWidgets import QMenu

    two = ("The {--old --}{>>Maya<<}keeper {++slowly ++}{>>Ed<<}climbed.\n\n"
           "He lit {++the ++}{>>Maya<<}lamp{++ every evening++}{>>Ed<<}.{++ Late.++}\n")  # fmt: skip
    window = document_window(two)
    in_text = window.tracked_changes.in_text
    assert in_text.authors() == ["Maya", "Ed"]
    pointer = window.editor.textCursor()
    pointer.setPosition(two.index("every evening"))  # Ed's: he signed two
    menu = QMenu()
    in_text.offer(menu, pointer)
    assert [action.text() for action in menu.actions()][:4] == [
        "Acc&ept Change", "Reject C&hange", "Accept All by Ed", "Reject All by Ed"]
    menu.actions()[2].trigger()  # Ed's two accepted, Maya's and the unsigned one left
    assert window.editor.plain_text() == ("The {--old --}{>>Maya<<}keeper slowly climbed.\n\n"
                                          "He lit {++the ++}{>>Maya<<}lamp every evening.{++ Late.++}\n")  # fmt: skip
    assert window.statusBar().currentMessage().startswith("2 changes by Ed accepted")
    window.editor.undo()  # one undo step
    assert window.editor.plain_text() == two
    # Edit ▸ Tracked Changes ▸ By Author, as it opens: each editor's two actions.
    by_author = QMenu()
    in_text.fill_by_author(by_author)
    assert [action.text() for action in by_author.actions()] == [
        "Accept All by Maya", "Reject All by Maya", "Accept All by Ed", "Reject All by Ed"]
    by_author.actions()[1].trigger()  # Maya's rejected: her deletion undone, her insertion gone
    assert window.editor.plain_text() == ("The old keeper {++slowly ++}{>>Ed<<}climbed.\n\n"
                                          "He lit lamp{++ every evening++}{>>Ed<<}.{++ Late.++}\n")  # fmt: skip
    in_text.settle_all(True)
    unsigned = QMenu()
    in_text.fill_by_author(unsigned)
    assert [(a.text(), a.isEnabled()) for a in unsigned.actions()] == [
        ("No change in the text is signed with a name", False)]
    submenu = next(a.menu() for a in window.edit_menu.actions() if a.text() == "Tracked C&hanges")
    assert "By &Author" in [action.text() for action in submenu.actions()]


def test_the_word_count_counts_the_changes_to_decide_as_made(qtbot, document_window) -> None:
    window = document_window("The keeper {~~slowly~>quickly~~}{>>Maya<<} climbed{-- the stairs--}{>>Ed<<}.")
    window._update_counts()
    assert window.counts_label.text() == "4 words · 27 characters"  # "The keeper quickly climbed."
    window.editor.select_range(4, len(window.editor.plain_text()))  # a selection's changes: counted as made too
    window._update_counts()
    assert window.counts_label.text() == "3 of 4 words · 23 of 27 characters"

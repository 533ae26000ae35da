"""The clipboard in a Markdown document: a copied passage goes as written (plain text and text/markdown) and as
formatted HTML for word processors and mail; formatted text pasted comes in as Markdown, Redraft's own copy and a
code editor's as their plain text; a plain text's copy is its words alone, and its paste Qt's own."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData
from PySide6.QtWidgets import QApplication

PASSAGE = (
    "---\ntitle: The Harbour\n---\n\n## Chapter One\n\nThe keeper *climbed* the **stairs** and {++quietly ++}lit the"
    " {--old --}[lamp](https://example.org/lamp).\n\n- the gulls\n- the fog\n\n> Nobody spoke.\n"
)
# As a word processor or a web page puts formatted text on the clipboard (Word types its bullets as text).
COPIED = (
    "<h2>The <b>Harbour</b></h2><p>The keeper <i>climbed</i> the <span style='font-weight:700'>stairs</span>, all "
    "5 * 3 of them, to the <a href='https://example.org/lamp'>lamp</a>.<br>Then down.</p>"
    "<ul><li>the gulls</li><li>the fog</li></ul><blockquote><p>Nobody spoke.</p></blockquote>"
    "<p class=MsoListParagraph><span style='font-family:Symbol'>·</span>&nbsp;&nbsp;&nbsp;&nbsp; a typed bullet</p>"
)
AS_MARKDOWN = (
    "## The Harbour\n\nThe keeper *climbed* the **stairs**, all 5 \\* 3 of them, to the "
    "[lamp](https://example.org/lamp).\\\nThen down.\n\n- the gulls\n- the fog\n\n> Nobody spoke.\n\n- a typed bullet"
)


def opened(window, path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    assert window.open_path(path)


def copied(window, path: Path, text: str) -> QMimeData:
    opened(window, path, text)
    window.editor.selectAll()
    window.editor.copy()
    return QApplication.clipboard().mimeData()


def pasted(window, html: str, plain: str) -> None:
    """Paste what a word processor or a web page puts on the clipboard: its HTML and its plain text. (Handed to the
    editor as Paste hands it the clipboard's: a QMimeData made here and given to the clipboard crashed Python's
    exit, PySide deleting it after Qt had.)"""
    mime = QMimeData()
    mime.setHtml(html)
    mime.setText(plain)
    window.editor.insertFromMimeData(mime)


def test_a_markdown_passage_is_copied_as_written_and_as_formatted_html(make_window, tmp_path: Path) -> None:
    window = make_window(wait_for_model=False)
    mime = copied(window, tmp_path / "harbour.md", PASSAGE)
    assert mime.text() == PASSAGE  # Redraft and plain-text places paste the Markdown itself
    assert bytes(mime.data("text/markdown")).decode("utf-8") == PASSAGE  # not Qt's escaped "\#\# Chapter One"
    html = mime.html()
    for part in ("<h2>Chapter One</h2>", "<em>climbed</em>", "<strong>stairs</strong>",
                 '<a href="https://example.org/lamp">lamp</a>', "<li>", "<blockquote>"):  # fmt: skip
        assert part in html, part
    assert "quietly lit" in html and "old " not in html and "{++" not in html  # tracked changes made
    assert "*" not in html and "##" not in html and "title:" not in html  # no signs, no front matter
    assert "application/vnd.oasis.opendocument.text" not in mime.formats()  # LibreOffice would take that first

    cursor = window.editor.textCursor()
    cursor.setPosition(PASSAGE.index("The keeper"))
    cursor.setPosition(PASSAGE.index(" and"), cursor.MoveMode.KeepAnchor)
    window.editor.setTextCursor(cursor)
    window.editor.cut()  # a cut carries the same
    mime = QApplication.clipboard().mimeData()
    assert mime.text() == "The keeper *climbed* the **stairs**"
    assert "<em>climbed</em>" in mime.html()
    window.editor.undo()
    assert window.editor.plain_text() == PASSAGE


def test_formatted_text_pasted_comes_in_as_markdown_in_one_undo_step(make_window, tmp_path: Path) -> None:
    window = make_window(wait_for_model=False)
    opened(window, tmp_path / "harbour.md", "Before.\n\n")
    window.editor.moveCursor(window.editor.textCursor().MoveOperation.End)
    pasted(window, COPIED, "The Harbour\nThe keeper climbed the stairs…")
    assert window.editor.plain_text() == "Before.\n\n" + AS_MARKDOWN
    window.editor.undo()
    assert window.editor.plain_text() == "Before.\n\n"

    QApplication.clipboard().setText("The Harbour\nThe keeper climbed the stairs…")
    window.paste_plain_action.trigger()  # Edit ▸ Paste Without Formatting: the words alone
    assert window.editor.plain_text() == "Before.\n\nThe Harbour\nThe keeper climbed the stairs…"
    assert window.paste_plain_action.shortcut().toString() == "Ctrl+Alt+V"
    assert window.paste_plain_action in window.edit_menu.actions()

    menu = window.editor.createStandardContextMenu()  # the right-click menu, as the editor completes it
    for extra in window.editor.context_menu_extras:
        extra(menu, window.editor.textCursor())
    entries = menu.actions()
    paste = next(i for i, entry in enumerate(entries) if entry.objectName() == "edit-paste")
    assert entries[paste + 1].text().replace("&", "").startswith("Paste Without Formatting")
    window.editor.undo()
    entries[paste + 1].trigger()
    assert window.editor.plain_text() == "Before.\n\nThe Harbour\nThe keeper climbed the stairs…"


def test_redrafts_own_copy_and_a_code_editors_paste_as_their_plain_text(make_window, tmp_path: Path) -> None:
    window = make_window(wait_for_model=False)
    copied(window, tmp_path / "harbour.md", PASSAGE)  # HTML and Markdown on the clipboard: the Markdown comes back
    window.editor.selectAll()
    window.editor.paste()
    assert window.editor.plain_text() == PASSAGE
    code = "def lamp():\n    return 'lit'"
    window.editor.selectAll()
    pasted(window, "<div style='font-family: Consolas, monospace; white-space: pre'><span>def lamp():</span><br>"
           "<span>    return 'lit'</span></div>", code)  # fmt: skip
    assert window.editor.plain_text() == code


def test_a_plain_texts_copy_is_its_words_alone_and_its_paste_qts(make_window, tmp_path: Path) -> None:
    window = make_window(wait_for_model=False)
    plain = "The keeper *climbed* the stairs.\n"
    mime = copied(window, tmp_path / "notes.txt", plain)
    assert mime.text() == plain
    # Not Qt's HTML in the editor's typeface and size, nor its Markdown escaped and wrapped at 80 columns.
    assert mime.formats() == ["text/plain"]
    window.editor.selectAll()
    pasted(window, COPIED, "The Harbour")
    assert window.editor.plain_text() == "The Harbour"

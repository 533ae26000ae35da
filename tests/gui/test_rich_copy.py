"""Copy in a Markdown document: the clipboard holds the passage as written (plain text and text/markdown) and as
formatted HTML for word processors and mail; a plain text's copy is Qt's own."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QApplication

PASSAGE = (
    "---\ntitle: The Harbour\n---\n\n## Chapter One\n\nThe keeper *climbed* the **stairs** and {++quietly ++}lit the"
    " {--old --}[lamp](https://example.org/lamp).\n\n- the gulls\n- the fog\n\n> Nobody spoke.\n"
)


def copied(window, path: Path, text: str):
    path.write_text(text, encoding="utf-8")
    assert window.open_path(path)
    window.editor.selectAll()
    window.editor.copy()
    return QApplication.clipboard().mimeData()


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

    window.editor.undo()  # nothing to undo from a copy; a cut is one step and carries the same
    cursor = window.editor.textCursor()
    cursor.setPosition(PASSAGE.index("The keeper"))
    cursor.setPosition(PASSAGE.index(" and"), cursor.MoveMode.KeepAnchor)
    window.editor.setTextCursor(cursor)
    window.editor.cut()
    mime = QApplication.clipboard().mimeData()
    assert mime.text() == "The keeper *climbed* the **stairs**"
    assert "<em>climbed</em>" in mime.html()
    assert "The keeper" not in window.editor.plain_text()
    window.editor.undo()
    assert window.editor.plain_text() == PASSAGE


def test_a_plain_texts_copy_is_left_as_qt_makes_it(make_window, tmp_path: Path) -> None:
    window = make_window(wait_for_model=False)
    plain = "The keeper *climbed* the stairs.\n"
    mime = copied(window, tmp_path / "notes.txt", plain)
    assert mime.text() == plain
    assert "<em>" not in mime.html() and "*climbed*" in mime.html()  # a .txt's asterisks are the writer's

"""Format ▸ Picture… in a real window: a picture goes in as a paragraph of its own (one undo step, its caption
selected), a picture file dropped on the text goes in where it was dropped instead of opening as a document, the
mouse on a picture's line shows it, and a .txt, a waiting draft and a file that is no picture are refused."""

from __future__ import annotations

from pathlib import Path

from gui_helpers import SIGNAL_TIMEOUT_MS, drop_on_editor, select
from PySide6.QtCore import QMimeData, QUrl
from PySide6.QtGui import QColor, QImage

from app.window.picture_command import PLAIN_TEXT, WHILE_REWRITING

STORY = "# The Harbour\n\nThe keeper climbed the stairs.\nHe lit the lamp.\n\nThe boats came in.\n"


def _picture(path: Path, width: int = 640, height: int = 480) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("#336699"))
    assert image.save(str(path))
    return path


def _opened(make_window, tmp_path: Path, name: str = "story.md"):
    window = make_window(wait_for_model=False)
    (tmp_path / name).write_text(STORY, encoding="utf-8")
    assert window.open_path(tmp_path / name)
    return window


def test_a_picture_goes_in_after_the_paragraph_as_one_undo_step(make_window, tmp_path: Path) -> None:
    window = _opened(make_window, tmp_path)
    picture = _picture(tmp_path / "images" / "harbour_map.png")
    assert "&Picture…" in [action.text() for action in window.formatting.menu.actions()]
    assert window.formatting.picture.insert(picture, STORY.index("keeper"))
    editor = window.editor
    assert editor.plain_text() == STORY.replace(
        "He lit the lamp.\n\n", "He lit the lamp.\n\n![harbour map](images/harbour_map.png)\n\n")
    assert editor.textCursor().selectedText() == "harbour map"  # to type the caption over
    window.undo()
    assert editor.plain_text() == STORY


def test_a_picture_dropped_on_the_text_goes_in_there_and_is_not_opened(make_window, tmp_path: Path, qtbot) -> None:
    window = _opened(make_window, tmp_path)
    window.show()
    qtbot.waitExposed(window)
    picture = _picture(tmp_path / "the bay.png")
    editor = window.editor
    cursor = editor.textCursor()
    cursor.setPosition(STORY.index("boats"))
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(picture))])
    assert drop_on_editor(window, mime, editor.cursorRect(cursor).center())
    assert window.path == tmp_path / "story.md"  # still the story, not the picture opened as a text
    assert editor.plain_text() == STORY + "\n![the bay](<the bay.png>)\n"


def test_the_mouse_on_a_picture_shows_it_or_says_where_it_was_looked_for(make_window, tmp_path: Path, qtbot) -> None:
    window = _opened(make_window, tmp_path)
    window.show()
    qtbot.waitExposed(window)
    _picture(tmp_path / "images" / "map.png", 800, 400)
    editor = window.editor
    editor.setPlainText("Text.\n\n![The map](images/map.png)\n\n![Gone](images/gone.png)\n")
    command = window.formatting.picture

    def shown_over(needle: str) -> str | None:
        cursor = editor.textCursor()
        cursor.setPosition(editor.plain_text().index(needle) + 3)
        rect = editor.cursorRect(cursor)
        return command.shown_at(rect.left(), rect.center().y())

    shown = shown_over("![The map]")
    assert shown is not None and QUrl.fromLocalFile(str(tmp_path / "images" / "map.png")).toString() in shown
    assert 'width="320" height="160"' in shown and "The map" in shown  # a thumbnail, its shape kept
    assert shown_over("![Gone]") == f"<p>No picture Redraft can read at {tmp_path / 'images' / 'gone.png'}</p>"
    assert shown_over("Text.") is None


def test_a_plain_text_a_waiting_draft_and_a_file_that_is_no_picture_are_refused(make_window, tmp_path: Path,
                                                                                qtbot) -> None:
    picture = _picture(tmp_path / "map.png")
    plain = _opened(make_window, tmp_path, "story.txt")
    assert not plain.formatting.picture.insert(picture, 0)
    assert plain.editor.plain_text() == STORY and plain.statusBar().currentMessage() == PLAIN_TEXT
    window = _opened(make_window, tmp_path)
    fake = tmp_path / "notes.png"
    fake.write_text("not a picture", encoding="utf-8")
    assert not window.formatting.picture.insert(fake, 0)
    assert "notes.png is not a picture Redraft can read" in window.statusBar().currentMessage()
    drafting = make_window(candidates=1, max_denoising_steps=4)
    assert drafting.open_path(tmp_path / "story.md")
    select(drafting, "climbed the stairs")
    drafting.rewrite_selection()
    qtbot.waitUntil(lambda: drafting.run is not None and drafting.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    before = drafting.editor.plain_text()
    assert not drafting.formatting.picture.insert(picture, 0)
    assert drafting.editor.plain_text() == before and drafting.statusBar().currentMessage() == WHILE_REWRITING


def test_a_pictures_and_a_links_address_are_shown_quiet(make_window, tmp_path: Path) -> None:
    from PySide6.QtGui import QPalette, QTextCharFormat

    window = make_window(wait_for_model=False)
    (tmp_path / "pics.md").write_text("![The bay](images/bay.png)\n\nSee [the map](https://example.org/map).\n")
    assert window.open_path(tmp_path / "pics.md")
    document = window.editor.document()
    quiet = window.editor.palette().color(QPalette.ColorRole.PlaceholderText)

    def colours(line: int) -> dict[str, QColor]:
        block = document.findBlockByNumber(line)
        formats = block.layout().formats()
        return {block.text()[r.start : r.start + r.length]: QTextCharFormat(r.format).foreground().color()
                for r in formats}  # fmt: skip

    assert colours(0) == {"(images/bay.png)": quiet}  # the caption in the text's own ink
    assert colours(2) == {"(https://example.org/map)": quiet}


def test_a_pasted_picture_is_kept_beside_the_document_and_put_in(make_window, tmp_path: Path) -> None:
    from app.window.picture_command import UNSAVED

    window = _opened(make_window, tmp_path)
    editor = window.editor
    screenshot = QImage(200, 100, QImage.Format.Format_RGB32)
    screenshot.fill(QColor("#994422"))
    mime = QMimeData()
    mime.setImageData(screenshot)
    assert editor.canInsertFromMimeData(mime)
    cursor = editor.textCursor()
    cursor.setPosition(STORY.index("boats"))
    editor.setTextCursor(cursor)
    editor.insertFromMimeData(mime)
    editor.insertFromMimeData(mime)  # the second beside the first, not over it
    assert editor.plain_text() == STORY + "\n![story 1](images/story-1.png)\n\n![story 2](images/story-2.png)\n"
    assert window.statusBar().currentMessage().startswith("The pasted picture is kept as images/story-2.png")
    kept = QImage(str(tmp_path / "images" / "story-1.png"))
    assert kept.size() == screenshot.size() and kept.pixelColor(5, 5) == QColor("#994422")
    untitled = make_window(wait_for_model=False)
    untitled.editor.insertFromMimeData(mime)
    assert untitled.editor.plain_text() == "" and untitled.statusBar().currentMessage() == UNSAVED

"""The rest of what the new-writer trial met (#46): wording, themes, files, keys and fit, each seen in a real
window (offscreen, on the tiny model)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from app.window.main_window import MainWindow


def test_counts_say_one_character_not_one_characters(document_window: Callable[..., MainWindow]) -> None:
    window = document_window("a")
    window._update_counts()
    assert window.counts_label.text() == "1 word · 1 character"
    window.editor.setPlainText("ab cd")
    window._update_counts()
    assert window.counts_label.text() == "2 words · 5 characters"


def test_a_failed_save_says_could_not_save_once(document_window: Callable[..., MainWindow], tmp_path: Path) -> None:
    window = document_window()
    window.editor.insertPlainText("New words. ")
    assert not window.save_to(tmp_path / "gone" / "story.md")  # a folder that is not there
    said = window.message_bar.label.text()
    assert said.startswith("Could not save story.md: ") and said.lower().count("could not save") == 1, said


def test_about_names_the_installed_version(make_window: Callable[..., MainWindow]) -> None:
    from importlib import metadata

    window = make_window(wait_for_model=False)
    box = window.show_about()
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert f"Redraft {metadata.version('redraft')}" in box.text()
    box.close()

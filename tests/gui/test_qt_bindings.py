"""The Qt bindings keep Python's reference counts: a binding that drops a reference to None on calls that
return nothing (PySide6 6.12.0) ends the process with "deallocating None" once an editing session has made
enough of them, on every Python before 3.12 (where None became immortal and is not counted)."""

from __future__ import annotations

import sys

from gui_helpers import DOCUMENT
from PySide6.QtWidgets import QApplication


def test_calls_that_return_nothing_keep_nones_reference_count(document_window) -> None:
    window = document_window()
    editor = window.editor
    app = QApplication.instance()
    calls = 400
    before = sys.getrefcount(None)
    for index in range(calls):
        editor.setPlainText(DOCUMENT[: 10 + index % 50])  # each returns None to Python
        app.processEvents()
    lost = before - sys.getrefcount(None)
    # Other objects come and go meanwhile (a few references either way); a leak loses one or more a call.
    assert lost < calls // 4, f"{lost} references to None lost over {2 * calls} calls that return nothing"

"""Find and Replace: a non-modal dialog over the editor that never replaces inside a developing span."""

from __future__ import annotations

from PySide6.QtGui import QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.window.editor_widget import RewriteEditor


class FindReplaceDialog(QDialog):
    """Non-modal find and replace over the editor; it never replaces inside a developing span."""

    def __init__(self, editor: RewriteEditor, parent: QWidget) -> None:
        super().__init__(parent)
        self.setWindowTitle("Find and Replace")
        self.editor = editor
        self.find_text = QLineEdit()
        self.replace_text = QLineEdit()
        self.match_case = QCheckBox("Match case")
        self.whole_words = QCheckBox("Whole words")
        self.status = QLabel()
        buttons = {
            "Find Next": lambda: self.find_next(backward=False),
            "Find Previous": lambda: self.find_next(backward=True),
            "Replace": self.replace_one,
            "Replace All": self.replace_all,
        }
        grid = QGridLayout(self)
        grid.addWidget(QLabel("Find:"), 0, 0)
        grid.addWidget(self.find_text, 0, 1)
        grid.addWidget(QLabel("Replace with:"), 1, 0)
        grid.addWidget(self.replace_text, 1, 1)
        options = QHBoxLayout()
        options.addWidget(self.match_case)
        options.addWidget(self.whole_words)
        options.addStretch(1)
        grid.addLayout(options, 2, 1)
        column = QVBoxLayout()
        for label, handler in buttons.items():
            button = QPushButton(label)
            button.clicked.connect(handler)
            column.addWidget(button)
        column.addStretch(1)
        grid.addLayout(column, 0, 2, 4, 1)
        grid.addWidget(self.status, 3, 0, 1, 2)
        self.find_text.returnPressed.connect(lambda: self.find_next(backward=False))

    def _flags(self, backward: bool = False) -> QTextDocument.FindFlag:
        flags = QTextDocument.FindFlag(0)
        if backward:
            flags |= QTextDocument.FindFlag.FindBackward
        if self.match_case.isChecked():
            flags |= QTextDocument.FindFlag.FindCaseSensitively
        if self.whole_words.isChecked():
            flags |= QTextDocument.FindFlag.FindWholeWords
        return flags

    def find_next(self, backward: bool = False) -> bool:
        editor = self.editor
        needle = self.find_text.text()
        if not needle:
            return False
        found = editor.find(needle, self._flags(backward))
        if not found:  # wrap around
            cursor = editor.textCursor()
            cursor.movePosition(
                QTextCursor.MoveOperation.End if backward else QTextCursor.MoveOperation.Start
            )
            editor.setTextCursor(cursor)
            found = editor.find(needle, self._flags(backward))
        self.status.setText("" if found else f"“{needle}” was not found")
        return found

    def _selection_matches(self) -> bool:
        selected = self.editor.textCursor().selectedText()
        needle = self.find_text.text()
        if self.match_case.isChecked():
            return selected == needle
        return selected.casefold() == needle.casefold()

    def replace_one(self) -> None:
        editor = self.editor
        cursor = editor.textCursor()
        span = editor.live_span
        if self._selection_matches() and not (
            span and span.touches(cursor.selectionStart(), cursor.selectionEnd())
        ):
            with editor.writer_edit():
                editor.textCursor().insertText(self.replace_text.text())
        self.find_next()

    def replace_all(self) -> int:
        editor = self.editor
        needle, replacement = self.find_text.text(), self.replace_text.text()
        if not needle:
            return 0
        count = 0
        with editor.writer_edit():
            span = editor.live_span
            document = editor.document()
            cursor = QTextCursor(document)
            edit = QTextCursor(document)
            edit.beginEditBlock()  # Replace All is one undo step
            while True:
                cursor = document.find(needle, cursor, self._flags())
                if cursor.isNull():
                    break
                if span is not None and span.touches(cursor.selectionStart(), cursor.selectionEnd()):
                    continue
                cursor.insertText(replacement)
                count += 1
            edit.endEditBlock()
        self.status.setText(f"Replaced {count} occurrence{'s' if count != 1 else ''}")
        return count

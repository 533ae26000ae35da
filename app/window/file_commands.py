"""The window's File menu: New, Open, Save, Save As, Saved Versions, Export as PDF or Word Document, Open Recent,
and "save your changes first?".

:class:`FileCommands` is the file half of :class:`app.window.main_window.MainWindow`, which inherits it: its
state is the window's own (``path``, ``file_format``, the title that names the file), and autosave,
the disk watcher and the recovery offer reach it as the window's (``window.path``, ``window.open_path``,
``window.saved_text``). Reading and writing the bytes is :mod:`app.documents.fileio`'s; noticing changes made by
other programs is :mod:`app.documents.disk_watch`'s.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QLocale, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QInputDialog, QMainWindow, QMenu, QMenuBar, QMessageBox

from app.dialogs.message_bar import UNTIL_SAVED, MessageBar
from app.dialogs.saved_versions import choose_saved_version
from app.documents.critic_markup import marks, reviewed, settle
from app.documents.fileio import (
    FALLBACK_ENCODINGS,
    BinaryFileError,
    FileError,
    TextDocument,
    UnknownEncodingError,
    read_document,
    save_document,
)
from app.documents.imports import Reader, reader_for
from app.documents.markdown_format import is_markdown
from app.documents.saved_versions import SavedVersions
from app.settings import MAX_RECENT_FILES, Preferences
from app.userdirs import user_dirs
from app.window.docx_comments import inline_notes
from app.window.docx_export import export_docx, word_language
from app.window.editor_widget import RewriteEditor
from app.window.epub_export import export_epub
from app.window.file_drops import FileDrops
from app.window.pdf_export import export_pdf
from app.window.printing import Printing


def save_failure(reason: str) -> str:
    """"Could not save: <reason>", once: fileio's errors already begin with "could not save <name>"."""
    if reason.lower().startswith("could not save"):
        return reason[0].upper() + reason[1:]
    return f"Could not save: {reason}"


StandardKey = QKeySequence.StandardKey


class TextLanguage(Protocol):
    language: str  # the code of the language the text is checked in (View ▸ Spelling Language, or detected)


class FileCommands(QMainWindow):
    """Open and save the window's document; MainWindow sets the fields below and the two hooks."""

    documentReplaced = Signal(str)  # another document's text is in the editor (new, opened, recovered)

    editor: RewriteEditor
    message_bar: MessageBar
    prefs: Preferences
    recent_menu: QMenu
    spelling: TextLanguage
    path: Path | None
    file_format: TextDocument  # how the file was written (encoding, BOM, line breaks), its text left empty
    unreloaded: str | None = None  # set by the disk watcher when theirs could not be reloaded: Save refuses
    # The Word or OpenDocument file the text was read from while it has no file of its own: Save never writes
    # Markdown over it (it asks for a name, the file's as .md), and titles and exports are named after it.
    imported_from: Path | None = None

    def _build_file_menu(self, menus: QMenuBar, action: Callable[..., QAction]) -> None:
        """The File menu, its actions made by the window's ``action`` (text, slot, keys)."""
        self.new_action = action("&New", self.new_document, StandardKey.New)
        self.open_action = action("&Open…", self.open_dialog, StandardKey.Open)
        self.save_action = action("&Save", self.save, StandardKey.Save)
        self.save_as_action = action("Save &As…", self.save_as, StandardKey.SaveAs)
        self.saved_versions_action = action("Saved &Versions…", lambda: choose_saved_version(self))
        self.saved_versions_action.setStatusTip("Every version of this file Redraft saved: one back in the editor")
        self.export_action = action("&Export as PDF…", self.export_pdf)
        self.export_word_action = action("Export as &Word Document…", self.export_word)
        self.export_epub_action = action("Export as EP&UB E-book…", lambda: self._export("Export as EPUB", ".epub",
                                                                                      "EPUB e-book (*.epub)"))
        self.file_menu = file_menu = menus.addMenu("&File")
        file_menu.addActions([self.new_action, self.open_action])
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        file_menu.addSeparator()
        file_menu.addActions([self.save_action, self.save_as_action, self.saved_versions_action])
        file_menu.addSeparator()
        file_menu.addActions([self.export_action, self.export_word_action, self.export_epub_action])
        self.printing = Printing(self, self)  # File ▸ Print… (Ctrl+P) and Print Preview… (app/window/printing.py)
        file_menu.addActions([self.printing.preview_action, self.printing.print_action])
        file_menu.addSeparator()  # then Close Window and Quit (app.window.window_family)
        self.file_drops = FileDrops(self.open_dropped, self)  # a file dragged onto the text opens
        self.editor.viewport().installEventFilter(self.file_drops)

    def _store(self, **changes: object) -> None:
        """Save changed preferences (MainWindow's)."""
        raise NotImplementedError

    def _end_live_span(self, select_original: bool = True) -> None:
        """Stop any rewrite and put its original back before the text is replaced (MainWindow's)."""
        raise NotImplementedError

    def document_name(self) -> str:
        """The name the writer knows the document by: its file's, else that of the document it was imported from."""
        if self.path is not None:
            return self.path.name
        return f"{self.imported_from.name} (imported)" if self.imported_from is not None else "Untitled"

    def named_after(self) -> Path | None:
        """The file exports and Save As are named after and placed beside."""
        return self.path if self.path is not None else self.imported_from

    def update_title(self) -> None:
        name = self.document_name()
        self.setWindowTitle(f"{name}[*] — Redraft")
        self.setWindowModified(self.editor.document().isModified())
        self.editor.highlighter.set_markdown(is_markdown(self.path))  # a .txt's * and _ are plain characters

    def _show_text(self, text: str, path: Path | None) -> None:
        """Another document's ``text`` in the editor, highlighted once as it goes in (text_going_in)."""
        with self.editor.highlighter.text_going_in(is_markdown(path), text.count("\n")):
            self.editor.setPlainText(text)

    def saved_text(self) -> str:
        """The document's text with any developing span shown as its original."""
        editor = self.editor
        live = editor.live_range()
        span = editor.live_span
        if live is None or span is None:
            return editor.plain_text()
        start, end = live
        return editor.text_between(0, start) + span.original + editor.text_between(end, editor.end_position())

    def maybe_save(self) -> bool:
        """Whether it is fine to discard the document now (asking the writer if it has changes)."""
        if not self.editor.has_unsaved_changes():
            return True
        name = self.document_name()
        buttons = QMessageBox.StandardButton
        box = QMessageBox(QMessageBox.Icon.Warning, "Unsaved changes",
                          f"“{name}” has unsaved changes. Save them before closing?",
                          buttons.Save | buttons.Discard | buttons.Cancel, self)  # fmt: skip
        box.setDefaultButton(buttons.Save)
        # Alt+S and Alt+D, as Cancel has Esc: Qt's own labels for these two have no letter outside GNOME and KDE.
        box.button(buttons.Save).setText("&Save")
        box.button(buttons.Discard).setText("&Discard")
        answer = box.exec()
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def new_document(self) -> None:
        if not self.maybe_save():
            return
        self._end_live_span()
        self._show_text("", None)
        self.path = self.imported_from = None
        self.file_format = TextDocument(text="")
        self.editor.document().setModified(False)
        self.update_title()
        self.documentReplaced.emit("")

    def load_unsaved(self, text: str, path: Path | None, file_format: TextDocument,
                     imported_from: Path | None = None) -> None:  # fmt: skip
        """Show ``text`` as an unsaved document under ``path``'s name (a recovered one): Save writes it there; an
        untitled text imported from ``imported_from`` keeps that name (Save As offers it as Markdown beside it)."""
        self._show_text(text, path)
        self.path, self.imported_from = path, imported_from if path is None else None
        self.file_format = replace(file_format, text="")
        self.editor.document().setModified(True)
        self.update_title()
        self.documentReplaced.emit(text)

    def open_dialog(self) -> None:
        if not self.maybe_save():
            return
        folder = str(self.path.parent) if self.path is not None else str(Path.home())
        name, _filter = QFileDialog.getOpenFileName(
            self,
            "Open",
            folder,
            "Documents (*.txt *.md *.markdown *.text *.docx *.doc *.odt *.rtf);;Text and Markdown (*.txt *.md "
            "*.markdown *.text);;Word documents (*.docx *.doc);;OpenDocument texts (*.odt);;Rich Text (*.rtf);;"
            "All files (*)",
        )
        if name:
            self.open_path(Path(name), ask_encoding=True)

    def open_dropped(self, path: Path) -> bool:
        """A file dropped on the editor: opened as File ▸ Open would (unsaved changes first)."""
        return self.maybe_save() and self.open_path(path, ask_encoding=True)

    def open_path(self, path: Path, encoding: str | None = None, ask_encoding: bool = False) -> bool:
        """Load ``path`` into the editor; on any problem show why and leave the current document alone."""
        reader = reader_for(path)
        if reader is not None:
            return self.import_document(path, *reader)
        try:
            loaded = read_document(path, encoding)
        except UnknownEncodingError as error:
            chosen = self._ask_encoding(path, str(error)) if ask_encoding else None
            if chosen is None:
                self.message_bar.show_message(f"Could not open {path.name}: {error}.")
                return False
            return self.open_path(path, chosen, ask_encoding)
        except BinaryFileError as error:
            self.message_bar.show_message(f"Could not open {path.name}: {error}.")
            return False
        except FileError as error:
            self.message_bar.show_message(f"Could not open {path.name}: {error}.")
            return False
        self._end_live_span()
        self._show_text(loaded.text, path)
        self.editor.document().setModified(False)
        self.path, self.imported_from = path, None
        self.file_format = replace(loaded, text="")
        self._remember_recent(path)
        with contextlib.suppress(OSError):  # renamed or moved outside Redraft: its saved versions found again
            self.saved_versions.adopt(path, loaded.text)
        if loaded.notes:  # told once, before any save: what saving will not keep byte for byte
            self.message_bar.show_message(f"{path.name}: {'; '.join(loaded.notes)}.", "info")
        else:
            self.message_bar.hide()
        self.update_title()
        self.statusBar().showMessage(f"Opened {path.name} ({loaded.encoding})", 3000)
        self.documentReplaced.emit(loaded.text)
        return True

    def import_document(self, path: Path, kind: str, read: Reader) -> bool:
        """A Word document's, OpenDocument text's or RTF file's words in the editor as Markdown, as a document of
        its own: the file is never written over (Save asks for a name; Export as Word Document writes a .docx)."""
        try:
            imported = read(path, True)
            choice = self._tracked_changes_choice(path, imported.tracked_changes) if imported.tracked_changes else ""
            unmarked = False  # review asked for, but its words hold CriticMarkup's own signs: shown accepted
            if choice == "before":
                imported = read(path, False)
            elif choice == "review":
                marked = reviewed(imported, read(path, False))
                unmarked = marked is None
                imported = marked or imported
        except FileError as error:
            self.message_bar.show_message(f"Could not open {path.name}: {error}.")
            return False
        self._end_live_span()
        self._show_text(imported.text, None)  # Markdown, as it will be saved
        self.editor.document().setModified(False)  # nothing to lose yet: the words are still in the file
        self.path, self.imported_from = None, path
        self.file_format = TextDocument(text="")
        self._remember_recent(path)
        how = f": {'; '.join(imported.notes)}" if imported.notes else ""
        if unmarked:
            how += (". Its words hold CriticMarkup's own signs ({++, {--), so its changes could not be marked for "
                    "review one by one; open it again to read it as it was before them")  # fmt: skip
        self.message_bar.show_message(
            f"{path.name} opened from {kind} as Markdown{how}. Save keeps it as {path.with_suffix('.md').name}, "
            f"and {path.name} stays as it is; Export as Word Document writes a .docx.",
            "info", topic=UNTIL_SAVED,
        )  # fmt: skip
        self.update_title()
        self.statusBar().showMessage(f"Opened {path.name} ({kind})", 3000)
        self.documentReplaced.emit(imported.text)
        return True

    def _tracked_changes_choice(self, path: Path, count: int) -> str:
        """How the writer wants a document's tracked changes: "review" (marked in the text, to take or leave one
        by one; the default, Enter), "accept" (as whoever made them proposes; Esc) or "before" (the text as it
        was before them)."""
        them = "them" if count > 1 else "it"
        return self._choose(
            "Tracked changes",
            f"{path.name} has {f'{count} tracked changes' if count > 1 else 'a tracked change'}.\n\nReview Each "
            f"marks {them} in the text, to accept or reject one by one (Edit ▸ Tracked Changes). Accept All "
            f"opens it as whoever made {them} proposes; Before Them, as it was before {them}.",
            [("&Review Each", "review"), ("&Accept All", "accept"), ("&Before Them", "before")], escape="accept",
        )  # fmt: skip

    def _choose(self, title: str, text: str, buttons: list[tuple[str, str]], escape: str) -> str:
        """The writer's answer to a question: the value of the button chosen (the first is the default, Enter),
        ``escape``'s for Esc or a closed box."""
        box = QMessageBox(QMessageBox.Icon.Question, title, text, QMessageBox.StandardButton.NoButton, self)
        values = {box.addButton(label, QMessageBox.ButtonRole.ActionRole): value for label, value in buttons}
        box.setDefaultButton(next(iter(values)))
        box.setEscapeButton(next(button for button, value in values.items() if value == escape))
        box.exec()
        return values.get(box.clickedButton(), escape)  # type: ignore[call-overload]

    def _ask_encoding(self, path: Path, reason: str) -> str | None:
        encoding, ok = QInputDialog.getItem(
            self,
            "Choose the encoding",
            f"{path.name}: {reason}.\nWhich encoding was it written in?",
            list(FALLBACK_ENCODINGS),
            0,
            False,
        )
        return encoding if ok else None

    def save(self) -> bool:
        if self.path is None:
            return self.save_as()
        if self.unreloaded is not None:  # a newer file on disk that the editor could not show
            self.message_bar.show_message(f"{save_failure(self.unreloaded)}.", topic=UNTIL_SAVED)
            return False
        return self.save_to(self.path)

    def save_as(self) -> bool:
        if self.path is not None:
            folder = str(self.path)
        elif self.imported_from is not None:  # beside the document it came from, named as it is
            folder = str(self.imported_from.with_suffix(".md"))
        else:
            folder = str(Path.home() / "Untitled.md")
        name, _filter = QFileDialog.getSaveFileName(
            self, "Save As", folder, "Markdown (*.md);;Text (*.txt);;All files (*)"
        )
        return self.save_to(Path(name)) if name else False

    def export_pdf(self) -> bool:
        """File ▸ Export as PDF…: beside the document, named as it is, unless the writer chooses otherwise."""
        return self._export("Export as PDF", ".pdf", "PDF (*.pdf)")

    def export_word(self) -> bool:
        """File ▸ Export as Word Document…: as Export as PDF, a .docx."""
        return self._export("Export as Word Document", ".docx", "Word document (*.docx)")

    def _export(self, title: str, suffix: str, kind: str) -> bool:
        verb = "e-book" if suffix == ".epub" else "export"
        changes = self._changes_for_export(title, word=suffix == ".docx", verb=verb)
        if changes is None:
            return False
        origin = self.named_after()
        suggested = origin.with_suffix(suffix) if origin is not None else Path.home() / f"Untitled{suffix}"
        name, _filter = QFileDialog.getSaveFileName(self, title, str(suggested), kind)
        if not name:
            return False
        target = Path(name) if name.lower().endswith(suffix) else Path(name + suffix)
        notes_as_comments = suffix == ".docx" and self._notes_as_comments()
        return self.export_to(target, notes_as_comments, changes)

    def _changes_for_export(self, title: str, word: bool, verb: str = "export") -> str | None:
        """What an export (or a print, ``verb``) does with the tracked changes still marked in the text (Edit ▸
        Tracked Changes): "track" (the default: Word's own tracked changes, or on a PDF's or the printer's pages
        struck through and underlined), "accept" or "before"; None: the writer cancelled. The text keeps them."""
        count = len(marks(self.saved_text()))
        if not count:
            return "accept"
        them, said = ("them", f"{count} tracked changes") if count > 1 else ("it", "a tracked change")
        pages = "in the PDF " if verb == "export" else ""
        if verb == "e-book":  # an e-book shows no changes: made, or as before them
            answer = self._choose(title, f"This text has {said} still to decide. Export it with {them} accepted, or "
                                  f"as it was before {them}?\n\nThe text here keeps {them} marked.",
                                  [("&Accept All", "accept"), ("&Before Them", "before"), ("Cancel", "cancel")],
                                  escape="cancel")  # fmt: skip
            return None if answer == "cancel" else answer
        answer = self._choose(
            title,
            f"This text has {said} still to decide. "
            + (f"Keep {them} in the Word document as {'tracked changes' if count > 1 else 'a tracked change'}, or "
               f"export it with {them} accepted, or as it was before {them}?" if word else f"Show {them} {pages}"
               f"struck through and underlined, or {verb} it with {them} accepted, or as it was before {them}?")
            + f"\n\nThe text here keeps {them} marked.",
            [("&Keep Tracked" if word else "&Show Changes", "track"), ("&Accept All", "accept"),
             ("&Before Them", "before"), ("Cancel", "cancel")], escape="cancel",
        )  # fmt: skip
        return None if answer == "cancel" else answer

    def _notes_as_comments(self) -> bool:
        """Whether a Word export keeps the text's notes as Word comments: asked where it has any (an editor's
        comments brought in from Word come back to them so), else no: a note to self stays the writer's."""
        count = len(inline_notes(self.saved_text())) if is_markdown(self.path) else 0
        if not count:
            return False
        answer = QMessageBox.question(
            self, "Notes as Word comments",
            (f"This text has {count} notes (<!-- … -->), such as an editor's comments brought in from Word. Put "
             "them in the Word document as comments?" if count > 1 else "This text has a note (<!-- … -->), such "
             "as an editor's comment brought in from Word. Put it in the Word document as a comment?")
            + "\n\nNo leaves notes out, as every export does.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No,
        )  # fmt: skip
        return answer == QMessageBox.StandardButton.Yes

    def export_to(self, path: Path, notes_as_comments: bool = False, changes: str = "accept") -> bool:
        """The document exported to ``path``: a Word document for a .docx (its notes as comments if
        ``notes_as_comments``), else a PDF. Tracked changes marked in the text are never printed as their signs:
        ``changes`` "track" keeps them (a Word document's own, a PDF's shown), "accept" makes them, "before"
        leaves them out."""
        origin = self.named_after()
        name = origin.stem if origin is not None else "Untitled"
        text, markdown, country = self.saved_text(), is_markdown(self.path), QLocale.system().territory()
        tracked = changes == "track"
        text = text if tracked else settle(text, accept=changes != "before")
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)  # a novel takes a second or two
        try:
            folder = origin.parent if origin is not None else None
            if path.suffix.lower() == ".epub":
                language = word_language(self.spelling.language, QLocale.system())
                missing = export_epub(text, markdown, path, name, language, folder, self.prefs.author_name)
                done = f"Exported {path.name}"
            elif path.suffix.lower() == ".docx":
                missing = export_docx(text, markdown, path, name, country, self.prefs.font_family,
                                      self.spelling.language, folder, notes_as_comments, tracked,
                                      self.prefs.author_name)  # fmt: skip
                done = f"Exported {path.name}"
            else:
                pages, missing = export_pdf(text, markdown, path, name, country, self.prefs.font_family, folder,
                                            tracked, self.prefs.author_name)  # fmt: skip
                done = f"Exported {path.name} ({pages} page{'s' if pages != 1 else ''})"
            if missing:  # said where it stays until read: an editor should not be the one to notice
                some = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
                self.message_bar.show_message(
                    f"Exported {path.name} without {len(missing)} picture{'s' if len(missing) > 1 else ''} "
                    f"it could not read ({some}); their names mark their places."
                )
        except FileError as error:
            self.message_bar.show_message(f"{save_failure(str(error))}.")
            return False
        finally:
            QApplication.restoreOverrideCursor()
        self.statusBar().showMessage(done, 5000)
        return True

    @property
    def saved_versions(self) -> SavedVersions:
        """Where saves are kept (File ▸ Saved Versions…), under the data folder."""
        return SavedVersions(user_dirs().data)

    def save_to(self, path: Path) -> bool:
        text = self.saved_text()
        unkept = self._keep_what_is_there(path)
        before = self.path
        try:
            save_document(path, replace(self.file_format, text=text))
        except FileError as error:
            self.message_bar.show_message(f"{save_failure(str(error))}.", topic=UNTIL_SAVED)
            return False
        self.path, self.imported_from = path, None
        self.editor.mark_saved()
        self.message_bar.resolve(UNTIL_SAVED)  # a failure before, or what an import or a recovery said of Save
        self._remember_recent(path)
        self.update_title()
        try:
            if before is not None and before != path:  # Save As: the new file's history goes on from the old's
                self.saved_versions.carry(before, path)
            self.saved_versions.keep(path, text)
        except OSError as error:
            unkept = unkept or str(error.strerror or error)
        if unkept:  # the save stands; the safety net's hole is said, not hidden
            self.statusBar().showMessage(f"Saved {path.name}, but no copy went to Saved Versions: {unkept}", 10000)
        else:
            self.statusBar().showMessage(f"Saved {path.name}", 3000)
        return True

    def _keep_what_is_there(self, path: Path) -> str:
        """Before a save replaces ``path``: keep the text it holds unless it is kept already (a file written
        elsewhere, saved over for the first time, or changed by another program). Why not, or ""."""
        if not path.is_file():
            return ""
        try:
            there = read_document(path, self.file_format.encoding if path == self.path else None)
        except FileError:
            return ""  # not a text Redraft can read (Save As over another kind of file): nothing to keep
        try:
            self.saved_versions.keep(path, there.text, datetime.fromtimestamp(path.stat().st_mtime))
        except OSError as error:
            return str(error.strerror or error)
        return ""

    def _remember_recent(self, path: Path) -> None:
        entry = str(path.resolve())
        recent = (entry, *(item for item in self.prefs.recent_files if item != entry))
        self._store(recent_files=recent[:MAX_RECENT_FILES])

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        for entry in self.prefs.recent_files:
            action = self.recent_menu.addAction(entry)
            action.triggered.connect(lambda _checked=False, name=entry: self._open_recent(Path(name)))
        if not self.prefs.recent_files:
            self.recent_menu.addAction("No recent files").setEnabled(False)

    def _open_recent(self, path: Path) -> None:
        if self.maybe_save():
            self.open_path(path, ask_encoding=True)

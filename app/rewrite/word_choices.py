"""Rewrite ▸ Words That Fit (Ctrl+F7, LibreOffice's key for its thesaurus, and on the right-click menu): the word at
the cursor, or the one word selected, read by the model in its place with the text on both sides, and the other
words it finds fitting there offered in a list under the word. Choosing one puts it in, as one undo step.

Not a thesaurus: the choices are what fits the sentence, which is often a synonym ("wonderful": great, happy,
special) and sometimes another thought ("watched": found, took, opened). The reading runs on the model's thread
(:class:`WordReader`, beside the rewrite worker, so it never runs during an edit) and takes one forward pass
(:mod:`model.edit.word_choices`): about 45 ms on the built-in model on two cores. A team server is asked for its
likeliest ids at the word's place, the same reading from its top twenty (``ServerEngine.word_choices``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QPoint, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence, QTextCursor
from PySide6.QtWidgets import QMenu, QStatusBar

from app.rewrite.worker import ModelWorker, RewriteService, describe_failure
from app.window.announce import show_quietly
from app.window.dictionary import Dictionary
from app.window.editor_widget import RewriteEditor
from app.window.spelling import qt_ranges
from model.edit.request import WHOLE_WORD

if TYPE_CHECKING:  # the model's modules import torch, which loads on the model thread, after the window shows
    from model.edit.word_choices import WordChoice

log = logging.getLogger(__name__)

# Characters of text read on either side of the word: more than the context any model reads of them (the
# engine keeps the last ``context_budget`` tokens before it and a canvas after it).
CONTEXT_CHARS = 12_000
# Characters of the paragraph shown either side of a choice as the arrows reach it.
PREVIEW_CHARS = 30
# Choices listed. Twice as many are read, as a word piece the model offers ("Qu" for "Don") is left out: a choice
# is listed where the spelling dictionary knows it or the text around it has it (a name).
CHOICES = 8
TIP = "Other words the model finds fitting in place of the word at the cursor, from the text on both sides"
DEVELOPING = "A rewrite is developing: Words That Fit reads the text once it has settled."


@dataclass(frozen=True)
class WordJob:
    """One word to read: the text before and after it, and the ticket its answer comes back with."""

    ticket: int
    prefix: str
    word: str
    suffix: str


class WordReader(QObject):
    """Lives in the model thread beside the rewrite worker and reads with its engine, so a reading waits for an
    edit in progress instead of running beside it."""

    ready = Signal(int, object)  # ticket, list[WordChoice]
    failed = Signal(int, str)  # ticket, why in words

    def __init__(self, worker: ModelWorker) -> None:
        super().__init__()
        self._worker = worker

    @Slot(object)
    def read(self, job: WordJob) -> None:
        engine = self._worker.engine
        if engine is None:
            self.failed.emit(job.ticket, "no model is loaded")
            return
        try:
            choices = engine.word_choices(job.prefix, job.word, job.suffix, 2 * CHOICES)
        except Exception as error:  # said in words; the traceback to the log only
            log.info("reading the words that fit failed", exc_info=True)
            self.failed.emit(job.ticket, describe_failure(error))
            return
        self.ready.emit(job.ticket, choices)


class WordsWindow(Protocol):
    """What Words That Fit uses of the main window."""

    @property
    def editor(self) -> RewriteEditor: ...

    @property
    def service(self) -> RewriteService: ...

    def statusBar(self) -> QStatusBar: ...


class WordChoices(QObject):
    """The action, the right-click entry, the reading's round trip and the list under the word."""

    _readRequested = Signal(object)

    def __init__(self, window: WordsWindow, dictionary: Dictionary, menu: QMenu, before: QAction) -> None:
        """Rewrite ▸ Words That Fit goes into ``menu`` before ``before``; ``dictionary`` is spelling's, which says
        what is a word."""
        super().__init__(menu)
        self.window = window
        self.dictionary = dictionary
        worker = window.service.worker
        self.action = QAction("&Words That Fit…", menu)
        self.action.setShortcut(QKeySequence("Ctrl+F7"))
        self.action.setToolTip(TIP)
        self.action.triggered.connect(lambda _checked=False: self.choose())
        menu.insertAction(before, self.action)
        self.reader = WordReader(worker)
        self.reader.moveToThread(worker.thread())
        worker.thread().finished.connect(self.reader.deleteLater)
        self._readRequested.connect(self.reader.read)
        self.reader.ready.connect(self._offer)
        self.reader.failed.connect(self._failed)
        self._ticket = 0
        # The word being read, as a cursor that follows the writer's edits elsewhere while it is read, and its text.
        self._word: tuple[QTextCursor, str] | None = None
        self.menu: QMenu | None = None  # the list of choices last shown
        self._text_words: set[str] = set()  # the words of the text read around the word
        window.editor.context_menu_extras.append(self.offer)

    def reason(self, no_model: str, developing: bool) -> str:
        """Why the action cannot run now ("" where it can)."""
        if developing:
            return DEVELOPING
        return no_model

    def word_range(self, cursor: QTextCursor) -> tuple[int, int] | None:
        """The document range of the word ``cursor`` is in (or ends, or starts), or of its selection where that
        is one word, spaces at its edges aside; None where there is no such word."""
        block = cursor.document().findBlock(cursor.selectionStart())
        text, base = block.text(), block.position()
        matches = list(WHOLE_WORD.finditer(text))
        ranges = [(base + a, base + b) for a, b in qt_ranges(text, [m.span() for m in matches])]
        if cursor.hasSelection():
            start, end = cursor.selectionStart(), cursor.selectionEnd()
            inside = [(a, b) for a, b in ranges if start <= a and b <= end]
            if len(inside) != 1:
                return None
            a, b = inside[0]
            between = self.window.editor.text_between(start, a) + self.window.editor.text_between(b, end)
            return inside[0] if not between.strip() else None
        at = cursor.position()
        return next(((a, b) for a, b in ranges if a <= at <= b), None)

    def choose(self, cursor: QTextCursor | None = None) -> bool:
        """Read the word at ``cursor`` (the caret's where None); the list appears under it when the model has
        read it. Returns whether a reading was asked for (the status bar says why not)."""
        editor = self.window.editor
        status = self.window.statusBar()
        cursor = cursor if cursor is not None else editor.textCursor()
        found = self.word_range(cursor)
        if found is None:
            several = cursor.hasSelection() and len(WHOLE_WORD.findall(cursor.selectedText())) > 1
            status.showMessage(
                "Words That Fit reads one word: select just one, or put the cursor in it (Ctrl+R rewrites more)."
                if several else "Put the cursor in a word first: Words That Fit offers others in its place.",
                6000,
            )  # fmt: skip
            return False
        start, end = found
        span = editor.live_span
        if span is not None and span.touches(start, end):
            # The action waits while a span develops, so the word is in a draft waiting for Enter or Esc.
            status.showMessage(f"“{editor.text_between(start, end)}” is in the draft waiting: Enter accepts it, Esc "
                               "rejects it; then Words That Fit can read it.", 6000)  # fmt: skip
            return False
        word = QTextCursor(editor.document())
        word.setPosition(start)
        word.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        editor.setTextCursor(word)  # the writer sees which word is read
        self._ticket += 1
        text = editor.text_between(start, end)
        self._word = (QTextCursor(word), text)
        prefix = editor.text_between(max(0, start - CONTEXT_CHARS), start)
        suffix = editor.text_between(end, min(editor.end_position(), end + CONTEXT_CHARS))
        self._text_words = set(WHOLE_WORD.findall(prefix)) | set(WHOLE_WORD.findall(suffix))
        self._readRequested.emit(WordJob(self._ticket, prefix, text, suffix))
        status.showMessage(f"Reading what fits in place of “{text}”…")
        return True

    def offer(self, menu: QMenu, cursor: QTextCursor) -> None:
        """The right-click menu: Words That Fit for the word under the pointer (where the action can run)."""
        found = self.word_range(cursor)
        span = self.window.editor.live_span
        if found is None or not self.action.isEnabled() or span is not None and span.touches(*found):
            return  # a draft's words are the model's until it is accepted: nothing to offer for them yet
        word = self.window.editor.text_between(*found)
        entry = QAction(f"Words That Fit “{word}”…", menu)
        entry.setShortcut(self.action.shortcut())
        under_pointer = QTextCursor(cursor)  # a right-click does not move the caret
        entry.triggered.connect(lambda _=False: self.choose(under_pointer))
        menu.addSeparator()
        menu.addAction(entry)

    def _current(self, ticket: int) -> QTextCursor | None:
        """The word read for ``ticket``, if it is the latest reading and still holds its text; else None."""
        if ticket != self._ticket or self._word is None:
            return None
        word, text = self._word
        if word.selectedText() != text:
            self._word = None
            self.window.statusBar().showMessage(f"“{text}” changed while it was read: press Ctrl+F7 again.", 6000)
            return None
        return word

    @Slot(int, object)
    def _offer(self, ticket: int, choices: list[WordChoice]) -> None:
        word = self._current(ticket)
        if word is None:
            return
        status = self.window.statusBar()
        original = word.selectedText()
        choices = listed(choices, self.dictionary, self._text_words)
        if not choices:
            status.showMessage(f"The model finds no other single word for “{original}” here.", 8000)
            return
        editor = self.window.editor
        if self.menu is not None:
            self.menu.deleteLater()  # one list at a time, not one kept per reading
        menu = QMenu(editor)
        menu.setToolTipsVisible(True)
        heading = menu.addAction(f"In place of “{original}”:")
        heading.setEnabled(False)
        for choice in choices:
            entry = menu.addAction(choice.word)
            entry.setData(choice.word)
            entry.setToolTip(f"The model's probability for it here: {choice.share:.0%}")
            entry.triggered.connect(lambda _=False, w=choice.word: self.put(ticket, w))
        # The line each choice would make, in the status bar as the arrows reach it (not said: the list is).
        block = word.block()
        start, end = word.selectionStart(), word.selectionEnd()
        before = editor.text_between(max(block.position(), start - PREVIEW_CHARS - 20), start)
        after = editor.text_between(end, min(block.position() + block.length() - 1, end + PREVIEW_CHARS + 20))
        def preview(entry: QAction) -> None:
            if entry.data():
                line = in_context(before, entry.data(), after)
                show_quietly(status, f"{line} · Enter puts it in")

        def closed() -> None:  # Esc or a click elsewhere: a preview left showing would say the word changed
            if status.currentMessage().endswith(" · Enter puts it in"):
                status.showMessage(f"“{original}” kept.", 3000)

        menu.hovered.connect(preview)
        menu.aboutToHide.connect(closed)
        self.menu = menu
        fit = "1 word fits" if len(choices) == 1 else f"{len(choices)} words fit"
        status.showMessage(f"{fit} in place of “{original}”: choose one, or Esc.", 8000)
        at_start = QTextCursor(word.document())
        at_start.setPosition(word.selectionStart())
        below = editor.cursorRect(at_start).bottomLeft()
        menu.popup(editor.viewport().mapToGlobal(below + QPoint(0, 2)))
        menu.setActiveAction(menu.actions()[1])

    def put(self, ticket: int, choice: str) -> bool:
        """Put ``choice`` in place of the word read for ``ticket``: the writer's edit, one undo step, the new word
        selected. Refused (False) where the word has changed since it was read."""
        word = self._current(ticket)
        if word is None:
            return False
        editor = self.window.editor
        original = word.selectedText()
        start = word.selectionStart()
        with editor.writer_edit():
            word.insertText(choice)
        chosen = QTextCursor(editor.document())
        chosen.setPosition(start)
        chosen.setPosition(start + len(choice.encode("utf-16-le")) // 2, QTextCursor.MoveMode.KeepAnchor)
        editor.setTextCursor(chosen)
        self._word = None
        # While a draft waits, Ctrl+Z takes the draft back first (the window's undo), so the hint would mislead.
        hint = "" if editor.live_span is not None else " (Ctrl+Z undoes it)"
        self.window.statusBar().showMessage(f"“{original}” → “{choice}”{hint}", 8000)
        return True

    @Slot(int, str)
    def _failed(self, ticket: int, why: str) -> None:
        if self._current(ticket) is not None:
            self.window.statusBar().showMessage(f"Words That Fit could not read the word: {why}", 8000)


def listed(choices: list[WordChoice], dictionary: Dictionary, text_words: set[str]) -> list[WordChoice]:
    """The first ``CHOICES`` of ``choices`` that are words: ones the spelling dictionary knows (in any case; every
    one while its list loads), or ones the text around the word has (a name of the story)."""
    return [choice for choice in choices if dictionary.knows(choice.word) or choice.word in text_words][:CHOICES]


def in_context(before: str, choice: str, after: str, room: int = PREVIEW_CHARS) -> str:
    """The words a choice would stand among: up to ``room`` characters of the text either side, cut between
    words, an ellipsis where more of the paragraph goes on."""
    head, tail = before[-room:], after[:room]
    if len(before) > room and " " in head:
        head = "…" + head.split(" ", 1)[1]
    if len(after) > room and " " in tail:
        tail = tail.rsplit(" ", 1)[0] + "…"
    return head + choice + tail

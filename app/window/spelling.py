"""Spelling: the words no dictionary knows get a red wavy underline, and a right-click on one offers the nearest
words the dictionary does know, Add to Dictionary and Ignore (View ▸ Check Spelling). Display only, like the
Markdown cues: the underline is never part of the text, its undo or the saved file. A model's draft is left
unmarked until it is the writer's (accepted); a developing span is noise the dictionary would paint red.

The words (app/window/dictionary.py) are pyspellchecker's list for the language chosen in View ▸ Spelling
Language (at first the system's, where it is one of them, else English) and the writer's own, one a line in
``words.txt`` in Redraft's data folder. A document that plainly reads as another of the languages offered is
checked in its own, for itself only. A paragraph in another language is left unmarked rather than painted red
throughout."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QLocale, QObject, Signal, SignalInstance
from PySide6.QtGui import QAction, QActionGroup, QKeySequence, QTextCursor, QTextFormat
from PySide6.QtWidgets import QMenu, QStatusBar

from app.dialogs.message_bar import MessageBar
from app.settings import Preferences
from app.userdirs import user_dirs
from app.window.dictionary import (
    ENGLISH,
    LANGUAGES,
    PERSONAL_WORDS,
    WORD,
    Dictionary,
    detect_language,
    misspelled,
)
from app.window.editor_widget import RewriteEditor
from app.window.live_span import ASTRAL, utf16_length

if TYPE_CHECKING:
    from app.window.window_family import WindowFamily


def qt_ranges(text: str, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``ranges`` of ``text`` (Python's characters) in Qt's positions, which count UTF-16 units: an emoji
    before a word is two."""
    if text.isascii() or not ASTRAL.search(text):
        return ranges
    return [(utf16_length(text[:start]), utf16_length(text[:end])) for start, end in ranges]


class SpellingWindow(Protocol):
    """What spelling uses of the main window."""

    @property
    def editor(self) -> RewriteEditor: ...

    @property
    def prefs(self) -> Preferences: ...

    @property
    def message_bar(self) -> MessageBar: ...

    def statusBar(self) -> QStatusBar: ...

    @property
    def documentReplaced(self) -> SignalInstance: ...

    @property
    def family(self) -> WindowFamily: ...


class Spelling(QObject):
    """View ▸ Check Spelling: the editor's underlines (through its highlighter) and its right-click offers."""

    loaded = Signal()
    languageChosen = Signal(str)  # a language's code (app.window.dictionary.LANGUAGES), to be remembered
    dictionary: Dictionary

    def __init__(self, window: SpellingWindow, parent: QObject) -> None:
        super().__init__(parent)
        self.window = window
        chosen = window.prefs.spelling_language
        # The writer's language (View ▸ Spelling Language, else the system's), and the one checked now: a
        # document that plainly reads as another offered language is checked in its own (document_replaced).
        self.preferred = self.language = chosen if chosen in LANGUAGES else system_language()
        # The writer's own words are those of the window this one was opened from (File ▸ New Window), if any.
        shared = next((sibling.spelling.dictionary.words for sibling in window.family.siblings()
                       if isinstance(sibling.spelling, Spelling)), None)  # fmt: skip
        self.dictionary = Dictionary(user_dirs().data / PERSONAL_WORDS, self.language, shared)
        self._loading: threading.Thread | None = None
        self.action = QAction("Check &Spelling", parent)
        self.action.setCheckable(True)
        self.action.setChecked(window.prefs.check_spelling)
        self.action.setStatusTip("Underline the words the dictionary does not know; right-click one for others")
        self.action.setShortcut(QKeySequence("Shift+F7"))
        self.action.toggled.connect(self._toggled)
        self.next_action = QAction("Next &Misspelling", parent)
        self.next_action.setShortcut(QKeySequence("F7"))
        self.next_action.setStatusTip("Select the next word the dictionary does not know (the menu key offers others)")
        self.next_action.triggered.connect(self.select_next)
        # View ▸ Spelling Language: one word list at a time, each language named in its own.
        self.language_menu = QMenu("Spelling &Language")
        self.language_menu.setStatusTip("The language whose words spelling knows")
        languages = QActionGroup(self.language_menu)
        for code, name in LANGUAGES.items():
            choice = languages.addAction(f"&{name}")  # the six names start with six letters
            choice.setCheckable(True)
            choice.setChecked(code == self.language)
            choice.setData(code)
            choice.triggered.connect(lambda _=False, c=code: self.choose_language(c))
        self.language_menu.addActions(languages.actions())
        window.editor.context_menu_extras.append(self.offer)
        self._held: int | None = None  # where the caret ended a word left unmarked while it is typed
        window.editor.cursorPositionChanged.connect(self._caret_moved)
        self.loaded.connect(self._loaded)
        window.documentReplaced.connect(self.document_replaced)
        if window.prefs.check_spelling:
            self.start()

    def start(self) -> None:
        """Load the chosen language's word list on a thread; the underlines appear when it is in. One load at a
        time: one asked for meanwhile (another language chosen) starts when it ends (:meth:`_loaded`)."""
        if self._loading is not None and self._loading.is_alive():
            return
        if self.dictionary.ready and self.dictionary.language == self.language:
            return
        self._loading = threading.Thread(target=self._load, args=(self.language,), name="spelling", daemon=True)
        self._loading.start()

    def _load(self, language: str) -> None:
        self.dictionary.load(language)
        # RuntimeError: the window closed while the list loaded (Qt deleted this), so nobody is left to tell.
        with contextlib.suppress(RuntimeError):
            self.loaded.emit()  # queued to the window's thread

    def wait_loaded(self, timeout: float = 30.0) -> None:
        """Block until the chosen language's list is in (a right-click or F7 that comes before it)."""
        if self._loading is not None:
            self._loading.join(timeout)
        if self.dictionary.language != self.language:  # chosen while another loaded: read it here (cached)
            self.dictionary.load(self.language)

    def _loaded(self) -> None:
        if self.dictionary.error:
            self.window.statusBar().showMessage(f"Spelling: {self.dictionary.error}.", 8000)
        elif self.dictionary.language != self.language:
            self.start()  # another language was chosen while this one loaded
            return
        self._apply()

    def choose_language(self, language: str) -> None:
        """View ▸ Spelling Language: the writer's language from now on, remembered (and spelling checked)."""
        self.preferred = language
        self.languageChosen.emit(language)
        self._use(language)
        self.window.statusBar().showMessage(f"Spelling: {LANGUAGES[language]}.", 4000)

    def document_replaced(self, text: str) -> None:
        """Another document in the window: checked in its own language where it plainly reads as another of
        those offered (for this document only), else in the writer's."""
        found = detect_language(text) or self.preferred
        if found == self.language:
            return
        self._use(found, turn_on=False)
        if found != self.preferred:
            self.window.statusBar().showMessage(
                f"Spelling in {LANGUAGES[found]}: this document reads as {LANGUAGES[found]} (View ▸ Spelling "
                "Language changes it).", 8000)  # fmt: skip

    def _use(self, language: str, turn_on: bool = True) -> None:
        """Check the words against ``language``'s list; ``turn_on``: turn spelling on if it was off."""
        self.language = language
        for choice in self.language_menu.actions():
            choice.setChecked(choice.data() == language)
        if self.action.isChecked():
            self.start()
        elif turn_on:
            self.action.setChecked(True)  # choosing a language is asking for its spelling

    def _toggled(self, on: bool) -> None:
        if on:
            self.start()
        self._apply()

    def _apply(self) -> None:
        on = self.action.isChecked() and self.dictionary.ready
        self.window.editor.highlighter.set_misspellings(self.misspellings if on else None)

    def misspellings(self, text: str, block_start: int, hold_typed: bool = True) -> list[tuple[int, int]]:
        """The misspelled words of a block's ``text`` (ranges in it, in Qt's positions), none of a rewrite's;
        ``hold_typed``: nor the one the caret ends."""
        dictionary = self.dictionary
        found = qt_ranges(text, list(misspelled(text, dictionary.knows, dictionary.function_words)))
        caret = self.window.editor.textCursor()
        typing_at = caret.position() - block_start
        if hold_typed and found and not caret.hasSelection() and any(end == typing_at for _, end in found):
            # The word the caret ends is likely still being typed ("harb" on the way to "harbour"): marked once
            # the caret moves on (_caret_moved), not at every letter.
            found = [(start, end) for start, end in found if end != typing_at]
            self._held = caret.position()
        if self.window.editor.live_span is None or not found:
            return found
        # The span's text is painted in its own inks (the writer's text has none): known by its formats, which
        # are in place when the highlighter runs, where the span's bounds move only after a paint.
        painted = []
        fragments = self.window.editor.document().findBlock(block_start).begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            if fragment.charFormat().hasProperty(QTextFormat.Property.ForegroundBrush):
                at = fragment.position() - block_start
                painted.append((at, at + fragment.length()))
            fragments += 1
        return [(a, b) for a, b in found if not any(p < b and a < q for p, q in painted)]

    def _caret_moved(self) -> None:
        held = self._held
        if held is not None and self.window.editor.textCursor().position() != held:
            self._held = None
            block = self.window.editor.document().findBlock(held)
            if block.isValid() and self.window.editor.highlighter.checks_spelling:
                self.window.editor.highlighter.rehighlightBlock(block)

    def select_next(self) -> None:
        """Select the first misspelled word after the selection (from the top again past the end), so the
        keyboard's menu key can offer its mends; the status bar says when there is none."""
        editor = self.window.editor
        if not self.action.isChecked():
            self.action.setChecked(True)
        self.wait_loaded()
        document = editor.document()
        after = editor.textCursor().selectionEnd()
        block = document.findBlock(after)
        for _ in range(document.blockCount() + 1):  # every block once, the caret's own twice (both halves)
            start = block.position()
            for a, b in self.misspellings(block.text(), start, hold_typed=False):
                if start + a >= after:
                    editor.select_range(start + a, start + b)
                    editor.ensureCursorVisible()
                    return
            block = block.next()
            if not block.isValid():
                block, after = document.firstBlock(), 0
        self.window.statusBar().showMessage("No misspelled words.", 4000)

    def span_ended(self, start: int, end: int) -> None:
        """Mark the words of a span now the writer's (accepted, or the original back)."""
        document = self.window.editor.document()
        block = document.findBlock(start)
        while block.isValid() and block.position() <= end:
            self.window.editor.highlighter.rehighlightBlock(block)
            block = block.next()

    def offer(self, menu: QMenu, cursor: QTextCursor) -> None:
        """Put the dictionary's words for the misspelled word under the pointer at the top of ``menu``."""
        span = self.window.editor.live_span
        if not self.action.isChecked() or span is not None and span.touches(cursor.position(), cursor.position()):
            return  # a rewrite's words are the model's until accepted: nothing of them is replaced from here
        self.wait_loaded()
        block, at = cursor.block(), cursor.positionInBlock()
        # The word under the pointer, even the one the caret ends (a right-click does not move the caret).
        words = self.misspellings(block.text(), block.position(), hold_typed=False)
        found = [(a, b) for a, b in words if a <= at <= b]
        if not found:
            self._offer_removal(menu, block.text(), at)
            return
        start, end = block.position() + found[0][0], block.position() + found[0][1]
        word = self.window.editor.text_between(start, end)
        first = top_of(menu)
        suggestions = self.dictionary.suggestions(word)
        for suggestion in suggestions:
            action = QAction(suggestion, menu)
            action.triggered.connect(lambda _=False, s=suggestion: self.replace(start, end, s))
            menu.insertAction(first, action)
        if not suggestions:
            menu.insertAction(first, disabled(menu, "(no suggestions)"))
        menu.insertSeparator(first)
        add = QAction(f"Add “{word}” to Dictionary", menu)
        add.triggered.connect(lambda: self._remember(word, self.dictionary.add))
        ignore = QAction(f"Ignore “{word}”", menu)
        ignore.triggered.connect(lambda: self._remember(word, self.dictionary.ignore))
        menu.insertActions(first, [add, ignore])
        menu.insertSeparator(first)

    def _offer_removal(self, menu: QMenu, text: str, at: int) -> None:
        """A word the writer added to the dictionary: offer to take it off again (an addition by mistake)."""
        matches = list(WORD.finditer(text))
        spans = qt_ranges(text, [match.span() for match in matches])
        word = next((match.group() for match, (a, b) in zip(matches, spans, strict=True) if a <= at <= b), None)
        if word is None or word not in self.dictionary.added:
            return
        first = top_of(menu)
        remove = QAction(f"Remove “{word}” from Dictionary", menu)
        remove.triggered.connect(lambda: self._remember(word, self.dictionary.remove))
        menu.insertAction(first, remove)
        menu.insertSeparator(first)

    def replace(self, start: int, end: int, word: str) -> None:
        """Put ``word`` where the misspelled one is: the writer's edit, one undo step."""
        editor = self.window.editor
        cursor = QTextCursor(editor.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        with editor.writer_edit():
            cursor.insertText(word)

    def _remember(self, word: str, how: Callable[[str], None]) -> None:
        try:
            how(word)
        except OSError as error:
            self.window.message_bar.show_message(f"Your words ({self.dictionary.personal}) could not be changed: "
                                                 f"{error}.")  # fmt: skip
        for member in self.window.family.members():  # the word is every window's now
            member.editor.highlighter.show_again()


def system_language() -> str:
    return language_for(QLocale.system().name())


def language_for(locale_name: str) -> str:
    """A locale's language ("fr_CA": "fr") where a word list is offered for it (LANGUAGES), else English."""
    code = locale_name.split("_", 1)[0].lower()
    return code if code in LANGUAGES else ENGLISH


def top_of(menu: QMenu) -> QAction:
    """The action spelling's offers go above: Qt's own first entry."""
    return menu.actions()[0] if menu.actions() else menu.addSeparator()


def disabled(menu: QMenu, text: str) -> QAction:
    action = QAction(text, menu)
    action.setEnabled(False)
    return action

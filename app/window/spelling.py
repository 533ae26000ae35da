"""Spelling: the words no dictionary knows get a red wavy underline, and a right-click on one offers the nearest
words the dictionary does know, Add to Dictionary and Ignore (View ▸ Check Spelling). Display only, like the
Markdown cues: the underline is never part of the text, its undo or the saved file. A model's draft is left
unmarked until it is the writer's (accepted); a developing span is noise the dictionary would paint red.

The words are pyspellchecker's English list (US spelling; the British -our, -ise, -tre… forms of the words it
knows are accepted too) and the writer's own, one a line in ``words.txt`` in Redraft's data folder. A
paragraph in another language is left unmarked rather than painted red throughout."""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence, QTextCursor, QTextFormat
from PySide6.QtWidgets import QMenu, QStatusBar

from app.dialogs.message_bar import MessageBar
from app.settings import Preferences
from app.userdirs import user_dirs
from app.window.editor_widget import RewriteEditor
from app.window.live_span import utf16_length

# A word: letters, with apostrophes inside it (don't, o'clock); digits and underscores end it, so "mp3" and
# snake_case names are not words to check.
WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
# Not prose: links, e-mail addresses, Markdown code and a Markdown link's target ("[the map](maps/bay.png)").
NOT_PROSE = re.compile(r"\S+://\S+|www\.\S+|[\w.+-]+@[\w-]+\.[\w.-]+|`[^`\n]*`|\]\([^)\s]*\)")
# What glues a word into a name or a number rather than prose: a digit or an underscore beside it.
GLUE = re.compile(r"[\d_]")
# British spellings of words the (US) list holds: the first form is accepted where the second is known.
BRITISH = (("our", "or"), ("isation", "ization"), ("ise", "ize"), ("ising", "izing"), ("yse", "yze"),
           ("tre", "ter"), ("ogue", "og"), ("ence", "ense"), ("lled", "led"), ("lling", "ling"), ("ae", "e"),
           ("oe", "e"), ("mme", "m"))  # fmt: skip
# A character outside the Basic Multilingual Plane: two UTF-16 units in Qt's positions, one in Python's.
ASTRAL = re.compile("[\U00010000-\U0010FFFF]")
# A paragraph of at least this many words, this share of them unknown, and none of English's commonest words
# is in another language: it is left unmarked (reads_foreign). Words other languages also use (in, on, was,
# die) are not among these.
FOREIGN_MIN_WORDS = 8
FOREIGN_UNKNOWN_SHARE = 0.4
ENGLISH_FUNCTION_WORDS = frozenset(
    "the and of is with that this for it he she they you are were have had not but at by from which would "
    "there their what been".split()
)
MAX_SUGGESTIONS = 6
# A suggestion's likelihood: its typo's weight (typo_weight) times its word's frequency to this power. Below 1,
# so the kind of slip outweighs a frequency a few times higher: "wich" is "which" before "with".
FREQUENCY_WEIGHT = 0.5
LEFT_OUT = SWAPPED = SPLIT = 1.0
# A word run together from two is offered split only where both are this common (about the 5,000 commonest).
SPLIT_MIN_FREQUENCY = 5e-5
DOUBLED = 0.6
NEIGHBOUR = 0.5
OTHER_SLIP = 0.25
# Each letter's row and column on a QWERTY keyboard, each row set off from the one above as keys are.
KEY_PLACES = {
    key: (row, column + offset)
    for row, (keys, offset) in enumerate((("qwertyuiop", 0.0), ("asdfghjkl", 0.25), ("zxcvbnm", 0.75)))
    for column, key in enumerate(keys)
}
# Words longer than this get suggestions one edit away only: two edits of a long word take seconds.
TWO_EDITS_UP_TO = 8
PERSONAL_WORDS = "words.txt"


_ENGLISH_LOCK = threading.Lock()


@functools.cache
def _english_words() -> Any:
    from spellchecker import SpellChecker

    return SpellChecker(language="en", distance=1)


def english_words() -> Any:
    """pyspellchecker's English list, read once a process (every window shares it, read only)."""
    with _ENGLISH_LOCK:
        return _english_words()


class Dictionary:
    """The words Redraft knows: pyspellchecker's English list (loaded by :meth:`load`, a third of a second,
    so the window does not wait for it) and the writer's own."""

    def __init__(self, personal: Path) -> None:
        self.personal = personal
        self._checker: Any = None
        self._own: set[str] = set()  # added to the personal list, or ignored for this session
        self.added: set[str] = set()  # the personal list's words (words.txt)
        self._known: dict[str, bool] = {}
        self.error = ""

    @property
    def ready(self) -> bool:
        return self._checker is not None

    def load(self) -> None:
        try:
            checker = english_words()
        except Exception as error:  # noqa: BLE001 - a broken install loses the underlines, never the text
            self.error = f"the English word list could not be loaded ({error})"
            return
        try:
            lines = self.personal.read_text(encoding="utf-8").splitlines()
            self.added = {line.strip() for line in lines if line.strip()}
            self._own |= self.added
        except FileNotFoundError:
            pass
        except (OSError, UnicodeDecodeError) as error:
            self.error = f"your own words could not be read from {self.personal} ({error})"
        self._checker = checker

    def knows(self, word: str) -> bool:
        """Whether ``word`` is spelled as the dictionary or the writer spells it (any case for the list's
        words: a sentence's first word is capitalised; the writer's own exactly, or in lower case)."""
        known = self._known.get(word)
        if known is None:
            if not self.ready:
                return True
            known = self._known[word] = (
                word in self._own or word.lower() in self._own or self._check(word.replace("’", "'"))
            )
        return known

    def _check(self, word: str) -> bool:
        if len(word) == 1 or word.isupper():  # an initial, or an acronym (NATO, PDF)
            return True
        lower = word.lower()
        if self._in_list(lower):
            return True
        if lower.endswith("'s") and self._in_list(lower[:-2]):  # Alice's
            return True
        return any(uk in lower and self._in_list(lower.replace(uk, us)) for uk, us in BRITISH)

    def _in_list(self, lower: str) -> bool:
        return lower in self._checker.word_frequency.dictionary

    def suggestions(self, word: str) -> list[str]:
        """The known words nearest ``word`` (one edit, else two for a short word), in its case (Capitalised,
        UPPER), the likeliest first: the likelier the typo (:func:`typo_weight`) and the commoner the word.
        A run-together pair of words ("alot") is offered split ("a lot")."""
        if not self.ready:
            return []
        checker = self._checker
        lower = word.lower().replace("’", "'")
        found = {w: typo_weight(lower, w) for w in checker.known(checker.edit_distance_1(lower))}
        found |= {pair: SPLIT for pair in self._splits(lower)}
        if not found and len(lower) <= TWO_EDITS_UP_TO:
            found = dict.fromkeys(checker.known(checker.edit_distance_2(lower)), 1.0)

        def likelihood(candidate: str) -> float:
            frequency = min(checker.word_usage_frequency(part) for part in candidate.split(" "))
            return found[candidate] * frequency**FREQUENCY_WEIGHT

        ranked = sorted(found, key=lambda w: (-likelihood(w), w))[:MAX_SUGGESTIONS]
        if word[:1].isupper():
            ranked = [w.upper() if word.isupper() and len(word) > 1 else w[:1].upper() + w[1:] for w in ranked]
        return ranked

    def _splits(self, lower: str) -> list[str]:
        """``lower`` as two common words run together ("alot": "a lot", "infact": "in fact"). The list also holds
        rare fragments ("ed", "ting"): "occured" is not "occur ed"."""
        frequency = self._checker.word_usage_frequency
        return [
            f"{lower[:at]} {lower[at:]}"
            for at in range(1, len(lower))
            if all(frequency(part) >= SPLIT_MIN_FREQUENCY for part in (lower[:at], lower[at:]))
        ]

    def add(self, word: str) -> None:
        """Add ``word`` to the writer's own list, kept across sessions."""
        self._own.add(word)
        self.added.add(word)
        self._known.clear()
        self.personal.parent.mkdir(parents=True, exist_ok=True)
        with self.personal.open("a", encoding="utf-8") as file:
            file.write(word + "\n")

    def remove(self, word: str) -> None:
        """Take ``word`` off the writer's own list (one added by mistake): the file is written again without
        it, the other lines as they were."""
        self.added.discard(word)
        self._own.discard(word)
        self._known.clear()
        lines = self.personal.read_text(encoding="utf-8").splitlines()
        kept = [line for line in lines if line.strip() != word]
        self.personal.write_text("".join(line + "\n" for line in kept), encoding="utf-8")

    def ignore(self, word: str) -> None:
        """Leave ``word`` unmarked until Redraft closes."""
        self._own.add(word)
        self._known.clear()


def typo_weight(typed: str, candidate: str) -> float:
    """How likely typing ``candidate`` gives ``typed``, by the kind of slip one edit makes (relative weights): a
    letter left out or two swapped are the commonest, then a doubled letter ("untill") and a neighbouring key,
    then any other letter wrong or extra. "climbd" is "climbed" before the commoner "climb"."""
    if len(candidate) == len(typed) + 1:
        return LEFT_OUT
    if len(candidate) == len(typed) - 1:
        at = next((i for i, (a, b) in enumerate(zip(typed, candidate, strict=False)) if a != b), len(candidate))
        doubled = typed[at] in (typed[at - 1 : at] + typed[at + 1 : at + 2])
        return DOUBLED if doubled else OTHER_SLIP
    differ = [i for i, (a, b) in enumerate(zip(typed, candidate, strict=True)) if a != b]
    if len(differ) == 2 and differ[1] == differ[0] + 1 and typed[differ[0]] == candidate[differ[1]]:
        return SWAPPED
    if len(differ) == 1 and neighbouring_keys(typed[differ[0]], candidate[differ[0]]):
        return NEIGHBOUR
    return OTHER_SLIP


def neighbouring_keys(one: str, other: str) -> bool:
    """Whether two letters' keys touch on a QWERTY keyboard (its rows staggered as they are)."""
    first, second = KEY_PLACES.get(one), KEY_PLACES.get(other)
    if first is None or second is None:
        return False
    return abs(first[0] - second[0]) <= 1 and abs(first[1] - second[1]) <= 1


def misspelled(text: str, knows: Callable[[str], bool]) -> Iterator[tuple[int, int]]:
    """The ranges of ``text``'s words that ``knows`` does not know, leaving links, addresses, code and words
    glued to digits or underscores ("v2", "x_1") alone. Quotes at a word's edges are not part of it (‘Would,
    cats’). Most blocks have no unknown word: that is found from their distinct words alone, so a long
    document is checked quickly."""
    words = WORD.findall(text)
    unknown = {word for word in set(words) if not knows(word)}
    if not unknown or reads_foreign(words, unknown):
        return
    hinted = "://" in text or "www." in text or "@" in text or "`" in text or "](" in text
    skipped = [match.span() for match in NOT_PROSE.finditer(text)] if hinted else []
    for match in WORD.finditer(text):
        if match.group() not in unknown:
            continue
        start, end = match.span()
        if GLUE.match(text, end) or (start and GLUE.match(text, start - 1)):
            continue
        if not any(a < end and start < b for a, b in skipped):
            yield start, end


def reads_foreign(words: list[str], unknown: set[str]) -> bool:
    """Whether a paragraph's ``words`` are another language's, not English with typos: a paragraph in French
    or German would be red from end to end (measured: 55% and 78% of their words unknown, against 36% for an
    English sentence with a typo in every other word, which still has its "the" and "and")."""
    if len(words) < FOREIGN_MIN_WORDS:
        return False
    share = sum(word in unknown for word in words) / len(words)
    return share >= FOREIGN_UNKNOWN_SHARE and not any(word.lower() in ENGLISH_FUNCTION_WORDS for word in words)


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


class Spelling(QObject):
    """View ▸ Check Spelling: the editor's underlines (through its highlighter) and its right-click offers."""

    loaded = Signal()

    def __init__(self, window: SpellingWindow, parent: QObject) -> None:
        super().__init__(parent)
        self.window = window
        self.dictionary = Dictionary(user_dirs().data / PERSONAL_WORDS)
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
        window.editor.context_menu_extras.append(self.offer)
        self._held: int | None = None  # where the caret ended a word left unmarked while it is typed
        window.editor.cursorPositionChanged.connect(self._caret_moved)
        self.loaded.connect(self._loaded)
        if window.prefs.check_spelling:
            self.start()

    def start(self) -> None:
        """Load the word list on a thread; the underlines appear when it is in."""
        if self._loading is None:
            self._loading = threading.Thread(target=self._load, name="spelling", daemon=True)
            self._loading.start()

    def _load(self) -> None:
        self.dictionary.load()
        self.loaded.emit()  # queued to the window's thread

    def wait_loaded(self, timeout: float = 30.0) -> None:
        """Block until the word list is in (a right-click that comes before it)."""
        if self._loading is not None:
            self._loading.join(timeout)

    def _loaded(self) -> None:
        if self.dictionary.error:
            self.window.statusBar().showMessage(f"Spelling: {self.dictionary.error}.", 8000)
        self._apply()

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
        found = qt_ranges(text, list(misspelled(text, self.dictionary.knows)))
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
        if not self.action.isChecked():
            return
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
        self.window.editor.highlighter.rehighlight()


def top_of(menu: QMenu) -> QAction:
    """The action spelling's offers go above: Qt's own first entry."""
    return menu.actions()[0] if menu.actions() else menu.addSeparator()


def disabled(menu: QMenu, text: str) -> QAction:
    action = QAction(text, menu)
    action.setEnabled(False)
    return action

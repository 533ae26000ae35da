"""The words spelling knows (app/window/spelling.py), without Qt: pyspellchecker's word list for the language
chosen (View ▸ Spelling Language), the writer's own words, what counts as a word to check in a block of text,
and the likeliest mends of a misspelled one.

English is pyspellchecker's US list with the British -our, -ise, -tre… forms of its words accepted too; the
other languages are its lists as they are, with their elisions (French "qu'il", Italian "dell'anno") read as
the two words they join. A paragraph in another language than the one chosen is left unmarked rather than
painted red throughout (:func:`reads_foreign`)."""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from model.edit.typography import ELIDED

# The word lists offered, by code, each named in its own language (View ▸ Spelling Language). pyspellchecker
# ships more, not offered: its Spanish list lacks the commonest imperfect forms ("había", "tenía", "contaba")
# and its Russian one has 20,000 words for a language of many endings, so both would mark right words wrong;
# Arabic, Basque, Latvian and Persian are languages whose common words we could not check here.
LANGUAGES = {
    "en": "English", "fr": "Français", "de": "Deutsch", "it": "Italiano", "pt": "Português", "nl": "Nederlands",
}  # fmt: skip
ENGLISH = "en"

# A word: letters, with apostrophes inside it (don't, o'clock); digits and underscores end it, so "mp3" and
# snake_case names are not words to check.
WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
# Not prose: links, e-mail addresses, Markdown code, a Markdown link's target ("[the map](maps/bay.png)") and a
# footnote's label ("[^smith]", the writer's name for the note, never printed).
NOT_PROSE = re.compile(r"\S+://\S+|www\.\S+|[\w.+-]+@[\w-]+\.[\w.-]+|`[^`\n]*`|\]\([^)\s]*\)|\[\^[^\]\s]+\]")
# What glues a word into a name or a number rather than prose: a digit or an underscore beside it.
GLUE = re.compile(r"[\d_]")
# British spellings of words the (US) list holds: the first form is accepted where the second is known.
BRITISH = (("our", "or"), ("isation", "ization"), ("ise", "ize"), ("ising", "izing"), ("yse", "yze"),
           ("tre", "ter"), ("ogue", "og"), ("ence", "ense"), ("lled", "led"), ("lling", "ling"), ("ae", "e"),
           ("oe", "e"), ("mme", "m"))  # fmt: skip
# A paragraph of at least this many words, this share of them unknown, and none of its language's commonest
# words is in another language: it is left unmarked (reads_foreign).
FOREIGN_MIN_WORDS = 8
FOREIGN_UNKNOWN_SHARE = 0.4
# Each language's common words that the others offered (and Spanish) do not use (English "is" is Dutch too,
# French "il" Italian, German "das" Portuguese): a paragraph without any is not in that language.
FUNCTION_WORDS = {
    code: frozenset(words.split())
    for code, words in {
        "en": "the and of with that this for it he she they you are were have not but at by from which would "
        "there their what been",
        "fr": "les et est une dans pour pas avec sur nous vous elle",
        "de": "der und ist nicht ein eine ich sie mit auf dem sich",
        "it": "gli che della di sono anche più questo questa molto",
        "pt": "não uma com ele ela também muito são isso pelo",
        "nl": "het een van niet zijn maar ook wordt wat hij zij",
    }.items()
}
# A document reads as one language (detect_language) from this many words on, where this share of them are
# that language's common words and several times as many as any other's. Measured: 24-29% of English prose,
# 7-17% of the others' (Italian's list is the shortest), next to none of any other language's.
DETECT_MIN_WORDS = 40
DETECT_MIN_SHARE = 0.04
DETECT_MARGIN = 4
DETECT_READS_CHARS = 20_000  # a document's opening is enough, and a novel is not read whole
MAX_SUGGESTIONS = 6
# Words longer than this get suggestions one edit away only: two edits of a long word take seconds.
TWO_EDITS_UP_TO = 8
PERSONAL_WORDS = "words.txt"
# A suggestion's likelihood: its typo's weight (typo_weight) times its word's frequency to this power. Below 1,
# so the kind of slip outweighs a frequency a few times higher: "wich" is "which" before "with".
FREQUENCY_WEIGHT = 0.5
LEFT_OUT = SWAPPED = SPLIT = 1.0
DOUBLED = 0.6
NEIGHBOUR = 0.5
OTHER_SLIP = 0.25
# A word run together from two is offered split only where both are this common (about the 5,000 commonest).
SPLIT_MIN_FREQUENCY = 5e-5
# Each letter's row and column on a QWERTY keyboard, each row set off from the one above as keys are.
KEY_PLACES = {
    key: (row, column + offset)
    for row, (keys, offset) in enumerate((("qwertyuiop", 0.0), ("asdfghjkl", 0.25), ("zxcvbnm", 0.75)))
    for column, key in enumerate(keys)
}

_WORD_LISTS_LOCK = threading.Lock()


# Two lists at most stay read (a writer going back and forth between two languages waits for neither): each
# holds 20-90 MB, all six about 200 MB.
@functools.lru_cache(maxsize=2)
def _word_list(language: str) -> Any:
    from spellchecker import SpellChecker

    return SpellChecker(language=language, distance=1)


def word_list(language: str) -> Any:
    """pyspellchecker's list for ``language``, read once while in use (every window shares it, read only)."""
    if language not in LANGUAGES:
        raise ValueError(f"no word list for {language!r} (there are: {', '.join(LANGUAGES)})")
    with _WORD_LISTS_LOCK:
        return _word_list(language)


@functools.lru_cache(maxsize=2)
def elision_heads(language: str) -> frozenset[str]:
    """The words a language's list shows elided before another ("qu" of "qu'", "dell" of "dell'anno")."""
    return frozenset(word.split("'", 1)[0] for word in word_list(language).word_frequency.dictionary
                     if "'" in word[1:])  # fmt: skip


class OwnWords:
    """The writer's own words, one set for the windows that share a model (File ▸ New Window): those of the
    personal list and those ignored until Redraft closes; ``changes`` counts their changes, so each window's
    dictionary knows when what it remembered is stale."""

    def __init__(self) -> None:
        self.added: set[str] = set()  # the personal list's words (words.txt)
        self.own: set[str] = set()  # added to the personal list, or ignored for this session
        self.changes = 0


class Dictionary:
    """The words Redraft knows: pyspellchecker's list for ``language`` (loaded by :meth:`load`, a third of a
    second, so the window does not wait for it) and the writer's own, whatever the language: ``words``, where
    they are another window's too (a word added in one is known in all), else a set of its own."""

    def __init__(self, personal: Path, language: str = ENGLISH, words: OwnWords | None = None) -> None:
        self.personal = personal
        self.language = language
        self._checker: Any = None
        self._elisions: frozenset[str] = frozenset()
        self.words = words if words is not None else OwnWords()
        self._known: dict[str, bool] = {}
        self._known_at = self.words.changes  # the own words' changes that ``_known`` has seen
        self.error = ""

    @property
    def added(self) -> set[str]:
        """The personal list's words."""
        return self.words.added

    def _changed(self) -> None:
        self.words.changes += 1
        self._known.clear()

    @property
    def ready(self) -> bool:
        return self._checker is not None

    @property
    def function_words(self) -> frozenset[str]:
        return FUNCTION_WORDS[self.language]

    def load(self, language: str | None = None) -> None:
        """Read the list for ``language`` (the current one if None) and the writer's own words."""
        language = language or self.language
        try:
            checker, elisions = word_list(language), elision_heads(language)
        except Exception as error:  # noqa: BLE001 - a broken install loses the underlines, never the text
            self.error = f"the {LANGUAGES.get(language, language)} word list could not be loaded ({error})"
            return
        self.error = ""
        try:
            lines = self.personal.read_text(encoding="utf-8").splitlines()
            self.words.added = {line.strip() for line in lines if line.strip()}
            self.words.own |= self.words.added
            self._changed()
        except FileNotFoundError:
            pass
        except (OSError, UnicodeDecodeError) as error:
            self.error = f"your own words could not be read from {self.personal} ({error})"
        self.language, self._checker, self._elisions = language, checker, elisions
        self._known.clear()

    def knows(self, word: str) -> bool:
        """Whether ``word`` is spelled as the dictionary or the writer spells it (any case for the list's
        words: a sentence's first word is capitalised; the writer's own exactly, or in lower case)."""
        if self._known_at != self.words.changes:  # another window added a word, or ignored one
            self._known.clear()
            self._known_at = self.words.changes
        known = self._known.get(word)
        if known is None:
            if not self.ready:
                return True
            own = self.words.own
            known = self._known[word] = word in own or word.lower() in own or self._check(word.replace("’", "'"))
        return known

    def _check(self, word: str) -> bool:
        if len(word) == 1 or word.isupper():  # an initial, or an acronym (NATO, PDF)
            return True
        if not word.isascii() and not any(unicodedata.name(letter, "").startswith("LATIN") for letter in word):
            return True  # Greek, Cyrillic, Japanese…: every list offered is in Latin letters, so none can say
        lower = word.lower()
        if self._in_list(lower):
            return True
        if self.language == ENGLISH:
            if lower.endswith("'s") and self._in_list(lower[:-2]):  # Alice's
                return True
            return any(uk in lower and self._in_list(lower.replace(uk, us)) for uk, us in BRITISH)
        head, apostrophe, tail = lower.partition("'")  # l'escalier, qu'il, dell'anno
        return bool(apostrophe) and head in self._elisions and self._in_list(tail)

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
        self.words.own.add(word)
        self.words.added.add(word)
        self._changed()
        self.personal.parent.mkdir(parents=True, exist_ok=True)
        with self.personal.open("a", encoding="utf-8") as file:
            file.write(word + "\n")

    def remove(self, word: str) -> None:
        """Take ``word`` off the writer's own list (one added by mistake): the file is written again without
        it, the other lines as they were."""
        self.words.added.discard(word)
        self.words.own.discard(word)
        self._changed()
        lines = self.personal.read_text(encoding="utf-8").splitlines()
        kept = [line for line in lines if line.strip() != word]
        self.personal.write_text("".join(line + "\n" for line in kept), encoding="utf-8")

    def ignore(self, word: str) -> None:
        """Leave ``word`` unmarked until Redraft closes."""
        self.words.own.add(word)
        self._changed()


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


def misspelled(
    text: str, knows: Callable[[str], bool], function_words: frozenset[str] = FUNCTION_WORDS[ENGLISH]
) -> Iterator[tuple[int, int]]:
    """The ranges of ``text``'s words that ``knows`` does not know, leaving links, addresses, code and words
    glued to digits or underscores ("v2", "x_1") alone, and a paragraph with none of the language's
    ``function_words`` (:func:`reads_foreign`). Quotes at a word's edges are not part of it (‘Would, cats’).
    Most blocks have no unknown word: that is found from their distinct words alone, so a long document is
    checked quickly."""
    words = WORD.findall(text)
    unknown = {word for word in set(words) if not knows(word)}
    if not unknown or reads_foreign(words, unknown, function_words):
        return
    hinted = "://" in text or "www." in text or "@" in text or "`" in text or "](" in text or "[^" in text
    skipped = [match.span() for match in NOT_PROSE.finditer(text)] if hinted else []
    for match in WORD.finditer(text):
        if match.group() not in unknown:
            continue
        start, end = match.span()
        if GLUE.match(text, end) or (start and GLUE.match(text, start - 1)):
            continue
        if start and text[start - 1] in "'’" and ELIDED.fullmatch(match.group()):
            continue  # ’Tis, ’twas: the apostrophe stands for the letters no list has the word without
        if not any(a < end and start < b for a, b in skipped):
            yield start, end


def detect_language(text: str) -> str | None:
    """The offered language (LANGUAGES) ``text`` plainly reads as, by its common words (FUNCTION_WORDS);
    None where it is short or unclear (or in a language not offered: Spanish has none of these words)."""
    words = [word.lower() for word in WORD.findall(text[:DETECT_READS_CHARS])]
    if len(words) < DETECT_MIN_WORDS:
        return None
    counts = sorted(((sum(word in common for word in words), code) for code, common in FUNCTION_WORDS.items()),
                    reverse=True)  # fmt: skip
    (best, code), (second, _) = counts[0], counts[1]
    if best < DETECT_MIN_SHARE * len(words) or best < DETECT_MARGIN * second:
        return None
    return code


def reads_foreign(words: list[str], unknown: set[str], function_words: frozenset[str]) -> bool:
    """Whether a paragraph's ``words`` are another language's, not the checked one's with typos: a paragraph
    in French or German checked as English would be red from end to end (measured: 55% and 78% of their words
    unknown, against 36% for an English sentence with a typo in every other word, which still has its "the"
    and "and")."""
    if len(words) < FOREIGN_MIN_WORDS:
        return False
    share = sum(word in unknown for word in words) / len(words)
    return share >= FOREIGN_UNKNOWN_SHARE and not any(word.lower() in function_words for word in words)

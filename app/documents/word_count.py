"""Counting words as writers and editors count them: a word holds at least one letter or digit.

Splitting on white space alone counts Markdown's marks (`#`, `-`, `>`), a scene break's `* * *` and a spaced
dash as words; word processors and writing apps (Word, Scrivener, Ulysses) leave those out. Chinese and Japanese
put no spaces between words, so each of their characters (ideographs and kana) counts as one, as Word counts them;
Korean spaces its words and counts as any other script. A Markdown text's notes (``<!-- … -->``, an editor's
comments among them) are no part of the manuscript, which no export prints, so the counts leave them out, as Word
leaves out its comments. A footnote's words count, as Word counts them by default, but its mark (``[^1]`` in the
text and before its words) is no word: the exports print a number there. Nor is a picture
(``![a caption](images/map.png)``), which the exports print as the picture.
"""

from __future__ import annotations

import re

from app.documents.critic_markup import settle
from app.documents.footnotes import FOOTNOTE_MARK
from app.documents.front_matter import without_front_matter
from app.documents.picture_links import PICTURE

# CJK ideographs (with extension A, the compatibility block and the supplementary planes' extensions), hiragana
# and katakana.
EAST_ASIAN = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
# One East Asian character, or from a letter or digit to the end of its run of other non-space characters: one
# match per word, in linear time (a pattern that also looked back over a run's leading marks would backtrack
# quadratically on a long run of them).
# A note, across lines as HTML's comments may run; one left open is the writer's text still.
NOTE = re.compile(r"<!--.*?-->", re.DOTALL)
WORD = re.compile(f"[{EAST_ASIAN}]|[^\\W_{EAST_ASIAN}][^\\s{EAST_ASIAN}]*")


def count_words(text: str) -> int:
    """The words in ``text``: East Asian characters one each, else runs between white space that hold a letter or
    a digit; footnotes' marks and pictures are none."""
    if "[^" in text:
        text = FOOTNOTE_MARK.sub(" ", text)
    if "![" in text:
        text = PICTURE.sub(" ", text)
    return len(WORD.findall(text))


def without_notes(text: str) -> str:
    """A Markdown ``text`` as its words are counted and printed (the PDF): its notes out, the words either side met."""
    return NOTE.sub("", text)


def manuscript(text: str, markdown: bool) -> str:
    """A document's ``text`` as its words are counted: tracked changes still to decide as made (their new words
    once), and a Markdown text without its front matter (the title page's fields) and notes. The status bar, the
    recovery dialog and Saved Versions count the same words."""
    text = settle(text, accept=True)
    return without_notes(without_front_matter(text)[1]) if markdown else text


class WordCounter:
    """``count_words`` for a long text that changes a little between counts (a novel being typed in): a word never
    runs over a line's end, so each line's count is kept and only the lines typed in are counted again. War and
    Peace's 566,000 words: 122 ms each pause in typing, 18 ms so."""

    def __init__(self) -> None:
        self._words: dict[str, int] = {}  # a line -> its words
        self._chars = 0  # the kept lines' characters
        self._longest = 0  # the longest text counted: what is kept may grow to a few times it

    def __call__(self, text: str) -> int:
        return sum(self.each_line(text.split("\n")))

    def each_line(self, lines: list[str]) -> list[int]:
        """The words of each of ``lines`` (a text's, split at its line ends)."""
        self._longest = max(self._longest, sum(map(len, lines)) + len(lines))
        if self._chars > 4 * self._longest + (1 << 20):  # mostly lines long since typed over: start again
            self._words.clear()
            self._chars = 0
        known, counts = self._words, []
        for line in lines:
            words = known.get(line)
            if words is None:
                words = known[line] = count_words(line)
                self._chars += len(line)
            counts.append(words)
        return counts

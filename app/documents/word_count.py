"""Counting words as writers and editors count them: a word holds at least one letter or digit.

Splitting on white space alone counts Markdown's marks (`#`, `-`, `>`), a scene break's `* * *` and a spaced
dash as words; word processors and writing apps (Word, Scrivener, Ulysses) leave those out. Text without spaces
between its words (Chinese, Japanese) still counts a run as one word, as splitting did.
"""

from __future__ import annotations

import re

# From a letter or digit to the end of its run of non-space characters: one match per word, in linear time
# (a pattern that also looked back over the run's leading marks backtracks quadratically on a long run of them).
WORD = re.compile(r"[^\W_]\S*")


def count_words(text: str) -> int:
    """The words in ``text``: runs between white space that hold a letter or a digit."""
    return sum(1 for _ in WORD.finditer(text))

"""A rewrite as tracked changes (model/edit/changes.py): the word-level hunks rebuild the draft exactly, any
subset of them gives the original with exactly those hunks made, and no hunk starts or ends inside a word."""

from __future__ import annotations

import difflib
import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.edit.changes import (
    Change,
    accept_some,
    apply_changes,
    check_changes,
    draft_ranges,
    tokens,
    word_changes,
    word_diff,
)

# Words with inner apostrophes, hyphens and number separators, combining marks, emoji sequences: the
# places a careless diff splits a word.
VOCABULARY = [
    "the", "a", "cat", "dog", "sat", "ran", "on", "mat", "rug", "quickly", "don't", "it’s", "well-known",
    "3.14", "1,000", "café", "cafe\u0301", "naïve", "हिन्दी", "東京", "snake_case", "👍🏽", "👨\u200d👩\u200d👧", "🇫🇷",
    ",", ".", ";", "!", "?", "—", "(", ")", '"', "'", "-", "…",
]  # fmt: skip
SPACES = [" ", " ", " ", "  ", "\n", "\n\n", "\t", "\r\n", "\u00a0"]

# Independent of the tokenizer: a word is letters and digits (with their combining marks), joined by
# apostrophes or hyphens, or a number with its separators.
WORD = re.compile(r"\d+(?:[.,]\d+)+|\w+(?:['’‐-]\w+)*")


def _splits_a_word(original: str, boundary: int) -> bool:
    if not 0 < boundary < len(original):
        return False
    if unicodedata.category(original[boundary]).startswith("M") and not original[boundary - 1].isspace():
        return True  # between a letter or symbol and its combining mark
    return any(match.start() < boundary < match.end() for match in WORD.finditer(original))


@st.composite
def prose(draw: st.DrawFn, max_pieces: int = 30) -> str:
    pieces = draw(st.lists(st.sampled_from(VOCABULARY), max_size=max_pieces))
    out = [draw(st.sampled_from(["", "", " ", "\n"]))]
    for piece in pieces:
        out.append(piece)
        out.append(draw(st.sampled_from(["", *SPACES])))
    return "".join(out)


@st.composite
def rewrites(draw: st.DrawFn) -> tuple[str, str]:
    """An original and a draft that keeps some of its words, as a rewrite does, or any two texts at all."""
    if draw(st.booleans()):
        original = draw(prose())
        draft = original
        for _ in range(draw(st.integers(0, 6))):
            start = draw(st.integers(0, len(draft)))
            end = draw(st.integers(start, min(len(draft), start + 20)))
            draft = draft[:start] + draw(prose(max_pieces=4)) + draft[end:]
        return original, draft
    return draw(st.text(max_size=60)), draw(st.text(max_size=60))


def _by_hand(original: str, changes: list[Change], accepted: set[int]) -> str:
    """The original with the accepted hunks made, from the last one back so earlier offsets stay put."""
    text = original
    for index in sorted(accepted, reverse=True):
        change = changes[index]
        text = text[: change.start] + change.text + text[change.end :]
    return text


@settings(max_examples=200, deadline=None)
@given(rewrites())
def test_the_changes_rebuild_the_draft_and_rejecting_all_keeps_the_original(pair: tuple[str, str]) -> None:
    original, draft = pair
    changes = word_changes(original, draft)
    assert apply_changes(original, changes) == draft
    assert accept_some(original, changes, range(len(changes))) == draft
    assert accept_some(original, changes, ()) == original
    assert apply_changes(original, []).encode("utf-8", "surrogatepass") == original.encode("utf-8", "surrogatepass")
    assert (changes == []) == (original == draft)


@settings(max_examples=200, deadline=None)
@given(rewrites())
def test_changes_are_in_order_apart_and_each_changes_something(pair: tuple[str, str]) -> None:
    original, draft = pair
    changes = word_changes(original, draft)
    position = 0
    for change in changes:
        assert position <= change.start <= change.end <= len(original)
        assert change.removed(original) != change.text
        position = change.end
    for earlier, later in zip(changes, changes[1:], strict=False):
        # Hunks with only whitespace between them are one run; two hunks never touch.
        assert original[earlier.end : later.start].strip(), (earlier, later)
    for (start, end), change in zip(draft_ranges(changes), changes, strict=True):
        assert draft[start:end] == change.text


@settings(max_examples=200, deadline=None)
@given(rewrites(), st.data())
def test_any_subset_gives_the_original_with_exactly_those_hunks_made(
    pair: tuple[str, str], data: st.DataObject
) -> None:
    original, draft = pair
    changes = word_changes(original, draft)
    accepted = data.draw(st.sets(st.integers(0, max(0, len(changes) - 1))) if changes else st.just(set[int]()))
    assert accept_some(original, changes, accepted) == _by_hand(original, changes, accepted)
    # The text between the hunks is the original's, whichever were taken.
    rejected = set(range(len(changes))) - accepted
    assert accept_some(original, changes, rejected) == _by_hand(original, changes, rejected)


@settings(max_examples=200, deadline=None)
@given(rewrites())
def test_no_change_starts_or_ends_inside_a_word_of_the_original(pair: tuple[str, str]) -> None:
    original, draft = pair
    for change in word_changes(original, draft):
        assert not _splits_a_word(original, change.start), (original, change)
        assert not _splits_a_word(original, change.end), (original, change)


def test_the_word_check_catches_a_diff_by_characters() -> None:
    # The check above fails on what a character-level diff gives: "cat" -> "cart" inserts the "r" mid-word.
    original, draft = "The cat sat.", "The cart sat."
    by_char = [
        Change(i1, i2, draft[j1:j2])
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, original, draft).get_opcodes()
        if tag != "equal"
    ]
    assert any(_splits_a_word(original, c.start) or _splits_a_word(original, c.end) for c in by_char)
    assert word_changes(original, draft) == [Change(4, 7, "cart")]


@pytest.mark.parametrize(
    ("original", "draft", "shown"),
    [
        ("the big cat", "the cat", "the [-big -]cat"),
        ("the cat", "the big cat", "the {+big +}cat"),
        ("She sat", "She sat down", "She sat{+ down+}"),
        ("the quick brown fox", "the slow red fox", "the [-quick brown-]{+slow red+} fox"),
        ("The cat sat on the mat.", "A dog lay on the rug.", "[-The cat sat-]{+A dog lay+} on the [-mat-]{+rug+}."),
        ("Hello world.", "Hello there, world!", "Hello {+there, +}world[-.-]{+!+}"),
        ("I don't know.", "I do not know.", "I [-don't-]{+do not+} know."),
        ("It costs 3.14 now.", "It costs 3.15 now.", "It costs [-3.14-]{+3.15+} now."),
        ("Great 👍🏽 work", "Great 👍🏿 work", "Great [-👍🏽-]{+👍🏿+} work"),
        ("one.  Two", "one. Two", "one.[-  -]{+ +}Two"),
        ("", "new words", "{+new words+}"),
        ("old words", "", "[-old words-]"),
    ],
)
def test_hunks_read_as_whole_words(original: str, draft: str, shown: str) -> None:
    changes = word_changes(original, draft)
    assert word_diff(original, changes) == shown
    assert apply_changes(original, changes) == draft


def test_tokens_keep_words_and_their_marks_whole() -> None:
    assert tokens("don't well-known 3.14 cafe\u0301 👨\u200d👩\u200d👧 🇫🇷!") == [
        "don't", " ", "well-known", " ", "3.14", " ", "cafe\u0301", " ", "👨\u200d👩\u200d👧", " ", "🇫🇷", "!",
    ]  # fmt: skip
    assert tokens("end. Next") == ["end", ".", " ", "Next"]


def test_a_rewrite_that_keeps_most_words_gives_a_hunk_per_change() -> None:
    original = "The committee met on Tuesday and agreed, after a long debate, to postpone the vote until spring."
    draft = "The board met on Monday and agreed, after a short debate, to postpone the vote until spring."
    changes = word_changes(original, draft)
    assert [(c.removed(original), c.text) for c in changes] == [
        ("committee", "board"), ("Tuesday", "Monday"), ("long", "short"),
    ]  # fmt: skip
    assert accept_some(original, changes, {0, 2}) == original.replace("committee", "board").replace("long", "short")


def test_changes_that_do_not_fit_the_original_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="change 1 starts at 2, before the previous change ended"):
        apply_changes("abcdef", [Change(1, 3, "x"), Change(2, 4, "y")])
    with pytest.raises(ValueError, match="change 0 covers \\[4, 9\\), outside the original's 6 characters"):
        apply_changes("abcdef", [Change(4, 9, "x")])
    with pytest.raises(ValueError, match="change 0 covers \\[3, 2\\)"):
        check_changes("abcdef", [Change(3, 2, "x")])


def test_a_long_span_with_a_repeated_word_is_diffed_in_one_piece_not_minutes() -> None:
    # Without difflib's autojunk the matcher restarts on every "the " and this took over ten minutes.
    original, draft = "the x " * 2000, "the y " * 2000
    changes = word_changes(original, draft)
    assert apply_changes(original, changes) == draft

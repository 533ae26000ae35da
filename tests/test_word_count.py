"""Words counted as writers count them: runs between white space holding a letter or a digit."""

from __future__ import annotations

import random

import pytest

from app.documents.word_count import WordCounter, count_words, without_notes


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", 0),
        ("   \n\t ", 0),
        ("The keeper climbed the stairs.", 5),
        ("# Chapter One", 2),  # a heading's mark is no word
        ("- milk\n- bread\n> quoted", 3),
        ("1. eggs", 2),  # a list's number counts, as any number does
        ("* * *\n\n---\n\n***", 0),  # scene breaks and rules
        ("He paused — then left.", 4),  # a spaced dash
        ("**bold** and *italic* `code`", 4),  # marks around a word leave it one word
        ("don't well-known 3.14 #1 42", 5),
        ("café naïve Ωμέγα Привет", 4),  # letters of any script
        ("_ __ -- … “ ”", 0),
        ("我们去海边", 5),  # no spaces between its words: a character a word, as Word counts Chinese
        ("私はカタカナ、です。", 8),  # kanji and kana alike; the ideographic comma and stop are no words
        ("Tokyo东京 is big", 5),
        ("한국어 단어 세기", 3),  # Korean spaces its words
        ("the table.[^1] Next.\n\n[^1]: Figures here.", 5),  # a footnote's words count, its marks do not
        ("The bay.\n\n![The bay in 1877](<images/bay map.png>)\n\n[the map](maps/bay.png)", 4),  # a picture: none
    ],
)
def test_words_hold_a_letter_or_a_digit(text: str, words: int) -> None:
    assert count_words(text) == words


def test_prose_counts_as_splitting_on_spaces_counts() -> None:
    prose = "It was the best of times, it was the worst of times; it was 1859.\nShe said: “Go.”"
    assert count_words(prose) == len(prose.split())


def test_a_markdown_texts_notes_are_no_words_of_it() -> None:
    text = "He lit<!-- Maya: every one? --> the lamp.<!-- a note\nover two lines -->\n\n<!-- on its own -->\nEnd."
    assert count_words(without_notes(text)) == 5  # He lit the lamp. End.
    assert without_notes("the lamp<!-- x -->s") == "the lamps"  # the words either side meet as they print
    assert without_notes("An open <!-- note is the writer's text") == "An open <!-- note is the writer's text"


def test_a_counter_that_keeps_its_lines_counts_as_count_words_through_a_writers_edits() -> None:
    lines = ["The keeper climbed the stairs.", "", "# Chapter 两", "我们去海边 at dawn", "* * *", "He paused — then."]
    text = "\n".join(lines * 40)
    counter, draw = WordCounter(), random.Random(3)
    for _ in range(200):  # a letter typed or deleted, a line split or joined, a paste, anywhere
        at = draw.randrange(len(text) + 1)
        edit = draw.choice(["x", " ", "\n", "", "word again\n\nand", "东"])
        text = text[:at] + edit + text[at + draw.randrange(0, 6) :]
        assert counter(text) == count_words(text)


def test_a_counter_forgets_lines_long_gone() -> None:
    counter = WordCounter()
    for draft in range(400):  # every line new each time: what is kept must not grow with every count
        counter("\n".join(f"draft {draft} line {line} of the chapter" for line in range(500)))
    kept = sum(len(line) for line in counter._words)
    assert kept <= 4 * len("\n".join(f"draft 399 line {n} of the chapter" for n in range(500))) + (1 << 20) + 20_000

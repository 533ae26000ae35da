"""Format ▸ Footnote's rules on strings: where the reference and its definition go, the numbers a text numbered
in order keeps, named notes left as they are, code left alone, and the way between a note's two halves."""

from __future__ import annotations

from app.documents.footnotes import (
    add_footnote,
    apply_edits,
    definition_at,
    footnote_partner,
    footnote_words,
    renumbering,
)

NOTES = "A storm came.[^1] The sea rose.[^2] Then it fell.\n\n[^1]: Of 1703.\n[^2]: By nine feet.\n"


def _added(text: str, at: int) -> tuple[str, str, int]:
    """The new text, the text before the caret on its line, and how many notes moved up."""
    note = add_footnote(text, at)
    new = apply_edits(text, note.edits)
    return new, new[new.rfind("\n", 0, note.caret) + 1 : note.caret], note.renumbered


def test_a_first_note_goes_after_the_word_and_its_line_under_a_blank_line_before_the_final_line_break() -> None:
    text = "The boats came in. Nobody spoke.\n"
    new, typing_after, moved = _added(text, len("The boats came in. "))  # the caret after the sentence's space
    assert new == "The boats came in.[^1] Nobody spoke.\n\n[^1]: \n"
    assert typing_after == "[^1]: " and moved == 0
    assert apply_edits("", add_footnote("", 0).edits) == "[^1]\n\n[^1]: "


def test_a_note_between_numbered_notes_takes_its_place_and_the_later_ones_move_up() -> None:
    new, typing_after, moved = _added(NOTES, NOTES.index(" The sea"))
    assert new == ("A storm came.[^1][^2] The sea rose.[^3] Then it fell.\n\n"
                   "[^1]: Of 1703.\n[^2]: \n[^3]: By nine feet.\n")  # fmt: skip
    assert typing_after == "[^2]: " and moved == 1
    first, _, moved = _added(NOTES, 0)
    assert first.startswith("[^1]A storm came.[^2] The sea rose.[^3]")
    assert first.endswith("\n\n[^1]: \n[^2]: Of 1703.\n[^3]: By nine feet.\n") and moved == 2
    last, typing_after, moved = _added(NOTES, NOTES.index("\n"))
    assert last.endswith("fell.[^3]\n\n[^1]: Of 1703.\n[^2]: By nine feet.\n[^3]: \n")
    assert typing_after == "[^3]: " and moved == 0


def test_a_definition_goes_after_the_one_before_it_and_its_indented_lines() -> None:
    text = "One.[^1] Two.\n\n[^1]: First,\n    at length.\n\nAfter the notes.\n"
    new, typing_after, _ = _added(text, text.index(" Two") + len(" Two."))
    assert new == "One.[^1] Two.[^2]\n\n[^1]: First,\n    at length.\n[^2]: \n\nAfter the notes.\n"
    assert typing_after == "[^2]: "


def test_named_or_unordered_notes_keep_their_labels_and_the_new_one_goes_last() -> None:
    named = "Smith says so.[^smith] And more.\n\n[^smith]: Smith, 1999.\n"
    new, typing_after, moved = _added(named, 0)
    assert new == "[^1]Smith says so.[^smith] And more.\n\n[^smith]: Smith, 1999.\n[^1]: \n" and moved == 0
    unordered = "B.[^2] A.[^1]\n\n[^2]: b\n[^1]: a\n"
    new, typing_after, moved = _added(unordered, 0)
    assert new == "[^3]B.[^2] A.[^1]\n\n[^2]: b\n[^1]: a\n[^3]: \n" and moved == 0
    assert typing_after == "[^3]: "


def test_code_is_neither_counted_nor_renumbered() -> None:
    text = "Use it.[^1]\n\n```\nx = a[^1]\n[^2]: not a note\n```\n\n[^1]: A note.\n"
    new, _, moved = _added(text, 0)
    assert "x = a[^1]\n[^2]: not a note" in new and moved == 1
    assert new.startswith("[^1]Use it.[^2]") and new.endswith("[^1]: \n[^2]: A note.\n")


def test_a_caret_inside_a_reference_puts_the_new_one_after_it() -> None:
    text = "Word[^1] more.\n\n[^1]: x\n"
    new, _, _ = _added(text, text.index("^"))
    assert new.startswith("Word[^1][^2] more.")


def test_the_same_key_goes_from_a_reference_to_its_words_and_back() -> None:
    to_words = footnote_partner(NOTES, NOTES.index("[^2]") + 2)
    assert to_words is not None and NOTES[to_words[0] :].startswith("By nine feet.") and to_words[1] == "2"
    assert footnote_partner(NOTES, to_words[0] + 3) == (NOTES.index("[^2]") + len("[^2]"), "2")
    assert footnote_partner(NOTES, NOTES.index("[^2]") + len("[^2]")) == to_words  # just after it counts as on it
    assert footnote_partner(NOTES, NOTES.index("The sea")) is None
    assert footnote_partner("No words.[^9]\n", 12) is None  # a reference with no definition
    assert footnote_partner("[^1]: a definition no text refers to\n", 3) is None
    assert definition_at(NOTES, len(NOTES) - 3) == "2" and definition_at(NOTES, 3) is None
    assert definition_at("```\n[^1]: code\n```\n", 6) is None


def test_a_notes_words_are_read_with_its_indented_lines() -> None:
    text = "One.[^1] Two.[^b]\n\n[^1]: First,\n    at length.\nAfter.\n[^b]:\n"
    assert footnote_words(text, "1") == "First, at length."
    assert footnote_words(text, "b") == ""  # defined, not yet written
    assert footnote_words(text, "9") is None


def test_renumbering_puts_moved_notes_back_in_order_and_sorts_their_lines() -> None:
    # Chapter Two (notes 3, 4) moved above Chapter One (1, 2) by Edit ▸ Move Section Up.
    moved = ("# Two\n\nC.[^3] D.[^4]\n\n# One\n\nA.[^1] B.[^2] Again A.[^1]\n\n"
             "[^1]: one\n[^2]: two\n    more of two\n[^3]: three, see [^1]\n[^4]: four\n")  # fmt: skip
    fixed = apply_edits(moved, renumbering(moved))
    assert fixed == ("# Two\n\nC.[^1] D.[^2]\n\n# One\n\nA.[^3] B.[^4] Again A.[^3]\n\n"
                     "[^1]: three, see [^3]\n[^2]: four\n[^3]: one\n[^4]: two\n    more of two\n")  # fmt: skip
    assert renumbering(fixed) == ()  # in order: nothing to do


def test_renumbering_keeps_named_notes_and_scattered_lines_where_they_are() -> None:
    text = "B.[^2] S.[^smith] A.[^1]\n\n[^2]: two\n\nProse between.\n\n[^smith]: Smith\n[^1]: one\n"
    fixed = apply_edits(text, renumbering(text))
    assert fixed == "B.[^1] S.[^smith] A.[^2]\n\n[^1]: two\n\nProse between.\n\n[^smith]: Smith\n[^2]: one\n"
    unreferred = "A.[^2]\n\n[^2]: two\n[^1]: never referred to\n"
    assert apply_edits(unreferred, renumbering(unreferred)) == "A.[^1]\n\n[^1]: two\n[^2]: never referred to\n"

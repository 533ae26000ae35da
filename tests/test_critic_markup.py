"""Tracked changes as CriticMarkup in the text (app/documents/critic_markup.py): written from two versions of a
text, found again, made or dropped one by one, and painted line by line as they are read whole."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from app.documents import critic_markup
from app.documents.critic_markup import (
    IN_ADDED,
    IN_COMMENT,
    OUTSIDE,
    Mark,
    mark_up,
    marks,
    painted,
    placements,
    settle,
    signed_by,
)
from app.documents.markdown_blocks import Revision
from model.edit.changes import Change, apply_changes

BEFORE = "The keeper slowly climbed the stairs.\n\nHe lit the lamp.\n"
AFTER = "The keeper quickly climbed the stairs every evening.\n\nHe lit the lamp.\n\nThe sea was calm.\n"


def test_mark_up_writes_each_change_and_either_way_settles_to_a_version() -> None:
    marked = mark_up(BEFORE, AFTER)

    assert marked == (
        "The keeper {~~slowly~>quickly~~} climbed the stairs{++ every evening++}.\n\nHe lit the lamp."
        "{++\n\nThe sea was calm.++}\n"  # a paragraph's signs beside the words, not on lines of their own
    )
    assert [mark.kind for mark in marks(marked)] == ["replacement", "insertion", "insertion"]
    assert settle(marked, accept=True) == AFTER
    assert settle(marked, accept=False) == BEFORE


def test_a_deletion_and_some_changes_decided_others_kept() -> None:
    marked = mark_up("One two three four.", "One three five.")
    assert marked is not None
    found = marks(marked)
    assert [(mark.kind, mark.removed, mark.added) for mark in found] == [
        ("deletion", "two ", ""), ("replacement", "four", "five"),
    ]  # fmt: skip
    first_only = settle(marked, accept=True, which=[found[0]])
    assert first_only == "One three {~~four~>five~~}."  # the other change still waits, marked
    assert settle(first_only, accept=False) == "One three four."


def test_a_paragraph_taken_out_is_marked_from_the_words_before_it() -> None:
    marked = mark_up("One.\n\nTwo.\n\nThree.\n", "One.\n\nThree.\n")
    assert marked == "One.{--\n\nTwo.--}\n\nThree.\n"
    assert settle(marked, accept=True) == "One.\n\nThree.\n"


def test_a_sentence_taken_out_is_marked_from_its_first_word() -> None:
    before = "The ships were few. He counted them anyway, and the gulls. On the first of March."
    marked = mark_up(before, "The ships were few. On the first of March.")
    assert marked == "The ships were few. {--He counted them anyway, and the gulls. --}On the first of March."


def test_texts_that_hold_the_delimiters_are_not_marked() -> None:
    assert mark_up("Use {++ to add.", "Use {++ to add, please.") is None
    assert mark_up("Same.", "Same.") == "Same."


def test_a_mark_found_is_where_the_text_has_it() -> None:
    text = "a {--b--} c {++d\ne++} f"
    assert marks(text) == [Mark(2, 9, "b", ""), Mark(12, 21, "", "d\ne")]
    assert marks("no marks, only {braces} and -- dashes ++") == []


def test_each_change_is_signed_by_whoever_the_files_own_changes_say_made_it() -> None:
    before = "The keeper climbed the stair. He lit the lamp.\n\nThe sea was calm.[^1]\n\n[^1]: His own note.\n"
    after = "The keeper slowly climbed the stairs. He lit the *old* lamp.\n\nThe sea was calm.[^1]\n\n[^1]: His note.\n"
    revisions = [  # as a Word file lists them: a footnote's change read with the body, where it is referred to
        Revision(True, "Maya", "slowly "), Revision(True, "Ed", "s"), Revision(False, "Sam", "own "),
        Revision(True, "Maya", "old "),
    ]  # fmt: skip
    marked = mark_up(before, after, revisions)
    assert marked == (
        "The keeper {++slowly ++}{>>Maya<<}climbed the {~~stair~>stairs~~}{>>Ed<<}. He lit the {++*old* ++}{>>Maya<<}"
        "lamp.\n\nThe sea was calm.[^1]\n\n[^1]: His {--own --}{>>Sam<<}note.\n"
    )  # a letter added makes a word's change, still Ed's; Markdown's signs are not the editor's words
    assert [mark.author for mark in marks(marked)] == ["Maya", "Ed", "Maya", "Sam"]
    assert settle(marked, accept=True) == after and settle(marked, accept=False) == before  # the names go too
    slid = mark_up("Go now.", "Go now, now.", [Revision(True, "Ed", "x"), Revision(True, "Maya", "now, ")])
    assert slid == "Go now{++, now++}{>>Maya<<}."  # the diff's change one stop along from Word's
    # A sentence added at a paragraph's end starts at its space, as Word puts it, not a stop before.
    added = mark_up("Written down.\n", "Written down. Nobody read it.\n",
                    [Revision(True, "Ed", "x"), Revision(True, "Maya", " Nobody read it.")])  # fmt: skip
    assert added == "Written down.{++ Nobody read it.++}{>>Maya<<}\n"
    assert mark_up("Written down. Nobody read it.", "Written down.") == "Written down.{-- Nobody read it.--}"
    one = mark_up(before, after, [Revision(True, "Maya", "")])  # one person's changes: each is theirs
    assert one is not None and one.count("{>>Maya<<}") == 4
    assert mark_up(before, after) == mark_up(before, after, [Revision(True, "", "slowly ")])  # no name: unsigned
    assert "{>>" not in (mark_up(before, after) or "")


def test_words_one_editor_took_out_and_another_put_in_are_two_changes_each_signed() -> None:
    before, after = "The keeper walked up.", "The keeper climbed up."
    marked = mark_up(before, after, [Revision(False, "Maya", "walked"), Revision(True, "Ed", "climbed")])
    assert marked == "The keeper {--walked--}{>>Maya<<}{++climbed++}{>>Ed<<} up."
    assert [(mark.kind, mark.author) for mark in marks(marked)] == [("deletion", "Maya"), ("insertion", "Ed")]
    assert settle(marked, accept=True) == after and settle(marked, accept=False) == before
    one = mark_up(before, after, [Revision(False, "Maya", "walked"), Revision(True, "Maya", "climbed"),
                                  Revision(True, "Ed", "elsewhere")])  # fmt: skip
    assert one == "The keeper {~~walked~>climbed~~}{>>Maya<<} up."  # one person's replacement stays one change


def test_a_paragraph_split_by_one_of_several_editors_is_signed_by_them() -> None:
    before, after = "The keeper climbed. He lit the lamp.", "The keeper slowly climbed.\n\nHe lit the lamp."
    revisions = [Revision(True, "Maya", "slowly "), Revision(True, "Ed", "\n")]  # a .doc's paragraph mark, Ed's
    marked = mark_up(before, after, revisions)
    assert marked is not None and [mark.author for mark in marks(marked)] == ["Maya", "Ed"]
    assert settle(marked, accept=True) == after and settle(marked, accept=False) == before


def test_a_name_is_kept_from_ending_its_comment_and_a_comment_alone_is_no_change() -> None:
    marked = mark_up("a b", "a c b", [Revision(True, "<<}Ed\n{Jones}", "c ")])
    assert marked == "a {++c ++}{>>Ed Jones<<}b"
    assert marks("a {>>just a comment<<} b {--c--} {>>Ed<<}") == [Mark(25, 32, "c", "")]  # not right after it
    found = marks("{++x++}{>>Maya<<}")
    assert found == [Mark(0, 17, "", "x", "Maya")] and settle("{++x++}{>>Maya<<}", accept=False) == ""


def test_painting_line_by_line_carries_a_mark_over_the_line_break() -> None:
    first, state = painted("He said {++yes", OUTSIDE)
    assert first == [(8, 11, "delimiter"), (11, 14, "added")] and state == IN_ADDED
    second, state = painted("and no++} then {~~x~>y~~}", state)
    assert second == [
        (0, 6, "added"), (6, 9, "delimiter"),
        (15, 18, "delimiter"), (18, 19, "removed"), (19, 21, "delimiter"), (21, 22, "added"), (22, 25, "delimiter"),
    ]  # fmt: skip
    assert state == OUTSIDE
    assert painted("a --} b ~> c", OUTSIDE) == ([], OUTSIDE)  # closers outside a mark are words
    signed, state = painted("x{--y--}{>>Maya<<} {>>a note over", OUTSIDE)
    assert signed[-5:] == [(8, 11, "delimiter"), (11, 15, "comment"), (15, 18, "delimiter"),
                           (19, 22, "delimiter"), (22, 33, "comment")] and state == IN_COMMENT  # fmt: skip
    assert painted("two lines<<} z", state) == ([(0, 9, "comment"), (9, 12, "delimiter")], OUTSIDE)


def test_a_long_book_with_a_change_in_every_chapter_is_marked_quickly() -> None:
    chapters = [[f"Paragraph {n} of the chapter {c}, with some words.\n\n" for n in range(200)] for c in range(60)]
    before = "".join(f"# Chapter {c}\n\n" + "".join(chapter) for c, chapter in enumerate(chapters))  # ~800K characters
    after = before.replace("Paragraph 0 of the chapter 7,", "Paragraph zero of the chapter 7,")
    after = re.sub(r"Paragraph 150 of the chapter", "Paragraph 150 of this chapter", after)
    marked = mark_up(before, after)  # paragraph by paragraph: a second, where word by word took minutes
    assert marked is not None and len(marks(marked)) == 1 + 60  # one in chapter 7, one in each chapter
    assert settle(marked, accept=True) == after


words = st.lists(st.sampled_from(["the", "sea", "lamp", ",", ".", " ", "\n", "\n\n", "\n  \n", "keeper's", "{", "}",
                                   "~", "+", "-"]))


revisions = st.lists(st.builds(Revision, st.booleans(), st.sampled_from(["", "Ann", "Bo"]), words.map("".join)))


@settings(max_examples=300, deadline=None)
@given(words, words, revisions, st.booleans())
def test_any_two_versions_mark_up_into_a_text_that_settles_to_each(before_words, after_words, said, whole) -> None:
    before, after = "".join(before_words), "".join(after_words)
    # Signed as the file's changes, however unlike the texts; ``whole``: a rewritten sentence's joined, as Mark
    # Changes Since marks them.
    marked = mark_up(before, after, said, whole_rewrites=whole)
    if marked is None:  # refused, never mangled: only where the texts hold the delimiters' characters themselves
        assert set("{}~") & set(before + after)
        return
    assert settle(marked, accept=False) == before and settle(marked, accept=True) == after
    if set("{}") & set(before + after):
        return  # a text's own stray "{~~" paints on as a mark would: only the marks written here are compared
    state, line_marks = OUTSIDE, 0
    for line in marked.split("\n"):
        ranges, state = painted(line, state)
        line_marks += sum(1 for start, end, style in ranges if style == "delimiter" and line[start:end] != "~>")
    assert state == OUTSIDE
    signed = sum(1 for mark in marks(marked) if mark.author)
    assert line_marks == 2 * len(marks(marked)) + 2 * signed  # painted as read: an opening and a closing each


def test_placements_turn_the_text_into_its_marked_up_self_and_sign_each_change() -> None:
    before = "The keeper climbed the stairs.\n\nHe lit the lamp. It was late.\n"
    after = "The old keeper climbed the steps.\n\nHe lit the lamp.\n"
    marked = mark_up(before, after, signed_by("Maya Ruiz"))
    assert marked is not None
    found = marks(marked)
    assert [mark.kind for mark in found] == ["insertion", "replacement", "deletion"]
    assert {mark.author for mark in found} == {"Maya Ruiz"}
    placed = placements(after, marked)
    assert [after[start:end] for start, end, _mark in placed] == ["old ", "steps", ""]
    rebuilt, position = [], 0
    for start, end, mark in placed:
        rebuilt += [after[position:start], mark]
        position = end
    assert "".join(rebuilt) + after[position:] == marked
    assert signed_by("  ") == []
    assert {mark.author for mark in marks(mark_up(before, after, signed_by("")) or "")} == {""}


def test_a_rewritten_sentence_is_one_change_and_two_typos_mended_stay_two() -> None:
    before = ("Every spring she would kneel in the dirt with her hands bare, and she said gloves made her stupid.\n\n"
              "Teh quick borwn fox.\n")  # fmt: skip
    after = ("She said she asked her to go home in the house and the girl had a moment, and her to the searched "
             "away.\n\nThe quick brown fox.\n")  # fmt: skip
    word_by_word = marks(mark_up(before, after) or "")
    assert len(word_by_word) == 7  # the sentence's five, with "she", "in the", ", and", "her" kept between
    whole = marks(mark_up(before, after, whole_rewrites=True) or "")
    assert [(mark.removed, mark.added) for mark in whole] == [
        (before.split(".")[0], after.split(".")[0]), ("Teh", "The"), ("borwn", "brown")
    ]
    # Never across a paragraph: the last words of one and the first of the next stay two changes.
    two_paragraphs = ("One two three four.\n\nFive six seven.\n", "One two thirty forty.\n\nFifty sixty seven.\n")
    assert len(marks(mark_up(*two_paragraphs, whole_rewrites=True) or "")) == 2


def test_a_run_of_changed_lines_past_the_limit_is_one_change(monkeypatch) -> None:
    # Diffing the words of a text replaced wholesale took seconds (a novel against another: 8 s) for marks no one
    # reads word by word; a run of changed lines that long is now one change, still exact.
    before = "Kept line.\nThe keeper climbed the stairs.\nHe lit the lamp.\nKept too.\n"
    after = "Kept line.\nThe keeper ran up the stairs.\nHe lit the old lamp.\nKept too.\n"
    assert [change.text for change in critic_markup.changes_between(before, after)] == ["ran up", "old "]
    monkeypatch.setattr(critic_markup, "WORD_BY_WORD_LIMIT", 40)  # the two changed lines are 47 characters
    changes = critic_markup.changes_between(before, after)
    assert changes == [Change(len("Kept line.\n"), len(before) - len("Kept too.\n"), after[11:-10])]
    assert apply_changes(before, changes) == after

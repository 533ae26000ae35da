"""Quotation marks and dashes typed as the document has them (app/window/typed_marks.py), with real key
presses."""

from __future__ import annotations

import pytest
from gui_helpers import SIGNAL_TIMEOUT_MS, place_cursor, select
from PySide6.QtCore import Qt

from app.window.editor_widget import Phase
from model.edit.shape import shape_request

CURLY = "‘Oh dear! Oh dear! I shall be late!’ said the Rabbit.\n\n“Where?” asked Alice.\n\n"
STRAIGHT = "'Oh dear! Oh dear! I shall be late!' said the Rabbit.\n\n\"Where?\" asked Alice.\n\n"


def type_at_end(qtbot, window, keys: str) -> str:
    """Type ``keys`` at the end of the text; what they added."""
    before = window.editor.plain_text()
    place_cursor(window, len(before))
    qtbot.keyClicks(window.editor, keys)
    return window.editor.plain_text()[len(before) :]


def test_in_a_text_of_curly_marks_the_keys_type_curly_ones(document_window, qtbot) -> None:
    window = document_window(text=CURLY)
    typed = type_at_end(qtbot, window, "\"Don't,\" she said, 'it's the dogs' bowl.' (\"Fine.\")")
    assert typed == "“Don’t,” she said, ‘it’s the dogs’ bowl.’ (“Fine.”)"
    window.undo()  # typing, marks and all, undoes as typing does
    assert window.editor.plain_text() == CURLY


def test_a_text_of_straight_marks_keeps_what_the_keys_type(document_window, qtbot) -> None:
    window = document_window(text=STRAIGHT)
    assert type_at_end(qtbot, window, "\"Don't.\"") == "\"Don't.\""
    mixed = document_window(text=CURLY + STRAIGHT)
    assert type_at_end(qtbot, mixed, "\"No.\"") == "\"No.\""  # neither kind plainly the text's: as typed


@pytest.mark.parametrize(
    ("language", "typed"),
    [
        ("en", "“Don’t,” she said, ‘it’s late.’"),
        ("de", "„Don’t“, she said, ‚it’s late.’"),
        ("fr", "«\u00a0Don’t\u00a0», she said, ‘it’s late.’"),
    ],
)
def test_a_new_text_gets_the_marks_of_its_language(document_window, qtbot, language: str, typed: str) -> None:
    window = document_window(text="", spelling_language=language)
    keys = "\"Don't,\" she said, 'it's late.'" if language == "en" else "\"Don't\", she said, 'it's late.'"
    assert type_at_end(qtbot, window, keys) == typed
    assert typed[0] in window.statusBar().currentMessage()  # what the first mark became, and the way back
    assert "Ctrl+Z" in window.statusBar().currentMessage()


def test_ctrl_z_after_a_new_texts_first_mark_gives_the_straight_one_and_a_text_of_them(document_window, qtbot) -> None:
    window = document_window(text="")
    assert type_at_end(qtbot, window, "He said \"") == "He said “"
    window.undo()  # the turn alone: the writer asked for a straight mark
    assert window.editor.plain_text() == "He said \""
    assert type_at_end(qtbot, window, "Yes.\" It's late.") == "Yes.\" It's late."  # the text's kind now
    window.undo()
    window.undo()
    assert window.editor.plain_text() == ""  # the rest undoes as typing does


def test_a_typed_mark_replaces_a_selection_and_turns_by_its_neighbours(document_window, qtbot) -> None:
    window = document_window(text=CURLY)
    start, _end = select(window, "the Rabbit")
    qtbot.keyClick(window.editor, Qt.Key.Key_QuoteDbl, Qt.KeyboardModifier.ShiftModifier)
    assert window.editor.plain_text() == CURLY.replace("the Rabbit", "“")  # the selection went; after a space: opens
    assert window.editor.textCursor().position() == start + 1
    select(window, "Alice")
    qtbot.keyClick(window.editor, Qt.Key.Key_Apostrophe)
    assert window.editor.plain_text().endswith("asked ‘.\n\n")


def test_a_mark_typed_into_a_developing_rewrite_is_refused_as_any_key(document_window, qtbot) -> None:
    window = document_window(text=CURLY)
    start, end = select(window, "said the Rabbit")
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.editor.live_span is not None)
    place_cursor(window, start + 4)
    qtbot.keyClicks(window.editor, '"')
    assert '"' not in window.editor.plain_text() and "“" not in window.editor.plain_text()[start:end]
    window.cancel_rewrite()
    assert window.editor.plain_text() == CURLY and window.editor.phase is Phase.IDLE


EM_DASHED = "It was late—very late—and the Rabbit ran.\n\nAlice followed—of course.\n\n"


def test_in_a_text_of_em_dashes_two_hyphens_type_one(document_window, qtbot) -> None:
    window = document_window(text=EM_DASHED)
    assert type_at_end(qtbot, window, "She stopped--then ran.") == "She stopped—then ran."
    assert type_at_end(qtbot, window, "Wait--") == "Wait—"
    window.undo()  # the dash was one step: the hyphen typed before it comes back
    assert window.editor.plain_text().endswith("ran.Wait-")
    qtbot.keyClick(window.editor, Qt.Key.Key_Return)
    assert type_at_end(qtbot, window, "--- x") == "--- x"  # at a line's start: a Markdown rule stays
    assert type_at_end(qtbot, window, "a---b") == "a—-b"  # a third hyphen is a hyphen
    hyphenated = document_window(text=EM_DASHED.replace("—", "--"))
    assert type_at_end(qtbot, hyphenated, "late--so") == "late--so"  # a text of -- dashes keeps them
    qtbot.keyClick(window.editor, Qt.Key.Key_Return)
    assert type_at_end(qtbot, window, "|--|--|") == "|--|--|"  # a table's rule
    assert type_at_end(qtbot, window, " <!-- a note -->") == " <!-- a note -->"  # an HTML comment


def test_a_new_english_text_makes_two_hyphens_an_em_dash_and_ctrl_z_gives_them_back(document_window, qtbot) -> None:
    window = document_window(text="", spelling_language="en")
    assert type_at_end(qtbot, window, "Late--very late.") == "Late—very late."
    assert "Ctrl+Z makes it --" in window.statusBar().currentMessage()
    window = document_window(text="", spelling_language="en")
    type_at_end(qtbot, window, "Late--")
    window.undo()  # the writer's two hyphens back: a text of -- dashes from now on
    assert window.editor.plain_text() == "Late--"
    assert type_at_end(qtbot, window, "so late--and dark.") == "so late--and dark."
    german = document_window(text="", spelling_language="de")
    assert type_at_end(qtbot, german, "Gleich--sehr bald.") == "Gleich--sehr bald."  # its dash is – : as typed


def test_an_apostrophe_before_a_word_it_shortens_turns_as_the_word_ends(document_window, qtbot) -> None:
    window = document_window(text=CURLY)
    typed = type_at_end(qtbot, window, "'Tis the '90s, 'twas said; rock 'n' roll, give 'em 'emeralds.'")
    assert typed == "’Tis the ’90s, ’twas said; rock ’n’ roll, give ’em ‘emeralds.’"
    # Only the writer's caret's word, and only a ‘ that opens it: a straight text keeps its straight marks.
    straight = document_window(text=STRAIGHT)
    assert type_at_end(qtbot, straight, "'Tis ") == "'Tis "
    # The turn is a step of its own: Ctrl+Z after the space gives the space back, then the ‘.
    window = document_window(text=CURLY)
    type_at_end(qtbot, window, "'em ")
    window.undo()
    assert window.editor.plain_text().endswith("’em")
    window.undo()
    assert window.editor.plain_text().endswith("‘em")


def test_in_a_german_or_french_text_the_keys_type_its_own_marks(document_window, qtbot) -> None:
    german = document_window(text="„Ich gehe jetzt“, sagte er. „Warum?“, fragte sie.\n\n")
    assert type_at_end(qtbot, german, "\"Komm mit\", rief sie, \"es regnet.\"") == "„Komm mit“, rief sie, „es regnet.“"
    french = document_window(text="Il dit\u202f: «\u202fNon\u202f», et partit. «\u202fPourquoi\u202f?\u202f»\n\n")
    typed = type_at_end(qtbot, french, "\"Viens\", dit-elle, \"c'est tard.\"")
    assert typed == "«\u202fViens\u202f», dit-elle, «\u202fc’est tard.\u202f»"  # the space inside them, as set


def test_markdown_code_keeps_the_marks_a_program_needs(document_window, qtbot) -> None:
    text = CURLY + "Run `print('x')` there.\n\n```python\nname = 'x'\n```\n\nAfter.\n"
    window = document_window(text=text)
    code = text.index("print('x')") + len("print(")
    place_cursor(window, code)
    qtbot.keyClicks(window.editor, '"a--b"')  # inside a `span`
    fenced = window.editor.plain_text().index("name = ") + len("name = ")
    place_cursor(window, fenced)
    qtbot.keyClicks(window.editor, "'y' ")  # inside the fenced block
    fence = window.editor.plain_text().index("```python") + len("```python")
    place_cursor(window, fence)
    qtbot.keyClicks(window.editor, " \"")  # on a fence's own line
    after = window.editor.plain_text().index("After.")
    place_cursor(window, after)
    qtbot.keyClicks(window.editor, '"Yes." ')  # prose again after the block
    wanted = text.replace("print(", 'print("a--b"').replace("name = ", "name = 'y' ")
    assert window.editor.plain_text() == wanted.replace("```python", '```python "').replace("After.", "“Yes.” After.")


def test_a_rewrite_in_a_new_german_text_asks_for_its_marks(document_window, qtbot, monkeypatch) -> None:
    window = document_window(text="Sie ging zur Tür. Er blieb stehen.", spelling_language="de", candidates=1)
    sent = []
    submit = window.service.submit
    monkeypatch.setattr(window.service, "submit", lambda request, *rest: sent.append(request) or submit(request, *rest))
    select(window, "Er blieb stehen")
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.last_result is not None, timeout=SIGNAL_TIMEOUT_MS)
    assert sent[0].language == "de"  # the drafts' marks are German ones: model/edit/shape.py
    assert shape_request(sent[0])[1].quotes == "low"
    window.reject_rewrite()

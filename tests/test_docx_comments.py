"""Notes as Word comments (app/window/docx_comments.py): who each comment is by."""

from __future__ import annotations

from app.window.docx_comments import Comments


def test_a_named_note_is_by_its_name_and_a_task_word_is_no_name() -> None:
    comments = Comments()
    marked = comments.mark("One<!-- Maya Editor: Every one? --> two<!-- TODO: check the date --> three<!-- a "
                           "thought --> four<!-- Note: ask Sam -->.")  # fmt: skip
    assert "<!--" not in marked
    assert comments.notes == [
        ("Maya Editor", "Every one?"),
        ("Redraft", "TODO: check the date"),  # not by "TODO"
        ("Redraft", "a thought"),
        ("Redraft", "Note: ask Sam"),
    ]

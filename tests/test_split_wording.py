"""Where a command-line position or span is wrong, the message says how, with the text's length."""

from __future__ import annotations

import pytest

from model import RequestError, split_document

TEXT = "Some text here."  # 15 characters


@pytest.mark.parametrize(
    ("start", "end", "words"),
    [
        (9999, 9999, "position 9999 is past the end of the text, which is 15 characters long"),
        (-1, -1, "position -1 is before the start of the text"),
        (200, 100, "the span 200:100 starts after it ends (start 200, end 100)"),
        (5, 999, "the span 5:999 ends past the end of the text, which is 15 characters long"),
        (-2, 5, "the span -2:5 starts before the start of the text"),
    ],
)
def test_a_wrong_position_or_span_is_named_for_what_it_is(start: int, end: int, words: str) -> None:
    with pytest.raises(RequestError) as caught:
        split_document(TEXT, start, end)
    assert words in str(caught.value)
    assert "9999:9999" not in str(caught.value) and "outside the text" not in str(caught.value)


def test_the_text_is_split_exactly_at_the_ends() -> None:
    assert split_document(TEXT, 15, 15) == (TEXT, "", "")
    assert split_document(TEXT, 0, 4) == ("", "Some", " text here.")

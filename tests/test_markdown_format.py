"""Format ▸ Bold, Italic, Headings, Lists, Quote and Link as text rules (app/documents/markdown_format.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.documents.markdown_format import (
    Edit,
    Inline,
    LineKind,
    NewLine,
    continuation,
    set_heading,
    toggle_inline,
    toggle_lines,
    toggle_link,
)


def _selected(edit: Edit) -> str:
    return edit.text[edit.start : edit.end]


def test_bold_wraps_the_selection_and_keeps_it_selected():
    text = "The keeper climbed the stairs."
    edit = toggle_inline(text, 4, 10, Inline.BOLD)
    assert edit.text == "The **keeper** climbed the stairs."
    assert _selected(edit) == "keeper"


def test_bold_again_takes_the_marks_off_whether_or_not_they_were_selected():
    once = toggle_inline("The keeper climbed.", 4, 10, Inline.BOLD)
    assert toggle_inline(once.text, once.start, once.end, Inline.BOLD).text == "The keeper climbed."
    whole = "The **keeper** climbed."
    edit = toggle_inline(whole, 4, 14, Inline.BOLD)  # "**keeper**" selected, marks and all
    assert edit.text == "The keeper climbed."
    assert _selected(edit) == "keeper"


def test_the_spaces_at_a_selections_edges_stay_outside_the_marks():
    # A double-click in many editors takes the word's following space; "**keeper **" is no bold in Markdown.
    assert toggle_inline("The keeper climbed.", 4, 11, Inline.ITALIC).text == "The *keeper* climbed."


def test_italic_and_bold_share_the_asterisk_and_are_told_apart_by_the_runs_length():
    bold = "a **word** b"
    both = toggle_inline(bold, 4, 8, Inline.ITALIC)
    assert both.text == "a ***word*** b"
    assert toggle_inline(both.text, both.start, both.end, Inline.BOLD).text == "a *word* b"
    assert toggle_inline(both.text, both.start, both.end, Inline.ITALIC).text == bold
    assert toggle_inline("a *word* b", 3, 7, Inline.BOLD).text == "a ***word*** b"
    assert toggle_inline("a _word_ b", 3, 7, Inline.ITALIC).text == "a word b"
    assert toggle_inline("a __word__ b", 4, 8, Inline.BOLD).text == "a word b"


def test_a_caret_styles_its_word_and_a_caret_between_words_gets_marks_to_type_into():
    edit = toggle_inline("say it's well-known now", 10, 10, Inline.BOLD)
    assert edit.text == "say it's **well-known** now"
    assert (edit.start, edit.end) == (11, 21)  # "well-known" itself, caret kept at its place
    empty = toggle_inline("one  two", 4, 4, Inline.ITALIC)
    assert empty.text == "one ** two"
    assert empty.start == empty.end == 5


def test_a_selection_over_lines_is_styled_line_by_line_and_blank_lines_are_left():
    text = "first line\n\nsecond line"
    edit = toggle_inline(text, 0, len(text), Inline.STRIKE)
    assert edit.text == "~~first line~~\n\n~~second line~~"
    assert toggle_inline(edit.text, edit.start, edit.end, Inline.STRIKE).text == text


def test_marks_come_off_only_where_every_line_has_them_and_a_styled_line_is_not_doubled():
    text = "*one*\ntwo"
    edit = toggle_inline(text, 0, len(text), Inline.ITALIC)
    assert edit.text == "*one*\n*two*"


def test_code_uses_backticks():
    edit = toggle_inline("run ls -l here", 4, 9, Inline.CODE)
    assert edit.text == "run `ls -l` here"
    assert toggle_inline(edit.text, edit.start, edit.end, Inline.CODE).text == "run ls -l here"


def test_headings_set_replace_and_toggle_off_keeping_the_caret_on_its_word():
    text = "Intro\nbody"
    edit = set_heading(text, 2, 2, 2)
    assert edit.text == "## Intro\nbody"
    assert edit.start == 5  # still before "tro"
    three = set_heading(edit.text, edit.start, edit.end, 3)
    assert three.text == "### Intro\nbody"
    assert set_heading(three.text, three.start, three.end, 3).text == text
    assert set_heading("# Title", 0, 0, 0).text == "Title"
    assert set_heading("#hashtag", 0, 0, 1).text == "# #hashtag"  # no space: a hashtag, not a heading


def test_a_caret_inside_the_mark_taken_off_lands_where_the_words_begin():
    edit = set_heading("## Intro", 1, 1, 2)
    assert (edit.text, edit.start) == ("Intro", 0)


def test_bullets_on_each_line_off_again_and_blank_lines_left():
    text = "milk\neggs\n\nbread"
    edit = toggle_lines(text, 0, len(text), LineKind.BULLET)
    assert edit.text == "- milk\n- eggs\n\n- bread"
    assert edit.end == len(edit.text)
    assert toggle_lines(edit.text, edit.start, edit.end, LineKind.BULLET).text == text


def test_numbers_replace_bullets_keep_the_indent_and_count_from_one():
    text = "- milk\n  * eggs\nbread"
    assert toggle_lines(text, 0, len(text), LineKind.NUMBERED).text == "1. milk\n  2. eggs\n3. bread"
    assert toggle_lines("7. a\n9. b", 0, 9, LineKind.NUMBERED).text == "a\nb"


def test_a_selection_ending_at_a_lines_start_leaves_that_line_alone():
    text = "one\ntwo\nthree"
    assert toggle_lines(text, 0, 4, LineKind.BULLET).text == "- one\ntwo\nthree"


def test_a_quote_keeps_its_paragraphs_together_and_comes_off_whole():
    text = "One.\n\nTwo."
    edit = toggle_lines(text, 0, len(text), LineKind.QUOTE)
    assert edit.text == "> One.\n>\n> Two."
    assert toggle_lines(edit.text, 0, len(edit.text), LineKind.QUOTE).text == text


def test_a_link_takes_the_clipboards_address_or_waits_for_one():
    edit = toggle_link("see the docs here", 4, 13, "https://example.org/a ")
    assert edit.text == "see [the docs](https://example.org/a) here"
    assert edit.start == edit.end == edit.text.index(" here")
    waiting = toggle_link("see the docs here", 8, 12, "not a link")
    assert waiting.text == "see the [docs]() here"
    assert waiting.start == waiting.text.index("()") + 1


def test_a_selected_address_becomes_the_address_and_the_caret_waits_for_words():
    edit = toggle_link("at https://example.org today", 3, 22)
    assert edit.text == "at [](https://example.org) today"
    assert edit.start == edit.end == 4


def test_link_inside_a_link_takes_it_off_and_keeps_its_words():
    text = "see [the docs](https://example.org) here"
    edit = toggle_link(text, 8, 8)
    assert edit.text == "see the docs here"
    assert _selected(edit) == "the docs"


words = st.text(alphabet="abcdefgh ", min_size=1, max_size=12).filter(lambda s: s.strip())


@settings(max_examples=200, deadline=None)
@given(st.lists(words, min_size=1, max_size=5), st.data())
def test_every_toggle_twice_gives_the_text_back(lines, data):
    text = "\n".join(line.strip() for line in lines)
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    for style in (Inline.BOLD, Inline.ITALIC, Inline.CODE, Inline.STRIKE):
        once = toggle_inline(text, start, end, style)
        if once.text != text and once.start != once.end:
            assert toggle_inline(once.text, once.start, once.end, style).text == text, style
    for kind in LineKind:
        once = toggle_lines(text, start, end, kind)
        assert toggle_lines(once.text, once.start, once.end, kind).text == text, kind
    for level in (1, 2, 6):
        once = set_heading(text, start, end, level)
        assert set_heading(once.text, once.start, once.end, level).text == text, level


def test_enter_in_a_list_continues_it_ends_it_on_an_empty_item_and_leaves_other_lines_alone():
    assert continuation("- milk", 6) == NewLine("- ")
    assert continuation("  * nested", 10) == NewLine("  * ")
    assert continuation("41. answer", 10) == NewLine("42. ")
    assert continuation("- [X] done", 10) == NewLine("- [ ] ")
    assert continuation(">> deep quote", 13) == NewLine(">> ")
    assert continuation("- milk", 3) == NewLine("- ")  # inside the words: the rest goes to the next item
    assert continuation("- ", 2) == NewLine(end=True)
    assert continuation(">  ", 3) == NewLine(end=True)
    assert continuation("- milk", 1) is None  # inside the mark itself
    assert continuation("*italic* start", 14) is None
    assert continuation("---", 3) is None
    assert continuation("plain words", 5) is None


def test_tab_nests_an_item_under_the_one_before_and_shift_tab_brings_it_back():
    from app.documents.markdown_format import indent_items

    text = "- milk\n- eggs\n1. one\n1. two"
    deeper = indent_items(text, 10, 10)
    assert deeper is not None and deeper.text == "- milk\n  - eggs\n1. one\n1. two"
    assert deeper.start == 12  # the caret moved with its word
    numbered = indent_items(text, len(text) - 1, len(text) - 1)
    assert numbered is not None and numbered.text.endswith("1. one\n   1. two")  # under "1. ": three spaces
    back = indent_items(deeper.text, deeper.start, deeper.end, outdent=True)
    assert back is not None and back.text == text
    assert indent_items("Plain words.", 3, 3) is None  # Tab types a tab
    assert indent_items("- milk\nplain", 0, 12) is None  # not every touched line is an item
    assert indent_items(text, 2, 2, outdent=True).text == text  # as far out as it goes

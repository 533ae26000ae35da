"""Format ▸ Picture…'s rules on strings: the picture a paragraph of its own between blank lines wherever the
caret is, named relative to the document (in <…> where a space would end the name), its caption in words."""

from __future__ import annotations

from pathlib import Path, PurePath

from app.documents.picture_links import PICTURE, caption_of, picture_insertion, picture_name

MAP = "![harbour map](images/map.png)"


def _inserted(text: str, at: int) -> tuple[str, str]:
    """The new text and the caption's range in it, as the text there."""
    insertion = picture_insertion(text, at, MAP, "harbour map")
    new = text[: insertion.position] + insertion.text + text[insertion.position :]
    return new, new[insertion.caption_start : insertion.caption_end]


def test_the_picture_is_a_paragraph_of_its_own_wherever_the_caret_is() -> None:
    text = "First para.\nStill first.\n\nNext para.\n"
    expected_after_first = "First para.\nStill first.\n\n" + MAP + "\n\nNext para.\n"
    assert _inserted(text, 3) == (expected_after_first, "harbour map")  # after the paragraph, not inside it
    assert _inserted(text, text.index("Still") + 2)[0] == expected_after_first
    assert _inserted(text, text.index("\n\n") + 1)[0] == expected_after_first  # on the blank line between
    assert _inserted("Only.", 2)[0] == "Only.\n\n" + MAP  # at the text's end
    assert _inserted("A.\nB.\nC.", 0)[0] == "A.\nB.\nC.\n\n" + MAP
    assert _inserted("Only.\n", 6)[0] == "Only.\n\n" + MAP + "\n"  # on the empty last line
    assert _inserted("", 0) == (MAP, "harbour map")


def test_a_picture_is_named_beside_the_document_and_bracketed_where_it_holds_a_space(tmp_path: Path) -> None:
    picture = tmp_path / "images" / "map.png"
    assert picture_name(picture, tmp_path) == "images/map.png"
    assert picture_name(tmp_path / "pics" / "the bay (1).png", tmp_path / "book") == "<../pics/the bay (1).png>"
    assert picture_name(picture, None) == picture.as_posix()  # an unsaved document: its full path
    named = f"![x]({picture_name(tmp_path / 'my pics' / 'a.png', tmp_path)})"
    found = PICTURE.fullmatch(named)
    assert found is not None and found.group("bracketed") == "my pics/a.png"


def test_a_caption_is_the_files_name_in_words() -> None:
    assert caption_of(PurePath("harbour_map-1877.png")) == "harbour map 1877"
    assert caption_of(PurePath("[draft].jpg")) == "draft"
    assert caption_of(PurePath("___.png")) == "picture"

"""Format ▸ Picture… and a picture dropped on the text: Markdown's ``![a caption](images/map.png)`` put in as a
paragraph of its own, which every export sets in line (``app/window/export_pictures.py``). Pure text in, text out
(no Qt); ``app/window/picture_command.py`` asks for the file and applies the insertion as one undo step.

The picture's name is written as the exports read it: relative to the document's folder where the document has
one (the folder travels with its pictures; ``../`` where the picture sits beside it), else its full path, in
``<…>`` where it holds a space or a bracket. The caption is the file's name in words, selected to be typed over."""

from __future__ import annotations

import os
import re
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path, PurePath

# A picture in the text: its caption and its name (in <…> or bare), an optional "title" after it.
PICTURE = re.compile(
    r"!\[(?P<caption>[^\]\n]*)\]\((?:<(?P<bracketed>[^>\n]+)>|(?P<bare>[^)\s]+))(?:\s+\"[^\"\n]*\")?\)"
)
PICTURE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp", ".svg", ".tif", ".tiff"})
NEEDS_BRACKETS = re.compile(r"[\s()<>]")


@dataclass(frozen=True)
class Insertion:
    """``text`` put in at ``position``; the caption's place in the new text, to select."""

    position: int
    text: str
    caption_start: int
    caption_end: int


def is_picture_file(path: PurePath) -> bool:
    return path.suffix.lower() in PICTURE_SUFFIXES


def picture_name(picture: Path, folder: Path | None) -> str:
    """How the text names ``picture``: relative to ``folder`` (POSIX slashes, as Markdown writes them) where
    there is one and the two share a drive, else its full path."""
    name = picture.as_posix()
    if folder is not None:
        with suppress(ValueError):  # another drive on Windows: no relative way there
            name = Path(os.path.relpath(picture, folder)).as_posix()
    return f"<{name}>" if NEEDS_BRACKETS.search(name) else name


def caption_of(picture: PurePath) -> str:
    """The file's name in words ("harbour_map-1877.png" -> "harbour map 1877"), brackets left out."""
    words = re.sub(r"[-_.\s]+", " ", picture.stem).strip()
    return re.sub(r"[\[\]]", "", words) or "picture"


def picture_insertion(text: str, at: int, markdown: str, caption: str) -> Insertion:
    """``markdown`` (a picture, its caption ``caption`` inside it) as a paragraph of its own: on the empty line
    ``at`` is on, else after the paragraph ``at`` is in, with blank lines between it and its neighbours."""
    line_start = text.rfind("\n", 0, at) + 1
    line_end = text.find("\n", at)
    line_end = len(text) if line_end < 0 else line_end
    if text[line_start:line_end].strip():
        while line_end < len(text):  # to the paragraph's last line: a hand-wrapped one is not cut in two
            next_end = text.find("\n", line_end + 1)
            next_end = len(text) if next_end < 0 else next_end
            if not text[line_end + 1 : next_end].strip():
                break
            line_end = next_end
        position = line_end
        before = "\n\n"
        after = "\n" if text[line_end + 1 : line_end + 2] not in ("", "\n") else ""
    else:
        position = line_start
        before = "\n" if line_start >= 2 and text[line_start - 2] != "\n" else ""
        followed = text[line_end : line_end + 1] == "\n" and text[line_end + 1 : line_end + 2] not in ("", "\n")
        last_line = line_end == len(text) and text.endswith("\n")  # the text still ends with a line break
        after = "\n" if followed or last_line else ""
    inserted = before + markdown + after
    caption_start = position + len(before) + markdown.index("[") + 1
    return Insertion(position, inserted, caption_start, caption_start + len(caption))

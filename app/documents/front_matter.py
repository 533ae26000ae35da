"""A Markdown document's front matter: the YAML block at the top of a text that Pandoc, Quarto, Jekyll, Hugo and
Obsidian read as the document's title, author and date, never as its words::

    ---
    title: The Salt Road
    subtitle: A novel
    author: [Maya Okafor, Tom Reyes]
    date: 2026-12-05
    lang: en-GB
    ---

It is read as Pandoc reads it: a line of three hyphens as the text's very first line, not followed by a blank
line, then YAML that is a mapping, closed by a line of three hyphens or three dots. Anything else at the top
(a scene break's ``---`` before the first paragraph) is the writer's text. The exports put its title block on
the first page and its fields in the file's own properties; tracked changes inside it are read as accepted.
Nothing here needs Qt.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import Any

from app.documents.critic_markup import settle

OPENING = re.compile(r"\A\ufeff?---[ \t]*\r?\n(?![ \t]*\r?\n)")
CLOSING = re.compile(r"^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.MULTILINE)
MOST_CHARS = 65_536  # a block longer than this is not front matter but a document's first part
MOST_AUTHORS = 50
# Emphasis and code marks in a title ("*Ulysses* Annotated"): the metadata is plain words. A mark escaped with a
# backslash is a character, as Pandoc reads the values as Markdown; the escapes go after.
# Underscores mark emphasis only from outside a word (CommonMark): a snake_case title keeps them.
INLINE_MARKS = re.compile(r"(?<!\\)(\*{1,3}|`+|(?<!\w)_{1,3})(?=\S)(.+?)(?<=[^\s\\])\1(?!(?<=_)\w)")
MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
# A well-formed language tag as EPUB and Word take it (BCP 47's shape: a 2-3 letter language, then subtags).
LANGUAGE_TAG = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*")


@dataclass(frozen=True)
class TitlePage:
    """What the front matter says of the document; "" (or no authors) where it says nothing."""

    title: str = ""
    subtitle: str = ""
    authors: tuple[str, ...] = ()
    date: str = ""
    language: str = ""  # a language tag ("en-GB"), as Pandoc's ``lang``

    def lines(self) -> list[tuple[str, str]]:
        """The title block's lines as the exports set them, each with its part's name (Word's style for it): an
        author a line, as a book's title page and Pandoc's Word writer set them, so each comes back apart."""
        parts = [("Title", self.title), ("Subtitle", self.subtitle), *(("Author", name) for name in self.authors),
                 ("Date", self.date)]  # fmt: skip
        return [(part, words) for part, words in parts if words]


@dataclass(frozen=True)
class FrontMatter:
    page: TitlePage
    end: int  # where the text after the block starts (its closing line's line break included)


def _bounds(text: str) -> tuple[int, int, int] | None:
    """Where a front-matter-shaped block's YAML starts and ends, and where the text after it starts."""
    opening = OPENING.match(text)
    if opening is None:
        return None
    closing = CLOSING.search(text, opening.end(), min(len(text), MOST_CHARS))
    if closing is None or not (closing.end() == len(text) or text[closing.end() - 1] == "\n"):
        return None  # none, or a line cut at MOST_CHARS that only looked closed
    return opening.end(), closing.start(), closing.end()


def front_matter_end(text: str) -> int:
    """Where a front-matter-shaped block at the top of ``text`` ends (0: none), whether or not its YAML reads: the
    highlighter's quick look, redone as the writer types."""
    bounds = _bounds(text)
    return bounds[2] if bounds is not None else 0


def read_front_matter(text: str) -> FrontMatter | None:
    """``text``'s front matter, None where it has none (or its YAML does not read as a mapping)."""
    bounds = _bounds(text)
    if bounds is None:
        return None
    start, yaml_end, end = bounds
    block = settle(text[start:yaml_end], accept=True)
    fields = _yaml_mapping(block)
    if fields is None:
        return None
    return FrontMatter(
        TitlePage(
            title=_plain(fields.get("title")),
            subtitle=_plain(fields.get("subtitle")),
            authors=_authors(fields.get("author", fields.get("authors"))),
            date=_plain(fields.get("date")),
            language=language_tag(_plain(fields.get("lang", fields.get("language")))),
        ),
        end,
    )


def without_front_matter(text: str) -> tuple[TitlePage, str]:
    """``text``'s title page (empty where it has no front matter) and the text after its front matter."""
    found = read_front_matter(text)
    return (found.page, text[found.end :]) if found is not None else (TitlePage(), text)


def language_tag(value: str) -> str:
    """``value`` as a language tag ("en-GB"), a locale's spelling ("en_GB.UTF-8") mended; "" for anything that is
    none ("C", "English"): an e-book with a malformed one is refused by the stores' checks (EPUBCheck)."""
    tag = value.strip().split(".", 1)[0].split("@", 1)[0].replace("_", "-")
    return tag if LANGUAGE_TAG.fullmatch(tag) else ""


def _yaml_mapping(block: str) -> dict[str, Any] | None:
    import yaml  # only when a text has front matter: the editor starts without it

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml where PyYAML was built with it
    try:
        fields = yaml.load(block, Loader=loader)  # noqa: S506 - a safe loader, whichever of the two
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    return {str(key).lower(): value for key, value in fields.items()} if isinstance(fields, dict) else None


def _plain(value: object) -> str:
    """A field's words on one line, Markdown's emphasis marks taken off; "" for anything but a single value."""
    if isinstance(value, datetime.datetime):
        value = value.date()
    if isinstance(value, bool) or not isinstance(value, str | int | float | datetime.date):
        return ""
    words = " ".join(str(value).split())
    return MARKDOWN_ESCAPE.sub(r"\1", INLINE_MARKS.sub(r"\2", words))


def _authors(value: object) -> tuple[str, ...]:
    """Pandoc's ``author``: one name, a list of names, or a list of ``{name: …}`` entries."""
    entries = value if isinstance(value, list) else [value]
    names = (_plain(entry.get("name") if isinstance(entry, dict) else entry) for entry in entries[:MOST_AUTHORS])
    return tuple(name for name in names if name)

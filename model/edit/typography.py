"""Quotation marks and dashes as the document has them: curly (‘ ’ “ ”) or straight (' ") marks, German and
Central European low ones („ “), or guillemets (« », French, with the space inside them that the document leaves),
and a dash written as one character (—) or as two hyphens (--), as typewritten and Project Gutenberg texts have it.

A model writes whichever its training text had; a writer's document has one kind. :func:`quote_style` reads the
kind from the text around an edit (only where it is plain: two marks or more, nearly all of one kind), and
:func:`with_quotes` gives new text that kind, each straight mark turned by what stands either side of it:
opening after a space, a line's start, an opening bracket or dash; closing after a word or punctuation; an
apostrophe inside a word (don’t), before a year ('90s → ’90s) or opening a word it shortens ('Tis → ’Tis,
rock 'n' roll → rock ’n’ roll). :func:`dash_style` and :func:`with_dashes` do
the same for dashes, and :func:`sentence_spacing` and :func:`with_spacing` for the spaces between sentences: a
model trained on typewritten books writes two after a full stop now and then, which a text of one space each
should not get. Nothing here needs torch or Qt.
"""

from __future__ import annotations

import re
from typing import Literal

QuoteStyle = Literal["curly", "low", "guillemets", "straight", ""]
DashStyle = Literal["em", "hyphens", ""]
SpacingStyle = Literal["single", "double", ""]
EM_DASH = "—"
HYPHENS = "--"
TWO_HYPHENS = re.compile(r"(?<!-)--(?!-)")  # not a Markdown rule's three
# A sentence's end and the spaces after it, before the next one's first letter (or its opening mark).
SENTENCE_GAP = re.compile(r"[.!?][\"'”’)\]]? +(?=[\"'“‘(\[]?[A-Z])")
EXTRA_SPACES = re.compile(r"(?<=\S)  +(?=\S)")  # inside a line: not its indent, nor Markdown's break at its end
CURLY = "‘’“”"
TYPOGRAPHIC = CURLY + "„‚«»"  # every kind's marks but the straight ones
STRAIGHT = "'\""
TO_STRAIGHT = str.maketrans("‘’“”„‚", "''\"\"\"'")
# Each typographic kind's opening and closing double marks and its opening single one; a closing single mark and
# an apostrophe are ’ in each (German's closing ‘ is rare beside its apostrophes, so a typed ' after a word is ’).
QUOTE_MARKS: dict[str, tuple[str, str, str]] = {
    "curly": ("“", "”", "‘"),
    "low": ("„", "“", "‚"),
    "guillemets": ("«", "»", "‘"),
}
# The spaces French sets inside guillemets: narrow and full no-break, or a plain one typed.
GUILLEMET_SPACES = ("\u202f", "\u00a0", " ")
# The marks each spelling language's books print (app.window.dictionary.LANGUAGES), for a text that has none yet,
# and the space set inside guillemets: Word's French puts a no-break one there; Italian sets none. Dutch and
# Portuguese print “ ” as often as their other kinds (Portugal's « », the Dutch „ ”), so English marks serve.
LANGUAGE_QUOTES: dict[str, tuple[QuoteStyle, str]] = {
    "en": ("curly", ""), "de": ("low", ""), "fr": ("guillemets", "\u00a0"), "it": ("guillemets", ""),
    "pt": ("curly", ""), "nl": ("curly", ""),
}  # fmt: skip
MIN_MARKS = 2  # fewer says nothing about the document
# A kind is the document's where it outnumbers the other four to one: a stray straight apostrophe pasted into
# a text of curly marks does not make it mixed.
DOMINANCE = 4
OPENS_AFTER = " \t\n\r\u00a0\u2028\u2029([{<—–-‘“/"  # after these a mark opens a quotation
# Words whose first letters an apostrophe stands for: after a space it is still ’, not an opening ‘. Only
# those no quotation is likely to begin with ('em, not 'round or 'cause: "'round the bend,' she said").
ELIDED = re.compile(r"(?:tis|twas|twere|twill|twould|twixt|em|n['’])(?![^\W\d_])", re.IGNORECASE)
# A word typed after a ‘ it turns out to shorten, checked as the word ends: 'tis, 'twas, 'em, 'n', '90s, '99.
TYPED_ELISION = re.compile(r"(?:^|(?<=[" + re.escape(OPENS_AFTER) + r"]))‘(?=(?:" + ELIDED.pattern
                           + r"|\d\d(?:s)?)$)", re.IGNORECASE)  # fmt: skip


def _plain(one: int, other: int) -> int:
    """Which of two kinds a text plainly uses, from how often it uses each: 1 or 2, or 0 where it mixes both or
    has too few to tell."""
    if one >= MIN_MARKS and one >= DOMINANCE * other:
        return 1
    if other >= MIN_MARKS and other >= DOMINANCE * one:
        return 2
    return 0


def quote_style(context: str) -> QuoteStyle:
    """The kind of quotation marks ``context`` uses, or "" where it mixes straight and typographic ones or has too
    few to tell. Of typographic ones: "guillemets" where « » are at least half the marks (apostrophes aside: a
    French text quotes inside them with “ ”), "low" where „ ‚ are a third (a German quotation has one of them and
    one “), else "curly"."""
    typographic = sum(context.count(mark) for mark in TYPOGRAPHIC)
    straight = sum(context.count(mark) for mark in STRAIGHT)
    plain = _plain(typographic, straight)
    if plain != 1:
        return "straight" if plain == 2 else ""
    quoting = typographic - context.count("’")
    if 2 * (context.count("«") + context.count("»")) >= quoting > 0:
        return "guillemets"
    if 3 * (context.count("„") + context.count("‚")) >= quoting > 0:
        return "low"
    return "curly"


def typed_quote_style(context: str, language: str) -> tuple[QuoteStyle, str]:
    """The marks to type into ``context``, and the space to set inside guillemets: the document's own
    (:func:`quote_style`) where it plainly has a kind, else ``language``'s (``LANGUAGE_QUOTES``) where it has no
    straight mark to keep, too few typographic ones to tell (a new text, or its first quotation half typed)."""
    style = quote_style(context)
    if not style and not any(mark in context for mark in STRAIGHT) and language in LANGUAGE_QUOTES:
        style, inner = LANGUAGE_QUOTES[language]
        return style, (guillemet_space(context) or inner) if style == "guillemets" else ""
    return style, guillemet_space(context) if style == "guillemets" else ""


def has_quotes(text: str) -> bool:
    """Whether ``text`` has a quotation mark or an apostrophe of any kind."""
    return any(mark in text for mark in STRAIGHT + TYPOGRAPHIC)


def guillemet_space(context: str) -> str:
    """The space ``context`` sets inside its guillemets (after « and before »), the one it uses most: a narrow
    or a full no-break space, a plain one, or none."""
    inside = re.findall(r"«(\s?)|(\s?)»", context)
    counts = {space: 0 for space in (*GUILLEMET_SPACES, "")}
    for after_open, before_close in inside:
        space = after_open or before_close
        if space in counts:
            counts[space] += 1
    return max(counts, key=lambda space: counts[space]) if inside else ""


def curly_mark(mark: str, before: str, after: str, style: QuoteStyle = "curly", inner: str = "") -> str:
    """The typographic mark a straight ``mark`` (' or ") stands for between the character ``before`` and the text
    ``after`` ("" at the text's edges; a few characters are enough), in ``style``'s marks (English curly ones by
    default); a guillemet comes with ``inner``, the space set inside it, unless one is there already."""
    opening = not before or before in OPENS_AFTER
    opens, closes, opens_single = QUOTE_MARKS.get(style, QUOTE_MARKS["curly"])
    if mark == '"':
        if style != "guillemets" or not inner:
            return opens if opening else closes
        if opening:
            return opens + ("" if after[:1] in GUILLEMET_SPACES else inner)
        return ("" if before in GUILLEMET_SPACES else inner) + closes
    if opening and not after[:1].isdigit() and not ELIDED.match(after):  # '90s, 'Tis: elisions, not quotations
        return opens_single
    return "’"


def elided_opening(typed: str) -> int | None:
    """Where, in ``typed`` (the text before the caret, up to a word's end), an opening ‘ stands for letters
    or a century the word just typed leaves out ('Tis, '90s): the index of the ‘ to make ’, or None."""
    found = TYPED_ELISION.search(typed[-12:])
    return None if found is None else len(typed) - len(typed[-12:]) + found.start()


def with_quotes(text: str, style: QuoteStyle, before: str = "", inner: str = "") -> str:
    """``text`` with its quotation marks in ``style`` ("" leaves them); ``before`` is the character just before
    it in the document, which decides whether a mark at its start opens or closes; ``inner``, the space set inside
    guillemets. A model writes English marks: in a text of low marks or guillemets its curly ones are turned too."""
    if style == "straight":
        return text.translate(TO_STRAIGHT)
    if style in ("low", "guillemets"):
        text = text.translate(TO_STRAIGHT)
    if style not in QUOTE_MARKS or not any(mark in text for mark in STRAIGHT):
        return text
    out: list[str] = []
    for index, character in enumerate(text):
        if character in STRAIGHT:
            previous = out[-1][-1:] if out else before[-1:]
            character = curly_mark(character, previous, text[index + 1 : index + 9], style, inner)
        out.append(character)
    return "".join(out)


def dash_style(context: str) -> DashStyle:
    """How ``context`` writes a dash: as "em" (—), as two "hyphens" (--), or "" where it mixes both or has too few
    to tell (the same four to one as the quotation marks)."""
    em, hyphens = context.count(EM_DASH), len(TWO_HYPHENS.findall(context))
    kinds: tuple[DashStyle, ...] = ("", "em", "hyphens")
    return kinds[_plain(em, hyphens)]


def typed_dash_style(context: str, language: str) -> DashStyle:
    """How to write a dash typed into ``context``: the text's own way (:func:`dash_style`), else, in English
    (``language``), as an em dash where the text has no -- dash to keep, as a word processor's do."""
    style = dash_style(context)
    if not style and language == "en" and not TWO_HYPHENS.search(context):
        return "em"
    return style


def has_dashes(text: str) -> bool:
    """Whether ``text`` has a dash of either kind."""
    return EM_DASH in text or bool(TWO_HYPHENS.search(text))


def with_dashes(text: str, style: DashStyle) -> str:
    """``text`` with its dashes written in ``style`` ("" leaves them)."""
    if style == "em":
        return TWO_HYPHENS.sub(EM_DASH, text)
    if style == "hyphens":
        return text.replace(EM_DASH, HYPHENS)
    return text


def sentence_spacing(context: str) -> SpacingStyle:
    """How many spaces ``context`` leaves between sentences: "single", "double", or "" where it mixes both or has
    too few sentences to tell (the same four to one as the quotation marks)."""
    gaps = [match.group().count(" ") for match in SENTENCE_GAP.finditer(context)]
    single = gaps.count(1)
    kinds: tuple[SpacingStyle, ...] = ("", "single", "double")
    return kinds[_plain(single, len(gaps) - single)]


def with_spacing(text: str, style: SpacingStyle) -> str:
    """``text`` with one space wherever it has more inside a line, in a text of ``style`` "single" (others are
    left: a double-spaced text's writer spaces as they please, and "Mr. Smith" is no sentence's end)."""
    return EXTRA_SPACES.sub(" ", text) if style == "single" else text

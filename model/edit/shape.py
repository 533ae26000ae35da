"""The shape of the writer's text around an edit: what stays outside the canvas and comes back exactly.

* **Edges.** Whitespace and line breaks at a selection's edges (a triple-clicked paragraph carries the line
  break after it) are the writer's layout, not text to redraft: they stay in the context (the leading ones
  end the prefix, the trailing ones start the suffix) and are put back byte for byte around the new text.
* **The ending.** A selection that ends a sentence (``. ! ? …``, then any closing quotes or brackets) has that
  punctuation held after each candidate's free slots, pinned like the suffix, so every candidate ends the
  sentence where the original did instead of running into the next one. A fill between two sentences (the
  text before it ends one, the text after it starts one, or a line) gets a full stop held the same way; a
  fill inside a sentence may end anywhere.

:func:`shape_request` turns a request into the one the canvas is laid out for and the :class:`Shape` that
:meth:`Shape.restore` uses to give each candidate its edges and ending back; :func:`shaped` wraps an
engine's ``edit`` with both, so the local engine and the server's shape edits alike.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar, cast

from model.edit.request import EditRequest
from model.edit.typography import (
    DashStyle,
    QuoteStyle,
    SpacingStyle,
    sentence_spacing,
    typed_dash_style,
    typed_quote_style,
    with_dashes,
    with_quotes,
    with_spacing,
)
from model.edit.wrapping import (
    LINE_BREAK,
    LINE_MARKER_PATTERN,
    SENTENCE_END,
    SENTENCE_ENDING,
    as_prose,
    breaks_as_spaces,
    rewrap,
    wrapped_breaks,
)

if TYPE_CHECKING:
    from model.edit.passes import EditResult, Pass

# Opening quotes and brackets that may come before a sentence's first letter.
OPENERS = "\"'“‘«(["
# Spaces and tabs (not line breaks) between a gap and the text around it.
INLINE_SPACE = " \t"
# How much of the text either side of an edit says which quotation marks the document uses.
QUOTE_CONTEXT_CHARS = 4000
# The ending held after a fill between sentences.
FILL_ENDING = "."
# What a rewrite across lines holds as the writer's layout: each run of line breaks (a paragraph's end, a
# blank line) with the sentence ending before it (as a single sentence's is held) and the Markdown marker
# that starts the next line (a heading's #, a list's bullet or number, a quote's >), and such a marker at
# the selection's start.
LAYOUT_MARKS = re.compile(
    rf"(?:\A|(?:{SENTENCE_ENDING})?[ \t]*[\r\n\u2028\u2029]+[ \t]*){LINE_MARKER_PATTERN}?"
)

# Marks inside a paragraph that are no prose: a Markdown footnote's reference (``[^1]``, whose note loses its
# place in the text if a draft drops it) and a note to self or an editor's comment (``<!-- … -->``). A rewrite
# holds them where they stand, as kept words, and rewrites the prose around them.
NOT_PROSE_MARKS = re.compile(r"\[\^[^\]\s]+\]|<!--.*?-->", re.S)


@dataclass(frozen=True)
class Shape:
    """What :func:`shape_request` kept outside the canvas: ``before`` and ``after`` the new text, and the
    ``ending`` held after it (already part of the laid-out suffix)."""

    before: str = ""
    ending: str = ""
    after: str = ""
    # A rewrite's core has no whitespace at its edges, and neither has its new text: the edges are the
    # document's. A fill's text keeps its own (it may start with the space after a sentence).
    strip: bool = False
    # A fill that continues a paragraph: its text starts right after the one space ``before`` gives it, and
    # a line break the model wrote inside it is a space (the paragraphs are the writer's).
    in_paragraph: bool = False
    # A rewrite of paragraphs wrapped by hand (model.edit.wrapping): the width to wrap the new text at, the
    # column its first line starts in (0: not wrapped), and which of the selection's paragraphs were wrapped.
    wrap_width: int = 0
    wrap_column: int = 0
    wrapped_paragraphs: tuple[bool, ...] = ()
    wrap_tail: str = ""  # the rest of the line the selection ends in, which the new text's last line sits beside
    # The quotation marks the document around the edit uses (model.edit.typography; in a new text, its
    # language's), and the character before the new text, which turns a mark at its start: the new text's marks
    # are made the document's kind.
    quotes: QuoteStyle = ""
    quote_before: str = ""
    quote_inner: str = ""  # the space a text of guillemets sets inside them (« Non »)
    dashes: DashStyle = ""  # and how it writes a dash: — or --
    spacing: SpacingStyle = ""  # and how many spaces it leaves between sentences

    def restore(self, text: str) -> str:
        """A candidate's new text with the edges and the ending put back, its quotation marks, dashes and spaces
        the document's."""
        text = with_dashes(with_quotes(text, self.quotes, self.quote_before, self.quote_inner), self.dashes)
        text = with_spacing(text, self.spacing)
        if self.strip:
            text = text.strip()
        if self.in_paragraph:
            text = LINE_BREAK.sub(" ", text).lstrip()
        if self.wrap_width:
            text = as_prose(text, self.wrapped_paragraphs)
        if self.ending:
            # The model sometimes ends the sentence itself just before the held ending: one ending, not two.
            text = text.rstrip()
            own_ending = SENTENCE_END.search(text)
            if own_ending and text[: own_ending.start()].strip():
                text = text[: own_ending.start()].rstrip()
            text += self.ending
        if self.wrap_width:
            text = rewrap(text, self.wrap_width, self.wrap_column, self.wrap_tail)
            if text.startswith("\n") and not self.before.strip(INLINE_SPACE):
                return text + self.after  # the break stands where the space would have ended the line above
        return self.before + text + self.after

    def developing(self, pieces: list[str]) -> list[str]:
        """A fill's developing pass (its text in ``pieces``, each keeping its length) as :meth:`restore` will
        leave it: the space before and the held ending as pieces of their own at either end, and in a paragraph
        the model's line breaks as spaces. Without these a pass reads "table.He felt" until it finishes."""
        if self.in_paragraph:
            pieces = [breaks_as_spaces(piece) for piece in pieces]
        text = "".join(pieces).rstrip()
        own_ending = SENTENCE_END.search(text)
        ending = self.ending
        if ending and own_ending and text[: own_ending.start()].strip():
            ending = ending.removeprefix(FILL_ENDING)  # the model ended the sentence: one ending, not two
        return [self.before, *pieces, ending]

    def restore_result(self, result: EditResult) -> EditResult:
        if self == Shape():
            return result
        return replace(result, texts=[self.restore(text) for text in result.texts])


def shape_request(request: EditRequest) -> tuple[EditRequest, Shape]:
    """The request the canvas is laid out for, and what :meth:`Shape.restore` puts back around its text."""
    inner, shape = _shape_edges(request)
    if request.mode == "gaps":  # the text around the gaps is the writer's, marks and all
        return inner, shape
    context = request.prefix[-QUOTE_CONTEXT_CHARS:] + "\n" + request.suffix[:QUOTE_CONTEXT_CHARS]  # no gap across
    # The text's own kinds of mark and dash; where it has too few to tell (a new text), its language's, as the
    # editor types them (app/window/typed_marks.py): a draft in a new German text quotes „so“.
    quotes, quote_inner = typed_quote_style(context, request.language)
    dashes = typed_dash_style(context, request.language)
    spacing = sentence_spacing(context)
    if not quotes and not dashes and not spacing:
        return inner, shape
    return inner, replace(shape, quotes=quotes, quote_before=inner.prefix[-1:], quote_inner=quote_inner,
                          dashes=dashes, spacing=spacing)  # fmt: skip


def _shape_edges(request: EditRequest) -> tuple[EditRequest, Shape]:
    if request.mode == "fill":
        return _shape_fill(request)
    span = request.span or ""
    if request.mode == "gaps":
        # Every character outside the gaps is held as it is; the selection's edge whitespace (the blank line
        # after a selected paragraph) stays outside the canvas altogether, so no gap can reach into it.
        core = span.strip()
        if not core:
            return request, Shape()
        before, after = span[: len(span) - len(span.lstrip())], span[len(span.rstrip()) :]
        inner = replace(request, prefix=request.prefix + before, span=core, suffix=after + request.suffix)
        return inner, Shape(before, "", after)
    core = span.strip()
    if not core:
        return request, Shape()  # refused by validation
    before, after = span[: len(span) - len(span.lstrip())], span[len(span.rstrip()) :]
    ending = ""
    found = SENTENCE_END.search(core)
    if request.mode == "rewrite" and found and core[: found.start()].strip():
        body = core[: found.start()].rstrip()
        ending = core[len(body) :]
        core = body
    # Kept ranges move with the core; a range inside the edges or the ending is held there anyway.
    keep = tuple(
        (max(0, start - len(before)), min(len(core), end - len(before)))
        for start, end in request.keep
        if min(len(core), end - len(before)) > max(0, start - len(before))
    )
    width = column = 0
    paragraphs: tuple[bool, ...] = ()
    if request.mode == "rewrite":
        column = len((request.prefix + before).rsplit("\n", 1)[-1])
        wrapping = wrapped_breaks(request.prefix + before, core, ending + after + request.suffix)
        keep = with_layout_held(core, keep, free=wrapping.breaks)
        width, paragraphs = wrapping.width, wrapping.paragraphs if wrapping.width else ()
    inner = replace(
        request, prefix=request.prefix + before, span=core, suffix=ending + after + request.suffix, keep=keep
    )
    tail = (after + request.suffix).split("\n", 1)[0] if width else ""
    return inner, Shape(before, ending, after, strip=True, wrap_width=width, wrap_column=column if width else 0,
                        wrapped_paragraphs=paragraphs, wrap_tail=tail)  # fmt: skip


def with_layout_held(
    core: str, keep: tuple[tuple[int, int], ...], free: list[tuple[int, int]] | None = None
) -> tuple[tuple[int, int], ...]:
    """``keep`` plus the layout of a rewrite across lines (``LAYOUT_MARKS``) and the marks that are no prose
    (``NOT_PROSE_MARKS``, where words are left to rewrite around them), overlapping ranges merged; a mark holding
    one of the line breaks in ``free`` (a hand-wrapped paragraph's, model.edit.wrapping) is not layout and stays
    free.

    Rewriting two paragraphs (or a whole document) gave one paragraph back, its heading's # and the blank
    lines gone: the model writes prose, not the writer's layout. Held, each paragraph is developed in its
    own free region between them, as kept words are (:mod:`model.edit.holds`).
    """
    wrapped = {at for at, _ in free or []}
    marks = [
        (m.start(), m.end())
        for m in LAYOUT_MARKS.finditer(core)
        if m.end() > m.start() and wrapped.isdisjoint(range(m.start(), m.end()))
    ]
    not_prose = [(m.start(), m.end()) for m in NOT_PROSE_MARKS.finditer(core)]
    if not_prose and any(character.isalnum() for character in NOT_PROSE_MARKS.sub("", core)):
        marks += not_prose
    if not marks:
        return keep
    merged: list[tuple[int, int]] = []
    for start, end in sorted([*keep, *marks]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return tuple(merged)


def _shape_fill(request: EditRequest) -> tuple[EditRequest, Shape]:
    """A fill between sentences ends one: a full stop held after its slots (and a space before the next
    sentence when the document has none); one right after a sentence's end starts with a space. In a
    hand-wrapped paragraph (model.edit.wrapping) the fill is wrapped at its lines' width."""
    inner, shape = _shape_fill_edges(request)
    width = wrapped_breaks(request.prefix, "", request.suffix).width
    if not width:
        return inner, shape
    column = len((request.prefix + shape.before).rsplit("\n", 1)[-1])
    return inner, replace(shape, wrap_width=width, wrap_column=column, wrapped_paragraphs=(True,),
                          wrap_tail=request.suffix.split("\n", 1)[0])  # fmt: skip


def _shape_fill_edges(request: EditRequest) -> tuple[EditRequest, Shape]:
    prefix, suffix = request.prefix, request.suffix
    # Right after a sentence in the same paragraph (at most spaces between): the fill continues the
    # paragraph, one space after the sentence, on the same line.
    continues = bool(SENTENCE_END.search(prefix.rstrip(INLINE_SPACE)))
    before = " " if continues and not prefix.endswith(tuple(INLINE_SPACE)) else ""
    if not suffix or not between_sentences(prefix, suffix):
        if not continues:
            return request, Shape()
        return replace(request, prefix=prefix + before), Shape(before=before, in_paragraph=True)
    ending = FILL_ENDING if suffix[0].isspace() else FILL_ENDING + " "
    inner = replace(request, prefix=prefix + before, suffix=ending + suffix)
    return inner, Shape(before=before, ending=ending, in_paragraph=continues)


def between_sentences(prefix: str, suffix: str) -> bool:
    """Whether a gap lies between sentences: the text before it (spaces aside) ends one or a line, or the
    document starts there; the text after it (spaces aside) starts one or a line, or the document ends."""
    before = prefix.rstrip(INLINE_SPACE)
    after = suffix.lstrip(INLINE_SPACE)
    ends_before = not before or before.endswith(("\n", "\r", "\u2029")) or bool(SENTENCE_END.search(before))
    first_letter = after.lstrip(OPENERS)[:1]
    starts_after = not after or after.startswith(("\n", "\r", "\u2029")) or first_letter.isupper()
    return ends_before and starts_after


EditMethod = TypeVar("EditMethod", bound=Callable[..., Generator[Any, None, Any]])


def shaped(edit: EditMethod) -> EditMethod:
    """An engine's ``edit`` run on the shaped request, each candidate's text restored at the end."""

    @functools.wraps(edit)
    def shaped_edit(engine: Any, request: EditRequest, cancel: Any = None) -> Generator[Pass, None, EditResult]:
        request.validate()
        inner, shape = shape_request(request)
        result = yield from edit(engine, inner, cancel)
        return shape.restore_result(result)

    return cast(EditMethod, shaped_edit)

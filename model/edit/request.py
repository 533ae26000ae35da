"""What a client asks the engine for: the span to develop, its context, and the sampler options."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Literal

from model.errors import RequestError

# Characters that end a line.
LINE_MARKS = "\r\n\u2028\u2029"
Mode = Literal["rewrite", "fill", "instruct", "gaps"]
MODES: tuple[Mode, ...] = ("rewrite", "fill", "instruct", "gaps")
# How long a rewrite comes out against the original: the free slots offered, as a share of its tokens.
Length = Literal["shorter", "same", "longer"]
LENGTH_FACTORS: dict[str, float] = {"shorter": 0.6, "same": 1.0, "longer": 1.5}
# A gap to fill inside a selection ("gaps" mode). GAP_MARKER is the one the app teaches: it reads the same in
# plain text and in Markdown (where a run of underscores is bold, italic or a rule); three or more
# underscores and […] are read too, as files written before say them.
GAP_MARKER = "[...]"
GAP_MARK = re.compile(r"\[\.\.\.\]|\[…\]|_{3,}")
LANGUAGE_CODE = re.compile(r"(?:[a-z]{2,3})?")  # ISO 639's two or three letters, or none
# One word, as Words That Fit reads and offers them (model.edit.word_choices): letters, with an apostrophe or
# a hyphen inside (don't, well-known), not a number or a mark.
WHOLE_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")


def word_at(text: str, at: int) -> tuple[int, int] | None:
    """The character range of the :data:`WHOLE_WORD` ``at`` is in, ends or starts (the caret's word), or None."""
    return next((match.span() for match in WHOLE_WORD.finditer(text) if match.start() <= at <= match.end()), None)
# The slots each gap of a "gaps" edit is offered when the request names none (a medium fill).
DEFAULT_GAP_TOKENS = 16


def gap_tokens(mark: str) -> int:
    """The slots a gap mark asks for when the request names none: the writer's mark says how much is
    missing. "___" is a few words (each gap became 10-20 words at DEFAULT_GAP_TOKENS); each underscore past
    three asks for about one word more; "[...]" is a short phrase."""
    if mark.startswith("_"):
        return min(6 + 2 * (len(mark) - 3), 4 * DEFAULT_GAP_TOKENS)
    return 8

# DiffusionGemma's published sampler defaults (transformers' DiffusionGemmaGenerationConfig), used when
# neither the request nor the checkpoint sets a value. ``left_to_right_bias`` and ``wide_entropy_bound``
# (model.edit.sampling) and ``polish_rounds`` (model.edit.polish) are Redraft's extensions; 0 is the published
# sampler.
PUBLISHED_DEFAULTS = {
    "max_denoising_steps": 48,
    "t_min": 0.4,
    "t_max": 0.8,
    "entropy_bound": 0.1,
    "stability_threshold": 1,
    "confidence_threshold": 0.005,
    "left_to_right_bias": 0.0,
    "polish_rounds": 0,
    "wide_entropy_bound": 0.0,
}
MAX_POLISH_ROUNDS = 64

# The most characters one token of context can cover (a token is at least one character, but a
# multi-byte character can be split over several): the engine tokenizes at most this many characters
# per token of context on either side, and clients need send no more.
CONTEXT_CHARS_PER_TOKEN = 8
# However small the context budget, the text after a span fills up to a canvas; no canvas is wider.
MAX_CANVAS_TOKENS = 8192

MAX_CANDIDATES = 16
MAX_DENOISING_STEPS = 1024
MAX_NEW_TOKENS = 8192


@dataclass(frozen=True)
class DenoiseOptions:
    """Sampler settings; ``None`` means "the checkpoint's default, else the published one"."""

    max_denoising_steps: int | None = None
    t_max: float | None = None
    t_min: float | None = None
    entropy_bound: float | None = None
    stability_threshold: int | None = None
    confidence_threshold: float | None = None
    left_to_right_bias: float | None = None
    polish_rounds: int | None = None
    wide_entropy_bound: float | None = None

    def check_types(self) -> None:
        """Each set option is a number of the right kind (a JSON client can send anything)."""
        for name in PUBLISHED_DEFAULTS:
            value = getattr(self, name)
            if value is None:
                continue
            whole = isinstance(PUBLISHED_DEFAULTS[name], int)
            _check_number(name.replace("_", " "), value, whole=whole)

    def resolved(self, checkpoint_defaults: dict[str, float | int | None]) -> ResolvedOptions:
        values: dict[str, float | int] = {}
        for name, published in PUBLISHED_DEFAULTS.items():
            value = getattr(self, name)
            if value is None:
                value = checkpoint_defaults.get(name)
            values[name] = published if value is None else value
        options = ResolvedOptions(
            max_denoising_steps=int(values["max_denoising_steps"]),
            t_max=float(values["t_max"]),
            t_min=float(values["t_min"]),
            entropy_bound=float(values["entropy_bound"]),
            stability_threshold=int(values["stability_threshold"]),
            confidence_threshold=float(values["confidence_threshold"]),
            left_to_right_bias=float(values["left_to_right_bias"]),
            polish_rounds=_whole(values["polish_rounds"], "polish rounds"),
            wide_entropy_bound=float(values["wide_entropy_bound"]),
        )
        options.validate()
        return options


def _check_number(name: str, value: object, *, whole: bool) -> None:
    """A number from a request (never a bool, a string or null), a whole one where ``whole``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or (whole and not isinstance(value, int)):
        kind = "a whole number" if whole else "a number"
        raise RequestError(f"{name} must be {kind}, got {value!r}")


def _check_text(name: str, value: object) -> None:
    """Text the tokenizer can take: a string that is valid Unicode (no lone UTF-16 surrogates)."""
    if not isinstance(value, str):
        raise RequestError(f"{name} must be text, got {type(value).__name__} {value!r:.40}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise RequestError(
            f"{name} is not valid Unicode text: character {error.start} is a lone surrogate "
            f"(U+{ord(value[error.start]):04X}), which usually means the text was decoded with the wrong "
            "encoding"
        ) from None


def _is_range(value: object) -> bool:
    """A [start, end] pair of whole numbers, as JSON sends it."""
    return (
        isinstance(value, tuple | list)
        and len(value) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) for x in value)
    )


def _whole(value: float | int, name: str) -> int:
    """A count from a request or a checkpoint's JSON (which may hold 4.0): a whole number, or an error."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value % 1:
        raise RequestError(f"{name} must be a whole number, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class ResolvedOptions:
    max_denoising_steps: int
    t_max: float
    t_min: float
    entropy_bound: float
    stability_threshold: int
    confidence_threshold: float
    left_to_right_bias: float = 0.0
    polish_rounds: int = 0
    wide_entropy_bound: float = 0.0  # 0: every block uses ``entropy_bound`` (model.edit.sampling.block_entropy_bound)

    def validate(self) -> None:
        if not 1 <= self.max_denoising_steps <= MAX_DENOISING_STEPS:
            raise RequestError(
                f"max denoising steps must be between 1 and {MAX_DENOISING_STEPS}, "
                f"got {self.max_denoising_steps}"
            )
        for name in ("t_max", "t_min", "entropy_bound", "confidence_threshold", "left_to_right_bias",
                     "wide_entropy_bound"):
            value = getattr(self, name)
            if not math.isfinite(value):
                raise RequestError(f"{name.replace('_', ' ')} must be a finite number, got {value}")
        if not 0 < self.t_min <= self.t_max <= 10:
            raise RequestError(
                f"the temperature schedule needs 0 < t_min <= t_max <= 10, got t_max={self.t_max}, "
                f"t_min={self.t_min}"
            )
        if self.entropy_bound <= 0:
            raise RequestError(f"the entropy bound must be > 0, got {self.entropy_bound}")
        if self.left_to_right_bias < 0:
            raise RequestError(f"the left-to-right bias must be >= 0, got {self.left_to_right_bias}")
        if self.wide_entropy_bound < 0:
            raise RequestError(f"the wide canvas's entropy bound must be >= 0, got {self.wide_entropy_bound}")
        if not 0 <= self.polish_rounds <= MAX_POLISH_ROUNDS:
            raise RequestError(f"polish rounds must be between 0 and {MAX_POLISH_ROUNDS}, got {self.polish_rounds}")
        if self.stability_threshold < 0:
            raise RequestError(f"the stability threshold must be >= 0, got {self.stability_threshold}")
        if self.confidence_threshold <= 0:
            raise RequestError(f"the confidence threshold must be > 0, got {self.confidence_threshold}")


@dataclass(frozen=True)
class EditRequest:
    """One edit: develop new text between ``prefix`` and ``suffix``.

    ``span`` is the selected text for ``rewrite`` and ``instruct`` and ``None`` for ``fill`` (a gap at
    the cursor). The engine returns only the new span; the prefix and suffix are never re-decoded.
    """

    prefix: str
    suffix: str = ""
    span: str | None = None
    mode: Mode = "fill"
    instruction: str | None = None
    max_new_tokens: int | None = None
    options: DenoiseOptions = field(default_factory=DenoiseOptions)
    seed: int | None = None
    candidates: int = 1
    context_budget: int = 2048
    # rewrite only: the share of the span's tokens replaced by noise on the first canvas. 1.0 develops
    # the span from pure noise (only the context guides it); lower keeps more of the original.
    strength: float = 1.0
    # fill or rewrite before a suffix, with several candidates: develop them at different lengths (a
    # gap: all the slots asked for, 2/3, 1/2, 1/3 of them; a rewrite: around the span's own length)
    # and let the ranking choose (``Engine``).
    vary_length: bool = True
    # rewrite only: character ranges of ``span`` whose text every candidate keeps verbatim, in order
    # (:mod:`model.edit.holds`).
    keep: tuple[tuple[int, int], ...] = ()
    # rewrite only: how long the new text comes out against the original (``LENGTH_FACTORS``).
    length: Length = "same"
    # The text's language ("de"; "": not known): where the text around the edit has too few quotation marks or
    # dashes to show its own kind (a new text), a draft's are this language's (model.edit.typography).
    language: str = ""

    def validate(self) -> None:
        self._check_types()
        if self.mode not in MODES:
            raise RequestError(f"unknown mode {self.mode!r}; use one of {', '.join(MODES)}")
        if self.mode == "fill":
            if self.span is not None:
                raise RequestError("fill develops a gap: pass no span (use rewrite to replace text)")
        else:
            if not self.span or not self.span.strip():
                raise RequestError(f"{self.mode} needs a non-empty span of text to rewrite")
        if self.mode == "gaps" and not GAP_MARK.search(self.span or ""):
            raise RequestError(
                "the selection holds no gap to fill: mark each gap with [...] (or three or more underscores)"
            )
        if self.length not in LENGTH_FACTORS:
            raise RequestError(f"length must be one of {', '.join(LENGTH_FACTORS)}, got {self.length!r}")
        if self.keep:
            self._check_keep()
        if self.mode == "instruct" and not (self.instruction and self.instruction.strip()):
            raise RequestError("instruct mode needs an instruction, e.g. 'make it shorter'")
        if self.mode == "fill" and not (self.prefix.strip() or self.suffix.strip()):
            raise RequestError("the document is empty: there is no context to fill a gap from")
        if self.max_new_tokens is not None and not 0 < self.max_new_tokens <= MAX_NEW_TOKENS:
            raise RequestError(
                f"max new tokens must be between 1 and {MAX_NEW_TOKENS}, got {self.max_new_tokens}"
            )
        if self.mode == "fill" and self.max_new_tokens is None:
            raise RequestError("fill needs max_new_tokens: the longest gap the model may write")
        if not 1 <= self.candidates <= MAX_CANDIDATES:
            raise RequestError(f"candidates must be between 1 and {MAX_CANDIDATES}, got {self.candidates}")
        if self.context_budget < 1:
            raise RequestError(f"the context budget must be at least 1 token, got {self.context_budget}")
        if not (isinstance(self.strength, int | float) and 0 < self.strength <= 1):
            raise RequestError(f"rewrite strength must be in (0, 1], got {self.strength}")
        if self.seed is not None and not 0 <= self.seed < 2**63:
            raise RequestError(f"the seed must be a non-negative 63-bit integer, got {self.seed}")

    def _check_types(self) -> None:
        """Every field of the kind it must be, before any value is compared (clients send JSON)."""
        _check_text("prefix", self.prefix)
        _check_text("suffix", self.suffix)
        for name in ("span", "instruction"):
            if getattr(self, name) is not None:
                _check_text(name, getattr(self, name))
        if not isinstance(self.mode, str):
            raise RequestError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        for name in ("max_new_tokens", "seed"):
            if getattr(self, name) is not None:
                _check_number(name.replace("_", " "), getattr(self, name), whole=True)
        _check_number("candidates", self.candidates, whole=True)
        _check_number("context budget", self.context_budget, whole=True)
        _check_number("rewrite strength", self.strength, whole=False)
        if not isinstance(self.keep, tuple | list) or not all(_is_range(r) for r in self.keep):
            raise RequestError(f"keep must be a list of [start, end] character offsets, got {self.keep!r:.80}")
        if not isinstance(self.length, str):
            raise RequestError(f"length must be one of {', '.join(LENGTH_FACTORS)}, got {self.length!r:.40}")
        if not (isinstance(self.language, str) and LANGUAGE_CODE.fullmatch(self.language)):
            raise RequestError(f'language must be a code such as "de", or "" for none, got {self.language!r:.40}')
        if not isinstance(self.vary_length, bool):
            raise RequestError(f"vary_length must be true or false, got {self.vary_length!r}")
        if not isinstance(self.options, DenoiseOptions):
            raise RequestError(f"options must be DenoiseOptions, got {type(self.options).__name__}")
        self.options.check_types()

    def _check_keep(self) -> None:
        """Kept ranges lie inside the span, in order, apart, and leave words to rewrite."""
        if self.mode != "rewrite":
            raise RequestError("only a rewrite keeps words (fill and instructions have none to keep)")
        span = self.span or ""
        ranges = sorted((int(start), int(end)) for start, end in self.keep)
        for start, end in ranges:
            if not 0 <= start < end <= len(span):
                raise RequestError(
                    f"the kept words {start}:{end} lie outside the selection, which is {len(span)} characters "
                    "long: mark words inside it"
                )
            if not span[start:end].strip() and not any(mark in span[start:end] for mark in LINE_MARKS):
                # (line breaks are held as the writer's layout: model.edit.shape)
                raise RequestError(f"the kept range {start}:{end} holds no words, only spaces")
        for (_, end), (start, _) in zip(ranges, ranges[1:], strict=False):
            if start < end:
                raise RequestError(f"kept words overlap ({start} is inside the range before it): mark each once")
        starts, ends = [0] + [end for _, end in ranges], [start for start, _ in ranges] + [len(span)]
        free = "".join(span[a:b] for a, b in zip(starts, ends, strict=True))
        if not any(ch.isalnum() for ch in free):
            raise RequestError("every word of the selection is kept: leave some words free to rewrite")

    def with_seed(self, seed: int | None) -> EditRequest:
        return replace(self, seed=seed)


def split_document(text: str, start: int, end: int) -> tuple[str, str, str]:
    """Split ``text`` into (prefix, span, suffix) at character offsets, with clear errors."""
    if not text:
        raise RequestError("the document is empty")
    length = f"which is {len(text)} characters long (offsets run from 0 to {len(text)})"
    if start == end:  # a gap (fill --at): one position, not a span
        if start < 0:
            raise RequestError(f"position {start} is before the start of the text; offsets start at 0")
        if start > len(text):
            raise RequestError(f"position {start} is past the end of the text, {length}")
    elif start > end:
        raise RequestError(f"the span {start}:{end} starts after it ends (start {start}, end {end}); write START:END")
    elif start < 0:
        raise RequestError(f"the span {start}:{end} starts before the start of the text; offsets start at 0")
    elif end > len(text):
        raise RequestError(f"the span {start}:{end} ends past the end of the text, {length}")
    return text[:start], text[start:end], text[end:]

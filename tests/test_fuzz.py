"""Property-based fuzzing of what comes in from outside: JSON-lines requests, request fields, spans.

Random Unicode (combining marks, emoji, right-to-left text, CRLF, NUL, lone surrogates), random types
and option values, random selections: never a crash or a traceback, always a RequestError in words or
a correct result with the prefix and suffix byte for byte. The counts are printed in the run's summary.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from collections import Counter
from typing import Any

from figures import FIGURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.cli import JSON_FIELDS, request_from_json_line
from model import EditRequest, Engine, RequestError, split_document

# The characters that break naive text handling, mixed into ordinary text.
AWKWARD = ["\u0301", "\u0308", "👩‍💻", "🇫🇷", "\u05e9\u05dc\u05d5\u05dd", "\u202e", "\u200d", "\r\n", "\r", "\x00",
           "\t", "\ufeff", "\ud800", "\udfff", "\U0010ffff", "ß", "ﬁ"]  # fmt: skip
texts = st.lists(st.one_of(st.text(max_size=12), st.sampled_from(AWKWARD)), max_size=8).map("".join)
valid_texts = texts.filter(lambda t: not any(0xD800 <= ord(c) <= 0xDFFF for c in t))
json_values = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True), texts,
    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)  # fmt: skip
field_names = st.one_of(st.sampled_from(JSON_FIELDS), st.text(max_size=6))
CLI_DEFAULTS = argparse.Namespace(max_new_tokens=8, seed=None, fixed_length=False, steps=4, left_to_right_bias=None,
                                  polish_rounds=None, context_budget=256)
counts: Counter[str] = Counter()


def _record() -> None:
    FIGURES["cases fuzzed"] = (
        f"{counts['JSON requests']} JSON requests ({counts['accepted']} accepted, the rest refused in words), "
        f"{counts['raw lines']} raw byte lines, {counts['selections']} selections, "
        f"{counts['edits']} edits run on the tiny model; no crash"
    )


# Requests shaped like real ones (the right fields, mostly the right types), so many are accepted.
plausible_requests = st.fixed_dictionaries(
    {"prefix": texts},
    optional={"suffix": texts, "max_new_tokens": st.one_of(st.integers(-2, 40), json_values),
              "seed": st.one_of(st.integers(-1, 2**64), json_values), "candidates": st.integers(-1, 20),
              "vary_length": st.one_of(st.booleans(), json_values)},
)  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.one_of(plausible_requests, st.dictionaries(field_names, json_values, max_size=7)))
def test_json_lines_are_a_request_or_a_clear_error(fields: dict[str, Any]) -> None:
    counts["JSON requests"] += 1
    # ensure_ascii writes lone surrogates as \ud800 escapes, as a client's JSON library would.
    line = json.dumps(fields).encode("utf-8")
    try:
        request = request_from_json_line(line, CLI_DEFAULTS)
    except RequestError as error:
        assert str(error) and "Traceback" not in str(error)
        _record()
        return
    counts["accepted"] += 1
    assert isinstance(request, EditRequest)
    # As any JSON reader would: two escaped surrogates that form a pair are the one character they encode.
    sent = json.loads(line)
    assert request.prefix == sent.get("prefix", "") and request.suffix == sent.get("suffix", "")
    # What validation lets through, the tokenizer and the sampler can take.
    (request.prefix + request.suffix).encode("utf-8")
    for count in (request.max_new_tokens, request.candidates):
        assert type(count) is int and count >= 1
    assert request.seed is None or type(request.seed) is int
    assert type(request.vary_length) is bool
    _record()


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=60))
def test_any_bytes_on_a_line_are_a_request_or_a_clear_error(line: bytes) -> None:
    counts["raw lines"] += 1
    with contextlib.suppress(RequestError):
        request_from_json_line(line, CLI_DEFAULTS)
    _record()


@settings(max_examples=400, deadline=None)
@given(texts, st.integers(-3, 40), st.integers(-3, 40))
def test_selections_split_the_document_exactly_or_are_refused(document: str, start: int, end: int) -> None:
    counts["selections"] += 1
    try:
        prefix, span, suffix = split_document(document, start, end)
    except RequestError:
        assert not document or not 0 <= start <= end <= len(document)
    else:
        assert (prefix + span + suffix).encode("utf-8", "surrogatepass") == document.encode("utf-8", "surrogatepass")
    _record()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    prefix=valid_texts, suffix=valid_texts, span=st.one_of(st.none(), valid_texts),
    max_new_tokens=st.integers(1, 12), candidates=st.integers(1, 3), seed=st.integers(0, 2**63 - 1),
)  # fmt: skip
def test_the_engine_answers_any_text_or_refuses_it_in_words(
    engine: Engine, prefix: str, suffix: str, span: str | None, max_new_tokens: int, candidates: int, seed: int
) -> None:
    counts["edits"] += 1
    from model import DenoiseOptions

    request = EditRequest(prefix=prefix, suffix=suffix, span=span, mode="fill" if span is None else "rewrite",
                          max_new_tokens=max_new_tokens, candidates=candidates, seed=seed,
                          options=DenoiseOptions(max_denoising_steps=3, polish_rounds=0))
    try:
        result = engine.run(request)
    except RequestError as error:
        assert str(error)
    else:
        assert len(result.texts) == candidates and all(isinstance(text, str) for text in result.texts)
        document = prefix + result.text + suffix
        assert document.startswith(prefix) and document.endswith(suffix)
        result.text.encode("utf-8")  # the new text is valid Unicode, so the document still saves
    _record()

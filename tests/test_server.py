"""The server client (model/server) against a local HTTP stub on 127.0.0.1: the requests it builds (seed
canvas, pins, widths, long spans) and every error path, each with its own message.

The stub (tests/vllm_stub.py) speaks the part of vLLM's API the client uses; the real vLLM is exercised by
tests/test_vllm_integration.py (scripts/test-vllm).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from vllm_stub import VOCAB, Stub, decode, encode, free_port, serving

from model import EditCancelled, EditRequest, RequestError
from model.server import Endpoint, ServerEngine, ServerError, connect
from model.server.answers import Answer, held_as_sent, known_from, own_scores, read_answer
from model.server.refill import REFILL_TRIES, TOP_CHOICES


@pytest.fixture
def stub() -> Iterator[tuple[Stub, str]]:
    with serving() as running:
        yield running


def fill(prefix: str = "The cat sat. ", suffix: str = "it was happy.", **fields: Any) -> EditRequest:
    # A lower-case suffix: the gap is inside a sentence, so no sentence ending is held (tests/test_shape.py).
    return EditRequest(prefix=prefix, suffix=suffix, mode="fill", max_new_tokens=fields.pop("max_new_tokens", 6),
                       **fields)


# -- the requests the client builds ------------------------------------------------------------------


def test_connect_learns_the_canvas_and_vocabulary(stub: tuple[Stub, str]) -> None:
    state, url = stub
    info = connect(Endpoint(url))
    assert (info.name, info.canvas_length, info.vocab_size, info.max_model_len) == ("stub-model", 16, VOCAB, 4096)


def test_fill_pins_the_suffix_after_the_gap(stub: tuple[Stub, str]) -> None:
    state, url = stub
    engine = ServerEngine.open(url)
    result = engine.run(fill(seed=1))
    body = state.bodies[-1]
    xargs = body["vllm_xargs"]
    suffix = encode(" it was happy.")  # the space before the suffix's first word moves onto it (trail_of)
    seed = xargs["diffusion_seed_canvas"]
    assert len(seed) == 16 and body["max_tokens"] == 16
    assert xargs["diffusion_pinned"] == list(range(6, 16))
    assert seed[6 : 6 + len(suffix)] == suffix[: 10]
    assert xargs["diffusion_read_only"] == 1
    assert body["prompt"] == [2, *encode("The cat sat.")]  # bos + prefix, its trailing space moved onto the canvas
    assert body["return_token_ids"] is True
    assert result.text == "word w "  # the six free slots, then the space handed to the suffix put back


def test_candidates_get_their_own_lengths_and_noise(stub: tuple[Stub, str]) -> None:
    state, url = stub
    engine = ServerEngine.open(url)
    result = engine.run(fill(max_new_tokens=6, candidates=3, seed=5))
    pins = sorted(len(b["vllm_xargs"]["diffusion_pinned"]) for b in state.bodies[-3:])
    assert pins == [16 - 6, 16 - 4, 16 - 3]  # widths 6, 4, 3: LENGTH_SHARES of 6 slots
    seeds = [b["vllm_xargs"]["diffusion_seed_canvas"] for b in state.bodies[-3:]]
    assert len({tuple(s[:3]) for s in seeds}) == 3  # each candidate its own noise
    assert len(result.texts) == 3 and len(result.scores) == 3


def test_a_long_span_goes_block_by_block_with_earlier_blocks_in_the_prompt(stub: tuple[Stub, str]) -> None:
    state, url = stub
    engine = ServerEngine.open(url)
    result = engine.run(fill(max_new_tokens=40, suffix="end."))
    assert result.blocks == len(state.bodies) >= 3
    first, second = state.bodies[0], state.bodies[1]
    assert "diffusion_pinned" not in first["vllm_xargs"]  # a full canvas of free slots
    assert second["prompt"][: len(first["prompt"])] == first["prompt"]
    assert len(second["prompt"]) == len(first["prompt"]) + 16  # the first block's canvas, as context
    last = state.bodies[-1]["vllm_xargs"]
    assert last["diffusion_seed_canvas"][16 - len(last["diffusion_pinned"]) :][:4] == encode(" end")


def test_rewrite_at_part_strength_keeps_some_of_the_span(stub: tuple[Stub, str]) -> None:
    state, url = stub
    engine = ServerEngine.open(url)
    span = "a red ball"
    engine.run(EditRequest(prefix="She had ", span=span, suffix=" today.", mode="rewrite", strength=0.5, seed=3))
    seed = state.bodies[-1]["vllm_xargs"]["diffusion_seed_canvas"]
    original = encode(" " + span)
    kept = sum(1 for a, b in zip(seed, original, strict=False) if a == b)
    assert 0 < kept < len(original)


def test_kept_words_are_pinned_on_the_servers_canvas(stub: tuple[Stub, str]) -> None:
    state, url = stub
    engine = ServerEngine.open(url)
    span = "a red ball"  # one character a token on the stub: one canvas of 16
    start = span.index("ball")
    result = engine.run(
        EditRequest(prefix="She had ", span=span, suffix=" today.", mode="rewrite", keep=((start, start + 4),), seed=3)
    )
    xargs = state.bodies[-1]["vllm_xargs"]
    seed, pins = xargs["diffusion_seed_canvas"], set(xargs["diffusion_pinned"])
    held = encode(" ball")
    at = next(i for i in range(16) if seed[i : i + len(held)] == held)
    assert set(range(at, at + len(held))) <= pins and min(pins) == at  # held inside the free slots
    assert " ball" in result.text


def test_two_gaps_fill_in_one_request_with_the_text_between_pinned(stub: tuple[Stub, str]) -> None:
    state, url = stub
    engine = ServerEngine.open(url)
    span = "a ___ or [...]"
    result = engine.run(EditRequest(prefix="She had ", span=span, suffix=" today.", mode="gaps", max_new_tokens=2))
    assert len(state.bodies) == 1
    xargs = state.bodies[-1]["vllm_xargs"]
    between = encode(" or")
    seed = xargs["diffusion_seed_canvas"]
    at = next(i for i in range(16) if seed[i : i + len(between)] == between)
    assert set(range(at, at + len(between))) <= set(xargs["diffusion_pinned"])
    new = result.text
    assert new.startswith("a ") and " or " in new  # the text outside the gaps, byte for byte


def test_a_gap_the_server_left_empty_is_developed_again_with_the_rest_pinned(stub: tuple[Stub, str]) -> None:
    # vLLM's sampler takes no per-slot bans: a marked gap can come back all padding (CI met "She had a and
    # she loved to play"). Locally the first slot may not end; the client develops such a gap again.
    state, url = stub
    state.fills = ["<pad>"]
    engine = ServerEngine.open(url)
    result = engine.run(EditRequest(prefix="She had ", span="a ___ or [...]", suffix=" today.", mode="gaps",
                                    max_new_tokens=2))
    assert len(state.bodies) == 2
    first, again = (body["vllm_xargs"] for body in state.bodies)
    free = set(range(16)) - set(first["diffusion_pinned"])
    assert free and set(again["diffusion_pinned"]) == set(range(16)) - free  # only the empty gaps re-noised
    kept = [t for i, t in enumerate(again["diffusion_seed_canvas"]) if i not in free]
    assert kept == [t for i, t in enumerate(first["diffusion_seed_canvas"]) if i not in free]
    assert result.text.startswith("a ") and " or " in result.text
    gaps = result.text[len("a ") :].split(" or ")
    assert all(gap.strip() for gap in gaps), result.text


def test_a_region_the_server_keeps_empty_starts_with_its_most_probable_word(stub: tuple[Stub, str]) -> None:
    # CI's vLLM kept "she loved to [...] with it" all padding three tries in a row, sure of it (-4e-5): fresh
    # noise alone is not enough. The next try pins the best choice there that is a word, as the local bans do.
    state, url = stub
    state.fill = "<pad>"  # a server whose model always ends at once
    engine = ServerEngine.open(url)
    result = engine.run(fill(seed=2))
    assert len(state.bodies) == 3
    first, fresh, opened = state.bodies
    assert "top_logprobs" not in first and first["logprobs"] == 0  # the usual request asks for no choices
    assert fresh["logprobs"] == TOP_CHOICES and fresh["return_tokens_as_token_ids"]
    free = sorted(set(range(state.canvas)) - set(fresh["vllm_xargs"]["diffusion_pinned"]))
    assert free and opened["vllm_xargs"]["diffusion_seed_canvas"][free[0]] == encode("so")[0]
    assert free[0] in opened["vllm_xargs"]["diffusion_pinned"]  # pinned; the rest of the region is noise again
    assert set(free[1:]) == set(range(state.canvas)) - set(opened["vllm_xargs"]["diffusion_pinned"])
    assert result.text.strip() == "s"  # padding, the end of text and a blank piece, more probable, struck out


def test_choices_are_read_by_id_and_ones_named_by_text_or_out_of_range_are_left_out(stub: tuple[Stub, str]) -> None:
    _, url = stub
    engine = ServerEngine.open(url)
    first = {"token_id:12": -0.5, "so": -1.0, f"token_id:{VOCAB}": -2.0, "token_id:-3": -2.5, "token_id:40": -3.0}
    logprobs = {"tokens": ["token_id:12"] * 16, "token_logprobs": [-0.5] * 16, "top_logprobs": [first] + [None] * 15}
    answer = read_answer({"choices": [{"token_ids": [12] * 16, "logprobs": logprobs}]}, url, engine.vocabulary, 16)
    assert answer.top[0] == {12: -0.5, 40: -3.0} and answer.top[1] == {}
    assert answer.pieces == [None] * 16  # named by id: the text is fetched where it is shown


def test_a_fill_left_empty_is_tried_again_a_few_times_then_given_back(stub: tuple[Stub, str]) -> None:
    state, url = stub
    state.fill, state.runners_up = "<pad>", ["<eos>", " "]  # no choice that is a word
    engine = ServerEngine.open(url)
    result = engine.run(fill(seed=2))
    assert len(state.bodies) == 1 + REFILL_TRIES  # bounded: the edit ends, empty, rather than spin
    assert result.text.strip() == ""
    state.bodies.clear()
    state.fill, state.fills = "word ", ["<pad>"]
    assert engine.run(fill(seed=2)).text.strip() and len(state.bodies) == 2
    # Only whitespace is no fill either (CI's vLLM once gave "loved to  with it": a lone space, or a line
    # break a gap inside a line turns into one).
    for blank in (" ", "\n"):
        state.bodies.clear()
        state.fills = [blank]
        assert engine.run(fill(seed=2)).text.strip() and len(state.bodies) == 2


def test_an_instruction_goes_in_the_served_models_chat_template(stub: tuple[Stub, str]) -> None:
    state, url = stub
    state.chat_template = True
    engine = ServerEngine.open(url)
    assert engine.follows_instructions
    result = engine.run(EditRequest(prefix="She had ", span="a red ball", suffix=" today.", mode="instruct",
                                    instruction="Make it shorter", max_new_tokens=8))
    prompt = decode(state.bodies[-1]["prompt"])
    assert prompt.startswith("<user>Make it shorter") and prompt.endswith("<model>")
    assert "Text to rewrite:\na red ball" in prompt and "Text after:\n today." in prompt
    assert "diffusion_pinned" not in state.bodies[-1]["vllm_xargs"]  # the answer is free text to its end
    assert result.text.strip()


def test_a_served_model_without_a_chat_template_follows_no_instructions(stub: tuple[Stub, str]) -> None:
    state, url = stub
    engine = ServerEngine.open(url)
    assert not engine.follows_instructions
    with pytest.raises(RequestError, match="not instruction-tuned"):
        engine.run(EditRequest(prefix="She had ", span="a red ball", mode="instruct", instruction="Shorter"))


def test_the_context_is_cut_to_fit_the_servers_length(stub: tuple[Stub, str]) -> None:
    state, url = stub
    state.max_model_len = 40
    engine = ServerEngine.open(url)
    engine.run(fill(prefix="x" * 200 + " "))
    assert len(state.bodies[-1]["prompt"]) + 16 <= 40


def test_a_span_longer_than_the_servers_context_is_refused(stub: tuple[Stub, str]) -> None:
    state, url = stub
    state.max_model_len = 20
    engine = ServerEngine.open(url)
    with pytest.raises(RequestError, match="more than the server's context"):
        engine.run(fill(max_new_tokens=40))


def test_waiting_passes_come_before_the_text(stub: tuple[Stub, str]) -> None:
    state, url = stub
    state.delay_s = 0.3
    engine = ServerEngine.open(url)
    passes = []
    engine.run(fill(), on_pass=passes.append)
    assert len(passes) >= 3 and all(p.waiting for p in passes[:-1]) and not passes[-1].waiting
    assert not any(any(row) for p in passes[:-1] for row in p.accepted)
    assert all(all(row) for row in passes[-1].accepted)


def test_the_veils_noise_is_decoded_once_per_connection(stub: tuple[Stub, str]) -> None:
    state, url = stub
    engine = ServerEngine.open(url)
    state.paths.clear()
    texts = [engine.decode([token]) for token in engine.noise_ids]  # what the worker's veil paints
    assert texts == [decode([token]) for token in engine.noise_ids]
    assert state.paths == []  # no request per veil


def test_per_pass_mode_sends_one_step_at_a_time(stub: tuple[Stub, str]) -> None:
    state, url = stub
    engine = ServerEngine.open(url, passes="per-pass")
    result = engine.run(fill())
    assert all(b["vllm_xargs"]["diffusion_max_steps"] == 1 for b in state.bodies)
    # The stub's answer never changes, so the second pass finds it stable and the block stops.
    assert len(state.bodies) == 2 and result.passes == 2
    assert state.bodies[1]["vllm_xargs"]["diffusion_seed_canvas"][:6] == encode("word w")


def test_kept_words_stay_on_the_canvas_the_next_pass_starts_from(stub: tuple[Stub, str]) -> None:
    # vLLM answers its argmax at pinned slots too: fed back as the next seed, a kept word would drift into
    # whatever the model would rather have there (the stub's "word word ...").
    state, url = stub
    engine = ServerEngine.open(url, passes="per-pass")
    span = "a red ball"
    start = span.index("ball")
    engine.run(EditRequest(prefix="She had ", span=span, suffix=" today.", mode="rewrite", keep=((start, start + 4),),
                           seed=3))
    assert len(state.bodies) >= 2
    held = encode(" ball")
    for body in state.bodies:
        seed, pins = body["vllm_xargs"]["diffusion_seed_canvas"], sorted(body["vllm_xargs"]["diffusion_pinned"])
        assert seed[pins[0] : pins[0] + len(held)] == held


def test_candidates_are_ranked_by_their_own_words_not_the_writers_held_ones(stub: tuple[Stub, str]) -> None:
    # The server answers its argmax's log-probability at a pinned slot: counted, a kept word would score as
    # whatever the model would rather have put there (here far surer than the candidate's own words).
    state, url = stub
    state.logprob, state.pinned_logprob = -2.0, -0.01
    engine = ServerEngine.open(url)
    span = "a red ball"
    start = span.index("ball")
    result = engine.run(EditRequest(prefix="She had ", span=span, suffix=" today.", mode="rewrite",
                                    keep=((start, start + 4),), candidates=2, seed=3))
    assert result.scores == pytest.approx([-2.0, -2.0])


def test_a_pinned_slot_gets_what_was_sent_and_that_ids_log_probability_or_none() -> None:
    body = {"vllm_xargs": {"diffusion_seed_canvas": [5, 6, 7, 8], "diffusion_pinned": [1, 2, 3]}}
    top = [{}, {9: -0.1, 6: -1.5}, {9: -0.2}, {8: -0.3}]
    answer = held_as_sent(Answer([9, 9, 9, 8], [-0.4, -0.1, -0.2, -0.3], ["a", "b", "c", "d"], top), body)
    assert answer.canvas == [9, 6, 7, 8]  # the free slot as answered, the pinned ones as sent
    assert answer.logprobs[:2] == [-0.4, -1.5] and answer.logprobs[3] == -0.3  # the sent id's, where named
    assert answer.logprobs[2] != answer.logprobs[2]  # NaN: not among the choices, so unknown
    assert answer.pieces == ["a", None, None, "d"]


def test_a_refill_keeps_the_scores_the_rest_converged_with_and_leaves_out_what_is_unknown() -> None:
    nan = float("nan")
    earlier = Answer([1, 2, 0, 0], [-0.7, -0.8, -0.01, -0.01], [None] * 4)
    refill = known_from(Answer([1, 2, 4, 5], [nan, -0.5, nan, -1.2], [None] * 4), earlier)
    assert refill.logprobs[:2] == [-0.7, -0.5] and refill.logprobs[3] == -1.2
    assert refill.logprobs[2] != refill.logprobs[2]  # the opening word pinned there was padding before
    held = [-1, 2, -1, -1]  # the writer's word at slot 1
    assert own_scores(refill, [0, 1, 2, 3], held) == [-0.7, -1.2]


def test_the_api_key_goes_as_a_bearer_token(stub: tuple[Stub, str]) -> None:
    state, url = stub
    state.key = "s3cret"
    assert ServerEngine.open(url, api_key="s3cret").run(fill()).texts
    with pytest.raises(ServerError, match="refused the API key"):
        ServerEngine.open(url, api_key="wrong")


# -- every error path: one clear message each, and nothing returned ---------------------------------


def test_addresses_are_shown_as_written() -> None:
    assert Endpoint("gpu-box:8000/v1/").display() == "http://gpu-box:8000"
    assert Endpoint("https://[::1]/team").display() == "https://[::1]:443/team"
    with pytest.raises(ServerError, match="not an http:// or https:// URL"):
        Endpoint("ftp://gpu-box").display()


def test_server_down() -> None:
    with pytest.raises(ServerError, match="connection refused"):
        ServerEngine.open(f"http://127.0.0.1:{free_port()}")


def test_server_slow(stub: tuple[Stub, str]) -> None:
    state, url = stub
    engine = ServerEngine.open(url, timeout_s=0.5)
    state.delay_s = 3
    started = time.monotonic()
    with pytest.raises(ServerError, match="did not finish within 0.5 s") as raised:
        engine.run(fill())
    assert str(raised.value).endswith("try again, or select less text")  # no setting it could point to
    assert time.monotonic() - started < 2.5


@pytest.mark.parametrize(("status", "words"), [(400, "refused the request"), (500, "failed \\(HTTP 500")])
def test_error_status(stub: tuple[Stub, str], status: int, words: str) -> None:
    state, url = stub
    engine = ServerEngine.open(url)
    state.status = status
    with pytest.raises(ServerError, match=words) as raised:
        engine.run(fill())
    assert "engine exploded" in str(raised.value)


def test_wrong_model(stub: tuple[Stub, str]) -> None:
    state, url = stub
    with pytest.raises(ServerError, match="serves stub-model, not 'other'"):
        ServerEngine.open(url, model="other")


def test_canvas_too_small(stub: tuple[Stub, str]) -> None:
    state, url = stub
    state.canvas = 4
    with pytest.raises(ServerError, match="canvas is 4 tokens, too small"):
        ServerEngine.open(url)


def test_tls_failure(stub: tuple[Stub, str]) -> None:
    state, url = stub
    with pytest.raises(ServerError, match="secure connection"):
        ServerEngine.open(url.replace("http://", "https://"))


def test_not_a_diffusion_server(stub: tuple[Stub, str]) -> None:
    state, url = stub
    state.canvas = 1  # the stub now accepts the probe's one-id canvas: nothing names the canvas
    with pytest.raises(ServerError, match="does not take DiffusionGemma's diffusion controls"):
        ServerEngine.open(url)


def test_cancel_closes_the_request(stub: tuple[Stub, str]) -> None:
    state, url = stub
    engine = ServerEngine.open(url)
    state.delay_s = 10
    started = time.monotonic()
    flag = {"cancel": False}
    threading.Timer(0.3, lambda: flag.update(cancel=True)).start()
    with pytest.raises(EditCancelled):
        engine.run(fill(), cancel=lambda: flag["cancel"])
    assert time.monotonic() - started < 2
    assert state.disconnected.wait(2), "the server never saw the client leave"


def test_closing_the_generator_closes_the_request(stub: tuple[Stub, str]) -> None:
    state, url = stub
    engine = ServerEngine.open(url)
    state.delay_s = 10
    passes = engine.edit(fill())
    assert next(passes).waiting
    passes.close()
    assert state.disconnected.wait(2)

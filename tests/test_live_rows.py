"""Once a candidate settles, the engine's passes run the model on the developing candidates alone
(model/edit/live_rows.py), and the settled one keeps its canvas."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

import torch
from transformers import DynamicCache

from model import DenoiseOptions, EditRequest, Engine, Pass
from model.edit.live_rows import LiveCaches, live_rows
from model.runtime.forward import prefill

OPTIONS = DenoiseOptions(max_denoising_steps=8, polish_rounds=0)


@contextmanager
def first_candidate_sure(engine: Engine, token: int) -> Iterator[list[torch.Tensor]]:
    """Candidate 0 certain of ``token`` in every slot whenever the whole batch of three runs (where it is
    row 0); every canvas the decoder is given, in order."""
    canvases: list[torch.Tensor] = []

    def record(_module: Any, _args: Any, kwargs: dict[str, Any], output: Any) -> None:
        canvases.append(kwargs["decoder_input_ids"].clone())
        if output.logits.shape[0] == 3:
            output.logits[0, :, token] += 50.0

    handle = engine.model.register_forward_hook(record, with_kwargs=True)
    try:
        yield canvases
    finally:
        handle.remove()


def run_three(engine: Engine, token: int) -> tuple[list[torch.Tensor], list[Pass], Any]:
    request = EditRequest(prefix="The boy", mode="fill", max_new_tokens=6, seed=5, candidates=3, options=OPTIONS)
    passes: list[Pass] = []
    with first_candidate_sure(engine, token) as canvases:
        result = engine.run(request, on_pass=passes.append)
    return canvases, passes, result


def test_a_settled_candidate_leaves_the_batch_and_keeps_its_canvas(engine: Engine) -> None:
    token = engine.encode(" river")[0]
    canvases, passes, result = run_three(engine, token)
    settled_at = next(i for i, p in enumerate(passes) if p.finished[0])
    assert not any(passes[settled_at].finished[1:])  # the other two are still developing
    developing = canvases[: len(passes)]
    # Up to the pass that settled it, the whole batch; after it, the other two candidates alone, in order.
    assert [len(c) for c in developing[: settled_at + 1]] == [3] * (settled_at + 1)
    later = range(settled_at + 1, len(passes))
    assert later and all(len(developing[i]) == 2 for i in later if not all(passes[i - 1].finished))
    for i in later:
        if all(passes[i - 1].finished):
            break
        before = passes[i - 1]
        # The rows the decoder was given are candidates 1 and 2's canvases as the last pass left them.
        for row, candidate in ((0, 1), (1, 2)):
            assert developing[i][row, : len(before.tokens[candidate])].tolist() == before.tokens[candidate]
        assert passes[i].tokens[0] == passes[settled_at].tokens[0]  # the settled canvas stays as it was
        assert passes[i].finished[0]
    assert result.token_ids[0] == [token] * 6


def test_the_library_exact_engine_runs_every_row(tiny_model: Any) -> None:
    engine = Engine(tiny_model, library_exact=True)
    token = engine.encode(" river")[0]
    canvases, passes, _ = run_three(engine, token)
    assert any(p.finished[0] and not all(p.finished) for p in passes)  # one settled while the others developed
    assert all(len(c) == 3 for c in canvases)


def kv(cache: DynamicCache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Each layer's keys and values (attention layers only: the built-in model has no other)."""
    return [(cast(torch.Tensor, layer.keys), cast(torch.Tensor, layer.values)) for layer in cache.layers]  # type: ignore[union-attr]


def test_the_cache_of_the_developing_rows_leaves_the_whole_cache_untouched(engine: Engine) -> None:
    model = engine.model
    cache = DynamicCache(config=model.config.get_text_config(decoder=True))
    with torch.inference_mode():
        prefill(model, torch.tensor([[2, 17, 40, 301, 9]]), cache, 2048)
    cache.batch_repeat_interleave(3)
    # Distinct rows, so a row taken from the wrong place shows.
    for layer, (keys, _) in zip(cache.layers, kv(cache), strict=True):
        layer.keys = keys + torch.arange(3.0)[:, None, None, None]  # type: ignore[union-attr]
    before = kv(copy.deepcopy(cache))
    originals = kv(cache)
    taken = LiveCaches().rows_of(cache, torch.tensor([0, 2]))
    for (keys, values), (was_keys, was_values), (own_keys, own_values), (part_keys, part_values) in zip(
        kv(cache), before, originals, kv(taken), strict=True
    ):
        assert keys is own_keys and values is own_values
        assert torch.equal(keys, was_keys) and torch.equal(values, was_values)
        assert torch.equal(part_keys, was_keys[[0, 2]]) and torch.equal(part_values, was_values[[0, 2]])
    assert taken.get_seq_length() == cache.get_seq_length()


def test_the_whole_batch_runs_until_one_settles_and_while_none_is_left(engine: Engine) -> None:
    cache = DynamicCache(config=engine.model.config.get_text_config(decoder=True))
    with torch.inference_mode():
        prefill(engine.model, torch.tensor([[2, 17, 40]]), cache, 2048)
    cache.batch_repeat_interleave(3)
    assert live_rows(torch.tensor([False, False, False]), cache) is None
    assert live_rows(torch.tensor([True, True, True]), cache) is None
    rows = live_rows(torch.tensor([False, True, False]), cache)
    assert rows is not None and rows.tolist() == [0, 2]

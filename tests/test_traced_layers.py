"""model.runtime.traced_layers: decoder layers replayed from TorchScript traces give the eager layer's numbers bit
for bit, and step aside wherever that could not be guaranteed."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn
from transformers import DynamicCache

from model import EditRequest, Engine, LoadedModel, load
from model.runtime import forward as model_forward
from model.runtime import traced_layers


def _layer_inputs(
    loaded: LoadedModel, prompt_length: int, batch: int, canvas: int, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor, DynamicCache, nn.Module]:
    """A decoder's first hidden states over a canvas after a ``prompt_length``-token prompt, its positions,
    the prompt's cache for ``batch`` candidates, and the decoder."""
    model = loaded.model
    torch.manual_seed(seed)
    cache = DynamicCache(config=model.config.get_text_config(decoder=True))
    prompt = torch.randint(0, loaded.vocab_size, (1, prompt_length))
    model_forward.prefill(model, prompt, cache, model_forward.PREFILL_CHUNK)
    cache.batch_repeat_interleave(batch)
    decoder = model.model.decoder
    hidden = decoder.embed_tokens(torch.randint(0, loaded.vocab_size, (batch, canvas)))
    positions = torch.arange(prompt_length, prompt_length + canvas, dtype=torch.int32)[None]
    return hidden, positions, cache, decoder


def _both_ways(hidden: torch.Tensor, positions: torch.Tensor, cache: DynamicCache, decoder: nn.Module) -> None:
    """Every layer's traced call equals its eager call, and the trace (not a fallback) gave it."""
    text_config = decoder.text_config
    for index, layer in enumerate(decoder.layers):
        rotary = decoder.rotary_emb(hidden, positions, text_config.layer_types[index])
        eager = traced_layers._eager(layer, hidden, rotary, positions, cache)
        assert torch.equal(traced_layers.call_layer(layer, index, hidden, rotary, positions, cache), eager)
        traced = traced_layers._traces[layer]
        assert traced is not None
        signature = traced_layers._signature(
            traced_layers._trace_inputs(index, hidden, rotary, positions, cache)  # type: ignore[arg-type]
        )
        assert traced.verdicts[signature] is True
        hidden = eager


def test_traces_give_the_eager_layers_numbers_at_every_shape(tiny_checkpoint: Path) -> None:
    loaded = load(tiny_checkpoint, device="cpu")
    canvas_length = loaded.canvas_length
    with torch.inference_mode():
        # The cache's length is not part of a trace's signature: one signature, several lengths,
        # including one past the sliding window.
        for prompt_length in (3, 40, 300):
            _both_ways(*_layer_inputs(loaded, prompt_length, 1, canvas_length, seed=prompt_length))
        # New batches and canvases are new signatures, each checked on its first use.
        for batch, canvas in ((3, canvas_length), (2, 7)):
            _both_ways(*_layer_inputs(loaded, 25, batch, canvas, seed=batch))
    first = traced_layers._traces[loaded.model.model.decoder.layers[0]]
    assert first is not None and len(first.verdicts) == 3


def _requests() -> list[EditRequest]:
    prefix, suffix = "The keeper climbed the stairs", " and lit the lamp before the storm came."
    return [
        EditRequest(prefix=prefix, suffix=suffix, mode="fill", max_new_tokens=40, seed=3, candidates=3),
        EditRequest(prefix=prefix, span=" slowly up", suffix=suffix, mode="rewrite", seed=5),
        EditRequest(prefix=prefix, mode="fill", max_new_tokens=12, seed=8),
    ]


def test_edits_through_traces_equal_edits_without_them(tiny_checkpoint: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    traced_model = load(tiny_checkpoint, device="cpu")
    traced = [Engine(traced_model).run(request) for request in _requests()]
    assert all(traced_layers._traces[layer] is not None for layer in traced_model.model.model.decoder.layers)

    monkeypatch.setattr(traced_layers, "_trace_inputs", lambda *_args: None)  # every layer eager
    eager_model = load(tiny_checkpoint, device="cpu")
    eager = [Engine(eager_model).run(request) for request in _requests()]
    assert not any(layer in traced_layers._traces for layer in eager_model.model.model.decoder.layers)
    assert [r.raw_tokens for r in traced] == [r.raw_tokens for r in eager]
    assert [r.scores for r in traced] == [r.scores for r in eager]


def test_a_hook_inside_a_layer_sees_every_pass(engine: Engine) -> None:
    request = _requests()[1]
    engine.run(request)  # traced by now
    layer = engine.model.model.decoder.layers[0]
    assert traced_layers._traces[layer] is not None
    calls: list[int] = []
    handle = layer.mlp.register_forward_hook(lambda *_args: calls.append(1))
    try:
        result = engine.run(request)
    finally:
        handle.remove()
    assert len(calls) >= result.passes


class _ValueBranchingLayer(nn.Module):
    """A layer whose Python reads a tensor's value: a trace would freeze whichever branch it saw."""

    def forward(self, hidden: torch.Tensor, position_embeddings: Any = None, **_kwargs: Any) -> torch.Tensor:
        return hidden * 2 if bool(hidden.sum() > 0) else hidden - 1


def test_a_layer_that_reads_tensor_values_is_not_traced(tiny_model: LoadedModel) -> None:
    with torch.inference_mode():
        hidden, positions, cache, decoder = _layer_inputs(tiny_model, 10, 1, 8)
        rotary = decoder.rotary_emb(hidden, positions, decoder.text_config.layer_types[0])
        inputs = traced_layers._trace_inputs(0, hidden.abs(), rotary, positions, cache)
        assert inputs is not None
        assert traced_layers._record(_ValueBranchingLayer(), 0, inputs) is None
        # The real layer records cleanly: only the SDPA dispatch's shape comparisons read values.
        assert traced_layers._record(decoder.layers[0], 0, inputs) is not None


def test_a_trace_that_differs_at_a_new_shape_leaves_that_shape_eager(tiny_checkpoint: Path) -> None:
    loaded = load(tiny_checkpoint, device="cpu")
    with torch.inference_mode():
        hidden, positions, cache, decoder = _layer_inputs(loaded, 12, 1, loaded.canvas_length)
        layer = decoder.layers[0]
        rotary = decoder.rotary_emb(hidden, positions, decoder.text_config.layer_types[0])
        traced_layers.call_layer(layer, 0, hidden, rotary, positions, cache)
        traced = traced_layers._traces[layer]
        assert traced is not None and list(traced.verdicts.values()) == [True]

        honest_trace = traced.trace
        traced.trace = lambda *inputs: honest_trace(*inputs) + 1  # type: ignore[assignment]  # a wrong replay
        hidden, positions, cache, _ = _layer_inputs(loaded, 12, 2, 5)
        rotary = decoder.rotary_emb(hidden, positions, decoder.text_config.layer_types[0])
        output = traced_layers.call_layer(layer, 0, hidden, rotary, positions, cache)
        assert torch.equal(output, traced_layers._eager(layer, hidden, rotary, positions, cache))
        assert sorted(traced.verdicts.values()) == [False, True]


def test_traces_go_with_their_model(tiny_checkpoint: Path) -> None:
    loaded = load(tiny_checkpoint, device="cpu")
    Engine(loaded).run(_requests()[2])
    layer = weakref.ref(loaded.model.model.decoder.layers[0])
    assert traced_layers._traces[layer()] is not None  # type: ignore[index]
    del loaded
    gc.collect()
    assert layer() is None

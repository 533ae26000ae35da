"""model.runtime.forward: the lean decoder pass gives the library's logits bit for bit, and steps aside when it
should."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from transformers import DynamicCache

from model import EditRequest, Engine, LoadedModel
from model.runtime import forward as model_forward
from model.runtime import onednn_head
from model.runtime.cache_kwarg import with_cache


def _cached_prompt(loaded: LoadedModel, length: int = 30) -> tuple[DynamicCache, int]:
    model = loaded.model
    cache = DynamicCache(config=model.config.get_text_config(decoder=True))
    torch.manual_seed(0)
    prompt = torch.randint(0, loaded.vocab_size, (1, length))
    model_forward.prefill(model, prompt, cache, model_forward.PREFILL_CHUNK)
    return cache, length


@pytest.mark.parametrize("batch", [1, 3])
def test_lean_pass_gives_the_librarys_logits_bit_for_bit(tiny_model: LoadedModel, batch: int) -> None:
    model = tiny_model.model
    cache, position = _cached_prompt(tiny_model)
    cache.batch_repeat_interleave(batch)
    canvas_length = tiny_model.canvas_length
    canvas = torch.randint(0, tiny_model.vocab_size, (batch, canvas_length))
    positions = torch.arange(position, position + canvas_length, dtype=torch.int32)[None]
    slots = canvas_length - 5  # the last five positions pinned: no self-conditioning there
    keep = (torch.arange(canvas_length) < slots).float().expand(batch, -1).contiguous()
    sc_logits = torch.randn(batch, canvas_length, tiny_model.vocab_size) * 3
    with torch.inference_mode():
        for signal in (None, sc_logits):
            library = model_forward._library_decode(model, canvas, positions, cache, signal, keep)
            lean = model_forward._lean_decode(model, canvas, positions, cache, signal, keep, None)
            assert torch.equal(lean, library)
            # The free slots alone, with the signal given for them only: the same numbers there.
            given = None if signal is None else signal[:, :slots]
            assert torch.equal(model_forward.decode(model, canvas, positions, cache, given, keep, columns=slots),
                               library[:, :slots])  # fmt: skip
        reference = model(decoder_input_ids=canvas, **with_cache(cache), decoder_position_ids=positions).logits
    assert torch.equal(model_forward._lean_decode(model, canvas, positions, cache, None, None, None), reference)


def _requests() -> list[EditRequest]:
    prefix, suffix = "The keeper climbed the stairs", " and lit the lamp before the storm came."
    return [
        EditRequest(prefix=prefix, suffix=suffix, mode="fill", max_new_tokens=9, seed=3, candidates=3),
        EditRequest(prefix=prefix, span=" slowly up", suffix=suffix, mode="rewrite", seed=5),
    ]


def test_a_watched_model_is_called_as_a_module_with_the_same_result(engine: Engine) -> None:
    unwatched = [engine.run(request) for request in _requests()]
    assert model_forward._lean_verdicts[engine.model] is True  # the unwatched runs took the lean pass
    calls: list[int] = []

    def watch(_module: Any, _args: Any, _output: Any) -> None:
        calls.append(1)

    handle = engine.model.register_forward_hook(watch)
    try:
        watched = [engine.run(request) for request in _requests()]
    finally:
        handle.remove()
    assert len(calls) >= sum(result.passes for result in watched)  # every pass reached the hook
    assert [r.texts for r in watched] == [r.texts for r in unwatched]
    assert [r.scores for r in watched] == [r.scores for r in unwatched]


def test_a_lean_pass_that_fails_its_check_leaves_the_library_to_run(
    tiny_checkpoint: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from model import load

    expected = [Engine(load(tiny_checkpoint, device="cpu")).run(request).texts for request in _requests()]

    def broken(*_args: Any, **_kwargs: Any) -> torch.Tensor:
        raise TypeError("a library whose layers take other arguments")

    monkeypatch.setattr(model_forward, "_lean_decode", broken)
    fresh = load(tiny_checkpoint, device="cpu")  # a model not checked yet
    assert [Engine(fresh).run(request).texts for request in _requests()] == expected
    assert model_forward._lean_verdicts[fresh.model] is False


def test_warming_up_settles_the_first_use_checks(tiny_checkpoint: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from model import load
    from model.edit import draws

    fresh = load(tiny_checkpoint, device="cpu")
    assert fresh.model not in model_forward._lean_verdicts
    Engine(fresh).warm_up()
    assert model_forward._lean_verdicts[fresh.model] is True
    monkeypatch.setattr(draws, "_verdict", None)  # the replica's check is the library-exact engine's alone
    Engine(fresh, library_exact=True).warm_up()
    assert draws._verdict is True


def _builtin_head() -> torch.nn.Linear:
    from model import load

    head = load(None, device="cpu").model.lm_head
    assert type(head) is torch.nn.Linear
    return head


def test_the_head_through_onednn_gives_the_modules_logits_at_one_drafts_width() -> None:
    head = _builtin_head()
    torch.manual_seed(0)
    with torch.inference_mode():
        one_draft, four_drafts = torch.randn(1, 64, head.in_features), torch.randn(4, 64, head.in_features)
        assert torch.equal(onednn_head.head_logits(head, one_draft), head(one_draft))
        assert torch.equal(onednn_head.head_logits(head, four_drafts), head(four_drafts))
    # The one draft went through oneDNN, checked equal; four drafts' 256 rows stay with the module (MKL is faster).
    assert onednn_head._heads[head].verdicts == {64: True}


def test_a_row_count_where_onednn_differs_keeps_the_module(monkeypatch: pytest.MonkeyPatch) -> None:
    head = _builtin_head()
    calls = []
    real = torch._C._nn.mkldnn_linear

    def off_by_a_bit(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        calls.append(x.shape)
        return (real(x, weight, bias).to_dense() + 1e-3).to_mkldnn()

    monkeypatch.setattr(torch._C._nn, "mkldnn_linear", off_by_a_bit)
    with torch.inference_mode():
        hidden = torch.randn(1, 16, head.in_features)
        for _ in range(3):
            assert torch.equal(onednn_head.head_logits(head, hidden), head(hidden))
    assert onednn_head._heads[head].verdicts == {16: False}
    assert len(calls) == 1  # tried once, then the module alone


def test_a_changed_head_weight_is_copied_again() -> None:
    head = _builtin_head()
    with torch.inference_mode():
        hidden = torch.randn(1, 32, head.in_features)
        before = onednn_head.head_logits(head, hidden)
        head.weight.mul_(2.0)  # in place, as an adapter or a reload would
        after = onednn_head.head_logits(head, hidden)
        assert torch.equal(after, head(hidden)) and not torch.equal(after, before)


def test_a_hooked_head_is_called_as_a_module() -> None:
    head = _builtin_head()
    seen = []
    head.register_forward_hook(lambda module, args, output: seen.append(output.shape))
    with torch.inference_mode():
        onednn_head.head_logits(head, torch.randn(1, 8, head.in_features))
    assert seen == [torch.Size([1, 8, head.out_features])]
    assert head not in onednn_head._heads

"""The model's three calls in an edit: the prefix through the encoder into the KV cache, a decoder pass over
whole canvases, and a finished block committed to the cache. Every call passes the cache through
:func:`model.runtime.cache_kwarg.with_cache`.

A decoder pass is the edit's hot loop, so :func:`decode` runs it *lean*: it calls the decoder's own
modules (embedding, self-conditioning block, rotary embedding, layers, norm, head) in the order
``DiffusionGemmaForBlockDiffusion.forward`` does, without the wrappers around them (output capturing,
keyword deprecation, gradient checkpointing, the mask builder that returns no mask for an unpadded
cache), which on the built-in model cost about 3 ms of a 20 ms forward on two CPU cores. It also
computes the vocabulary-sized work, the head with its softcap and the self-conditioning input, for the
free slot columns only (``columns``): a pinned position's logits are never sampled and its
self-conditioning signal is zeroed anyway; at one draft's width the head's product goes through oneDNN
(:mod:`model.runtime.onednn_head`, itself checked). The numbers are the library's, bit for bit: the first lean
pass of every model is checked against the library's forward on the same inputs (:func:`lean_matches_library`),
and any difference, an error, or a hook on the model or its decoder (tests, profilers and adapters that
watch the model expect it called as a module) sends the pass through ``model(...)`` instead.
"""

from __future__ import annotations

import logging
from weakref import WeakKeyDictionary

import torch
from torch import nn
from torch.nn.modules import module as torch_module  # its global hook registries, read every pass
from transformers import DiffusionGemmaForBlockDiffusion, DynamicCache

from model.runtime.cache_kwarg import with_cache
from model.runtime.conditioning import zero_self_conditioning_at
from model.runtime.onednn_head import head_logits
from model.runtime.traced_layers import call_layer

log = logging.getLogger(__name__)

# Long prefixes go through the encoder in chunks: attention scores for the whole prefix at once would
# need gigabytes at 8k tokens (no flash kernel for 512-wide heads), chunks bound that.
PREFILL_CHUNK = 2048

# Per model: whether its lean pass gave the library's logits bit for bit (absent: not checked yet).
_lean_verdicts: WeakKeyDictionary[nn.Module, bool] = WeakKeyDictionary()


def prefill(model: DiffusionGemmaForBlockDiffusion, prompt: torch.Tensor, cache: DynamicCache, chunk: int) -> None:
    """Encode ``prompt`` (1, length) into ``cache``, ``chunk`` tokens at a time."""
    length = prompt.shape[1]
    for start in range(0, length, chunk):
        piece = prompt[:, start : start + chunk]
        model.model.encoder(
            input_ids=piece,
            **with_cache(cache),
            position_ids=torch.arange(start, start + piece.shape[1], device=prompt.device, dtype=torch.int32)[None],
        )


def decode(
    model: DiffusionGemmaForBlockDiffusion,
    canvas: torch.Tensor,
    positions: torch.Tensor,
    cache: DynamicCache,
    sc_logits: torch.Tensor | None,
    keep_signal: torch.Tensor | None,
    columns: int | None = None,
) -> torch.Tensor:
    """One decoder pass over whole canvases: the logits of the first ``columns`` positions (all if None).

    ``sc_logits``, the previous pass's logits, may cover fewer positions than the canvas (the free slot
    columns): the rest get no self-conditioning signal, as do positions where ``keep_signal`` is 0.
    """
    if _lean_usable(model, canvas, positions, cache, keep_signal):
        return _lean_decode(model, canvas, positions, cache, sc_logits, keep_signal, columns)
    return _library_decode(model, canvas, positions, cache, sc_logits, keep_signal)[:, :columns]


def _library_decode(
    model: DiffusionGemmaForBlockDiffusion,
    canvas: torch.Tensor,
    positions: torch.Tensor,
    cache: DynamicCache,
    sc_logits: torch.Tensor | None,
    keep_signal: torch.Tensor | None,
) -> torch.Tensor:
    """The pass through ``model(...)``: every hook sees it."""
    if sc_logits is not None and sc_logits.shape[1] < canvas.shape[1]:
        # Positions past the given logits get no signal: any finite logits there, zeroed by ``keep``.
        given = torch.arange(canvas.shape[1], device=canvas.device) < sc_logits.shape[1]
        keep_signal = given.float().expand(canvas.shape) if keep_signal is None else keep_signal * given
        sc_logits = _padded(sc_logits, canvas.shape[1])
    with zero_self_conditioning_at(model, keep_signal if sc_logits is not None else None):
        return model(  # type: ignore[no-any-return]
            decoder_input_ids=canvas,
            **with_cache(cache),
            decoder_position_ids=positions,
            self_conditioning_logits=sc_logits,
        ).logits


def _lean_decode(
    model: DiffusionGemmaForBlockDiffusion,
    canvas: torch.Tensor,
    positions: torch.Tensor,
    cache: DynamicCache,
    sc_logits: torch.Tensor | None,
    keep_signal: torch.Tensor | None,
    columns: int | None,
) -> torch.Tensor:
    """The decoder's modules called in the library's order, the head on the first ``columns`` positions."""
    decoder = model.model.decoder
    embed = decoder.embed_tokens
    inputs_embeds = embed(canvas)
    if sc_logits is None:
        signal = torch.zeros_like(inputs_embeds)
    else:
        probs = sc_logits.softmax(dim=-1, dtype=torch.float32).to(embed.weight.dtype)
        signal = torch.matmul(probs, embed.weight) * embed.embed_scale.to(inputs_embeds.dtype)
        signal = _padded(signal, inputs_embeds.shape[1])  # no signal past the given logits
    with zero_self_conditioning_at(model, keep_signal if sc_logits is not None else None):
        hidden = decoder.self_conditioning(inputs_embeds, signal)
    text_config = decoder.text_config
    rotary = {kind: decoder.rotary_emb(hidden, positions, kind) for kind in decoder.unique_layer_types}
    for index, layer in enumerate(decoder.layers[: text_config.num_hidden_layers]):
        # From the layer's trace where that is safe and checked (model.runtime.traced_layers), else eagerly.
        hidden = call_layer(layer, index, hidden, rotary[text_config.layer_types[index]], positions, cache)
    hidden = decoder.norm(hidden)
    if columns is not None:
        hidden = hidden[:, :columns]
    logits = head_logits(model.lm_head, hidden)  # through oneDNN where checked equal (model.runtime.onednn_head)
    if logits.dtype != torch.float32:
        logits = logits.to(torch.float32)
    # The library's softcap (divide, tanh, multiply), in place on the head's fresh output.
    cap = model.final_logit_softcapping
    return logits.div_(cap).tanh_().mul_(cap)


def _padded(values: torch.Tensor, length: int) -> torch.Tensor:
    """(batch, positions, width) ``values`` with zeros after them up to ``length`` positions."""
    if values.shape[1] >= length:
        return values
    return torch.cat([values, values.new_zeros(values.shape[0], length - values.shape[1], values.shape[2])], dim=1)


def _watched(model: nn.Module) -> bool:
    """Whether a hook would miss calls that skip ``model``, ``model.model`` or the decoder's own ``__call__``."""
    if torch_module._global_forward_hooks or torch_module._global_forward_pre_hooks:
        return True
    skipped: tuple[nn.Module, ...] = (model, model.get_submodule("model"), model.get_submodule("model.decoder"))
    return any(m._forward_hooks or m._forward_pre_hooks for m in skipped)


def _lean_usable(
    model: DiffusionGemmaForBlockDiffusion,
    canvas: torch.Tensor,
    positions: torch.Tensor,
    cache: DynamicCache,
    keep_signal: torch.Tensor | None,
) -> bool:
    if model.training or _watched(model):
        return False
    verdict = _lean_verdicts.get(model)
    if verdict is None:
        verdict = _lean_verdicts[model] = lean_matches_library(model, canvas, positions, cache, keep_signal)
        if not verdict:
            log.info("the lean decoder pass differs from the library's on this model: using model(...)")
    return verdict


def lean_matches_library(
    model: DiffusionGemmaForBlockDiffusion,
    canvas: torch.Tensor,
    positions: torch.Tensor,
    cache: DynamicCache,
    keep_signal: torch.Tensor | None,
) -> bool:
    """Whether the lean pass gives the library's logits bit for bit on these inputs, with and without a
    self-conditioning signal (uniform logits: the same for every position, so any canvas will do)."""
    try:
        with torch.inference_mode():
            signal = torch.zeros(*canvas.shape, model.config.get_text_config().vocab_size, device=canvas.device)
            for sc_logits in (None, signal):
                ours = _lean_decode(model, canvas, positions, cache, sc_logits, keep_signal, None)
                theirs = _library_decode(model, canvas, positions, cache, sc_logits, keep_signal)
                if not torch.equal(ours, theirs):
                    return False
        return True
    except Exception:  # noqa: BLE001  any change in the library's internals means: call it as a module
        log.debug("the lean decoder pass failed", exc_info=True)
        return False


def commit_block(
    model: DiffusionGemmaForBlockDiffusion, slots: torch.Tensor, cache: DynamicCache, positions: torch.Tensor
) -> None:
    """Put a finished block into the KV cache, so the next canvas is conditioned on it."""
    model.model.encoder(
        input_ids=slots.contiguous(),
        **with_cache(cache),
        position_ids=positions,
    )

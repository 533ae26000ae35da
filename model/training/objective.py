"""Uniform-state diffusion objective with self-conditioning, through the real model forward.

For each example a noise level ``t ~ U(t_floor, 1)`` is drawn and every *free* canvas slot is
replaced by a uniformly random token with probability ``t``; the model predicts the clean tokens of
the free slots. Pinned slots (suffix, eos/pad after a document end) stay clean, are excluded from the
loss and get no self-conditioning signal, exactly as the engine samples.

Self-conditioning: on about half the steps a first pass runs without it (no gradient); its logits,
divided by a temperature like the sampler's schedule uses, are fed to the second pass, which is the
one trained. The prefix is encoded once into the KV cache and both decoder passes read it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from transformers import DiffusionGemmaForBlockDiffusion

from model.checkpoint.architecture import text_config_of
from model.runtime.cache_kwarg import with_cache
from model.runtime.conditioning import zero_self_conditioning_at
from model.training.data import CanvasBatch


@dataclass(frozen=True)
class NoiseConfig:
    t_floor: float = 0.02
    self_conditioning_prob: float = 0.5
    # The sampler feeds back logits / T with T in [t_min, t_max]; train on that range of sharpness.
    sc_temperature_range: tuple[float, float] = (0.4, 1.0)
    # Switch-style load balancing on the decoder's routers. The shipped run used 0 and two of four
    # experts went nearly unused in its middle layers; new runs should use ~0.01.
    router_aux_weight: float = 0.0


def noise_canvas(
    targets: torch.Tensor, free: torch.Tensor, t: torch.Tensor, vocab_size: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """(noisy canvas, replaced mask): free slots become uniform random tokens with probability t.

    The draws come from ``generator`` (a CPU one) and then move to the canvas's device, so a run on a
    GPU sees the same noise as the same run on CPU and a resumed run the same as an uninterrupted one.
    """
    u = torch.rand(targets.shape, generator=generator).to(targets.device)
    replaced = (u < t.to(targets.device)[:, None]) & free
    random_tokens = torch.randint(0, vocab_size, targets.shape, generator=generator).to(targets.device)
    return torch.where(replaced, random_tokens, targets), replaced


def encode_prefix(model: DiffusionGemmaForBlockDiffusion, prefix: torch.Tensor) -> object:
    """The encoder's KV cache for ``[bos] + prefix`` (positions 0..P)."""
    return model.model.encoder(input_ids=prefix, use_cache=True).past_key_values


def decode(
    model: DiffusionGemmaForBlockDiffusion,
    cache: object,
    canvas: torch.Tensor,
    keep: torch.Tensor,
    self_conditioning_logits: torch.Tensor | None,
) -> torch.Tensor:
    """One decoder pass of ``DiffusionGemmaForBlockDiffusion`` over the canvas; float32 logits."""
    with zero_self_conditioning_at(model, keep if self_conditioning_logits is not None else None):
        out = model(**with_cache(cache), decoder_input_ids=canvas, self_conditioning_logits=self_conditioning_logits)
    return out.logits  # type: ignore[no-any-return]


def decode_at(
    model: DiffusionGemmaForBlockDiffusion,
    cache: object,
    canvas: torch.Tensor,
    keep: torch.Tensor,
    self_conditioning_logits: torch.Tensor | None,
    where: torch.Tensor,
    attention_mask: dict[str, torch.Tensor] | None = None,
) -> torch.Tensor:
    """``decode(...)[where]`` without computing the head anywhere else: (positions, vocab) float32 logits.

    At this model size the vocabulary-wide work (head, soft-cap, their gradients) was about half of a
    training step, and pinned slots carry no loss, so the head runs on the free slots only.
    ``attention_mask``: the decoder's 4-D masks by layer type (the adaptation's annealed canvas masks,
    ``model/training/adapt.py``); None is the engine's bidirectional canvas.
    """
    extra = {} if attention_mask is None else {"decoder_attention_mask": attention_mask}
    with zero_self_conditioning_at(model, keep if self_conditioning_logits is not None else None):
        hidden = model.model(
            **with_cache(cache),
            decoder_input_ids=canvas,
            self_conditioning_logits=self_conditioning_logits,
            **extra,
        ).last_hidden_state
    # The head of DiffusionGemmaForBlockDiffusion.forward: projection, float32, final soft-capping.
    logits = model.lm_head(hidden[where]).float()
    cap = model.final_logit_softcapping
    return torch.tanh(logits / cap) * cap if cap else logits


def router_balance_loss(records: list[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
    """Mean over layers of E · Σ_e f_e · P_e (1 when perfectly balanced, E/k when collapsed)."""
    losses = []
    for probs, top_k_index in records:
        experts = probs.shape[-1]
        dispatch = F.one_hot(top_k_index, experts).float().sum(1).mean(0) / top_k_index.shape[-1]
        losses.append(experts * (dispatch * probs.mean(0)).sum())
    return torch.stack(losses).mean()


@contextmanager
def recording_routers(
    model: DiffusionGemmaForBlockDiffusion, records: list[tuple[torch.Tensor, torch.Tensor]]
) -> Iterator[None]:
    """Collect (router probabilities, chosen experts) from every decoder layer's router."""

    def record(_module: nn.Module, _args: tuple[Any, ...], out: tuple[torch.Tensor, ...]) -> None:
        records.append((out[0], out[2]))

    handles = [layer.router.register_forward_hook(record) for layer in model.model.decoder.layers]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


@dataclass
class StepOutput:
    loss: torch.Tensor
    free_logits: torch.Tensor  # (free slots, vocab): the prediction at every free slot, in row order
    noisy: torch.Tensor
    used_self_conditioning: bool


def diffusion_loss(
    model: DiffusionGemmaForBlockDiffusion,
    batch: CanvasBatch,
    generator: torch.Generator,
    noise: NoiseConfig | None = None,
    t: torch.Tensor | None = None,
    self_condition: bool | None = None,
    attention_mask: dict[str, torch.Tensor] | None = None,
) -> StepOutput:
    """Mean cross-entropy over free slots. ``t``/``self_condition`` fixed by evaluation, else drawn;
    ``attention_mask`` as in ``decode_at``."""
    noise = noise or NoiseConfig()
    vocab = text_config_of(model.config).vocab_size
    b = batch.targets.shape[0]
    if t is None:
        t = noise.t_floor + (1 - noise.t_floor) * torch.rand(b, generator=generator)
    if self_condition is None:
        self_condition = bool(torch.rand((), generator=generator) < noise.self_conditioning_prob)
    noisy, _ = noise_canvas(batch.targets, batch.free, t, vocab, generator)
    keep = batch.free.long()
    cache = encode_prefix(model, batch.prefix)
    sc_logits = None
    if self_condition:
        lo, hi = noise.sc_temperature_range
        temperature = lo + (hi - lo) * float(torch.rand((), generator=generator))
        with torch.no_grad():
            first = decode_at(model, cache, noisy, keep, None, batch.free, attention_mask) / temperature
        # Pinned slots get a zeroed signal whatever their logits, so zeros stand in for them there.
        sc_logits = first.new_zeros((*noisy.shape, first.shape[-1]))
        sc_logits[batch.free] = first
    records: list[tuple[torch.Tensor, torch.Tensor]] = []
    with recording_routers(model, records) if noise.router_aux_weight > 0 else nullcontext():
        logits = decode_at(model, cache, noisy, keep, sc_logits, batch.free, attention_mask)
    loss = F.cross_entropy(logits, batch.targets[batch.free])
    if records:
        loss = loss + noise.router_aux_weight * router_balance_loss(records)
    return StepOutput(loss, logits, noisy, self_condition)

"""Held-out evaluation of a DiffusionGemma checkpoint at the model level (no sampler).

* denoising accuracy: continuation canvases (all slots free) with each slot replaced by a uniform
  random token with probability t ∈ {0.25, 0.5, 0.75}; the share of slots whose argmax is the clean
  token, over all slots and over the replaced ones only;
* infill accuracy: infill canvases (1..C/2 span slots, the suffix pinned) with every span slot
  replaced (t = 1): the share of span tokens the model predicts exactly in one pass, and in a
  second pass self-conditioned on the first, as the sampler runs it.

Examples come from the held-out sections only, with fixed seeds, so figures are comparable across
checkpoints. The bench script (``bench/builtin_model_eval.py``) prints them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import DiffusionGemmaForBlockDiffusion, PreTrainedTokenizerBase

from model.checkpoint.architecture import ExpertSizes, canvas_length_of, text_config_of
from model.training.data import (
    ExampleMix,
    ExampleSampler,
    Section,
    TokenizedPool,
    read_sections,
    split_sections,
    tokenize_sections,
)
from model.training.objective import decode, encode_prefix, noise_canvas, recording_routers

NOISE_LEVELS = (0.25, 0.5, 0.75)


@dataclass(frozen=True)
class HeldOut:
    sections: list[Section]
    stories: TokenizedPool
    books: TokenizedPool


def heldout_data(corpus: Path, tokenizer: PreTrainedTokenizerBase, fraction: float = 0.02, seed: int = 0) -> HeldOut:
    """The held-out sections (same split as training, by default) tokenized for evaluation."""
    _, heldout = split_sections(read_sections(corpus), fraction, seed)
    stories = [s for s in heldout if s.is_story]
    books = [s for s in heldout if not s.is_story]
    return HeldOut(heldout, tokenize_sections(stories, tokenizer), tokenize_sections(books, tokenizer))


def _sampler(data: HeldOut, canvas: int, mix: ExampleMix, batch_size: int, seed: int) -> ExampleSampler:
    return ExampleSampler([data.stories, data.books], [0.5, 0.5], canvas, batch_size, mix, seed)


@torch.no_grad()
def denoising_accuracy(
    model: DiffusionGemmaForBlockDiffusion,
    data: HeldOut,
    levels: Sequence[float] = NOISE_LEVELS,
    batches: int = 8,
    batch_size: int = 16,
    seed: int = 0,
) -> dict[float, dict[str, float]]:
    """{t: {"all": acc over free slots, "replaced": acc over replaced slots}} in one pass."""
    model.eval()
    canvas = canvas_length_of(model.config)
    vocab = text_config_of(model.config).vocab_size
    mix = ExampleMix(continuation=1.0, infill=0.0, gap=0.0)
    results: dict[float, dict[str, float]] = {}
    for level in levels:
        sampler = _sampler(data, canvas, mix, batch_size, seed)
        generator = torch.Generator().manual_seed(seed)
        hits = total = hits_replaced = total_replaced = 0
        for _ in range(batches):
            batch = sampler.next_batch()
            t = torch.full((batch_size,), float(level))
            noisy, replaced = noise_canvas(batch.targets, batch.free, t, vocab, generator)
            cache = encode_prefix(model, batch.prefix)
            correct = decode(model, cache, noisy, batch.free.long(), None).argmax(-1) == batch.targets
            hits += int(correct[batch.free].sum())
            total += int(batch.free.sum())
            hits_replaced += int(correct[replaced].sum())
            total_replaced += int(replaced.sum())
        results[level] = {"all": hits / total, "replaced": hits_replaced / max(1, total_replaced)}
    return results


@torch.no_grad()
def infill_accuracy(
    model: DiffusionGemmaForBlockDiffusion, data: HeldOut, batches: int = 8, batch_size: int = 16, seed: int = 1
) -> dict[str, float]:
    """Exact-token accuracy on fully masked spans between a prefix and a pinned suffix."""
    model.eval()
    canvas = canvas_length_of(model.config)
    vocab = text_config_of(model.config).vocab_size
    sampler = _sampler(data, canvas, ExampleMix(continuation=0.0, infill=1.0, gap=0.0), batch_size, seed)
    generator = torch.Generator().manual_seed(seed)
    hits = [0, 0]
    total = 0
    for _ in range(batches):
        batch = sampler.next_batch()
        noisy, _ = noise_canvas(batch.targets, batch.free, torch.ones(batch_size), vocab, generator)
        keep = batch.free.long()
        cache = encode_prefix(model, batch.prefix)
        first = decode(model, cache, noisy, keep, None)
        second = decode(model, cache, noisy, keep, first / 0.6)
        for i, logits in enumerate((first, second)):
            hits[i] += int((logits.argmax(-1) == batch.targets)[batch.free].sum())
        total += int(batch.free.sum())
    return {"one_pass": hits[0] / total, "self_conditioned": hits[1] / total, "span_tokens": total}


@torch.no_grad()
def expert_usage(
    model: DiffusionGemmaForBlockDiffusion, data: HeldOut, batches: int = 4, batch_size: int = 16
) -> list[list[float]]:
    """Per decoder layer, the share of top-k routing slots each expert receives on clean canvases."""
    model.eval()
    sampler = _sampler(data, canvas_length_of(model.config), ExampleMix(), batch_size, seed=2)
    records: list[tuple[torch.Tensor, torch.Tensor]] = []
    with recording_routers(model, records):
        for _ in range(batches):
            batch = sampler.next_batch()
            decode(model, encode_prefix(model, batch.prefix), batch.targets, batch.free.long(), None)
    layers = len(model.model.decoder.layers)
    experts = ExpertSizes.of(text_config_of(model.config)).num_experts
    counts = torch.zeros(layers, experts)
    for i, (_, chosen) in enumerate(records):
        counts[i % layers] += torch.bincount(chosen.flatten(), minlength=experts).float()
    return (counts / counts.sum(1, keepdim=True)).tolist()

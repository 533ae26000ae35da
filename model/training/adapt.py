"""Adapting the transplant into a denoiser: the recipe's pieces and its resumable, deterministic loop.

The transplant (``transplant``) starts as Gemma 3 in the encoder and an untrained denoiser in the decoder
(bidirectional canvas, tokens predicted in place, uniform noise). What it learns here, per step:

- **the uniform-noise objective** the built-in model was trained with (``objective.diffusion_loss``:
  cross-entropy on the free slots of a noised canvas, self-conditioning on about half the steps);
- **distillation** (``--distill W``): the same Gemma 3, run causally over ``[bos] + prefix + clean
  canvas``, gives at every canvas slot its distribution for that token given the text before it; the
  student's prediction at a free slot is pulled towards it by ``W · KL(teacher ‖ student)`` (over the kept
  vocabulary). One teacher pass per step (no gradient) gives soft targets for every slot;
- **attention-mask annealing** (``--anneal-steps N``): the decoder starts as Gemma 3 was trained, each
  canvas slot seeing only the slots before it, and every pair (slot, later slot) opens with probability
  ``step / N`` until the canvas is fully bidirectional, as the engine runs it, at step N;
- frozen embeddings (``--train-embeddings`` to unfreeze): the tied head and the input table keep Gemma 3's
  rows, which halves the trained parameters and keeps the pruned vocabulary's meaning fixed;
- fewer operators a step (``lean_step``): the silent MoE blocks skipped and frozen (they add exactly zero;
  a third of a step's operators), and with ``fused_norms`` every RMSNorm one fused call.

The loop is resumable (``--run-dir``: a checkpoint of the trainable weights, optimizer, step, sampler and
generator states every ``--checkpoint-minutes`` and at the end; a checkpoint without optimizer state, as the
GPU runbook carries between lent machines, resumes with fresh moments) and deterministic given its
arguments: examples and noise come from seeded CPU generators, the learning rate is a function of the step.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import cast

import torch
import torch.nn.functional as F
from transformers import DiffusionGemmaForBlockDiffusion, Gemma3ForCausalLM

from model.checkpoint.architecture import layer_types_of, text_config_of
from model.training.data import CanvasBatch, ExampleMix, ExampleSampler, PrefetchedBatches, TokenizedPool
from model.training.lean_step import fuse_norms, silence_moe, silenced_parameters
from model.training.objective import NoiseConfig, diffusion_loss

PAD_ID, EOS_ID = 0, 1


@dataclass(frozen=True)
class Recipe:
    """What one adaptation run does per step (the flags of ``adapt_compare`` and the runbook's step)."""

    lr: float = 3e-4
    warmup_steps: int = 20
    max_steps: int = 1000
    min_lr_ratio: float = 0.1
    weight_decay: float = 0.0
    distill: float = 0.0  # weight of KL(teacher ‖ student); 0: the uniform-noise objective alone
    anneal_steps: int = 0  # 0: bidirectional from the start
    train_embeddings: bool = False
    batch_size: int = 8
    canvas: int = 32
    seed: int = 0
    grad_clip: float = 1.0
    max_prefix: int = 128  # the longest prefix an example gets (the toy runs' windows are short)
    fused_norms: bool = False  # lean_step.fuse_norms: chosen where a device measures it faster


def mix_for(recipe: Recipe) -> ExampleMix:
    """The training recipe's example mix with prefixes no longer than ``recipe.max_prefix``."""
    base = ExampleMix()
    pairs = [(n, w) for n, w in zip(base.prefix_lengths, base.prefix_weights, strict=True) if n <= recipe.max_prefix]
    return replace(base, prefix_lengths=tuple(n for n, _ in pairs), prefix_weights=tuple(w for _, w in pairs))


def lr_at(step: int, recipe: Recipe) -> float:
    """Warmup, then cosine to ``min_lr_ratio`` at ``max_steps``: a function of the step alone."""
    if step < recipe.warmup_steps:
        return recipe.lr * (step + 1) / recipe.warmup_steps
    progress = min(1.0, (step - recipe.warmup_steps) / max(1, recipe.max_steps - recipe.warmup_steps))
    return recipe.lr * (recipe.min_lr_ratio + (1 - recipe.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress)))


def open_fraction(step: int, recipe: Recipe) -> float:
    """The share of (slot, later slot) pairs the annealed mask opens at ``step`` (1: fully bidirectional)."""
    if recipe.anneal_steps <= 0:
        return 1.0
    return min(1.0, step / recipe.anneal_steps)


def annealed_masks(
    model: DiffusionGemmaForBlockDiffusion,
    cached: int,
    batch: int,
    canvas: int,
    opened: float,
    generator: torch.Generator,
) -> dict[str, torch.Tensor] | None:
    """The decoder's 4-D masks (by layer type) for an annealed canvas after ``cached`` encoded positions;
    None once fully open (the engine's own bidirectional canvas).

    Every slot sees the whole cached prefix and the slots before it; a later slot with probability
    ``opened`` (one draw per pair, shared by the layer types, from ``generator``).
    """
    if opened >= 1.0:
        return None
    text = text_config_of(model.config)
    window = getattr(text, "sliding_window", None)
    if window is not None and cached >= window - 1:
        # A sliding layer's cache would hold fewer positions than the prefix: the masks would not fit.
        raise ValueError(f"annealed masks need prefixes shorter than the sliding window ({window})")
    later = torch.triu(torch.ones(canvas, canvas, dtype=torch.bool), diagonal=1)
    drawn = torch.rand((batch, 1, canvas, canvas), generator=generator) < opened
    mask = torch.cat([torch.ones((batch, 1, canvas, cached), dtype=torch.bool), ~later | drawn], dim=-1)
    if text._attn_implementation == "eager":  # eager attention adds its mask
        mask = torch.zeros(mask.shape).masked_fill(~mask, torch.finfo(torch.float32).min)
    return {kind: mask for kind in set(layer_types_of(text))}


def teacher_log_probs(teacher: Gemma3ForCausalLM, batch: CanvasBatch, keep_ids: torch.Tensor | None) -> torch.Tensor:
    """Gemma 3's log-probabilities (B, C, kept vocabulary) for every canvas slot given the text before it.

    The head runs on the canvas positions and the kept rows only: the full 262,144-wide logits of a batch
    would be most of a step's memory.
    """
    ids = torch.cat([batch.prefix, batch.targets], dim=1)
    source = keep_ids.to(ids.device)[ids] if keep_ids is not None else ids
    # Position i predicts token i + 1: the canvas slots are predicted from the positions before them.
    start, width = batch.prefix.shape[1] - 1, batch.targets.shape[1]
    with torch.no_grad():
        hidden = teacher.model(input_ids=source, use_cache=False).last_hidden_state[:, start : start + width]
        head = teacher.lm_head.weight
        if keep_ids is not None:
            head = head[keep_ids.to(head.device)]
        logits = (hidden @ head.T).float()
        cap = teacher.config.final_logit_softcapping
        if cap:
            logits = torch.tanh(logits / cap) * cap
    return F.log_softmax(logits, dim=-1)


def adaptation_loss(
    model: DiffusionGemmaForBlockDiffusion,
    batch: CanvasBatch,
    generator: torch.Generator,
    recipe: Recipe,
    step: int,
    teacher: Gemma3ForCausalLM | None = None,
    keep_ids: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """One step's loss under ``recipe`` and what it was made of (cross-entropy, KL, open fraction)."""
    masks = None
    opened = open_fraction(step, recipe)
    if opened < 1.0:
        b, c = batch.targets.shape
        masks = annealed_masks(model, batch.prefix.shape[1], b, c, opened, generator)
        masks = None if masks is None else {k: v.to(batch.targets.device) for k, v in masks.items()}
    out = diffusion_loss(model, batch, generator, NoiseConfig(), attention_mask=masks)
    parts = {"ce": float(out.loss.detach()), "open": opened}
    loss = out.loss
    if recipe.distill > 0 and teacher is not None:
        target = teacher_log_probs(teacher, batch, keep_ids)[batch.free]
        real = (batch.targets[batch.free] != PAD_ID) & (batch.targets[batch.free] != EOS_ID)
        if bool(real.any()):
            student = F.log_softmax(out.free_logits, dim=-1)
            kl = F.kl_div(student[real], target[real], log_target=True, reduction="batchmean")
            loss = loss + recipe.distill * kl
            parts["kl"] = float(kl.detach())
    return loss, parts


def trainable(model: DiffusionGemmaForBlockDiffusion, recipe: Recipe) -> list[torch.nn.Parameter]:
    """The parameters the adaptation trains: all but the tied embedding table (unless ``train_embeddings``)
    and the silent MoE blocks ``lean_step.silence_moe`` skips."""
    embedding = model.get_input_embeddings().weight
    skipped = silenced_parameters(model)
    params = []
    for param in model.parameters():
        frozen = (param is embedding and not recipe.train_embeddings) or id(param) in skipped
        param.requires_grad_(not frozen)
        if not frozen:
            params.append(param)
    return params


def optimizer_for(params: list[torch.nn.Parameter], recipe: Recipe) -> torch.optim.Optimizer:
    """The adaptation's optimizer (its rate is set per step by ``lr_at``). Fused: one kernel for every tensor,
    where a small model's step on a GPU is bound by how many operators it launches (bench/step_operators.py);
    the CPU runs the same implementation, so the dry run proves the device's."""
    return torch.optim.AdamW(params, lr=recipe.lr, betas=(0.9, 0.95), weight_decay=recipe.weight_decay, fused=True)


def train_step(
    model: DiffusionGemmaForBlockDiffusion,
    batch: CanvasBatch,
    generator: torch.Generator,
    recipe: Recipe,
    step: int,
    optimizer: torch.optim.Optimizer,
    params: list[torch.nn.Parameter],
    *,
    bf16: bool = False,
    teacher: Gemma3ForCausalLM | None = None,
    keep_ids: torch.Tensor | None = None,
    mark: Callable[[], None] = lambda: None,
) -> dict[str, float]:
    """One update on ``batch`` (the loss under bf16 autocast on CUDA if ``bf16``, backward, clipped step) and
    what its loss was made of; ``mark`` runs after the forward, the backward and the update (a profiler's
    phase boundaries)."""
    with torch.autocast("cuda", dtype=torch.bfloat16) if bf16 else nullcontext():
        loss, parts = adaptation_loss(model, batch, generator, recipe, step, teacher, keep_ids)
    mark()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    mark()
    torch.nn.utils.clip_grad_norm_(params, recipe.grad_clip)
    optimizer.step()
    mark()
    return parts


def heldout_loss(
    model: DiffusionGemmaForBlockDiffusion, pools: list[TokenizedPool], recipe: Recipe, batches: int = 4
) -> dict[str, float]:
    """Denoising loss and accuracy on a fixed set of held-out batches (same examples and noise every time),
    with the engine's bidirectional canvas and no self-conditioning."""
    sampler = ExampleSampler(pools, [0.5, 0.5], recipe.canvas, recipe.batch_size, mix_for(recipe), seed=12345)
    generator = torch.Generator().manual_seed(12345)
    device = next(model.parameters()).device
    total = correct = 0.0
    count = 0
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for _ in range(batches):
            batch = _on(sampler.next_batch(), device)
            out = diffusion_loss(model, batch, generator, self_condition=False)
            n = int(batch.free.sum())
            total += float(out.loss) * n
            correct += float((out.free_logits.argmax(-1) == batch.targets[batch.free]).sum())
            count += n
    model.train(was_training)
    return {"loss": total / count, "accuracy": correct / count}


def _on(batch: CanvasBatch, device: torch.device) -> CanvasBatch:
    if device.type == "cpu":
        return batch
    return CanvasBatch(batch.prefix.to(device), batch.targets.to(device), batch.free.to(device), batch.kind.to(device))


@dataclass
class RunState:
    step: int
    tokens: int  # canvas slots trained on so far
    seconds: float
    log: list[dict[str, float]]


def save_checkpoint(
    path: Path,
    model: DiffusionGemmaForBlockDiffusion,
    optimizer: torch.optim.Optimizer | None,
    state: RunState,
    sampler: ExampleSampler | PrefetchedBatches,
    generator: torch.Generator,
    recipe: Recipe,
) -> None:
    """Trainable weights (the frozen embedding is the transplant's), optimizer, step and random states."""
    names = {id(p): n for n, p in model.named_parameters()}
    weights = {names[id(p)]: p.detach().cpu() for p in model.parameters() if p.requires_grad}
    blob = {
        "weights": weights,
        "optimizer": optimizer.state_dict() if optimizer is not None else None,
        "state": state.__dict__,
        "sampler": sampler.state(),
        "generator": generator.get_state(),
        "recipe": recipe.__dict__,
    }
    tmp = path.with_suffix(".tmp")
    torch.save(blob, tmp)
    tmp.replace(path)


def run(
    model: DiffusionGemmaForBlockDiffusion,
    train_pools: list[TokenizedPool],
    heldout_pools: list[TokenizedPool],
    recipe: Recipe,
    run_dir: Path,
    teacher: Gemma3ForCausalLM | None = None,
    keep_ids: torch.Tensor | None = None,
    eval_every: int = 50,
    stop_at_step: int | None = None,
    max_minutes: float | None = None,
    checkpoint_minutes: float = 5.0,
    device: str = "cpu",
    bf16: bool = False,
) -> RunState:
    """Adapt ``model`` under ``recipe`` from ``run_dir``'s checkpoint (or from the start), to ``max_steps`` or
    ``stop_at_step`` or ``max_minutes``; logs held-out loss every ``eval_every`` steps to ``run_dir/log.json``."""
    run_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(recipe.seed)
    cast(torch.nn.Module, model).to(device).train()
    if teacher is not None:
        cast(torch.nn.Module, teacher).to(device).eval().requires_grad_(False)
    ckpt = run_dir / "checkpoint.pt"
    blob = torch.load(ckpt, weights_only=False) if ckpt.exists() else None
    if blob is not None:
        names = dict(model.named_parameters())
        with torch.no_grad():
            for name, value in blob["weights"].items():
                names[name].copy_(value)
    silence_moe(model)  # after the weights: it skips the blocks only where they are silent in them
    if recipe.fused_norms:
        fuse_norms(model)
    params = trainable(model, recipe)
    optimizer = optimizer_for(params, recipe)
    sampler = ExampleSampler(train_pools, [0.5, 0.5], recipe.canvas, recipe.batch_size, mix_for(recipe), recipe.seed)
    generator = torch.Generator().manual_seed(recipe.seed + 1)
    state = RunState(0, 0, 0.0, [])
    rewarm_from: int | None = None
    if blob is not None:
        state = RunState(**blob["state"])
        if blob["optimizer"] is not None:
            optimizer.load_state_dict(blob["optimizer"])
        else:  # a compact checkpoint (carried between lent GPUs): fresh moments, so the rate warms up again
            rewarm_from = state.step
        sampler.set_state(blob["sampler"])
        generator.set_state(blob["generator"])
    (run_dir / "recipe.json").write_text(json.dumps(recipe.__dict__, indent=1))
    last_stop = stop_at_step if stop_at_step is not None else recipe.max_steps
    started = time.monotonic()
    last_save = started
    if state.step == 0 and not state.log:
        state.log.append({"step": 0, "tokens": 0, "seconds": 0.0, **heldout_loss(model, heldout_pools, recipe)})
        _write_log(run_dir, state)
    elif rewarm_from is not None:
        # Compact checkpoints travel packed (NF4 or int8): the carried weights' own held-out loss, beside the
        # last one logged before packing, is what the round trip cost.
        entry = {"step": state.step, "tokens": state.tokens, "seconds": round(state.seconds, 1), "resumed": 1.0}
        state.log.append({**entry, **heldout_loss(model, heldout_pools, recipe)})
        _write_log(run_dir, state)
    batches = PrefetchedBatches(sampler)  # made from the resumed state on
    try:
        while state.step < min(last_stop, recipe.max_steps):
            if max_minutes is not None and time.monotonic() - started > max_minutes * 60:
                break
            t0 = time.monotonic()
            rate = lr_at(state.step, recipe)
            if rewarm_from is not None:
                rate *= min(1.0, (state.step - rewarm_from + 1) / max(1, recipe.warmup_steps))
            for group in optimizer.param_groups:
                group["lr"] = rate
            batch = _on(batches.next_batch(), torch.device(device))
            parts = train_step(model, batch, generator, recipe, state.step, optimizer, params, bf16=bf16,
                               teacher=teacher, keep_ids=keep_ids)  # fmt: skip
            state.step += 1
            state.tokens += int(batch.targets.numel())
            state.seconds += time.monotonic() - t0
            if state.step % eval_every == 0 or state.step == recipe.max_steps:
                entry = {"step": state.step, "tokens": state.tokens, "seconds": round(state.seconds, 1), **parts}
                entry.update(heldout_loss(model, heldout_pools, recipe))
                state.log.append(entry)
                _write_log(run_dir, state)
                print(json.dumps(entry), flush=True)
            if time.monotonic() - last_save > checkpoint_minutes * 60:
                save_checkpoint(ckpt, model, optimizer, state, batches, generator, recipe)
                last_save = time.monotonic()
    finally:
        batches.close()
    save_checkpoint(ckpt, model, optimizer, state, batches, generator, recipe)
    return state


def _write_log(run_dir: Path, state: RunState) -> None:
    (run_dir / "log.json").write_text(json.dumps(state.log, indent=1))


def recipe_from(args: argparse.Namespace) -> Recipe:
    fields = Recipe.__dataclass_fields__
    return Recipe(**{name: getattr(args, name) for name in fields if hasattr(args, name)})

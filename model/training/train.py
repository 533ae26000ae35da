"""Train Redraft's built-in DiffusionGemma on the shared corpus, on CPU, resumably.

One command trains from scratch or resumes the run folder it is pointed at::

    python -m model.training.train --run-dir runs/redraft-tiny --max-minutes 70

The defaults are the shipped model's first run (4.8 M parameters, 3400 steps of 16 canvases); later
runs continue from the exported weights with ``--init-from`` (MODEL_CARD.md has every command). One
torch thread by default: on a shared two-core machine a second thread made steps slower (OpenMP
threads spinning against other processes); on two idle cores ``--threads 2`` is faster.

On Linux, preloading tcmalloc (Debian's ``libtcmalloc-minimal4``) makes steps about 10% faster:
``LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 python -m model.training.train ...``.
glibc hands every vocabulary-wide buffer (32 MiB at batch 16) back to the system when it is freed
and page-faults it in again on the next step; tcmalloc keeps it. It changes speed, not results.

The first call prepares the run folder (held-out split, tokenizer, token pools); later calls reuse
it. A checkpoint (model, optimizer, step, and every random state) is written every
``--checkpoint-minutes`` and at the end, so an interrupted run resumes where it stopped and a
resumed run produces the same numbers as an uninterrupted one. The learning-rate schedule is by
step (warmup, then cosine to 10%), so results depend on the seed, not on the machine's speed;
``--max-minutes`` only stops early (and saves).

On a GPU (``--device cuda --bf16``, as ``bench/gpu_runbook.py`` trains on a lent machine) the random
draws stay on CPU generators, so the examples and the noise are those of the same run on CPU. A
checkpoint without optimizer state (the compact one the runbook carries between machines) resumes
with fresh Adam moments and the learning rate warming up again over ``--warmup-steps``.

(Over 400 lines and kept whole: the flags, the run folder's preparation and the resumable loop are one
command; ``--help`` prints this text, and the training data, objective, tokenizer and export have
modules of their own.)
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import time
from contextlib import nullcontext
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from transformers import AutoTokenizer, DiffusionGemmaForBlockDiffusion, PreTrainedTokenizerBase

from model.checkpoint.architecture import TextModelShape, build_config
from model.checkpoint.building import MODEL_BUILDING, new_model
from model.training.data import (
    CanvasBatch,
    ExampleMix,
    ExampleSampler,
    TokenizedPool,
    WordEdges,
    read_sections,
    split_sections,
)
from model.training.export import LINEAGE_FILE, PRIOR_LINEAGE_FILE
from model.training.objective import NoiseConfig, diffusion_loss
from model.training.tokenizer import build_tokenizer, save_tokenizer

DEFAULT_CORPUS = Path("/work/shared/corpus")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run-dir", type=Path, required=True, help="folder for tokenizer, pools, checkpoints")
    p.add_argument(
        "--init-from",
        type=Path,
        default=None,
        help="start a new run from an exported model folder (its weights and tokenizer), e.g. the shipped one",
    )
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    p.add_argument("--max-bytes-per-file", type=int, default=None, help="read only this much of each file")
    p.add_argument("--heldout-fraction", type=float, default=0.02)
    p.add_argument("--seed", type=int, default=0, help="seeds the model init, example order and noise")
    p.add_argument(
        "--split-seed", type=int, default=0, help="seeds the held-out split; keep 0 so all runs hold out the same text"
    )
    p.add_argument("--vocab-size", type=int, default=8192)
    p.add_argument("--tokenizer-chars", type=int, default=40_000_000, help="text used to train BPE")
    p.add_argument("--hidden-size", type=int, default=192)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=3)
    p.add_argument("--kv-heads", type=int, default=1)
    p.add_argument("--head-dim", type=int, default=64)
    p.add_argument("--intermediate-size", type=int, default=384)
    p.add_argument("--experts", type=int, default=4)
    p.add_argument("--top-k", type=int, default=2)
    p.add_argument("--moe-intermediate-size", type=int, default=192)
    p.add_argument("--sliding-window", type=int, default=128)
    p.add_argument("--canvas", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--story-weight", type=float, default=0.6, help="share of examples from TinyStories")
    p.add_argument(
        "--mix",
        type=_mix_flag,
        default=DEFAULT_MIX,
        metavar="C,I,G",
        help="shares of continuation, infill and variable-length gap examples (default 0.4,0.35,0.25)",
    )
    p.add_argument(
        "--word-aligned", action="store_true", help="start canvases and end spans between words, as edits do"
    )
    p.add_argument("--router-aux-weight", type=float, default=0.0, help="MoE load-balancing loss weight")
    p.add_argument("--lr", type=float, default=1.5e-3)
    p.add_argument("--min-lr-ratio", type=float, default=0.1)
    p.add_argument("--warmup-steps", type=int, default=100)
    p.add_argument("--weight-decay", type=float, default=0.05)
    p.add_argument("--max-steps", type=int, default=3400)
    p.add_argument("--max-minutes", type=float, default=None, help="stop (and save) after this much time")
    p.add_argument("--stop-at-step", type=int, default=None, help="stop (and save) here; schedule unchanged")
    p.add_argument("--checkpoint-minutes", type=float, default=5.0)
    p.add_argument("--log-every", type=int, default=25)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="where the model trains")
    p.add_argument("--bf16", action="store_true", help="bf16 autocast for the forward passes (CUDA only)")
    p.add_argument("--probe", type=int, default=0, help="time this many steps from scratch, print, exit")
    return p.parse_args(argv)


def example_mix(text: str) -> ExampleMix:
    """``--mix C,I,G``: the shares of continuation, infill and gap examples (any scale)."""
    try:
        continuation, infill, gap = (float(part) for part in text.split(","))
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"--mix takes three shares C,I,G like 0.4,0.35,0.25, got {text!r}") from error
    if min(continuation, infill, gap) < 0 or continuation + infill + gap <= 0:
        raise argparse.ArgumentTypeError(f"--mix shares must be >= 0 and not all 0, got {text!r}")
    return ExampleMix(continuation=continuation, infill=infill, gap=gap)


DEFAULT_MIX = f"{ExampleMix.continuation},{ExampleMix.infill},{ExampleMix.gap}"


def _mix_flag(text: str) -> str:
    example_mix(text)  # validated here, kept as text so train_args.json and the card can repeat it
    return text


def shape_from_args(args: argparse.Namespace) -> TextModelShape:
    return TextModelShape(
        vocab_size=args.vocab_size,
        hidden_size=args.hidden_size,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.kv_heads,
        head_dim=args.head_dim,
        intermediate_size=args.intermediate_size,
        num_experts=args.experts,
        top_k_experts=args.top_k,
        moe_intermediate_size=args.moe_intermediate_size,
        sliding_window=args.sliding_window,
        canvas_length=args.canvas,
    )


def prepare(args: argparse.Namespace) -> tuple[PreTrainedTokenizerBase, dict[str, TokenizedPool]]:
    """Split, tokenizer and token pools, computed once per run folder and then reused."""
    run = args.run_dir
    tok_dir, pools_dir = run / "tokenizer", run / "pools"
    names = ["train_stories", "train_books", "heldout_stories", "heldout_books"]
    if not (tok_dir / "tokenizer.json").exists() or not all((pools_dir / f"{n}.npz").exists() for n in names):
        t0 = time.time()
        sections = read_sections(args.corpus, args.max_bytes_per_file)
        train, heldout = split_sections(sections, args.heldout_fraction, args.split_seed)
        if not (tok_dir / "tokenizer.json").exists():
            save_tokenizer(build_tokenizer(train, args.vocab_size, args.tokenizer_chars), tok_dir)
        tokenizer = AutoTokenizer.from_pretrained(str(tok_dir))
        pools_dir.mkdir(parents=True, exist_ok=True)
        from model.training.data import tokenize_sections

        groups = {
            "train_stories": [s for s in train if s.is_story],
            "train_books": [s for s in train if not s.is_story],
            "heldout_stories": [s for s in heldout if s.is_story],
            "heldout_books": [s for s in heldout if not s.is_story],
        }
        split_info: dict[str, dict[str, int] | list[str]] = {}
        for name, group in groups.items():
            pool = tokenize_sections(group, tokenizer)
            pool.save(pools_dir / f"{name}.npz")
            split_info[name] = {
                "sections": len(group),
                "chars": sum(len(s.text) for s in group),
                "tokens": int(pool.lengths.sum()),
            }
        split_info["heldout_ids"] = [f"{s.source}#{s.index}" for s in heldout]
        (run / "split.json").write_text(json.dumps(split_info, indent=1))
        print(
            f"prepared run folder in {time.time() - t0:.0f}s: "
            + ", ".join(f"{k} {v['tokens']} tok" for k, v in split_info.items() if isinstance(v, dict)),
            flush=True,
        )
    tokenizer = AutoTokenizer.from_pretrained(str(tok_dir))
    pools = {n: TokenizedPool.load(pools_dir / f"{n}.npz") for n in names}
    return tokenizer, pools


def lr_at(step: int, args: argparse.Namespace, rewarm_from: int | None = None) -> float:
    """Warmup, then cosine to ``min_lr_ratio``; ``rewarm_from``: the step a run resumed at with fresh
    Adam moments, from which the rate warms up again (the first updates of a fresh Adam are as large as
    the rate itself, whatever the gradient's size)."""
    if step < args.warmup_steps:
        return args.lr * (step + 1) / args.warmup_steps
    progress = min(1.0, (step - args.warmup_steps) / max(1, args.max_steps - args.warmup_steps))
    rate = args.lr * (args.min_lr_ratio + (1 - args.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress)))
    if rewarm_from is not None:
        rate *= min(1.0, (step - rewarm_from + 1) / args.warmup_steps)
    return rate


def on_device(batch: CanvasBatch, device: torch.device) -> CanvasBatch:
    if device.type == "cpu":
        return batch
    return replace(
        batch,
        prefix=batch.prefix.to(device, non_blocking=True),
        targets=batch.targets.to(device, non_blocking=True),
        free=batch.free.to(device, non_blocking=True),
        kind=batch.kind.to(device, non_blocking=True),
    )


def autocast(args: argparse.Namespace) -> Any:
    """bf16 autocast on CUDA with ``--bf16``; weights and optimizer stay float32."""
    if getattr(args, "bf16", False) and getattr(args, "device", "cpu") == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return nullcontext()


def build_model(shape: TextModelShape, seed: int) -> DiffusionGemmaForBlockDiffusion:
    torch.manual_seed(seed)
    return new_model(build_config(shape))


def make_optimizer(model: torch.nn.Module, args: argparse.Namespace) -> torch.optim.AdamW:
    # No decay on norms, scales and embeddings (1-D parameters and the tied embedding table).
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "embed" not in n]
    no_decay = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and "embed" not in n)]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr,
        betas=(0.9, 0.95),
    )


def make_sampler(
    pools: dict[str, TokenizedPool],
    args: argparse.Namespace,
    split: str,
    seed: int,
    edges: WordEdges | None = None,
) -> ExampleSampler:
    return ExampleSampler(
        [pools[f"{split}_stories"], pools[f"{split}_books"]],
        [args.story_weight, 1 - args.story_weight],
        canvas=args.canvas,
        batch_size=args.batch_size,
        mix=example_mix(args.mix),
        seed=seed,
        edges=edges,
    )


def heldout_losses(
    model: DiffusionGemmaForBlockDiffusion,
    pools: dict[str, TokenizedPool],
    args: argparse.Namespace,
    edges: WordEdges | None = None,
    batches: int = 4,
) -> dict[str, float | dict[str, float]]:
    """Loss on a fixed set of held-out batches (same examples and noise every time), overall and per
    example kind, so a run can be judged on infill, which the editor's fills depend on, not only on the mix."""
    sampler = make_sampler(pools, args, "heldout", seed=12345, edges=edges)
    generator = torch.Generator().manual_seed(12345)
    device = next(model.parameters()).device
    losses: list[float] = []
    kind_sums = torch.zeros(len(CanvasBatch.KINDS), dtype=torch.float64)
    kind_counts = torch.zeros(len(CanvasBatch.KINDS), dtype=torch.float64)
    model.eval()
    with torch.no_grad():
        for _ in range(batches):
            batch = on_device(sampler.next_batch(), device)
            with autocast(args):
                out = diffusion_loss(model, batch, generator)
            losses.append(float(out.loss))
            per_slot = F.cross_entropy(out.free_logits.float(), batch.targets[batch.free], reduction="none").cpu()
            slot_kind = batch.kind[batch.free.nonzero()[:, 0]].cpu()
            kind_sums.index_add_(0, slot_kind, per_slot.double())
            kind_counts += torch.bincount(slot_kind, minlength=len(CanvasBatch.KINDS))
    model.train()
    by_kind = {
        name: round(float(kind_sums[i] / kind_counts[i]), 4)
        for i, name in enumerate(CanvasBatch.KINDS)
        if kind_counts[i] > 0
    }
    return {"heldout_loss": round(float(np.mean(losses)), 4), "heldout_by_kind": by_kind}


def save_checkpoint(path: Path, state: dict) -> None:
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    tmp.replace(path)  # atomic: a crash mid-save never leaves a broken checkpoint


def adopt_from(source: Path, run_dir: Path) -> None:
    """A run started from an exported model must tokenize its pools with that model's tokenizer, and
    carries the model's training lineage so its own export records the whole chain."""
    tok_dir = run_dir / "tokenizer"
    if not (tok_dir / "tokenizer.json").exists():
        AutoTokenizer.from_pretrained(str(source)).save_pretrained(str(tok_dir))
    if (source / LINEAGE_FILE).exists():
        shutil.copyfile(source / LINEAGE_FILE, run_dir / PRIOR_LINEAGE_FILE)


def load_initial_weights(model: DiffusionGemmaForBlockDiffusion, source: Path) -> None:
    """Copy an exported model's weights (safetensors) into a freshly built model of the same shape."""
    with MODEL_BUILDING:
        exported = DiffusionGemmaForBlockDiffusion.from_pretrained(str(source), use_safetensors=True)
    missing, unexpected = model.load_state_dict(exported.state_dict(), strict=False)
    if unexpected or [k for k in missing if not k.endswith("inv_freq")]:
        raise SystemExit(f"{source} does not match the run's model shape (missing {missing}, extra {unexpected})")


def train(args: argparse.Namespace) -> dict:
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.set_float32_matmul_precision("high")  # TF32 for what autocast leaves in float32
    args.run_dir.mkdir(parents=True, exist_ok=True)
    fresh_run = not (args.run_dir / "checkpoint.pt").exists()
    if args.init_from is not None and fresh_run:
        adopt_from(args.init_from, args.run_dir)
    tokenizer, pools = prepare(args)
    shape = shape_from_args(args)
    model = build_model(shape, args.seed)
    if args.init_from is not None and fresh_run:
        load_initial_weights(model, args.init_from)
    cast(nn.Module, model).to(device)
    optimizer = make_optimizer(model, args)
    edges = WordEdges.of(tokenizer) if args.word_aligned else None
    sampler = make_sampler(pools, args, "train", seed=args.seed, edges=edges)
    generator = torch.Generator().manual_seed(args.seed + 1)
    ckpt_path = args.run_dir / "checkpoint.pt"
    step, tokens, elapsed, history = 0, 0, 0.0, []
    rewarm_from: int | None = None
    if ckpt_path.exists() and not args.probe:
        state = torch.load(ckpt_path, weights_only=False, map_location=device)
        # Compare the stored fields only: TextModelShape may gain fields whose defaults keep old shapes.
        if any(asdict(shape).get(k) != v for k, v in state["shape"].items()):
            raise SystemExit(f"{ckpt_path} holds a different model shape: {state['shape']}")
        model.load_state_dict(state["model"])  # a compact checkpoint's bf16 weights are cast back to float32
        sampler.set_state(state["sampler"])
        generator.set_state(state["generator"].cpu())
        step, tokens, elapsed, history = state["step"], state["tokens"], state["elapsed"], state["history"]
        if "optimizer" in state:
            optimizer.load_state_dict(state["optimizer"])
        else:
            rewarm_from = step
            print(f"no optimizer state in {ckpt_path}: fresh Adam moments, the rate warms up again", flush=True)
        print(f"resumed at step {step} ({tokens} canvas tokens, {elapsed / 60:.1f} min)", flush=True)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {n_params / 1e6:.2f}M parameters, shape {asdict(shape)}", flush=True)
    (args.run_dir / "train_args.json").write_text(json.dumps({k: str(v) for k, v in vars(args).items()}, indent=1))

    def checkpoint() -> None:
        save_checkpoint(
            ckpt_path,
            {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "sampler": sampler.state(),
                "generator": generator.get_state(),
                "step": step,
                "tokens": tokens,
                "elapsed": elapsed,
                "history": history,
                "shape": asdict(shape),
            },
        )

    model.train()
    noise = NoiseConfig(router_aux_weight=args.router_aux_weight)
    last_ckpt = time.time()
    window_loss, window_n, window_t0, window_tokens = 0.0, 0, time.time(), 0
    target_steps = args.probe if args.probe else args.max_steps
    session_start = time.time()
    base_elapsed = elapsed
    while step < target_steps:
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, args, rewarm_from)
        batch = on_device(sampler.next_batch(), device)
        with autocast(args):
            out = diffusion_loss(model, batch, generator, noise)
        optimizer.zero_grad(set_to_none=True)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        step += 1
        canvas_tokens = batch.targets.numel()
        tokens += canvas_tokens
        window_tokens += canvas_tokens + batch.prefix.numel()
        window_loss += float(out.loss.detach())
        window_n += 1
        elapsed = base_elapsed + time.time() - session_start
        if step % args.log_every == 0 or step == target_steps:
            dt = time.time() - window_t0
            line = {
                "step": step,
                "loss": round(window_loss / window_n, 4),
                "lr": round(lr_at(step, args, rewarm_from), 6),
                "tok_s": round(window_tokens / dt),
                "canvas_tokens": tokens,
                "min": round(elapsed / 60, 2),
            }
            print(json.dumps(line), flush=True)
            history.append(line)
            window_loss, window_n, window_t0, window_tokens = 0.0, 0, time.time(), 0
        out_of_time = args.max_minutes is not None and elapsed >= args.max_minutes * 60
        out_of_time |= args.stop_at_step is not None and step >= args.stop_at_step
        if not args.probe and (time.time() - last_ckpt >= args.checkpoint_minutes * 60 or out_of_time):
            history.append({"step": step, **heldout_losses(model, pools, args, edges)})
            print(json.dumps(history[-1]), flush=True)
            checkpoint()
            last_ckpt = time.time()
        if out_of_time:
            print("time budget reached", flush=True)
            break
    if args.probe:
        total = time.time() - session_start
        print(
            json.dumps(
                {
                    "probe_steps": step,
                    "s_per_step": round(total / step, 3),
                    "params_M": round(n_params / 1e6, 2),
                }
            ),
            flush=True,
        )
        return {"step": step, "s_per_step": total / max(1, step), "parameters": n_params}
    if step >= target_steps:
        history.append({"step": step, **heldout_losses(model, pools, args, edges)})
        print(json.dumps(history[-1]), flush=True)
        checkpoint()
    print("done", flush=True)
    return {"step": step, "tokens": tokens, "history": history}


def main(argv: list[str] | None = None) -> None:
    train(parse_args(argv))


if __name__ == "__main__":
    main()

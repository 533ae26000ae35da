"""The 26B-A4B at full size on this machine's CPU: write, stream-load at 4 bit, quantize once, reload, run.

    nice -n 19 python bench/full_size.py --layers 2      # a scaled-down check first (a few minutes)
    nice -n 19 python bench/full_size.py                 # all 30 layers: ~50 GB of bf16 on disk
    python bench/full_size.py --keep --workdir DIR       # keep the checkpoint and the 4-bit copy
    python bench/full_size.py --checkpoint DIR           # reuse a checkpoint written before (kept)

Steps, each load in a fresh process so its peak memory is its own:

1. write a random-weight checkpoint with the released config (``doctor.diffusiongemma_26b_a4b_config``;
   ``--layers`` keeps the first N layers), sharded like Google's (5 GB shards, an index), one tensor in
   memory at a time;
2. ``load(precision="4bit", device="cpu")``: the real streaming loader quantizes it and writes the 4-bit
   copy (quantize once);
3. ``load`` again: the copy is read, nothing is quantized; then ``--passes`` denoising passes of a
   ``--canvas``-token fill after ``--context`` tokens of context.

Prints a JSON summary (also written to ``--json``): peak resident memory of each load (VmHWM, which
counts every resident page, and the largest anonymous set the loader sampled), load times, the copy's
size, ms per pass and the doctor's estimate beside the measured bytes. The scratch folder is deleted
afterwards unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from model.checkpoint import doctor  # noqa: E402
from model.checkpoint.safetensors_io import (  # noqa: E402
    ShardWriter,
    TensorPlan,
    plan_shards,
    shard_names,
    write_index,
)
from model.checkpoint.streaming import build_skeleton  # noqa: E402
from model.checkpoint.tiny import SAMPLE_TEXT  # noqa: E402
from model.checkpoint.tokenization import train_bpe_tokenizer  # noqa: E402

SHARD_BYTES = 5 * 10**9  # the hub's usual shard size
GIB = 2**30


def bench_config(layers: int, canvas: int) -> Any:
    """The released config (``layers`` < 30 keeps the first layers). ``canvas`` sets how many tokens a
    pass denoises; it changes no weight."""
    return doctor.diffusiongemma_26b_a4b_config(canvas_length=canvas, num_hidden_layers=layers)


def checkpoint_plan(config: Any) -> list[TensorPlan]:
    """One name per weight as save_pretrained writes them (the decoder's side of each tie), in bf16."""
    model = build_skeleton(config)
    by_object: dict[int, list[str]] = {}
    shapes: dict[int, tuple[int, ...]] = {}
    for name, param in model.named_parameters(remove_duplicate=False):
        by_object.setdefault(id(param), []).append(name)
        shapes[id(param)] = tuple(param.shape)
    plans = []
    for key, names in by_object.items():
        name = next((n for n in names if n.startswith("model.decoder.")), names[0])
        plans.append(TensorPlan(name, shapes[key], torch.bfloat16))
    persistent = set(model.state_dict().keys())
    for name, buffer in model.named_buffers():
        if name in persistent:
            plans.append(TensorPlan(name, tuple(buffer.shape), torch.bfloat16))
    return plans


def write_checkpoint(folder: Path, layers: int, canvas: int, seed: int = 0) -> dict[str, Any]:
    started = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    config = bench_config(layers, canvas)
    config.save_pretrained(folder)
    train_bpe_tokenizer([SAMPLE_TEXT] * 4, 384, chat_template=True).save_pretrained(folder)
    plans = checkpoint_plan(config)
    shards = plan_shards(plans, SHARD_BYTES)
    names = shard_names(len(shards))
    generator = torch.Generator().manual_seed(seed)
    for shard, name in zip(shards, names, strict=True):
        with ShardWriter(folder / name, shard) as writer:
            for plan in shard:
                tensor = torch.empty(plan.shape, dtype=plan.dtype)
                if len(plan.shape) >= 2:
                    tensor.normal_(0.0, 0.02, generator=generator)
                else:
                    tensor.fill_(1.0)  # norms and layer scalars: a model that neither explodes nor vanishes
                writer.write(plan.name, tensor)
                del tensor
        print(f"  wrote {name}", file=sys.stderr, flush=True)
    if len(shards) > 1:
        write_index(folder, shards, names)
    size = sum(p.stat().st_size for p in folder.glob("*.safetensors"))
    return {"seconds": round(time.perf_counter() - started, 1), "bytes": size, "shards": len(shards)}


def vm_hwm_bytes() -> int | None:
    """Peak resident set of this process (every resident page: anonymous and file-backed)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def child_load(
    checkpoint: Path, copies: Path, passes: int, context: int, canvas: int, big_canvas: int
) -> dict[str, Any]:
    """One load in this (fresh) process; with ``passes`` also the denoising passes."""
    from model import load
    from model.checkpoint.quantization import module_bytes

    started = time.perf_counter()
    loaded = load(checkpoint, precision="4bit", device="cpu", quantized_copies=copies)
    seconds = time.perf_counter() - started
    stats = getattr(loaded.model, "streaming_stats", None)
    result: dict[str, Any] = {
        "seconds": round(seconds, 1),
        "read_from": str(getattr(loaded.model, "redraft_weights_folder", checkpoint)),
        "copy_write_seconds": getattr(loaded.model, "redraft_copy_write_seconds", None),
        "peak_rss_bytes": vm_hwm_bytes(),
        "peak_rss_anon_sampled_bytes": stats.peak_rss_anon_bytes if stats else None,
        "model_bytes": module_bytes(loaded.model),
        "threads": torch.get_num_threads(),
    }
    if passes:
        result["passes"] = run_passes(loaded, passes, context, canvas)
        if big_canvas:
            # The canvas is a sampling setting, not a weight: the released model's own 256 is measured
            # on the same loaded model (fewer passes: each is about 8 times the work).
            loaded.model.config.canvas_length = big_canvas
            result["passes_big_canvas"] = run_passes(loaded, max(1, passes // 2), context, big_canvas)
        result["peak_rss_after_passes_bytes"] = vm_hwm_bytes()
    return result


def run_passes(loaded: Any, passes: int, context: int, canvas: int) -> dict[str, Any]:
    """``passes`` denoising passes of a ``canvas``-token fill after ``context`` tokens of context."""
    from model import DenoiseOptions, EditRequest, Engine

    engine = Engine(loaded)
    words = SAMPLE_TEXT.split()
    prefix_words: list[str] = []
    while len(engine.encode(" ".join(prefix_words))) < context:
        prefix_words.append(words[len(prefix_words) % len(words)])
    request = EditRequest(
        prefix=" ".join(prefix_words),
        suffix="",
        mode="fill",
        max_new_tokens=canvas,
        seed=0,
        options=DenoiseOptions(max_denoising_steps=passes, polish_rounds=0),
    )
    started = time.perf_counter()
    run = engine.run(request)
    return {
        "prompt_tokens": run.prompt_tokens,
        "canvas": canvas,
        "count": run.passes,
        "ms_per_pass": [round(ms) for ms in run.pass_ms],
        "edit_seconds_incl_prefill": round(time.perf_counter() - started, 1),
    }


def run_child(args: argparse.Namespace, checkpoint: Path, copies: Path, passes: int) -> dict[str, Any]:
    command = [
        sys.executable, __file__, "--child", str(checkpoint), "--copies", str(copies), "--passes", str(passes),
        "--context", str(args.context), "--canvas", str(args.canvas), "--threads", str(args.threads),
        "--big-canvas", str(args.big_canvas),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    sys.stderr.write(done.stderr[-4000:])
    if done.returncode != 0:
        return {"failed": done.returncode, "stderr_tail": done.stderr[-2000:]}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def doctor_figures(layers: int, canvas: int, context: int) -> dict[str, Any]:
    config = bench_config(layers, canvas)
    footprint = doctor.estimate_footprint(config, "4bit", context)
    return {
        "weights_bytes": footprint.weights_bytes,
        "total_bytes_at_context": footprint.total_bytes,
        "context_tokens": context,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=30, help="keep the first N of the 30 layers")
    parser.add_argument("--workdir", type=Path, default=None, help="scratch folder (default: a new temp folder)")
    parser.add_argument("--checkpoint", type=Path, default=None, help="reuse this checkpoint (never deleted)")
    parser.add_argument("--keep", action="store_true", help="keep the checkpoint and the copy")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--context", type=int, default=256)
    parser.add_argument("--canvas", type=int, default=32)
    parser.add_argument("--big-canvas", type=int, default=256, help="also time passes at this canvas (0: not)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--copies", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.child is not None:
        assert args.copies is not None
        print(json.dumps(child_load(args.child, args.copies, args.passes, args.context, args.canvas, args.big_canvas)))
        return

    work = args.workdir or Path(tempfile.mkdtemp(prefix="redraft-full-size-"))
    work.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {
        "machine": f"{os.cpu_count()} CPUs, {doctor.cpu_device_info().total_bytes / GIB:.1f} GiB RAM, no GPU used",
        "layers": args.layers,
    }
    try:
        checkpoint = args.checkpoint
        if checkpoint is None:
            checkpoint = work / "checkpoint"
            summary["write"] = write_checkpoint(checkpoint, args.layers, args.canvas)
            print(json.dumps({"write": summary["write"]}), file=sys.stderr, flush=True)
        copies = work / "quantized"
        summary["first_load"] = run_child(args, checkpoint, copies, passes=0)
        print(json.dumps({"first_load": summary["first_load"]}), file=sys.stderr, flush=True)
        copy_bytes = sum(p.stat().st_size for p in copies.rglob("*.safetensors"))
        summary["copy_bytes"] = copy_bytes
        summary["reload"] = run_child(args, checkpoint, copies, passes=args.passes)
        summary["doctor_estimate"] = doctor_figures(args.layers, args.canvas, args.context + args.canvas)
    finally:
        if not args.keep:
            if args.checkpoint is None:
                shutil.rmtree(work / "checkpoint", ignore_errors=True)
            shutil.rmtree(work / "quantized", ignore_errors=True)
            if args.workdir is None:
                shutil.rmtree(work, ignore_errors=True)
    text = json.dumps(summary, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

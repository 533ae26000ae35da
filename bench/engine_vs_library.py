"""The engine against the library: one continuation, same model, prompt, seed and sampler settings.

Three sides, interleaved seed by seed: Redraft's engine as the editor runs it, the engine with
``library_exact=True`` (each pass's statistics and draws made with the very operations transformers uses),
and transformers' ``DiffusionGemmaForBlockDiffusion.generate``. The exact engine and ``generate()`` make the
same tokens for the same seed (tests/test_engine.py; "same tokens" below checks it again), so they time the
same work done two ways; the everyday engine runs the same sampler in other floats, so its tokens differ
and its passes may too, and it is compared per pass. Figures: ms per pass, whole-edit time (prefill
included) and the ratios (engine / library: below 1 means the engine is faster). Device-agnostic.

    python bench/engine_vs_library.py --tiny                    # a tiny random model (seconds, CPU)
    python bench/engine_vs_library.py --mid --device cuda       # a mid-size random model (GPU runbook)
    python bench/engine_vs_library.py --model PATH --json out.json
    python bench/engine_vs_library.py --breakdown               # also: where a pass of each goes (profiled)

Passes are counted by a hook on the decoder (one call per pass, the same for every side), and each
figure is the median over ``--repeats`` seeds after one warm-up run of each.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import AutoTokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from model import DenoiseOptions, EditRequest, Engine, LoadedModel, load  # noqa: E402
from model.checkpoint.architecture import TextModelShape, build_config  # noqa: E402
from model.checkpoint.building import new_model
from model.checkpoint.tiny import build_tiny_checkpoint  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUILTIN_TOKENIZER = ROOT / "resources" / "models" / "redraft-tiny"
# Ends inside a sentence: after a sentence's end the editor continues the paragraph with a space of its own
# (model/edit/shape.py), a different request from generate()'s, and the tokens would no longer be compared.
PROMPT = (
    "The keeper climbed the stairs of the lighthouse every evening and counted the steps as his father had "
    "done before him, while the sea turned grey and the gulls went quiet over the harbour, and"
)

# Mid-size: a scaled 26B-A4B structure (MoE beside a dense MLP, sliding and full layers) of ~0.27B
# parameters with the built-in model's 8k vocabulary and the real model's 256-token canvas, big enough
# that a GPU's kernels, not Python, set the pace, small enough to build from random weights in seconds.
MID_SHAPE = dict(
    hidden_size=1024,
    num_hidden_layers=12,
    num_attention_heads=8,
    num_key_value_heads=2,
    head_dim=128,
    intermediate_size=2048,
    num_experts=16,
    top_k_experts=4,
    moe_intermediate_size=256,
    sliding_window=512,
    canvas_length=256,
    full_attention_every=6,
)


def build_mid_checkpoint(folder: Path, seed: int = 0) -> Path:
    """A random-weight mid-size checkpoint (config, safetensors, the built-in model's tokenizer)."""
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(str(BUILTIN_TOKENIZER))
    shape = TextModelShape(vocab_size=len(tokenizer), **MID_SHAPE)  # type: ignore[arg-type]
    torch.manual_seed(seed)
    model = new_model(build_config(shape))
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


@dataclass(frozen=True)
class Timing:
    passes: float
    ms_per_pass: float
    edit_ms: float


@dataclass(frozen=True)
class Comparison:
    model: str
    device: str
    parameters: int
    prompt_tokens: int
    new_tokens: int
    candidates: int  # continuations in one batch (the editor's drafts)
    max_denoising_steps: int
    repeats: int
    engine: Timing
    exact_engine: Timing  # Engine(library_exact=True)
    library: Timing
    same_tokens: bool  # the exact engine and generate() made identical tokens on every seed (the same work)

    @property
    def ratio(self) -> float:
        """Engine ms per pass / library ms per pass."""
        return self.engine.ms_per_pass / self.library.ms_per_pass

    @property
    def edit_ratio(self) -> float:
        return self.engine.edit_ms / self.library.edit_ms

    @property
    def exact_ratio(self) -> float:
        """The exact engine's ms per pass / the library's."""
        return self.exact_engine.ms_per_pass / self.library.ms_per_pass

    def as_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "ratio_ms_per_pass": round(self.ratio, 4),
            "ratio_edit": round(self.edit_ratio, 4),
            "exact_ratio_ms_per_pass": round(self.exact_ratio, 4),
        }


@contextmanager
def counted_passes(model: torch.nn.Module) -> Iterator[list[int]]:
    """Counts decoder passes: calls of the decoder's self-conditioning block, once per pass in both the
    engine and generate(). Not a hook on the decoder or the top module: the engine's lean pass calls
    their parts directly and would take the slower ``model(...)`` path for a watched model
    (model/runtime/forward.py), while generate() calls the bound ``forward``, past any hook on the top module."""
    count = [0]
    block = model.get_submodule("model.decoder.self_conditioning")

    def hook(_module: torch.nn.Module, _args: tuple[Any, ...], _kwargs: dict[str, Any]) -> None:
        count[0] += 1

    handle = block.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        yield count
    finally:
        handle.remove()


def _timed(device: torch.device, run: Callable[[], Any]) -> tuple[Any, float]:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    out = run()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return out, (time.perf_counter() - start) * 1000


class Continuation:
    """One seeded continuation of ``prompt`` run any way: Redraft's engine with the published sampler (as the
    editor runs it, or library-exact), or ``generate()``; each returns the new tokens and the decoder passes
    it made."""

    def __init__(self, loaded: LoadedModel, prompt: str, new_tokens: int, steps: int, candidates: int = 1) -> None:
        self.engine = Engine(loaded)
        self.exact_engine = Engine(loaded, library_exact=True)
        self.model = loaded.model
        self.new_tokens, self.steps = new_tokens, steps
        self.ids = ([self.engine.bos_id] if self.engine.bos_id is not None else []) + self.engine.encode(prompt)
        self.request = EditRequest(
            prefix=prompt, mode="fill", max_new_tokens=new_tokens, candidates=candidates,
            # The published sampler, as generate() runs it: no left-to-right bias, no polish rounds, one bound.
            options=DenoiseOptions(
                max_denoising_steps=steps, left_to_right_bias=0.0, polish_rounds=0, wide_entropy_bound=0.0
            ),
        )  # fmt: skip
        self.input_ids = torch.tensor([self.ids] * candidates, device=loaded.device)

    def by_engine(self, seed: int, exact: bool = False) -> tuple[list[list[int]], int]:
        with counted_passes(self.model) as count:
            result = (self.exact_engine if exact else self.engine).run(self.request.with_seed(seed))
        return [list(tokens) for tokens in result.raw_tokens], count[0]

    def by_library(self, seed: int) -> tuple[list[list[int]], int]:
        torch.manual_seed(seed)
        with torch.inference_mode(), counted_passes(self.model) as count:
            out = self.model.generate(self.input_ids, max_new_tokens=self.new_tokens, max_denoising_steps=self.steps)
        return out.sequences[:, len(self.ids) :].tolist(), count[0]


def compare(
    loaded: LoadedModel, prompt: str, new_tokens: int, steps: int, repeats: int, name: str = "", candidates: int = 1
) -> Comparison:
    """Time ``repeats`` seeded continuations each way (after one warm-up of each) and compare."""
    both = Continuation(loaded, prompt, new_tokens, steps, candidates)
    engine, model, device, ids = both.engine, loaded.model, loaded.device, both.ids

    sides: dict[str, Callable[[int], tuple[list[list[int]], int]]] = {
        "engine": both.by_engine,
        "exact engine": lambda seed: both.by_engine(seed, exact=True),
        "library": both.by_library,
    }
    for run in sides.values():
        run(0)  # warm-up: kernels, allocator, the engine's vocabulary masks, the exact draw's check
    rows: dict[str, list[tuple[int, float]]] = {side: [] for side in sides}
    same = True
    for seed in range(1, repeats + 1):
        tokens: dict[str, list[list[int]]] = {}
        for side, run in sides.items():
            (tokens[side], passes), ms = _timed(device, lambda: run(seed))  # noqa: B023  called at once
            rows[side].append((passes, ms))
        for ours, theirs in zip(tokens["exact engine"], tokens["library"], strict=True):
            # generate() pads everything after the first end-of-text; the engine stops reading there.
            end = ours.index(engine.eos_id) + 1 if engine.eos_id in ours else len(ours)
            same &= ours[:end] == theirs[:end]

    def timing(runs: list[tuple[int, float]]) -> Timing:
        return Timing(
            passes=statistics.median(p for p, _ in runs),
            ms_per_pass=round(statistics.median(ms / max(1, p) for p, ms in runs), 3),
            edit_ms=round(statistics.median(ms for _, ms in runs), 2),
        )

    return Comparison(
        model=name or loaded.name,
        device=loaded.describe_device(),
        parameters=sum(p.numel() for p in model.parameters()),
        prompt_tokens=len(ids),
        new_tokens=new_tokens,
        candidates=candidates,
        max_denoising_steps=steps,
        repeats=repeats,
        engine=timing(rows["engine"]),
        exact_engine=timing(rows["exact engine"]),
        library=timing(rows["library"]),
        same_tokens=same,
    )


# What a pass's CPU time is spent on, by aten operation (self time): the matrix products both must do, the
# random draws, the vocabulary-sized elementwise work and reductions (an input whose last dimension is the
# vocabulary), and everything else (the layers' small operations and dispatch).
MATRIX_OPS = frozenset({
    "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::_grouped_mm",
    "aten::_scaled_dot_product_flash_attention_for_cpu",
})  # fmt: skip
RANDOM_OPS = frozenset({"aten::random_", "aten::multinomial", "aten::exponential_", "aten::uniform_"})


Breakdown = dict[str, tuple[dict[str, float], int]]  # per side: ms by kind, passes


def breakdown(run: Callable[[], Any], vocab_size: int) -> tuple[dict[str, float], int]:
    """Profiled self CPU milliseconds of one run, by kind (see MATRIX_OPS), and the passes it made."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        passes = run()
    kinds = dict.fromkeys(("matrix products", "random draws", "vocabulary-sized other", "the rest"), 0.0)
    for event in prof.key_averages(group_by_input_shape=True):
        if event.key in MATRIX_OPS:
            kind = "matrix products"
        elif event.key in RANDOM_OPS:
            kind = "random draws"
        elif any(shape and shape[-1] == vocab_size for shape in event.input_shapes if isinstance(shape, list)):
            kind = "vocabulary-sized other"
        else:
            kind = "the rest"
        kinds[kind] += event.self_cpu_time_total / 1000
    return kinds, passes


def describe_breakdown(rows: Breakdown) -> str:
    """Per pass, each kind's profiled ms for the engine and the library (profiling inflates small operations)."""
    kinds = list(next(iter(rows.values()))[0])
    lines = [f"where a pass goes (profiled, ms per pass): {'':>4}" + "".join(f"{name:>10}" for name in rows)]
    for kind in [*kinds, "total"]:
        figures = []
        for ms, passes in rows.values():
            figures.append((sum(ms.values()) if kind == "total" else ms[kind]) / max(1, passes))
        lines.append(f"  {kind:<44}" + "".join(f"{value:>10.2f}" for value in figures))
    return "\n".join(lines)


def profile_both(loaded: LoadedModel, prompt: str, new_tokens: int, steps: int) -> Breakdown:
    """One seeded run each way under the profiler, after a warm-up of each: :func:`breakdown` per side."""
    both = Continuation(loaded, prompt, new_tokens, steps)
    vocab = loaded.model.config.get_text_config().vocab_size
    both.by_engine(1), both.by_engine(1, exact=True), both.by_library(1)
    return {
        "engine": breakdown(lambda: both.by_engine(1)[1], vocab),
        "exact": breakdown(lambda: both.by_engine(1, exact=True)[1], vocab),
        "library": breakdown(lambda: both.by_library(1)[1], vocab),
    }


def describe(result: Comparison) -> str:
    return "\n".join(
        [
            f"model {result.model} ({result.parameters / 1e6:.1f}M parameters) on {result.device}; prompt "
            f"{result.prompt_tokens} tokens, {result.new_tokens} new, at most {result.max_denoising_steps} passes "
            f"per block, {result.candidates} candidate(s), median of {result.repeats}",
            f"{'':>12} {'passes':>7} {'ms/pass':>9} {'edit ms':>9}",
            *(
                f"{name:>12} {t.passes:>7.0f} {t.ms_per_pass:>9.2f} {t.edit_ms:>9.1f}"
                for name, t in (
                    ("engine", result.engine), ("exact engine", result.exact_engine), ("library", result.library)
                )
            ),
            f"engine / library: {result.ratio:.3f} per pass, {result.edit_ratio:.3f} per edit; "
            f"exact engine / library: {result.exact_ratio:.3f} per pass, "
            f"same tokens: {'yes' if result.same_tokens else 'NO'}",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--model", default=None, help="a checkpoint folder (default: the built-in model)")
    which.add_argument("--tiny", action="store_true", help="a tiny random model")
    which.add_argument("--mid", action="store_true", help="a mid-size random model (~0.27B, canvas 256)")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--new-tokens", type=int, default=None, help="default: one canvas")
    parser.add_argument("--steps", type=int, default=32, help="max denoising passes per block")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--candidates", type=int, default=1, help="continuations in one batch (the editor: 4)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--breakdown", action="store_true", help="also profile one run each: where a pass goes")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    spec: str | Path | None = args.model
    name = ""
    if args.tiny or args.mid:
        folder = Path(tempfile.mkdtemp(prefix="redraft-evl-"))
        spec = build_tiny_checkpoint(folder / "tiny") if args.tiny else build_mid_checkpoint(folder / "mid")
        name = "tiny (random)" if args.tiny else "mid (random)"
    loaded = load(spec, device=args.device, precision="bf16" if args.mid and args.device != "cpu" else "auto")
    new_tokens = args.new_tokens or loaded.canvas_length
    result = compare(loaded, PROMPT, new_tokens, args.steps, args.repeats, name, args.candidates)
    print(describe(result))
    figures = result.as_dict()
    if args.breakdown:
        rows = profile_both(loaded, PROMPT, new_tokens, args.steps)
        print(describe_breakdown(rows))
        figures["breakdown_ms_per_pass"] = {
            side: {kind: round(ms / max(1, passes), 3) for kind, ms in kinds.items()}
            for side, (kinds, passes) in rows.items()
        }
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

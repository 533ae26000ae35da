"""CPU speed of the transplant (#47) against today's built-in model, in the same run.

    python bench/transplant_speed.py --model runs/transplant            # the candidate folder
    python bench/transplant_speed.py --model runs/gpu/adapt/model --json bench/results/transplant_speed.json

For each model, at fp32 and with int8 dynamic quantization of the text layers' linear layers (torch's
``quantize_dynamic``; the tied head and embedding stay fp32, the sampler reads their logits), and for 1 and 4
candidates: a fill of 64 slots after about 256 tokens of context, through the engine (``Engine.edit``, the
one sampler loop). It prints ms per pass (median over the measured passes, the prefix's encoding excluded),
the prefix's encoding, and the engine-side time to the first readable draft (the first pass whose leading
draft has half its slots accepted, as ``bench/first_draft.py`` counts it in the editor, less the painting).
Passes are capped (``--passes``) so a slow candidate is measured in minutes; the figures are per pass.
On a shared machine the figures move with the load: say so beside them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings
from pathlib import Path
from typing import Any

import torch

from model import DenoiseOptions, EditRequest, Engine, load

WORDS = (
    "the keeper climbed the stairs of the lighthouse every evening and counted the steps as his "
    "father had done before him while the sea turned grey and the gulls went quiet over the harbour"
).split()


def context(tokenizer: Any, tokens: int) -> str:
    """Prose of about ``tokens`` tokens in ``tokenizer``'s vocabulary."""
    words: list[str] = []
    while len(tokenizer(" ".join(words), add_special_tokens=False)["input_ids"]) < tokens:
        words += WORDS[: max(1, (tokens - len(words)) // 4)]
    return " ".join(words)


def quantize_layers(model: torch.nn.Module) -> None:
    """int8 dynamic quantization of every linear layer but the tied head (in place)."""
    from torch.ao.quantization import quantize_dynamic

    body: Any = model.model  # type: ignore[union-attr]
    with warnings.catch_warnings():  # torch points eager quantization at torchao; it still runs as documented
        warnings.simplefilter("ignore")
        for name in ("encoder", "decoder"):
            setattr(body, name, quantize_dynamic(getattr(body, name), {torch.nn.Linear}, dtype=torch.qint8))


def measure(spec: str | None, int8: bool, candidates: int, tokens: int, passes: int) -> dict[str, Any]:
    loaded = load(spec, device="cpu")
    if int8:
        quantize_layers(loaded.model)
    engine = Engine(loaded)
    prefix = context(loaded.tokenizer, tokens)
    options = DenoiseOptions(max_denoising_steps=passes, polish_rounds=0)
    request = EditRequest(prefix=prefix, suffix="", mode="fill", max_new_tokens=64, candidates=candidates,
                          options=options)  # fmt: skip
    engine.run(EditRequest(prefix="The", suffix="", mode="fill", max_new_tokens=8, seed=0,
                           options=DenoiseOptions(max_denoising_steps=1, polish_rounds=0)))  # warm-up  # fmt: skip
    started = time.perf_counter()
    first_readable = None
    pass_ms: list[float] = []
    for step in engine.edit(request.with_seed(1)):
        pass_ms.append(step.ms)
        lead = max(range(candidates), key=lambda c: sum(step.accepted[c]))
        if first_readable is None and sum(step.accepted[lead]) * 2 >= len(step.accepted[lead]):
            first_readable = (time.perf_counter() - started) * 1000
    total = (time.perf_counter() - started) * 1000
    return {
        "model": loaded.name,
        "precision": "int8 dynamic (text layers)" if int8 else "fp32",
        "candidates": candidates,
        "context_tokens": len(loaded.tokenizer(prefix, add_special_tokens=False)["input_ids"]),
        "passes": len(pass_ms),
        "ms_per_pass": round(statistics.median(pass_ms), 1),
        "prefix_ms": round(total - sum(pass_ms), 1),
        "first_readable_ms": None if first_readable is None else round(first_readable),
        "parameters": sum(p.numel() for p in loaded.model.parameters()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="the candidate (a transplant or adapted folder)")
    parser.add_argument("--baseline", default=None, help="today's model (default: the built-in one)")
    parser.add_argument("--context-tokens", type=int, default=256)
    parser.add_argument("--candidates", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--passes", type=int, default=6, help="passes measured per edit (the cap)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    rows = []
    print(f"{torch.get_num_threads()} threads; {'model':>24} {'precision':>26} {'cand':>4} {'ctx':>4} "
          f"{'ms/pass':>8} {'prefix ms':>9} {'readable ms':>11}")  # fmt: skip
    for spec in (args.baseline, args.model):
        for int8 in (False, True):
            for candidates in args.candidates:
                row = measure(spec, int8, candidates, args.context_tokens, args.passes)
                rows.append(row)
                print(f"{row['model']:>35} {row['precision']:>26} {candidates:>4} {row['context_tokens']:>4} "
                      f"{row['ms_per_pass']:>8.1f} {row['prefix_ms']:>9.0f} {row['first_readable_ms']!s:>11}",
                      flush=True)  # fmt: skip
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"threads": torch.get_num_threads(), "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()

"""How fast each size of the ladder would run in the editor, here on CPU: random weights in the shipped
model's shape of folder (tokenizer and sampler files too), loaded by ``model.load`` and timed with
bench/engine_speed.py's method (a warm-up edit, then the median ms per pass of a few seeded fills, four
candidates in a batch as the editor runs them). A size the GPU can train is only worth shipping if a
writer's laptop develops its text quickly enough.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, cast

from model.checkpoint.building import new_model
from runbook.common import SHIPPED, say
from runbook.sizing import LADDER, Candidate, candidate_parameters

WORDS = (
    "the keeper climbed the stairs of the lighthouse every evening and counted the steps as his "
    "father had done before him while the sea turned grey and the gulls went quiet over the harbour"
).split()


# Random weights never settle, so each edit would run every pass the sampler allows (48 and 6 polish rounds):
# a fixed 12 passes time the same ms per pass in a quarter of the time.
PASSES = 12


def random_model_folder(candidate: Candidate, folder: Path, vocab: int, canvas: int = 64) -> Path:
    """A model folder of ``candidate``'s shape with random weights (bf16, as take-back writes them)."""
    import torch
    from torch import nn

    from model.checkpoint.architecture import build_config
    from model.training.train import parse_args, shape_from_args

    args = parse_args(["--run-dir", "unused", "--vocab-size", str(vocab), "--canvas", str(canvas), *candidate.flags()])
    torch.manual_seed(0)
    model = new_model(build_config(shape_from_args(args)))
    cast(nn.Module, model).to(torch.bfloat16)  # transformers types .to as wanting self again
    model.save_pretrained(str(folder), safe_serialization=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json", "redraft_sampler.json"):
        if (SHIPPED / name).exists():
            shutil.copyfile(SHIPPED / name, folder / name)
    return folder


def time_passes(folder: Path, prefix_words: int, candidates: int, repeats: int) -> dict[str, Any]:
    from model import DenoiseOptions, EditRequest, Engine, load

    loaded = load(folder, device="cpu")
    engine = Engine(loaded)
    prefix = " ".join(WORDS[i % len(WORDS)] for i in range(prefix_words)) or "The"
    request = EditRequest(prefix=prefix, suffix=" " + " ".join(WORDS[:40]), mode="fill",
                          max_new_tokens=loaded.canvas_length // 2, candidates=candidates,
                          options=DenoiseOptions(max_denoising_steps=PASSES, polish_rounds=0))  # fmt: skip
    engine.run(request.with_seed(0))  # warm-up
    runs = [engine.run(request.with_seed(seed)) for seed in range(1, repeats + 1)]
    ms = round(statistics.median(r.ms_per_pass for r in runs), 1)
    passes = statistics.median(r.passes for r in runs)
    return {"prefix_tokens": runs[0].prompt_tokens, "ms_per_pass": ms, "passes": passes}


def cpu_speed(
    ladder: tuple[Candidate, ...] = LADDER, prefix_words: tuple[int, ...] = (0, 200), candidates: int = 4,
    repeats: int = 2, threads: int | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """One row per size: parameters, bf16 folder bytes, and ms per pass at each prefix length."""
    import torch

    if threads:
        torch.set_num_threads(threads)
    from transformers import AutoTokenizer

    vocab = len(AutoTokenizer.from_pretrained(str(SHIPPED)))
    rows = []
    for candidate in ladder:
        with tempfile.TemporaryDirectory(prefix="redraft-cpu-speed-") as tmp:
            started = time.perf_counter()
            folder = random_model_folder(candidate, Path(tmp) / candidate.name, vocab)
            row: dict[str, Any] = {"name": candidate.name, "parameters": candidate_parameters(candidate, vocab, 64),
                                   "folder_bytes": sum(p.stat().st_size for p in folder.iterdir()),
                                   "threads": torch.get_num_threads(), "candidates": candidates}  # fmt: skip
            row["passes"] = [time_passes(folder, words, candidates, repeats) for words in prefix_words]
            row["seconds"] = round(time.perf_counter() - started, 1)
        say(f"{row['name']}: {row['parameters'] / 1e6:.1f}M, " + ", ".join(
            f"{p['ms_per_pass']:.0f} ms/pass at {p['prefix_tokens']} prefix tokens" for p in row["passes"]))
        rows.append(row)
    return rows


def cpu_speed_table(rows: list[dict[str, Any]]) -> list[str]:
    """The README's table: one line per size."""
    prefixes = " / ".join(str(p["prefix_tokens"]) for p in rows[0]["passes"])
    lines = [f"| size | parameters | bf16 folder | ms per pass at prefix {prefixes} tokens ({rows[0]['candidates']} "
             f"candidates, {rows[0]['threads']} threads) |", "| --- | --- | --- | --- |"]  # fmt: skip
    for row in rows:
        passes = " / ".join(f"{p['ms_per_pass']:.0f}" for p in row["passes"])
        size = f"{row['parameters'] / 1e6:.1f}M | {row['folder_bytes'] / 1e6:.0f} MB"
        lines.append(f"| {row['name']} | {size} | {passes} |")
    return lines

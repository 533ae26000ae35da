"""Step engine-vs-library: Redraft's engine against transformers' own ``generate`` on one checkpoint
(``bench/engine_vs_library.py`` does the comparing), on the GPU in bf16 and float32.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from runbook.common import Report, elapsed_s, say
from runbook.wheels import library_versions


def step_engine_vs_library(out: Path, dry_run: bool, budget_s: float) -> dict[str, Any]:
    import torch
    from engine_vs_library import build_mid_checkpoint, compare, describe

    from model import load
    from model.checkpoint.tiny import build_tiny_checkpoint

    report = Report(out, "engine-vs-library")
    report["versions"] = library_versions()
    cuda = torch.cuda.is_available() and not dry_run
    with tempfile.TemporaryDirectory() as tmp:
        if dry_run:
            folder, name = build_tiny_checkpoint(Path(tmp) / "tiny"), "tiny (random)"
        else:
            folder, name = build_mid_checkpoint(Path(tmp) / "mid"), "mid (random, ~0.27B)"
        runs = [("cuda", "bf16")] if cuda else [("cpu", "fp32")]
        if cuda:
            runs.append(("cuda", "fp32"))
        for device, precision in runs:
            if elapsed_s() > budget_s * 0.6:
                report.append("skipped", f"{device} {precision}: out of time")
                continue
            loaded = load(folder, device=device, precision=precision)
            result = compare(loaded, _evl_prompt(), loaded.canvas_length, 32 if not dry_run else 8,
                             3 if not dry_run else 1, f"{name} {precision}")  # fmt: skip
            say(describe(result))
            report.append("comparisons", result.as_dict())
            del loaded
    return report.data


def _evl_prompt() -> str:
    from engine_vs_library import PROMPT

    return PROMPT

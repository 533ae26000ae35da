"""The session plan: the device calls in order (command, carry, time budget, what to do with what comes back),
as README.md's "On a lent GPU" states it, and the bytes each call carries.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runbook.common import CALL_LIMIT_S, CARRY, CARRY_LIMIT, MIB, ROOT
from runbook.transfer import folder_bytes, tree_bytes


@dataclass(frozen=True)
class DeviceCall:
    step: str
    carry: tuple[str, ...]
    budget_s: int  # the step keeps to this (the tool's own limit is 600 s); the machine's start not included
    then: str  # what to do here with what came back

    @property
    def minutes(self) -> float:
        return round(self.budget_s / 60 * 2) / 2

    @property
    def command(self) -> str:
        return f"PYTHONUNBUFFERED=1 python3 bench/gpu_runbook.py {self.step}"

    def invocation(self) -> dict[str, Any]:
        return {"command": self.command, "carry": list(self.carry), "timeout_s": CALL_LIMIT_S}


CALLS = (
    DeviceCall("bench26b", (".gpu-carry/wheels",), 420,
               "`python bench/gpu_runbook.py readme-table FILES_AT/bench26b.json --write`, then commit the README "
               "table with bench26b.json under runs/gpu/ (not committed) quoted in the message"),
    DeviceCall("engine-vs-library", (".gpu-carry/wheels",), 150,
               "note `ratio_ms_per_pass` from engine-vs-library.json in the README's Benchmarks section"),
    DeviceCall("train-a", (".gpu-carry/wheels", ".gpu-carry/corpus-a"), 510,
               "`python bench/gpu_runbook.py take-back train-a FILES_AT` (seconds), then train-b at once: a machine "
               "still warm keeps the full checkpoint and its books and takes two new shards"),
    DeviceCall("train-b", (".gpu-carry/wheels", ".gpu-carry/corpus-b"), 510,
               "`python bench/gpu_runbook.py take-back train-b FILES_AT` (the model into runs/gpu/model, bf16), "
               "then the CPU checks below"),
)  # fmt: skip
# train-b on a machine that went back after train-a: the checkpoint train-a returned (int8, or NF4 re-packed
# here) and the books that fit beside it, both made by take-back train-a.
COLD_TRAIN_B = DeviceCall("train-b", (".gpu-carry/wheels", ".gpu-carry/corpus-b-cold", ".gpu-carry/resume"), 510,
                          CALLS[-1].then)  # fmt: skip


STEP_BUDGET = {call.step: call.budget_s for call in CALLS}


def plan_markdown() -> str:
    lines = [
        "1. Here, before asking for the machine: `python bench/gpu_runbook.py prepare` (wheels and corpus into "
        "`.gpu-carry/`, every call's carry checked against 64 MiB) and `python bench/gpu_runbook.py --dry-run` "
        "(every step at toy scale, a few minutes). Then `status`: `can_start_another` must be true.",
        "2. Four `run` calls, in this order, back to back (the machine stays warm 30 s after a call; each call "
        "below is one command of at most 10 minutes, about "
        f"{sum(c.minutes for c in CALLS):.0f} minutes of the 30 in all, plus a minute or two to start). If less "
        "than 25 minutes are left, skip engine-vs-library; if less than 20, run bench26b only. train-a sizes the "
        "model from its own timing of a few steps of each size (largest first, 70M down to 12M) and the minutes "
        "both training calls leave: the largest trained on at least 20 tokens per parameter.",
        "",
    ]
    for number, call in enumerate(CALLS, 1):
        lines += [
            f"   {number}. **{call.step}** (about {call.minutes:g} min): `run` with",
            "      ```json",
            f"      {json.dumps(call.invocation())}",
            "      ```",
            f"      then, here: {call.then}.",
        ]
        if call.step == "train-b":
            lines += [
                "      If `status` says the machine is no longer warm, carry the checkpoint instead of the new shards:",
                "      ```json",
                f"      {json.dumps(COLD_TRAIN_B.invocation())}",
                "      ```",
            ]
    lines += [
        "3. `give_back` as soon as train-b has returned.",
        "4. Here, on CPU: `python bench/builtin_model_eval.py --model runs/gpu/model --json runs/gpu/eval.json` "
        "(the figures comparable with the shipped model's) and `python bench/engine_speed.py --model runs/gpu/model "
        "--candidates 4` (CPU passes). Ship it (`resources/models/redraft-tiny`, then "
        "`python -m model.training.card --model resources/models/redraft-tiny --report runs/gpu/eval.json`) only "
        "if its fills judge better than the shipped model's on the held-out evaluation, a writer reading its "
        "samples (`runs/gpu/eval.json`, `--show-fills`) prefers them, and its folder is at most 150 MB.",
    ]
    return "\n".join(lines)


def carry_budget(carry: Path = CARRY, root: Path = ROOT) -> dict[str, Any]:
    """Bytes each call sends (tree + its carried folders) and the room left for train-b's checkpoint."""
    tree = tree_bytes(root)
    calls: dict[str, dict[str, Any]] = {}
    carried_b: dict[str, int] = {}
    for call in CALLS:
        carried = {path: folder_bytes(root / path) for path in call.carry}
        calls[call.step] = {"tree": tree, "carried": carried, "total": tree + sum(carried.values())}
        if call.step == "train-b":
            carried_b = carried
    # A fresh machine's train-b carries the checkpoint instead of corpus-b: made by take-back train-a.
    room = CARRY_LIMIT - tree - carried_b.get(".gpu-carry/wheels", 0) - 1 * MIB
    return {"tree_bytes": tree, "calls": calls, "cold_checkpoint_and_books_room_bytes": room,
            "over": [step for step, c in calls.items() if c["total"] > CARRY_LIMIT]}  # fmt: skip

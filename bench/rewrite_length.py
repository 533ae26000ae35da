"""How long do rewrites come out at each length setting? Held-out sentences, the built-in model.

    python bench/rewrite_length.py              # 40 sentences x shorter / same / longer
    python bench/rewrite_length.py --cases 12   # a quicker look

Each held-out sentence is rewritten as the editor asks (four candidates, strength 0.7, the checkpoint's
sampler settings) at each ``length`` (model/edit/request.py LENGTH_FACTORS: the free slots offered, as a share
of the original's tokens). Prints the mean word ratio to the original, of the winner and of every candidate
(the aim: near 0.6 / 1.0 / 1.5) and how far the winner lands from the aim, on average.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.cases import rewrite_cases  # noqa: E402
from evaluation.setup import engine_and_held_out, held_out_parser  # noqa: E402

from model import EditRequest  # noqa: E402
from model.edit.request import LENGTH_FACTORS  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    args = held_out_parser(__doc__ or "", "held-out sentences").parse_args(argv)
    engine, heldout = engine_and_held_out(args)
    cases = rewrite_cases(heldout, args.cases, args.seed)
    report: dict[str, dict[str, float]] = {}
    print(f"{len(cases)} held-out sentences, {args.candidates} candidates each, strength 0.7")
    for length, factor in LENGTH_FACTORS.items():
        started = time.perf_counter()
        winners: list[float] = []
        every: list[float] = []
        for index, case in enumerate(cases):
            request = EditRequest(
                prefix=case.prefix, span=case.gap, suffix=case.suffix, mode="rewrite", length=length,  # type: ignore[arg-type]
                candidates=args.candidates, seed=args.seed + index, strength=0.7,
            )  # fmt: skip
            result = engine.run(request)
            words = len(case.gap.split())
            winners.append(len(result.text.split()) / words)
            every.extend(len(text.split()) / words for text in result.texts)
        # How far the shown draft lands from the length asked for, as a share of it (a mean of ratios can
        # hide drafts too short and too long at once).
        off = statistics.mean(abs(ratio - factor) / factor for ratio in winners)
        report[length] = {
            "slots_factor": factor,
            "winner_ratio": statistics.mean(winners),
            "winner_off_by": off,
            "candidate_ratio": statistics.mean(every),
            "seconds": time.perf_counter() - started,
        }
        print(
            f"  {length:8s} (slots x {factor}): winner {statistics.mean(winners):.2f} (off the aim by {off:.0%}), "
            f"every candidate {statistics.mean(every):.2f} of the original's words  ({report[length]['seconds']:.0f} s)"
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

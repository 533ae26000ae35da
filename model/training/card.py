"""Write ``MODEL_CARD.md`` for the exported model from the bench report and the model's training record.

    python -m model.training.card --model resources/models/redraft-tiny --report runs/eval.json

The record is the model folder's ``training_runs.json``, written by the export: every run in order, the
first trained from scratch, each later one started from the export of the one before
(``train --init-from``); the card reports the whole chain.

Figures, fills and rewrites are copied from the bench's JSON report as they are (never edited); the
data section is built from the corpus's ``SOURCE.md`` so titles, licenses and commits stay exact.

This module is the command and the order of the card's parts: what the folder states is read by
``card_facts``, and the parts are written by ``card_training`` (how the model was made),
``card_evaluation`` (what was measured) and ``card_samples`` (what it wrote, and its limits).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from model.training.card_evaluation import evaluation_sections
from model.training.card_facts import ModelFacts, Run, read_lineage
from model.training.card_samples import sample_sections
from model.training.card_training import training_sections

__all__ = ["CORPUS_SOURCE", "Run", "main", "read_lineage", "render"]

CORPUS_SOURCE = Path("/work/shared/corpus/SOURCE.md")


def render(model_dir: Path, report: dict, source_md: Path = CORPUS_SOURCE, sampler_note: str = "") -> str:
    facts = ModelFacts.read(model_dir)
    out = [
        *training_sections(facts, report, source_md),
        *evaluation_sections(facts, report, sampler_note),
        *sample_sections(facts, report),
    ]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", type=Path, required=True, help="an exported model folder (with training_runs.json)")
    p.add_argument("--report", type=Path, required=True, help="JSON written by bench/builtin_model_eval.py")
    p.add_argument("--sampler-note", default="", help="how the sampler defaults were chosen, if not from the sweep")
    args = p.parse_args(argv)
    card = render(args.model, json.loads(args.report.read_text()), sampler_note=args.sampler_note)
    (args.model / "MODEL_CARD.md").write_text(card, encoding="utf-8")
    print(args.model / "MODEL_CARD.md")


if __name__ == "__main__":
    main()

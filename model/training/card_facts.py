"""What a model card states about the model folder: its files, its sampler defaults and its training record.

The training record is the folder's ``training_runs.json``, written by the export: every run in order, the
first trained from scratch, each later one started from the export of the one before (``train --init-from``).
A run's record may carry a ``card`` entry with what only its history can say (why it was stopped and resumed,
what changed in its compute); the record is copied from run to run, so that prose travels with the chain
instead of living in code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from model.checkpoint.loading import REDRAFT_SAMPLER_KEYS, redraft_sampler_settings
from model.training.export import LINEAGE_FILE

# Arguments that shape the model: the same in every run of a chain, so stated once.
SHAPE_ARGS = (
    "hidden_size",
    "heads",
    "kv_heads",
    "head_dim",
    "intermediate_size",
    "experts",
    "top_k",
    "moe_intermediate_size",
    "canvas",
)
# Per-run arguments written into the reproduction commands, in this order.
RUN_ARGS = (
    "batch_size",
    "story_weight",
    "router_aux_weight",
    "lr",
    "warmup_steps",
    "threads",
    "seed",
    "mix",
    "max_minutes",
)


@dataclass(frozen=True)
class Run:
    """One training run of the chain: its arguments, its final checkpoint's counters and its card notes.

    ``card`` may hold ``compute`` (a sentence for the compute bullet), and for a run that was stopped
    and resumed with a longer plan: ``planned_steps``, ``stopped_at_step`` and ``stopped`` (the sentence
    that tells it).
    """

    run_dir: str
    args: dict
    step: int
    tokens: int
    minutes: float
    history: list[dict]
    card: dict = field(default_factory=dict)

    @classmethod
    def from_record(cls, record: dict) -> Run:
        return cls(
            record["run_dir"],
            record["args"],
            record["step"],
            record["tokens"],
            record["minutes"],
            record["history"],
            record.get("card", {}),
        )

    @property
    def train_losses(self) -> list[dict]:
        return [h for h in self.history if "loss" in h]

    @property
    def heldout_losses(self) -> list[dict]:
        return [h for h in self.history if "heldout_loss" in h]

    def command(self, **overrides: object) -> str:
        flags = [f"--run-dir {self.run_dir}"]
        if self.args.get("init_from") not in (None, "None"):
            flags.append(f"--init-from {overrides.pop('init_from', self.args['init_from'])}")
        flags += [f"--{k.replace('_', '-')} {self.args[k]}" for k in SHAPE_ARGS + RUN_ARGS if k in self.args]
        if self.args.get("word_aligned") == "True":
            flags.append("--word-aligned")
        flags += [f"--{k.replace('_', '-')} {v}" for k, v in overrides.items()]
        lines, line = [], "python -m model.training.train"
        for flag in flags:
            if len(line) + len(flag) > 100:
                lines.append(line + " \\")
                line = "   "
            line += " " + flag
        return "\n".join([*lines, line])

    def commands(self, **overrides: object) -> list[str]:
        """The commands that reproduce this run: a stopped first plan (if it had one), then the full one."""
        done = [self.command(**overrides, max_steps=self.args["max_steps"])]
        if "stopped_at_step" in self.card:
            stopped = self.command(
                **overrides, max_steps=self.card["planned_steps"], stop_at_step=self.card["stopped_at_step"]
            )
            done.insert(0, stopped)
        return done


def read_lineage(model_dir: Path) -> tuple[dict, list[Run]]:
    """The data split and the runs behind the model folder's weights, from its ``training_runs.json``."""
    path = model_dir / LINEAGE_FILE
    if not path.exists():
        raise SystemExit(f"{path} is missing: export the model with `python -m model.training.export` first")
    lineage = json.loads(path.read_text())
    return lineage["split"], [Run.from_record(record) for record in lineage["runs"]]


@dataclass(frozen=True)
class ModelFacts:
    """The model folder as the card reads it: configs, sampler extension, sizes and the run chain."""

    split: dict
    runs: list[Run]
    config: dict
    gen: dict
    # Redraft's sampler keys the folder sets, as the engine reads (and validates) them.
    extension: dict
    total_bytes: int
    weights_mb: float

    @classmethod
    def read(cls, model_dir: Path) -> ModelFacts:
        split, runs = read_lineage(model_dir)
        # Only what redraft_sampler.json itself sets: a stop-rule key only in generation_config.json is not
        # Redraft's extension.
        own = redraft_sampler_settings(model_dir)
        return cls(
            split=split,
            runs=runs,
            config=json.loads((model_dir / "config.json").read_text()),
            gen=json.loads((model_dir / "generation_config.json").read_text()),
            extension={key: own[key] for key in REDRAFT_SAMPLER_KEYS if key in own},
            total_bytes=sum(p.stat().st_size for p in model_dir.iterdir() if p.is_file()),
            weights_mb=(model_dir / "model.safetensors").stat().st_size / 1e6,
        )

    @property
    def text_cfg(self) -> dict:
        return self.config["text_config"]

    @property
    def canvas(self) -> int:
        return int(self.config["canvas_length"])

    @property
    def left_to_right(self) -> float:
        return float(self.extension.get("left_to_right_bias", 0.0))

    @property
    def polish_rounds(self) -> int:
        return int(self.extension.get("polish_rounds", 0))

    @property
    def wide_entropy_bound(self) -> float:
        return float(self.extension.get("wide_entropy_bound", 0.0))

    @property
    def total_minutes(self) -> float:
        return sum(r.minutes for r in self.runs)

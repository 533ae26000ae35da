"""Export a training checkpoint as a model folder the engine loads like any DiffusionGemma checkpoint.

    python -m model.training.export --run-dir runs/redraft-tiny --out resources/models/redraft-tiny
    python -m model.training.export --sampler-only --out resources/models/redraft-tiny   # re-tuned defaults

Writes ``config.json``, ``model.safetensors`` (float16 on disk, ~9.7 MB at this size: the loader casts it
to the config's float32 in milliseconds, the held-out figures move within their noise, and every byte of the
tree travels in each call to a lent GPU; a run started from an export (``train --init-from``) starts from
those float16 values), the tokenizer files, the tuned sampler defaults (``generation_config.json``, and
Redraft's sampler extension in ``redraft_sampler.json``) and ``training_runs.json``: the record of every
run that led to these weights, so the model card can be written from the model folder alone, long after the
run folders are gone.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from transformers import AutoTokenizer
from transformers.models.diffusion_gemma.generation_diffusion_gemma import (
    DiffusionGemmaGenerationConfig,
    EntropyBoundSamplerConfig,
)

from model.checkpoint.architecture import TextModelShape, build_config
from model.checkpoint.building import new_model
from model.checkpoint.loading import REDRAFT_SAMPLER_COUNTS, REDRAFT_SAMPLER_FILE, REDRAFT_SAMPLER_KEYS
from model.edit.request import PUBLISHED_DEFAULTS
from model.training.data import ExampleMix

# Tuned on held-out fills with bench/builtin_model_eval.py --tune (see MODEL_CARD.md).
SAMPLER_DEFAULTS: dict[str, float | int] = {
    # The published cap. A lower one (40, 32: bench/stop_tuning.py --step caps, README #49) saved 4-15% of the
    # passes at a judged perplexity within the noise, but wrote worse seams on 64-slot gaps, the blocks that run
    # to their cap and so the only ones where the saving is large.
    "max_denoising_steps": 48,
    # The published temperature schedule: with the left-to-right bias, the hotter 0.6 → 1.0 used before
    # filled no better and took a third more passes.
    "t_min": 0.4,
    "t_max": 0.8,
    # Published 0.1 accepts about one token per pass at this model's entropies and runs out of passes;
    # with the bias, 1.0 filled best (0.5 and 2.0 were worse).
    "entropy_bound": 1.0,
    "stability_threshold": 1,
    # The published 0.005 nats is never reached by this model's mean entropy, so every canvas ran all its
    # steps; 0.05 stops a sentence's four drafts in a quarter fewer passes at an equal judged fill
    # (bench/stop_tuning.py, held-out text).
    "confidence_threshold": 0.05,
    # Redraft's extension (model.edit.sampling): settling words from the left roughly halved the trigram
    # perplexity of this model's fills.
    "left_to_right_bias": 1.0,
    # Redraft's second extension (model.edit.polish): re-developing the least likely words of a finished
    # canvas. On 40 held-out gaps, best of 4: trigram perplexity 74 -> 32 with 6 rounds (4: 39, 8: 33).
    "polish_rounds": 6,
    # Redraft's third (model.edit.sampling.block_entropy_bound): a draft wider than half the canvas accepts more a
    # pass, up to a bound of 8 with the whole canvas free. One bound for every width left a 64-slot gap accepting
    # a token or two a pass to its step cap; 8 took it from 54 passes to about 34 at an equal judged fill
    # (bench/stop_tuning.py --step wide, tuning half).
    "wide_entropy_bound": 8.0,
    # Redraft's fourth (model.edit.engine): the engine reads no more of the text before a span than training's
    # longest prefix. With the editor's 2048 tokens, 12 of the 40 drafts of ten War and Peace paragraphs came back
    # as a word or two ("The."), none at 128; 40 held-out sentence rewrites after ~2,200 characters judged 40
    # against 31.
    "max_context_tokens": max(ExampleMix().prefix_lengths),
}


def generation_config(defaults: dict[str, float | int]) -> DiffusionGemmaGenerationConfig:
    return DiffusionGemmaGenerationConfig(
        max_denoising_steps=int(defaults["max_denoising_steps"]),
        t_min=float(defaults["t_min"]),
        t_max=float(defaults["t_max"]),
        stability_threshold=int(defaults["stability_threshold"]),
        confidence_threshold=float(defaults["confidence_threshold"]),
        sampler_config=EntropyBoundSamplerConfig(entropy_bound=float(defaults["entropy_bound"])),
        pad_token_id=0,
        eos_token_id=1,
        bos_token_id=2,
    )


# The stop rule generation_config.json always states as published, whatever Redraft's engine uses.
PUBLISHED_OVERRIDDEN = ("confidence_threshold", "max_denoising_steps")


def write_sampler_defaults(out: Path, defaults: dict[str, float | int]) -> None:
    """generation_config.json (loadable by transformers as it is) and redraft_sampler.json beside it."""
    # The published stop rule for transformers and vLLM (they average entropy over the whole canvas, and their
    # samplers were not tuned to fewer passes); Redraft's tuned values go in the extension
    # (model.checkpoint.loading.REDRAFT_SAMPLER_KEYS).
    published = {**defaults, **{key: PUBLISHED_DEFAULTS[key] for key in PUBLISHED_OVERRIDDEN}}
    generation_config(published).save_pretrained(str(out))
    # A key generation_config.json also holds goes in the extension only where Redraft's value differs.
    extension = {
        key: int(defaults[key]) if key in REDRAFT_SAMPLER_COUNTS else float(defaults[key])
        for key in REDRAFT_SAMPLER_KEYS
        if key in defaults and not (key in PUBLISHED_OVERRIDDEN and defaults[key] == published[key])
    }
    (out / REDRAFT_SAMPLER_FILE).write_text(json.dumps(extension, indent=2) + "\n")


LINEAGE_FILE = "training_runs.json"
# A run started with ``train --init-from`` keeps its source's lineage here until it is exported.
PRIOR_LINEAGE_FILE = "prior_runs.json"


def run_record(run_dir: Path, state: dict) -> dict:
    """What the model card needs of one run: its arguments, counters and loss history."""
    return {
        "run_dir": str(run_dir),
        "args": json.loads((run_dir / "train_args.json").read_text()),
        "step": state["step"],
        "tokens": state["tokens"],
        "minutes": round(state["elapsed"] / 60, 2),
        "history": state["history"],
    }


def lineage(run_dir: Path, state: dict) -> dict:
    """The chain of runs behind this checkpoint: the source model's runs (if any), then this one."""
    prior_path = run_dir / PRIOR_LINEAGE_FILE
    if prior_path.exists():
        prior = json.loads(prior_path.read_text())
    else:
        prior = {"split": json.loads((run_dir / "split.json").read_text()), "runs": []}
    return {"split": prior["split"], "runs": [*prior["runs"], run_record(run_dir, state)]}


def store_half(weights: Path) -> None:
    """A float32 safetensors file rewritten at float16, its names and metadata as they were: computed at the
    config's float32 still (the loaders pass the dtype; vLLM casts too). Every trained value of this model fits
    float16's range; a few below 6e-8 become zero."""
    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    with safe_open(str(weights), "pt") as stored:
        metadata = stored.metadata()
    state = load_file(str(weights))
    save_file({name: value.half() if value.dtype == torch.float32 else value for name, value in state.items()},
              str(weights), metadata=metadata)  # fmt: skip


def export(run_dir: Path, out: Path, defaults: dict[str, float | int] | None = None) -> Path:
    state = torch.load(run_dir / "checkpoint.pt", weights_only=False, map_location="cpu")
    model = new_model(build_config(TextModelShape(**state["shape"])))
    model.load_state_dict(state["model"])
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out), safe_serialization=True)
    for weights in out.glob("*.safetensors"):  # the names transformers kept (a tied weight once), at half width
        store_half(weights)
    tokenizer = AutoTokenizer.from_pretrained(str(run_dir / "tokenizer"))
    # Not instruction-tuned: without a chat template the editor does not offer instructions for it.
    tokenizer.chat_template = None
    (out / "chat_template.jinja").unlink(missing_ok=True)
    tokenizer.save_pretrained(str(out))
    write_sampler_defaults(out, defaults or SAMPLER_DEFAULTS)
    # Compact: the record is read by card.py, not by eye (json.tool prints it), and every byte of the tree
    # travels in each call to a lent GPU (bench/runbook: 64 MiB a call, the tree included).
    (out / LINEAGE_FILE).write_text(json.dumps(lineage(run_dir, state), separators=(",", ":")) + "\n")
    minutes = state["elapsed"] / 60
    print(f"exported step {state['step']} ({state['tokens']} canvas tokens, {minutes:.1f} min of training)")
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run-dir", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--defaults", type=Path, help="JSON file overriding the sampler defaults")
    p.add_argument(
        "--sampler-only",
        action="store_true",
        help="only rewrite the sampler defaults of the model folder --out (weights untouched)",
    )
    args = p.parse_args(argv)
    defaults = dict(SAMPLER_DEFAULTS)
    if args.defaults:
        defaults.update(json.loads(args.defaults.read_text()))
    if args.sampler_only:
        if not (args.out / "config.json").is_file():
            p.error(f"{args.out} is not a model folder (no config.json)")
        write_sampler_defaults(args.out, defaults)
        print(f"wrote the sampler defaults of {args.out}")
        return
    if args.run_dir is None:
        p.error("--run-dir is required (or --sampler-only)")
    print(export(args.run_dir, args.out, defaults))


if __name__ == "__main__":
    main()

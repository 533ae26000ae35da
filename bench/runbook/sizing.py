"""The sizes train-a may train and the rule that picks one: the largest under the carry's cap that the time
left trains on enough tokens per parameter, at the speed measured on the device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Candidate:
    """One size the runbook may train: train.py's shape flags."""

    name: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    experts: int
    top_k: int
    moe_intermediate: int

    def flags(self) -> list[str]:
        return ["--hidden-size", str(self.hidden), "--layers", str(self.layers), "--heads", str(self.heads),
                "--kv-heads", str(self.kv_heads), "--head-dim", str(self.head_dim), "--intermediate-size",
                str(self.intermediate), "--experts", str(self.experts), "--top-k", str(self.top_k),
                "--moe-intermediate-size", str(self.moe_intermediate)]  # fmt: skip


# Smallest first. The shipped model is 4.8M (192 wide, 4 layers, 4 experts; encoder and decoder each have
# the layers). The cap in step_train_a (the compact checkpoint in train-b's carry room, ~13M) stops the
# ladder well before a float32 export reaches the shipped folder's 60 MB.
LADDER = (
    Candidate("xs", 192, 4, 3, 1, 64, 384, 8, 2, 192),  # 6.7M: the shipped shape with 8 experts
    Candidate("s", 192, 6, 3, 1, 64, 384, 8, 2, 192),  # 9.0M
    Candidate("m", 224, 6, 4, 1, 56, 448, 8, 2, 224),  # 11.9M
)
TOY_LADDER = (Candidate("toy-s", 32, 2, 2, 1, 16, 64, 4, 2, 32), Candidate("toy-m", 48, 2, 2, 1, 16, 96, 4, 2, 48))
# Recipe flags common to both calls. Batch 256 keeps an H100 busy at this size; the router loss keeps
# experts in use (the shipped run without it left two of four nearly idle).
GPU_RECIPE = ["--batch-size", "256", "--lr", "2e-3", "--warmup-steps", "200", "--router-aux-weight", "0.01",
              "--word-aligned", "--device", "cuda", "--bf16", "--threads", "4", "--log-every", "100",
              "--checkpoint-minutes", "2"]  # fmt: skip
TOY_RECIPE = ["--batch-size", "4", "--lr", "3e-3", "--warmup-steps", "2", "--router-aux-weight", "0.01",
              "--word-aligned", "--threads", "1", "--log-every", "5", "--checkpoint-minutes", "100"]  # fmt: skip
TOKENS_PER_PARAMETER = 20  # compute-optimal training tokens per parameter (Chinchilla), the sizing rule


def candidate_parameters(candidate: Candidate, vocab: int, canvas: int) -> int:
    import torch
    from transformers import DiffusionGemmaForBlockDiffusion

    from model.checkpoint.architecture import build_config
    from model.training.train import parse_args, shape_from_args

    args = parse_args(["--run-dir", "unused", "--vocab-size", str(vocab), "--canvas", str(canvas), *candidate.flags()])
    with torch.device("meta"):
        model = DiffusionGemmaForBlockDiffusion(build_config(shape_from_args(args)))
    return sum(p.numel() for p in model.parameters())


def choose_size(probes: list[dict[str, Any]], train_seconds: float, cap: int) -> dict[str, Any]:
    """The largest candidate under the size cap that the time left trains on at least TOKENS_PER_PARAMETER
    tokens per parameter at its measured speed; the smallest measured one if none does."""
    fitting = [p for p in probes if p["parameters"] <= cap]
    if not fitting:
        raise SystemExit(f"no candidate under the cap of {cap} parameters")
    for probe in fitting:
        probe["planned_tokens"] = int(train_seconds / probe["s_per_step"] * probe["tokens_per_step"])
        probe["tokens_per_parameter"] = round(probe["planned_tokens"] / probe["parameters"], 1)
    enough = [p for p in fitting if p["tokens_per_parameter"] >= TOKENS_PER_PARAMETER]
    return max(enough, key=lambda p: p["parameters"]) if enough else min(fitting, key=lambda p: p["s_per_step"])

"""The sizes train-a may train and the rule that picks one: the largest under the carry's cap that the time
left trains on enough tokens per parameter, at the speed measured on the device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from model.checkpoint.building import new_model


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


# Smallest first, 12M to 70M parameters (the shipped model is 4.8M: 192 wide, 4 layers, 4 experts; encoder
# and decoder each have the layers). Width and depth grow together, 64-wide heads, 8 experts of which 2
# run: the experts hold most parameters at a quarter of their compute. The largest stays under the caps of
# step_train_a: ~74M in bf16 is the shipped folder's 150 MB, and int8 brings it back in five 15 MiB pieces.
LADDER = (
    Candidate("m", 224, 6, 4, 1, 56, 448, 8, 2, 224),  # 11.9M
    Candidate("l", 256, 8, 4, 1, 64, 512, 8, 2, 256),  # 19.5M
    Candidate("xl", 320, 8, 5, 1, 64, 640, 8, 2, 320),  # 29.7M
    Candidate("2xl", 384, 8, 6, 1, 64, 768, 8, 2, 384),  # 42.1M
    Candidate("3xl", 384, 10, 6, 2, 64, 768, 8, 2, 384),  # 52.0M
    Candidate("4xl", 448, 10, 7, 1, 64, 896, 8, 2, 448),  # 69.6M
)
TOY_LADDER = (Candidate("toy-s", 32, 2, 2, 1, 16, 64, 4, 2, 32), Candidate("toy-m", 48, 2, 2, 1, 16, 96, 4, 2, 48))
# Recipe flags common to both calls. Batch 256 keeps an H100 busy at this size; the router loss keeps
# experts in use (the shipped run without it left two of four nearly idle).
GPU_RECIPE = ["--batch-size", "256", "--lr", "2e-3", "--warmup-steps", "200", "--router-aux-weight", "0.01",
              "--word-aligned", "--device", "cuda", "--bf16", "--threads", "4", "--log-every", "100",
              "--checkpoint-minutes", "2"]  # fmt: skip
TOY_RECIPE = ["--batch-size", "4", "--lr", "3e-3", "--warmup-steps", "2", "--router-aux-weight", "0.01",
              "--word-aligned", "--threads", "1", "--log-every", "5", "--checkpoint-minutes", "100"]  # fmt: skip
# Compute-optimal training tokens per parameter (Chinchilla's ~20), the sizing rule. The carried books are
# seen several times at this ratio; masked-diffusion models keep gaining from repeated data far longer than
# autoregressive ones do (Prabhudesai et al. 2025, "Diffusion Beats Autoregressive in Data-Constrained
# Settings"), so the ratio, not the epochs, is the limit.
TOKENS_PER_PARAMETER = 20


def candidate_parameters(candidate: Candidate, vocab: int, canvas: int) -> int:
    import torch

    from model.checkpoint.architecture import build_config
    from model.training.train import parse_args, shape_from_args

    args = parse_args(["--run-dir", "unused", "--vocab-size", str(vocab), "--canvas", str(canvas), *candidate.flags()])
    with torch.device("meta"):
        model = new_model(build_config(shape_from_args(args)))
    return sum(p.numel() for p in model.parameters())


def plan_tokens(probe: dict[str, Any], train_seconds: float) -> dict[str, Any]:
    """The tokens ``train_seconds`` give a probed size at its measured step time, and their ratio to its size."""
    tokens = int(train_seconds / probe["s_per_step"] * probe["tokens_per_step"])
    return {**probe, "planned_tokens": tokens, "tokens_per_parameter": round(tokens / probe["parameters"], 1)}


def enough_tokens(probe: dict[str, Any], train_seconds: float) -> bool:
    return bool(plan_tokens(probe, train_seconds)["tokens_per_parameter"] >= TOKENS_PER_PARAMETER)


def choose_size(probes: list[dict[str, Any]], train_seconds: float, cap: int) -> dict[str, Any]:
    """The largest candidate under the size cap that the time left trains on at least TOKENS_PER_PARAMETER
    tokens per parameter at its measured speed; the fastest measured one if none does."""
    fitting = [plan_tokens(p, train_seconds) for p in probes if p["parameters"] <= cap]
    if not fitting:
        raise SystemExit(f"no candidate under the cap of {cap} parameters")
    enough = [p for p in fitting if p["tokens_per_parameter"] >= TOKENS_PER_PARAMETER]
    return max(enough, key=lambda p: p["parameters"]) if enough else min(fitting, key=lambda p: p["s_per_step"])


def parameter_cap(ship_limit: int, back_room: int, embedding: int) -> dict[str, int]:
    """The largest model the session can use: its bf16 folder (2 bytes a parameter, ~2 MB of tokenizer and
    records) under the ship limit, and its weights back in the pieces of one call (int8, else NF4)."""
    from runbook.packing import estimate_packed_bytes

    ship = (ship_limit - 2_000_000) // 2
    back = next(n for n in range(ship, 0, -250_000) if estimate_packed_bytes(n, embedding, "nf4") <= back_room)
    return {"cap": min(ship, back), "ship": ship, "back_nf4": back}

"""How many operators one adaptation step of the transplant (#47) runs, by phase, at two batch sizes.

    python bench/step_operators.py                 # Gemma 3 270M's layer structure at a toy width
    python bench/step_operators.py --batches 8 64 --json bench/results/step_operators.json

The first lent H100 trained 32 canvases in 0.51 s a step where the arithmetic is ~15 ms (docs/TRANSPLANT.md).
A GPU step that small is bound by how many operators it launches, each costing microseconds of Python,
dispatch and launch whatever its size; that count depends on the layers' structure, not on their width or the
batch, so it is measured here on the CPU, on a random Gemma 3 with the 270M model's 18 layers, heads and layer
pattern at a toy width, transplanted (``model.training.transplant``) and stepped (``train_step``'s phases).
Operators are the top-level ``aten::`` calls torch's profiler records. The optimizer's are the adaptation's
fused AdamW and the gradient clipping's per-tensor norms (on CUDA, grouped: foreach). Each is counted with
the transplant's silent MoE blocks run, then skipped as the adaptation skips them (``lean_step.silence_moe``).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile
from transformers import Gemma3ForCausalLM, Gemma3TextConfig

from model.training.adapt import Recipe, adaptation_loss, mix_for, optimizer_for, trainable
from model.training.data import ExampleSampler, TokenizedPool
from model.training.lean_step import silence_moe, silenced_parameters
from model.training.transplant import transplant

VOCAB = 512


def toy_gemma(layers: int = 18) -> Gemma3ForCausalLM:
    """Gemma 3 270M's structure (layers, heads, KV heads, head size, sliding pattern) at a hidden size of 64."""
    config = Gemma3TextConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=layers,
                              num_attention_heads=4, num_key_value_heads=1, head_dim=256, sliding_window=512,
                              query_pre_attn_scalar=256, max_position_embeddings=2048)  # fmt: skip
    torch.manual_seed(0)
    return Gemma3ForCausalLM(config).eval()


def random_pools(seed: int = 0) -> list[TokenizedPool]:
    rng = torch.Generator().manual_seed(seed)
    pools = []
    for ends in (True, False):
        lengths = torch.randint(400, 800, (16,), generator=rng)
        ids = torch.randint(3, VOCAB, (int(lengths.sum()),), generator=rng, dtype=torch.int32)
        starts = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
        pools.append(TokenizedPool(ids.numpy(), starts.numpy(), lengths.numpy(), torch.full((16,), ends).numpy()))
    return pools


def top_level(prof: Any) -> list[Any]:
    """The profiler's ``aten::`` events not called from inside another ``aten::`` operator."""
    events = [e for e in prof.events() if e.name.startswith("aten::")]
    return [e for e in events if e.cpu_parent is None or not e.cpu_parent.name.startswith("aten::")]


def self_conditions(seed: int, batch_size: int) -> bool:
    """Whether ``objective.diffusion_loss`` self-conditions from a generator seeded so: it draws the batch's
    noise levels, then the coin (at ``NoiseConfig``'s default probability, a half)."""
    generator = torch.Generator().manual_seed(seed)
    torch.rand(batch_size, generator=generator)
    return bool(torch.rand((), generator=generator) < 0.5)


def count_step(model: Any, recipe: Recipe, self_condition: bool) -> dict[str, Any]:
    silent_moe = bool(silenced_parameters(model))
    params = trainable(model, recipe)
    optimizer = optimizer_for(params, recipe)
    sampler = ExampleSampler(random_pools(), [0.5, 0.5], recipe.canvas, recipe.batch_size, mix_for(recipe), 0)
    batch = sampler.next_batch()
    seed = next(s for s in range(100) if self_conditions(s, recipe.batch_size) == self_condition)
    phases: dict[str, int] = {}
    names: Counter[str] = Counter()
    for warm in (True, False):
        generator = torch.Generator().manual_seed(seed)
        with profile(activities=[ProfilerActivity.CPU]) as forward:
            loss, _ = adaptation_loss(model, batch, generator, recipe, step=10**6)  # past any mask annealing
        optimizer.zero_grad(set_to_none=True)
        with profile(activities=[ProfilerActivity.CPU]) as backward:
            loss.backward()
        with profile(activities=[ProfilerActivity.CPU]) as update:
            torch.nn.utils.clip_grad_norm_(params, recipe.grad_clip)
            optimizer.step()
        if not warm:
            for name, prof in (("forward", forward), ("backward", backward), ("optimizer", update)):
                ops = top_level(prof)
                phases[name] = len(ops)
                names.update(e.name for e in ops)
    return {"batch_size": recipe.batch_size, "moe_skipped": silent_moe, "self_conditioning": self_condition, **phases,
            "total": sum(phases.values()), "commonest": names.most_common(8)}  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[4, 32])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    base = Recipe(lr=1e-4, warmup_steps=1, max_steps=10, batch_size=4, canvas=64, seed=0, max_prefix=128)
    rows = []
    for skip_moe in (False, True):  # the silent MoE blocks run, as before, then skipped as the adaptation does
        model = transplant(toy_gemma(), keep_layers=18).train()
        if skip_moe:
            silence_moe(model)
        rows += [count_step(model, replace(base, batch_size=b), cond) for b in args.batches for cond in (False, True)]
    print(f"{'MoE':>7} {'batch':>5} {'self-cond':>9} {'forward':>8} {'backward':>8} {'optimizer':>9} {'total':>7}")
    for row in rows:
        print(f"{'skipped' if row['moe_skipped'] else 'run':>7} {row['batch_size']:>5} "
              f"{str(row['self_conditioning']):>9} {row['forward']:>8} {row['backward']:>8} "
              f"{row['optimizer']:>9} {row['total']:>7}")  # fmt: skip
    print("commonest at the last row:", ", ".join(f"{n} {c}" for n, c in rows[-1]["commonest"]))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()

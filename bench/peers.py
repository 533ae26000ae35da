"""Redraft's engine against its peers on the same model: the same requests, seeds and prompt ids, interleaved.

    python bench/peers.py                       # 8 cases per task, the built-in model, CPU
    python bench/peers.py --cases 3 --json bench/results/peers.json

Tasks (held-out text, the odd held-out sections; settings are tuned on the even ones, bench/stop_tuning.py):

* ``fill16@256``: a gap of 16 slots after 256 tokens of context, the text after it pinned;
* ``fill64@2k``: a gap of 64 slots after 2,048 tokens of context (two canvases: 64 free slots, then room for
  the text after it);
* ``rewrite``: one sentence rewritten in place (Redraft: strength 0.7, the editor's), the text after it pinned;
* ``rewrite x4``: the same with the editor's four drafts (Redraft only: the peers have no ranking of drafts).

Peers, each given the prompt ids Redraft's layout encodes ([bos] + the context; the built-in model reads at most
128 context tokens, its ``max_context_tokens``, so for it ``fill64@2k`` reads 128 too, every peer alike):

* Redraft's engine as the editor runs it, and the same engine library-exact (``Engine(library_exact=True)``:
  each pass's statistics and draws made with transformers' own operations), so what the everyday statistics
  and draws change, in time and in the judged text, is measured side by side;
* transformers' ``DiffusionGemmaForBlockDiffusion.generate``: continuation only (it cannot pin the text after
  the gap, nor start from the sentence), the model's generation config;
* diffusers' ``DiffusionGemmaPipeline`` with ``BlockRefinementScheduler()`` (the scheduler of diffusers' own
  example; the pipeline names no default) and with ``EntropyBoundScheduler`` at the model's entropy bound and
  temperatures (the scheduler closest to Redraft's). The text after the gap is pinned through the pipeline's
  per-step callback, which can replace the canvas: from the second pass on (its first pass sees noise there),
  without zeroing those positions' self-conditioning.

Per task and peer: decoder forwards per edit, ms per forward (the whole edit's time over its forwards), whole-edit
seconds, new tokens per forward, and the shown text judged in its place by the project's held-out trigram judge
(``bench/evaluation/judge.py``): pooled perplexity with its 90% bootstrap interval, and the seam (the two words
after the span). Each case runs every peer back to back in a rotating order, in one process.

diffusers 0.42.1 (the newest release) calls the decoder's mask builder with ``past_key_values=``, which
transformers 5.24 names ``cache=``, so the pipeline fails on its first block as released; this bench hands the
keyword on (:func:`mask_keyword_shim`) and changes nothing else.
"""

from __future__ import annotations

import inspect
import json
import random
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from evaluation.cases import Case, _word_cut  # noqa: E402
from evaluation.judge import bootstrap_interval, fluency_lm, judged, pooled_ppl  # noqa: E402
from evaluation.setup import engine_and_held_out, held_out_parser  # noqa: E402

from model import DenoiseOptions, EditRequest, Engine  # noqa: E402
from model.edit import canvas  # noqa: E402
from model.edit.canvas import Layout  # noqa: E402
from model.edit.passes import without_lead  # noqa: E402
from model.edit.shape import shape_request  # noqa: E402
from model.training.data import Section  # noqa: E402
from model.training.ngram import TrigramLM, words  # noqa: E402

REWRITE_STRENGTH = 0.7  # the editor's default (app/settings.py)


@dataclass(frozen=True)
class Task:
    name: str
    mode: str  # "fill" or "rewrite"
    context: int  # tokens of context, bos included
    slots: int  # fill: free slots; rewrite: 0 (the layout's, from the sentence)
    candidates: int = 1


TASKS = [
    Task("fill16@256", "fill", 256, 16),
    Task("fill64@2k", "fill", 2048, 64),
    Task("rewrite", "rewrite", 256, 0),
    Task("rewrite x4", "rewrite", 256, 0, candidates=4),
]


def bench_sections(held_out: list[Section]) -> list[Section]:
    """The held-out sections this bench measures on (odd positions); settings are tuned on the even ones."""
    return held_out[1::2]


def make_cases(sections: list[Section], task: Task, count: int, seed: int) -> list[Case]:
    """Cases from long sections: a gap of 4-14 words (a fill) or a whole sentence (a rewrite) late in the section,
    and enough text before it for the task's context (earlier held-out sections joined in front when short)."""
    rng = random.Random(seed * 1000 + task.context + task.slots)
    pool = [s for s in sections if len(s.text) > 3000]
    cases: list[Case] = []
    while len(cases) < count:
        section = rng.choice(pool)
        text = section.text
        if task.mode == "fill":
            start = _word_cut(text, int(len(text) * rng.uniform(0.7, 0.85)))
            end = start
            for _ in range(rng.randint(4, 14)):
                end = _word_cut(text, end + 1)
        else:
            bounds = [m.end() for m in re.finditer(r"(?<=[.!?])\s+", text)]
            late = [b for b in bounds if b > len(text) * 0.6]
            if len(late) < 3:
                continue
            k = rng.randrange(0, len(late) - 1)
            start, end = late[k], late[k + 1]
        span = text[start:end].rstrip()
        if task.mode == "rewrite" and not 20 <= len(span) <= 160:
            continue
        end = start + len(span)
        before = text[:start]
        # Context beyond the section: other held-out sections in front (as a long document would have).
        extra = [s.text for s in pool if s is not section]
        while len(before) < task.context * 8 and extra:
            before = extra.pop(rng.randrange(len(extra))) + "\n\n" + before
        cases.append(Case(f"{section.source}#{section.index}", before, span, text[end : end + 300]))
    return cases


def request_for(task: Task, case: Case, seed: int, options: DenoiseOptions) -> EditRequest:
    if task.mode == "fill":
        return EditRequest(
            prefix=case.prefix, suffix=case.suffix, mode="fill", max_new_tokens=task.slots, seed=seed,
            candidates=task.candidates, context_budget=task.context, options=options,
        )  # fmt: skip
    return EditRequest(
        prefix=case.prefix, suffix=case.suffix, span=case.gap, mode="rewrite", seed=seed, candidates=task.candidates,
        context_budget=task.context, strength=REWRITE_STRENGTH, options=options,
    )  # fmt: skip


@dataclass
class Outcome:
    text: str
    forwards: int
    seconds: float
    new_tokens: int


@contextmanager
def counted_forwards(model: torch.nn.Module) -> Iterator[list[int]]:
    """Decoder forwards, counted at the decoder's self-conditioning block (once per forward for every peer)."""
    count = [0]
    block = model.get_submodule("model.decoder.self_conditioning")
    handle = block.register_forward_pre_hook(lambda *_: count.__setitem__(0, count[0] + 1))
    try:
        yield count
    finally:
        handle.remove()


def mask_keyword_shim(model: torch.nn.Module) -> None:
    """diffusers 0.42.1 calls ``create_diffusion_decoder_attention_mask(past_key_values=...)``; transformers 5.24's
    keyword is ``cache``. Hand it on (only for this model's decoder; the engine never calls the mask builder)."""
    decoder: Any = model.get_submodule("model.decoder")
    builder = type(decoder).create_diffusion_decoder_attention_mask
    if "past_key_values" in inspect.signature(builder).parameters:
        return

    def renamed(*args: Any, past_key_values: Any = None, **kwargs: Any) -> Any:
        if past_key_values is not None:  # diffusers' keyword; generate() passes transformers' own
            kwargs["cache"] = past_key_values
        return builder(*args, **kwargs)

    decoder.create_diffusion_decoder_attention_mask = renamed


class PromptIds:
    """The pipeline's processor for a model without a chat template: it hands over the prompt ids Redraft's
    layout encodes, so every peer reads the same context."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.ids: list[int] = []

    def apply_chat_template(self, messages: Any, **_: Any) -> dict[str, torch.Tensor]:
        ids = torch.tensor([self.ids])
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}

    def batch_decode(self, sequences: Any, **kwargs: Any) -> list[str]:
        return list(self.tokenizer.batch_decode(sequences, **kwargs))


@dataclass
class Peers:
    engine: Engine
    lm: TrigramLM
    options_now: DenoiseOptions = field(default_factory=DenoiseOptions)
    pipelines: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.model = self.engine.model
        # The same sampler with transformers' own operations (generate()'s tokens for a seed): the row that
        # shows what the engine's everyday statistics and draws change, in time and in the judged text.
        self.exact_engine = Engine(self.engine.loaded, library_exact=True)
        self.defaults = self.engine.loaded.generation_defaults

    def layout(self, request: EditRequest) -> Layout:
        return canvas.plan_layout(shape_request(request)[0], self.engine.vocabulary, self.engine.loaded)

    def text_of(self, slot_ids: list[int], layout: Layout) -> tuple[str, int]:
        kept = [slot_ids[i] for i in canvas.kept_positions(slot_ids, layout, self.engine.vocabulary)]
        return without_lead(self.engine.span_text(kept), layout.lead), len(kept)

    def redraft(self, request: EditRequest, exact: bool = False) -> Outcome:
        started = time.perf_counter()
        with counted_forwards(self.model) as count:
            result = (self.exact_engine if exact else self.engine).run(request)
        return Outcome(result.text, count[0], time.perf_counter() - started, len(result.token_ids[result.ranking[0]]))

    def generate(self, request: EditRequest) -> Outcome:
        layout = self.layout(request)
        slots = sum(layout.block_slots)
        started = time.perf_counter()
        torch.manual_seed(request.seed or 0)
        with counted_forwards(self.model) as count, torch.inference_mode():
            out = self.model.generate(torch.tensor([layout.prompt_ids]), max_new_tokens=slots)  # type: ignore[operator]
        ids = out.sequences[0, len(layout.prompt_ids) : len(layout.prompt_ids) + slots].tolist()
        continuation = replace(layout, stop_at_eos=True, keep_slots=slots)
        text, new = self.text_of(ids, continuation)
        return Outcome(text, count[0], time.perf_counter() - started, new)

    def pipeline(self, name: str) -> Any:
        if name not in self.pipelines:
            from diffusers import BlockRefinementScheduler, DiffusionGemmaPipeline, EntropyBoundScheduler

            mask_keyword_shim(self.model)
            bound = self.defaults.get("entropy_bound") or 0.1
            scheduler = (
                BlockRefinementScheduler()
                if name == "block"
                else EntropyBoundScheduler(
                    entropy_bound=bound,
                    t_max=self.defaults.get("t_max") or 0.8,
                    t_min=self.defaults.get("t_min") or 0.4,
                )
            )
            pipe: Any = DiffusionGemmaPipeline(
                model=self.model, scheduler=scheduler, processor=PromptIds(self.engine.tokenizer)
            )
            pipe.set_progress_bar_config(disable=True)
            self.pipelines[name] = pipe
        return self.pipelines[name]

    def diffusers(self, request: EditRequest, name: str) -> Outcome:
        pipe = self.pipeline(name)
        layout = self.layout(request)
        pipe.processor.ids = layout.prompt_ids
        blocks, width = len(layout.block_slots), self.engine.canvas_length
        last_slots = layout.block_slots[-1]
        tail = (layout.suffix_tail + [self.engine.pad_id] * width)[: width - last_slots]
        pinned = torch.tensor([tail]) if layout.suffix_tail else None
        steps = int(self.defaults.get("max_denoising_steps") or 48)
        block = [0]

        def pin(_pipe: Any, global_step: int, step: int, tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
            if step == 0 and global_step > 0:
                block[0] += 1
            if pinned is not None and block[0] == blocks - 1:
                tensors["canvas"] = torch.cat([tensors["canvas"][:, :last_slots], pinned], dim=1)
            return tensors

        generator = torch.Generator().manual_seed(request.seed or 0)
        started = time.perf_counter()
        with counted_forwards(self.model) as count:
            out = pipe(
                prompt="", gen_length=blocks * width, num_inference_steps=steps, generator=generator,
                eos_early_stop=not layout.suffix_tail, output_type="seq", callback_on_step_end=pin,
            )  # fmt: skip
        row = out.sequences[0].tolist()
        slot_ids = [t for b, n in enumerate(layout.block_slots) for t in row[b * width : b * width + n]]
        text, new = self.text_of(slot_ids, layout)
        return Outcome(text, count[0], time.perf_counter() - started, new)


PEER_NAMES = {
    "redraft": "Redraft's engine",
    "redraft-exact": "Redraft's engine, library-exact",
    "generate": "transformers generate()",
    "diffusers-block": "diffusers pipeline, BlockRefinementScheduler",
    "diffusers-entropy": "diffusers pipeline, EntropyBoundScheduler",
}


def runners(peers: Peers, task: Task) -> dict[str, Callable[[EditRequest], Outcome]]:
    exact = lambda request: peers.redraft(request, exact=True)  # noqa: E731
    found: dict[str, Callable[[EditRequest], Outcome]] = {"redraft": peers.redraft, "redraft-exact": exact}
    if task.candidates == 1:
        found["generate"] = peers.generate
        found["diffusers-block"] = lambda request: peers.diffusers(request, "block")
        found["diffusers-entropy"] = lambda request: peers.diffusers(request, "entropy")
    return found


def summarise(lm: TrigramLM, cases: list[Case], outcomes: list[Outcome], seed: int) -> dict[str, Any]:
    logs, seams = [], []
    for case, outcome in zip(cases, outcomes, strict=True):
        whole, seam = judged(lm, case, words(outcome.text))
        logs.append(whole)
        seams.append(seam)
    forwards = [o.forwards for o in outcomes]
    low, high = bootstrap_interval(logs, seed)
    return {
        "forwards_per_edit": statistics.mean(forwards),
        "ms_per_forward": statistics.median(1000 * o.seconds / max(1, o.forwards) for o in outcomes),
        "seconds_per_edit": statistics.median(o.seconds for o in outcomes),
        "tokens_per_forward": statistics.mean(o.new_tokens / max(1, o.forwards) for o in outcomes),
        "ppl": pooled_ppl(logs),
        "ppl_interval": [low, high],
        "ppl_seam": pooled_ppl(seams),
        "words": statistics.mean(len(words(o.text)) for o in outcomes),
        "empty": sum(1 for o in outcomes if not o.text.strip()),
        "examples": [o.text for o in outcomes[:3]],
    }


def main(argv: list[str] | None = None) -> int:
    parser = held_out_parser(__doc__ or "", "cases per task")
    parser.set_defaults(cases=8)
    parser.add_argument("--tasks", nargs="*", default=[t.name for t in TASKS])
    args = parser.parse_args(argv)
    engine, held_out = engine_and_held_out(args)
    lm = fluency_lm(args.corpus, args.seed)
    peers = Peers(engine, lm)
    sections = bench_sections(held_out)
    engine.warm_up()
    report: dict[str, Any] = {"machine": "2-core x86-64 CPU, shared and busy (other jobs running)", "tasks": {}}
    for task in (t for t in TASKS if t.name in args.tasks):
        cases = make_cases(sections, task, args.cases, args.seed)
        run = runners(peers, task)
        names = list(run)
        outcomes: dict[str, list[Outcome]] = {name: [] for name in names}
        for index, case in enumerate(cases):
            request = request_for(task, case, args.seed + index, DenoiseOptions())
            order = names[index % len(names) :] + names[: index % len(names)]  # rotate who goes first
            for name in order:
                outcomes[name].append(run[name](request))
            print(f"  {task.name} case {index + 1}/{len(cases)}", flush=True)
        rows = {name: summarise(lm, cases, outcomes[name], args.seed) for name in names}
        prompt = len(peers.layout(request_for(task, cases[0], 0, DenoiseOptions())).prompt_ids)
        report["tasks"][task.name] = {"cases": len(cases), "prompt_tokens": prompt, "rows": rows}
        print(f"\n{task.name}: {len(cases)} cases, prompt {prompt} tokens")
        print(
            f"  {'':50s} {'fwd':>5s} {'ms/fwd':>7s} {'edit s':>7s} {'tok/fwd':>7s} {'ppl':>7s} {'90%':>11s} "
            f"{'seam':>6s}"
        )
        for name, row in rows.items():
            low, high = row["ppl_interval"]
            print(
                f"  {PEER_NAMES[name]:50s} {row['forwards_per_edit']:5.1f} {row['ms_per_forward']:7.1f} "
                f"{row['seconds_per_edit']:7.2f} {row['tokens_per_forward']:7.2f} {row['ppl']:7.0f} "
                f"{low:5.0f}-{high:<5.0f} {row['ppl_seam']:6.0f}",
                flush=True,
            )
        if args.json:
            args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

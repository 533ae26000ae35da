"""A pruned output vocabulary for the transplant: the tokens English prose uses, and a tokenizer that can
produce no other id, so any text still round-trips.

Gemma 3's 262,144-token head is most of a CPU pass (~11 s against ~4 s pruned, issue #47); prose uses a
sixth of it. The kept set is: the special tokens, all 256 byte-fallback tokens ``<0x00>``..``<0xFF>``,
every token the corpus uses, and, closed under the BPE merges, every token those are built from (so the
pruned tokenizer segments the corpus exactly as Gemma 3's does). The pruned ``tokenizer.json`` keeps only
merges whose parts and result are kept: a word the corpus never had stops merging at kept pieces, and a
character with no kept piece falls back to its UTF-8 bytes, so every text encodes to kept ids and decodes
back to itself. Kept ids are renumbered in their old order, so pad 0, eos 1, bos 2 and unk 3 stay put.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer
from transformers import PreTrainedTokenizerBase, PreTrainedTokenizerFast

BYTE_TOKENS = [f"<0x{b:02X}>" for b in range(256)]
# Gemma's turn markers stay readable, as model/checkpoint/tokenization.py's conventions expect.
KEPT_SPECIALS = ("<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "<start_of_turn>", "<end_of_turn>")


def used_ids(tokenizer: PreTrainedTokenizerBase, texts: Iterable[str], batch: int = 256) -> Counter[int]:
    """How often each id occurs when ``texts`` are encoded (no special tokens added)."""
    counts: Counter[int] = Counter()
    chunk: list[str] = []
    for text in texts:
        chunk.append(text)
        if len(chunk) == batch:
            for ids in tokenizer(chunk, add_special_tokens=False)["input_ids"]:
                counts.update(ids)
            chunk = []
    if chunk:
        for ids in tokenizer(chunk, add_special_tokens=False)["input_ids"]:
            counts.update(ids)
    return counts


def _merge_pair(merge: str | list[str]) -> tuple[str, str]:
    if isinstance(merge, str):
        left, right = merge.split(" ", 1)
        return left, right
    return merge[0], merge[1]


def kept_ids(spec: dict[str, Any], used: Iterable[int]) -> list[int]:
    """The sorted source ids the pruned vocabulary keeps (module docstring), from a ``tokenizer.json`` dict."""
    model = spec["model"]
    if model["type"] != "BPE":
        raise ValueError(f"pruning handles BPE tokenizers (Gemma 3's); this one is {model['type']}")
    vocab: dict[str, int] = model["vocab"]
    names = {i: t for t, i in vocab.items()}
    for added in spec.get("added_tokens", []):
        names[added["id"]] = added["content"]
    keep = {names[i] for i in used if i in names}
    keep.update(t for t in (*KEPT_SPECIALS, *BYTE_TOKENS) if t in vocab)
    keep.update(a["content"] for a in spec.get("added_tokens", []) if a["content"] in KEPT_SPECIALS)
    missing = [t for t in BYTE_TOKENS if t not in vocab]
    if missing:
        raise ValueError(f"the tokenizer lacks byte-fallback tokens ({missing[:3]}...): pruning would lose text")
    parents: dict[str, list[tuple[str, str]]] = {}
    for merge in model.get("merges", []):
        left, right = _merge_pair(merge)
        parents.setdefault(left + right, []).append((left, right))
    stack = list(keep)
    while stack:
        for left, right in parents.get(stack.pop(), []):
            for part in (left, right):
                if part not in keep and part in vocab:
                    keep.add(part)
                    stack.append(part)
    ids = {vocab[t] for t in keep if t in vocab}
    ids.update(a["id"] for a in spec.get("added_tokens", []) if a["content"] in keep)
    return sorted(ids)


def prune_spec(spec: dict[str, Any], keep: list[int]) -> dict[str, Any]:
    """A copy of the ``tokenizer.json`` dict ``spec`` that knows only the ``keep`` ids, renumbered 0..n-1."""
    new_id = {old: new for new, old in enumerate(keep)}
    out = json.loads(json.dumps(spec))
    model = out["model"]
    vocab = {t: new_id[i] for t, i in model["vocab"].items() if i in new_id}
    model["vocab"] = vocab
    merges = []
    for merge in model.get("merges", []):
        left, right = _merge_pair(merge)
        if left in vocab and right in vocab and left + right in vocab:
            merges.append(merge)
    model["merges"] = merges
    out["added_tokens"] = [{**a, "id": new_id[a["id"]]} for a in out.get("added_tokens", []) if a["id"] in new_id]
    _renumber_post_processor(out.get("post_processor"), new_id)
    return out


def _renumber_post_processor(node: Any, new_id: dict[int, int]) -> None:
    """Template post-processors name special tokens by id; those ids move with the renumbering."""
    if isinstance(node, dict):
        if isinstance(node.get("ids"), list) and all(isinstance(i, int) for i in node["ids"]):
            node["ids"] = [new_id[i] for i in node["ids"]]
        for value in node.values():
            _renumber_post_processor(value, new_id)
    elif isinstance(node, list):
        for value in node:
            _renumber_post_processor(value, new_id)


def tokenizer_spec(tokenizer: PreTrainedTokenizerBase) -> dict[str, Any]:
    """The ``tokenizer.json`` dict behind a fast tokenizer."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise ValueError("pruning needs a fast (tokenizers-backed) tokenizer")
    spec: dict[str, Any] = json.loads(backend.to_str())
    return spec


def prune_tokenizer(tokenizer: PreTrainedTokenizerBase, keep: list[int]) -> PreTrainedTokenizerFast:
    """``tokenizer`` restricted to ``keep`` (its special tokens kept by name)."""
    spec = tokenizer_spec(tokenizer)
    pruned = Tokenizer.from_str(json.dumps(prune_spec(spec, keep)))
    names = {
        name: getattr(tokenizer, name)
        for name in ("pad_token", "eos_token", "bos_token", "unk_token")
        if getattr(tokenizer, name, None) is not None
    }
    fast = PreTrainedTokenizerFast(tokenizer_object=pruned, clean_up_tokenization_spaces=False, **names)
    return fast


def keep_tensor(keep: list[int]) -> torch.Tensor:
    return torch.tensor(keep, dtype=torch.long)


def save_keep(keep: list[int], folder: Path) -> None:
    """The source ids of the pruned vocabulary, in new-id order (the embedding rows the transplant took)."""
    (folder / "source_vocabulary.json").write_text(json.dumps({"source": "gemma-3-270m", "kept_ids": keep}))

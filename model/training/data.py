"""Corpus reading, the held-out split, and canvas examples that follow the engine's conventions.

A *section* is the unit of the held-out split: one TinyStories story, or a run of consecutive
paragraphs (about ``SECTION_CHARS`` characters) of a book. Windows never cross a section, so no
held-out text is ever seen in training, not even as context.

Canvas layouts (the engine builds the same ones at inference time, see ``model/edit/canvas.py``):

* continuation: ``[bos] + prefix`` in the encoder; all ``C`` canvas slots free, targets the next
  ``C`` tokens (then ``eos``, ``pad``… if the document ends);
* infill: ``S`` free slots holding the span, then the suffix pinned clean (then ``eos``, ``pad``…
  pinned if the document ends inside the canvas);
* variable-length gap: like infill, but the free slots hold ``[span][pad × k]`` so the model learns
  to leave surplus slots empty and ``fill`` can choose its length.

With ``WordEdges`` (``train --word-aligned``) canvases start, and spans end, between words, as the
editor's edits do: a writer's cursor or selection sits at a word boundary, never inside a word.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from transformers import PreTrainedTokenizerBase

PAD_ID, EOS_ID, BOS_ID = 0, 1, 2
SECTION_CHARS = 6000
STORY_SEPARATOR = "<|endoftext|>"


@dataclass(frozen=True)
class Section:
    """A contiguous piece of one source file; the unit of the train/held-out split."""

    source: str
    index: int
    text: str
    is_story: bool
    # Only true ends of a text (a story's end, a book's last section) teach the model to emit eos.
    ends_document: bool


def _book_paragraphs(raw: str) -> list[str]:
    """Paragraphs with Gutenberg's hard 70-column wrapping undone, as a writer would type them."""
    paragraphs = []
    for block in re.split(r"\n\s*\n", raw):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        if lines:
            paragraphs.append(" ".join(lines))
    return paragraphs


def read_sections(corpus_dir: Path, max_bytes_per_file: int | None = None) -> list[Section]:
    """All sections of the corpus, in a stable order (sorted file names, then position)."""
    sections: list[Section] = []
    for path in sorted(Path(corpus_dir).glob("*.txt")):
        raw = path.read_text(encoding="utf-8")
        if max_bytes_per_file is not None:
            raw = raw[:max_bytes_per_file]
        if path.name.startswith("tinystories"):
            stories = [s.strip() for s in raw.split(STORY_SEPARATOR) if s.strip()]
            sections += [Section(path.stem, i, s, True, True) for i, s in enumerate(stories)]
            continue
        chunks: list[str] = []
        current: list[str] = []
        size = 0
        for paragraph in _book_paragraphs(raw):
            current.append(paragraph)
            size += len(paragraph) + 1
            if size >= SECTION_CHARS:
                chunks.append("\n".join(current))
                current, size = [], 0
        if current:
            chunks.append("\n".join(current))
        sections += [
            Section(path.stem, i, text, False, i == len(chunks) - 1) for i, text in enumerate(chunks)
        ]
    return sections


def is_heldout(section: Section, fraction: float, seed: int) -> bool:
    """Hash-based, so the split is stable across runs and machines and independent of order."""
    digest = hashlib.sha256(f"{seed}:{section.source}:{section.index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def split_sections(
    sections: Sequence[Section], fraction: float = 0.02, seed: int = 0
) -> tuple[list[Section], list[Section]]:
    """(train, held-out) by whole sections, never by lines."""
    train = [s for s in sections if not is_heldout(s, fraction, seed)]
    heldout = [s for s in sections if is_heldout(s, fraction, seed)]
    return train, heldout


@dataclass
class TokenizedPool:
    """Token ids of many documents in one flat array (cheap to save, load and slice)."""

    ids: np.ndarray  # int32, all documents back to back
    starts: np.ndarray  # int64, start offset of each document
    lengths: np.ndarray  # int64
    ends_document: np.ndarray  # bool

    def doc(self, i: int) -> np.ndarray:
        return self.ids[self.starts[i] : self.starts[i] + self.lengths[i]]

    def save(self, path: Path) -> None:
        np.savez(path, ids=self.ids, starts=self.starts, lengths=self.lengths, ends=self.ends_document)

    @classmethod
    def load(cls, path: Path) -> TokenizedPool:
        z = np.load(path)
        return cls(z["ids"], z["starts"], z["lengths"], z["ends"])


def tokenize_sections(
    sections: Sequence[Section], tokenizer: PreTrainedTokenizerBase, batch: int = 2000
) -> TokenizedPool:
    """Encode sections with a ``PreTrainedTokenizerFast`` (no special tokens added)."""
    encoded: list[list[int]] = []
    for start in range(0, len(sections), batch):
        texts = [s.text for s in sections[start : start + batch]]
        encoded += tokenizer(texts, add_special_tokens=False)["input_ids"]
    lengths = np.array([len(e) for e in encoded], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    ids = np.fromiter((t for e in encoded for t in e), dtype=np.int32, count=int(lengths.sum()))
    ends = np.array([s.ends_document for s in sections], dtype=bool)
    return TokenizedPool(ids, starts, lengths, ends)


@dataclass
class CanvasBatch:
    """One rectangular training batch: every example shares the prefix length."""

    prefix: torch.Tensor  # (B, 1 + P) long: bos + prefix tokens
    targets: torch.Tensor  # (B, C) long: clean canvas
    free: torch.Tensor  # (B, C) bool: slots to noise and predict; the rest is pinned clean
    kind: torch.Tensor  # (B,) long: 0 continuation, 1 infill, 2 variable-length gap

    KINDS = ("continuation", "infill", "gap")


@dataclass(frozen=True)
class ExampleMix:
    """Probabilities of the three example kinds and of the prefix lengths (one per batch)."""

    continuation: float = 0.40
    infill: float = 0.35
    gap: float = 0.25
    # Mean ≈ 58 tokens: the encoder's prefix costs as much per token as the canvas but carries no
    # loss, so long prefixes are kept rare on a CPU budget.
    prefix_lengths: tuple[int, ...] = (0, 16, 32, 64, 96, 128)
    prefix_weights: tuple[float, ...] = (0.10, 0.15, 0.20, 0.25, 0.15, 0.15)


@dataclass(frozen=True)
class WordEdges:
    """Per vocabulary id, whether its text starts / ends with a letter or digit.

    Two neighbouring tokens that touch at letters or digits ("straw" + "berries") are one word; a
    space, a line break or punctuation between them is a word boundary.
    """

    starts: np.ndarray  # bool, (vocab,)
    ends: np.ndarray

    @classmethod
    def of(cls, tokenizer: PreTrainedTokenizerBase) -> WordEdges:
        texts = tokenizer.batch_decode([[i] for i in range(len(tokenizer))])
        special = set(tokenizer.all_special_ids)
        starts = [bool(t) and t[0].isalnum() and i not in special for i, t in enumerate(texts)]
        ends = [bool(t) and t[-1].isalnum() and i not in special for i, t in enumerate(texts)]
        return cls(np.array(starts), np.array(ends))

    def inside_word(self, doc: np.ndarray, i: int) -> bool:
        """Whether position ``i`` of ``doc`` (a cut before ``doc[i]``) falls inside a word."""
        return 0 < i < len(doc) and bool(self.ends[doc[i - 1]] and self.starts[doc[i]])

    def word_start(self, doc: np.ndarray, i: int, last: int) -> int:
        """The first word boundary at or after ``i``, not past ``last`` (``i`` itself if none)."""
        for j in range(i, last + 1):
            if not self.inside_word(doc, j):
                return j
        return i

    def span_end(self, doc: np.ndarray, start: int, span: int, longest: int) -> int:
        """``span`` moved to end between words: on to the word's end if that stays within ``longest``
        tokens, else back to its start (or unchanged if the span is one word too long for either)."""
        end = start + span
        for longer in range(end, start + longest + 1):
            if not self.inside_word(doc, longer):
                return longer - start
        for shorter in range(end - 1, start, -1):
            if not self.inside_word(doc, shorter):
                return shorter - start
        return span


def canvas_example(
    doc: np.ndarray,
    start: int,
    kind: int,
    canvas: int,
    ends_document: bool,
    rng: np.random.Generator,
    edges: WordEdges | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(targets, free) for the canvas beginning at ``doc[start]`` (the prefix is what precedes it).

    Past the end of a document the canvas holds ``eos`` then ``pad``, the engine's convention. With
    ``edges`` the span of an infill or gap example ends between words.
    """
    tail = doc[start : start + canvas]
    clean = np.full(canvas, PAD_ID, dtype=np.int64)
    clean[: len(tail)] = tail
    if len(tail) < canvas and ends_document:
        clean[len(tail)] = EOS_ID
    free = np.zeros(canvas, dtype=bool)
    half = canvas // 2
    if kind == 0:
        free[:] = True
        return clean, free
    if kind == 1:
        span = int(rng.integers(1, half + 1))
        if edges is not None:
            span = edges.span_end(doc, start, span, half)
        free[:span] = True
        return clean, free
    # Variable-length gap: `slots` free positions, of which only the first `span` hold text.
    slots = int(rng.integers(2, half + 1))
    span = min(int(rng.integers(1, slots + 1)), len(doc) - start)
    if edges is not None:
        span = edges.span_end(doc, start, span, min(slots, len(doc) - start))
    rest = doc[start + span :]
    targets = np.full(canvas, PAD_ID, dtype=np.int64)
    targets[:span] = doc[start : start + span]
    suffix = rest[: canvas - slots]
    targets[slots : slots + len(suffix)] = suffix
    if slots + len(suffix) < canvas and ends_document:
        targets[slots + len(suffix)] = EOS_ID
    free[:slots] = True
    return targets, free


class ExampleSampler:
    """Deterministic stream of ``CanvasBatch``es from two pools (stories and books) given a seed."""

    def __init__(
        self,
        pools: Sequence[TokenizedPool],
        pool_weights: Sequence[float],
        canvas: int,
        batch_size: int,
        mix: ExampleMix | None = None,
        seed: int = 0,
        edges: WordEdges | None = None,
    ) -> None:
        self.pools = list(pools)
        # An empty pool (e.g. no held-out book section in a tiny corpus) is never drawn from.
        weights = np.array([w if len(p.lengths) else 0.0 for p, w in zip(pools, pool_weights, strict=True)])
        self.pool_weights = weights / weights.sum()
        self.canvas = canvas
        self.batch_size = batch_size
        self.mix = mix or ExampleMix()
        self.rng = np.random.default_rng(seed)
        self.edges = edges

    def state(self) -> Mapping[str, Any]:
        return self.rng.bit_generator.state

    def set_state(self, state: Mapping[str, Any]) -> None:
        self.rng.bit_generator.state = state

    def _position(self, pool: TokenizedPool, prefix_len: int) -> tuple[int, int] | None:
        """A (document, canvas start) with exactly ``prefix_len`` tokens of context available."""
        for _ in range(50):
            d = int(self.rng.integers(len(pool.lengths)))
            n = int(pool.lengths[d])
            # Ending documents may run past their end (eos/pad), but keep ≥ 8 real tokens to predict;
            # others must hold the whole canvas.
            last = n - 8 if pool.ends_document[d] else n - self.canvas
            if prefix_len == 0:
                if last >= 0:
                    return d, 0
            elif last >= prefix_len:
                start = int(self.rng.integers(prefix_len, last + 1))
                if self.edges is not None:
                    start = self.edges.word_start(pool.doc(d), start, last)
                return d, start
        return None

    def next_batch(self) -> CanvasBatch:
        mix = self.mix
        weights = np.asarray(mix.prefix_weights) / np.sum(mix.prefix_weights)
        kind_p = np.array([mix.continuation, mix.infill, mix.gap]) / (mix.continuation + mix.infill + mix.gap)
        while True:
            prefix_len = int(self.rng.choice(mix.prefix_lengths, p=weights))
            rows: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = []
            for _ in range(self.batch_size):
                pool = self.pools[int(self.rng.choice(len(self.pools), p=self.pool_weights))]
                found = self._position(pool, prefix_len)
                if found is None:
                    break
                d, start = found
                doc = pool.doc(d)
                kind = int(self.rng.choice(3, p=kind_p))
                targets, free = canvas_example(
                    doc, start, kind, self.canvas, bool(pool.ends_document[d]), self.rng, self.edges
                )
                prefix = np.concatenate([[BOS_ID], doc[start - prefix_len : start]]).astype(np.int64)
                rows.append((prefix, targets, free, kind))
            if len(rows) == self.batch_size:
                break
        return CanvasBatch(
            prefix=torch.from_numpy(np.stack([r[0] for r in rows])),
            targets=torch.from_numpy(np.stack([r[1] for r in rows])),
            free=torch.from_numpy(np.stack([r[2] for r in rows])),
            kind=torch.tensor([r[3] for r in rows], dtype=torch.long),
        )


class PrefetchedBatches:
    """``sampler``'s batches, each made on a thread while the model trains on the one before: the same
    batches in the same order as ``sampler.next_batch()``. At 256 canvases a batch costs ~24 ms of Python
    and numpy, which a fast device step would otherwise wait for. ``state()`` is the sampler's state before
    the batch ``next_batch()`` returns next (the one being made is not consumed), so a checkpoint resumes
    exactly where training stopped."""

    def __init__(self, sampler: ExampleSampler) -> None:
        self.sampler = sampler
        self._next_state = copy.deepcopy(sampler.state())
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="batches")
        self._making: Future[CanvasBatch] = self._thread.submit(sampler.next_batch)

    def next_batch(self) -> CanvasBatch:
        batch = self._making.result()
        self._next_state = copy.deepcopy(self.sampler.state())  # the thread is idle until the submit below
        self._making = self._thread.submit(self.sampler.next_batch)
        return batch

    def state(self) -> Mapping[str, Any]:
        return self._next_state

    def close(self) -> None:
        self._making.cancel()
        self._thread.shutdown(wait=True)

"""The candidates still developing: their rows of a pass's batch and of the KV cache.

Several candidates (the editor's four drafts) develop side by side as one batch, and each stops on its own
when it has settled (``StableAndConfident``); a settled candidate keeps its canvas while the others go on.
Run as one batch to the end, its rows were computed and thrown away on every later pass: on held-out
sentences a quarter of all candidate-passes (a third for gaps). Once one has settled, the engine's pass
runs the model on the developing candidates' rows alone, with a cache of theirs alone, and puts their new
canvases back among the settled ones.

A candidate's numbers depend a little on which other rows share its batch (the experts' grouping and the
matrix products' blocking), so its tokens are not the ones it would get in the whole batch: the same
sampler, other floats. Only the library-exact engine, which must make ``generate()``'s tokens, runs every row.
"""

from __future__ import annotations

import copy
from typing import overload

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer, DynamicSlidingWindowLayer

# Cache layers whose rows :class:`LiveCaches` can take: their keys and values are all they hold per row.
ROW_LAYERS = (DynamicLayer, DynamicSlidingWindowLayer)
# The largest copy of the developing candidates' cache rows: a large model's long context costs more memory
# than its settled rows' passes would save.
LIVE_CACHE_BYTES = 256 * 1024 * 1024


def cache_bytes(cache: DynamicCache) -> int:
    """The bytes of ``cache``'s keys and values."""
    return sum(
        tensor.numel() * tensor.element_size()
        for layer in cache.layers
        for tensor in (getattr(layer, "keys", None), getattr(layer, "values", None))
        if isinstance(tensor, torch.Tensor)
    )


def live_rows(finished: torch.Tensor, cache: DynamicCache) -> torch.Tensor | None:
    """The rows of the candidates still developing, given the (batch,) ``finished`` flags; None to run the
    whole batch: none or all have settled, or the cache is not one whose rows can be taken (cheaply)."""
    if not bool(finished.any()) or bool(finished.all()):
        return None
    if not isinstance(cache, DynamicCache) or any(type(layer) not in ROW_LAYERS for layer in cache.layers):
        return None
    live = (~finished).nonzero().flatten()
    if cache_bytes(cache) * len(live) // len(finished) > LIVE_CACHE_BYTES:
        return None
    return live


@overload
def rows(live: torch.Tensor | None, tensor: torch.Tensor) -> torch.Tensor: ...
@overload
def rows(live: torch.Tensor | None, tensor: None) -> None: ...
def rows(live: torch.Tensor | None, tensor: torch.Tensor | None) -> torch.Tensor | None:
    """``tensor``'s ``live`` rows (its first dimension), or ``tensor`` itself when ``live`` or it is None."""
    return tensor if live is None or tensor is None else tensor.index_select(0, live)


def merged(whole: torch.Tensor, live: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """A copy of ``whole`` with ``values`` put in its ``live`` rows."""
    return whole.index_copy(0, live, values)


class LiveCaches:
    """One block's cache with the developing candidates' rows alone, kept for the set of rows last asked:
    candidates only ever settle during a block, so each set is made once and the last is never needed again."""

    def __init__(self) -> None:
        self._key: tuple[int, ...] = ()
        self._cache: DynamicCache | None = None

    def rows_of(self, cache: DynamicCache, live: torch.Tensor | None) -> DynamicCache:
        """``cache`` with its ``live`` rows alone (``cache`` itself for None); ``cache`` is left untouched."""
        if live is None:
            return cache
        key = tuple(live.tolist())
        if self._cache is None or key != self._key:
            taken = copy.copy(cache)
            taken.layers = [copy.copy(layer) for layer in cache.layers]
            taken.batch_select_indices(live)  # gives the copied layers new key and value tensors
            self._key, self._cache = key, taken
        return self._cache

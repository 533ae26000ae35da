"""Decoder layers run as TorchScript traces: the same aten operations, without Python between them.

On the built-in model a decoder layer is some sixty small operations on a (batch, 64, 192) canvas, and
on two CPU cores Python's part in calling them (module calls, keyword handling, the attention
dispatch) is a large share of the layer: replaying traces takes about 2.5 ms off a pass's 20 ms
forward in the engine (bench/engine_vs_library.py, README "Performance"). A trace
records each layer's operations once, with the encoder's cached keys and values as inputs, and replays
them from TorchScript's interpreter, so no Python runs per operation. The numbers are the eager
layer's, bit for bit, because the operations are the same, and that is checked rather than assumed:

* **Data-dependent Python is refused.** Tracing warns wherever Python reads a tensor's value. The
  only reads allowed are those in transformers' SDPA dispatch (``integrations/sdpa_attention.py``),
  which compare shapes (head size, query length), and shapes are checked next. Any other read, a
  failed trace, or a layer TorchScript cannot record leaves that layer eager.
* **Every new shape is checked.** The first call with a new batch, canvas or cache layout (the
  cache's length aside: traces are shape-generic there, and tests/test_traced_layers.py holds them to
  it) runs the eager layer too and keeps the trace only if the outputs are identical.
* **The graph runs as recorded** (``torch.jit.optimized_execution(False)``): no fusion pass may
  reorder arithmetic.
* **A hook anywhere in a layer** (a profiler, a test, an adapter) makes that layer eager: hooks do
  not fire inside a trace.

Only on the CPU, where Python sets the pace of a small model's pass; on a GPU the kernels do.
"""

from __future__ import annotations

import logging
import threading
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

import torch
from torch import nn

from model.runtime.cache_kwarg import with_cache

log = logging.getLogger(__name__)

# Where tracing may read a tensor as a Python value: transformers' SDPA dispatch compares shapes there.
_SHAPE_READS_ALLOWED = ("sdpa_attention.py",)

# Per decoder layer: its trace, or None where it cannot be traced (absent: not tried yet).
_traces: WeakKeyDictionary[nn.Module, _Traced | None] = WeakKeyDictionary()
_lock = threading.Lock()


@dataclass
class _Traced:
    trace: torch.jit.ScriptModule
    # The layer and its submodules, whose hooks would not fire in the trace (weakly: this is the value of
    # a weak-keyed entry for the layer, which a strong reference would keep alive).
    modules: tuple[weakref.ref[nn.Module], ...]
    verdicts: dict[tuple[Any, ...], bool] = field(default_factory=dict)  # per shape signature: trace == eager


class _CacheLayer:
    """One cache layer as the decoder's attention reads it: keys and values."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor) -> None:
        self.keys = keys
        self.values = values


class _ReadOnlyCache:
    """The little of a ``DynamicCache`` a decoder layer reads (its own layer's keys and values), built
    from tensors the trace takes as inputs."""

    is_compileable = False

    def __init__(self, layer_index: int, keys: torch.Tensor, values: torch.Tensor) -> None:
        self.layers: dict[int, _CacheLayer] = {layer_index: _CacheLayer(keys, values)}


class _LayerCall(nn.Module):
    """A decoder layer called with everything it reads as tensors, so a trace can take them as inputs."""

    def __init__(self, layer: nn.Module, layer_index: int) -> None:
        super().__init__()
        self.layer = layer
        self.layer_index = layer_index

    def forward(
        self,
        hidden: torch.Tensor,
        cos: torch.Tensor,
        sin: torch.Tensor,
        keys: torch.Tensor,
        values: torch.Tensor,
        positions: torch.Tensor,
    ) -> torch.Tensor:
        cache = _ReadOnlyCache(self.layer_index, keys, values)
        return self.layer.forward(  # type: ignore[no-any-return]
            hidden, position_embeddings=(cos, sin), attention_mask=None, position_ids=positions, **with_cache(cache)
        )


def call_layer(
    layer: nn.Module,
    layer_index: int,
    hidden: torch.Tensor,
    rotary: tuple[torch.Tensor, torch.Tensor],
    positions: torch.Tensor,
    cache: Any,
) -> torch.Tensor:
    """``layer.forward`` as the library's decoder calls it (no mask, the encoder's cache read-only), from
    its trace where that is safe (the module docstring), else eagerly."""
    inputs = _trace_inputs(layer_index, hidden, rotary, positions, cache)
    traced = _trace_of(layer, layer_index, inputs) if inputs is not None else None
    if inputs is not None and traced is not None and not _hooked(traced.modules):
        with torch.jit.optimized_execution(False):
            output = traced.trace(*inputs)
        signature = _signature(inputs)
        verdict = traced.verdicts.get(signature)
        if verdict is None:
            verdict = traced.verdicts[signature] = torch.equal(output, _eager(layer, hidden, rotary, positions, cache))
            if not verdict:
                log.info("decoder layer %d's trace differs from it at %s: eager there", layer_index, signature)
        if verdict:
            return output  # type: ignore[no-any-return]
    return _eager(layer, hidden, rotary, positions, cache)


def _eager(
    layer: nn.Module,
    hidden: torch.Tensor,
    rotary: tuple[torch.Tensor, torch.Tensor],
    positions: torch.Tensor,
    cache: Any,
) -> torch.Tensor:
    return layer.forward(  # type: ignore[no-any-return]
        hidden, position_embeddings=rotary, attention_mask=None, position_ids=positions, **with_cache(cache)
    )


def _trace_inputs(
    layer_index: int,
    hidden: torch.Tensor,
    rotary: tuple[torch.Tensor, torch.Tensor],
    positions: torch.Tensor,
    cache: Any,
) -> tuple[torch.Tensor, ...] | None:
    """The trace's inputs, or None where the layer must run eagerly."""
    if hidden.device.type != "cpu" or torch.is_grad_enabled():
        return None
    cache_layer = cache.layers[layer_index]
    keys, values = getattr(cache_layer, "keys", None), getattr(cache_layer, "values", None)
    if (
        not isinstance(keys, torch.Tensor)
        or not isinstance(values, torch.Tensor)
        or getattr(cache, "is_compileable", False)
    ):
        return None
    cos, sin = rotary
    return hidden, cos, sin, keys, values, positions


def _hooked(modules: tuple[weakref.ref[nn.Module], ...]) -> bool:
    for reference in modules:
        module = reference()
        if module is not None and (module._forward_hooks or module._forward_pre_hooks):
            return True
    return False


def _signature(inputs: tuple[torch.Tensor, ...]) -> tuple[Any, ...]:
    """Shapes, dtypes and contiguity of the inputs, the cache's length (keys and values, dimension 2) aside."""
    hidden, cos, sin, keys, values, positions = inputs
    return (
        *(t.shape for t in (hidden, cos, sin, positions)), keys.shape[:2], keys.shape[3:], values.shape[:2],
        values.shape[3:], *(t.dtype for t in inputs), *(t.is_contiguous() for t in inputs),
    )  # fmt: skip


def _trace_of(layer: nn.Module, layer_index: int, inputs: tuple[torch.Tensor, ...]) -> _Traced | None:
    with _lock:
        if layer not in _traces:
            trace = _record(layer, layer_index, inputs)
            _traces[layer] = None if trace is None else _Traced(trace, tuple(weakref.ref(m) for m in layer.modules()))
        return _traces[layer]


def _record(layer: nn.Module, layer_index: int, inputs: tuple[torch.Tensor, ...]) -> torch.jit.ScriptModule | None:
    """Trace one layer on ``inputs``; None if tracing fails or reads a tensor's value outside the allowed places."""
    if any(getattr(module, "traceable", True) is False for module in layer.modules()):
        # Known to read tensor values (quantized experts pick what to dequantize on the host): a trace would
        # be refused after a whole forward, which on the 26B-A4B's CPU layers costs seconds each.
        return None
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            trace = torch.jit.trace(_LayerCall(layer, layer_index), inputs, check_trace=False)
    except Exception:  # noqa: BLE001  a layer TorchScript cannot record stays eager
        log.debug("decoder layer %d could not be traced", layer_index, exc_info=True)
        return None
    reads = [
        w for w in caught
        if issubclass(w.category, torch.jit.TracerWarning) and not w.filename.endswith(_SHAPE_READS_ALLOWED)
    ]  # fmt: skip
    if reads:
        log.info("decoder layer %d reads tensor values in Python (%s:%d): eager", layer_index, reads[0].filename,
                 reads[0].lineno)  # fmt: skip
        return None
    return trace  # type: ignore[no-any-return]

"""The output layer's product through oneDNN on the CPU, for the narrow canvases of one draft.

On two CPU cores the built-in model's head (8,192 x 192) over a one-draft canvas of 64 positions took 2.80 ms as
``nn.Linear`` (MKL) and 2.26 ms through oneDNN's linear, its layout conversions included; the engine's pass at one
draft was 4% shorter (interleaved seed by seed), with the same tokens (issue #49). From about 128 rows MKL is as
fast or faster (the editor's four drafts), so wider inputs keep the module. The logits must stay the library's,
and that is checked rather than assumed, as the traced layers are (:mod:`model.runtime.traced_layers`): the first
product at each row count is compared with the module's, bit for bit, and a row count where they differ (or
oneDNN fails) keeps the module. A hook on the head, a weight that is not plain float32, or one too large to copy
also keep it.
"""

from __future__ import annotations

import logging
import weakref
from dataclasses import dataclass, field
from weakref import WeakKeyDictionary

import torch
from torch import nn

log = logging.getLogger(__name__)

ONEDNN_HEAD_MAX_ROWS = 64
# The copy in oneDNN's layout doubles the head's memory: only for heads as small as the built-in model's.
ONEDNN_HEAD_MAX_BYTES = 64 * 1024 * 1024


@dataclass
class _OneDnnHead:
    weight: torch.Tensor  # the head's weight in oneDNN's layout
    source: weakref.ref[torch.Tensor]  # the weight it was copied from, at ``version``
    version: int
    verdicts: dict[int, bool] = field(default_factory=dict)  # per row count: oneDNN's logits == the module's


_heads: WeakKeyDictionary[nn.Module, _OneDnnHead] = WeakKeyDictionary()


def head_logits(head: nn.Module, hidden: torch.Tensor) -> torch.Tensor:
    """``head(hidden)``, through oneDNN where that is checked to give the same logits and is faster."""
    rows = hidden.numel() // hidden.shape[-1] if hidden.numel() else 0
    if not _eligible(head, hidden, rows):
        return head(hidden)  # type: ignore[no-any-return]
    assert isinstance(head, nn.Linear)
    weight = head.weight
    entry = _heads.get(head)
    if entry is None or entry.source() is not weight or entry.version != weight._version:
        entry = _heads[head] = _OneDnnHead(weight.detach().to_mkldnn(), weakref.ref(weight), weight._version)
    verdict = entry.verdicts.get(rows)
    if verdict is False:
        return head(hidden)  # type: ignore[no-any-return]
    try:
        flat = hidden.reshape(rows, hidden.shape[-1]).contiguous()
        logits = torch._C._nn.mkldnn_linear(flat.to_mkldnn(), entry.weight, None).to_dense()
        logits = logits.view(*hidden.shape[:-1], logits.shape[-1])
    except RuntimeError:
        log.debug("oneDNN's linear failed for the head at %d rows", rows, exc_info=True)
        entry.verdicts[rows] = False
        return head(hidden)  # type: ignore[no-any-return]
    if verdict is None:
        theirs = head(hidden)
        verdict = entry.verdicts[rows] = torch.equal(logits, theirs)
        if not verdict:
            log.info("oneDNN's head differs from the module's at %d rows: the module there", rows)
            return theirs  # type: ignore[no-any-return]
    return logits


def _eligible(head: nn.Module, hidden: torch.Tensor, rows: int) -> bool:
    return (
        type(head) is nn.Linear
        and head.bias is None
        and not (head._forward_hooks or head._forward_pre_hooks)
        and 0 < rows <= ONEDNN_HEAD_MAX_ROWS
        and hidden.device.type == "cpu"
        and hidden.dtype == torch.float32
        and head.weight.dtype == torch.float32
        and head.weight.numel() * 4 <= ONEDNN_HEAD_MAX_BYTES
        and not torch.is_grad_enabled()
        and torch.backends.mkldnn.is_available()
    )

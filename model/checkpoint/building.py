"""One transformers model built at a time in this process.

transformers builds a model (``from_pretrained``, and a plain constructor's ``post_init``) inside context
managers that swap attributes for the whole process and put back whatever they found:
``PreTrainedModel.tie_weights`` becomes a no-op during ``from_pretrained``, ``init_weights`` and torch.nn.init's
functions become no-ops while weights are skipped. Two threads doing that at once put them back in the wrong
order, and the no-ops stay for good: every model built afterwards has untied embeddings and every load
fails with "Cannot copy out of meta tensor". A model built in one thread while another loads is untied too.
Two windows loading at once, or a reload while a load still runs, did exactly that, so everything in
Redraft that builds or loads a transformers model does it under :data:`MODEL_BUILDING`.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import DiffusionGemmaConfig, DiffusionGemmaForBlockDiffusion

# Reentrant: a build may nest another (a loader that builds a skeleton, a transplant that builds its source).
MODEL_BUILDING = threading.RLock()


def new_model(config: DiffusionGemmaConfig) -> DiffusionGemmaForBlockDiffusion:
    """A new DiffusionGemma with freshly initialised weights (ties made), built under :data:`MODEL_BUILDING`."""
    from transformers import DiffusionGemmaForBlockDiffusion

    with MODEL_BUILDING:
        return DiffusionGemmaForBlockDiffusion(config)

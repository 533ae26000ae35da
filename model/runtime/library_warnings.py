"""Library warnings Redraft cannot act on, silenced here and nowhere else.

``redraft fill`` and ``redraft rewrite`` promise a quiet stderr apart from Redraft's own messages (scripts
read it), and the editor's terminal should stay clean. A warning about *our* calls (a renamed argument,
an API of a library we use that is going away) is ours to fix, never to hide: ``scripts/test-newest``
runs the suite on the newest releases so such a warning is found on our schedule. Only the warnings
below, which libraries raise about their own code, are filtered; each names where it comes from.
Importing this module installs them; ``model/__init__.py`` imports it before anything loads torch.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass


@dataclass(frozen=True)
class LibraryWarning:
    category: type[Warning]
    message: str  # a regular expression matched at the start of the warning's text
    source: str  # where it comes from and why it is not ours to fix


KNOWN: tuple[LibraryWarning, ...] = (
    LibraryWarning(
        DeprecationWarning,
        r"`torch\.jit\.script_method` is deprecated",
        "torch 2.13's own torch/utils/mkldnn.py uses it when torch.fx.experimental loads (during model loading)",
    ),
)

# Loggers whose warnings say nothing a writer can act on, raised to ERROR.
QUIET_LOGGERS: dict[str, str] = {
    # On CPUs with AVX512-BF16, importing bitsandbytes warns that the optional `kernels` package (which
    # fetches compiled kernels from a hub at run time) is missing. Redraft never fetches code.
    "bitsandbytes.backends.cpu.ops": "bitsandbytes' optional hub kernels",
}


def install() -> None:
    """Filter :data:`KNOWN` and quieten :data:`QUIET_LOGGERS`; idempotent."""
    for known in KNOWN:
        warnings.filterwarnings("ignore", message=known.message, category=known.category)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)


install()

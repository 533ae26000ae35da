"""The keyword that hands DiffusionGemma its KV cache, whichever transformers is installed.

transformers 5.24 renamed ``past_key_values=`` to ``cache=`` on every DiffusionGemma forward and warns
(FutureWarning, removal in 5.40) on each call that still uses the old name; 5.23, the floor of our
range, knows only ``past_key_values=``. The name is read once from the installed signature, so the
newer library never warns and the older one still gets its cache. Every forward Redraft runs passes
its cache through :func:`with_cache`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from transformers import DiffusionGemmaForBlockDiffusion


def cache_keyword(forward: Callable[..., Any]) -> str:
    """``"cache"`` where ``forward`` takes it, else the older ``"past_key_values"``.

    ``inspect.signature`` follows the ``__wrapped__`` chain that the library's decorators keep, so it
    sees the real parameters, not the wrappers' ``*args, **kwargs``.
    """
    return "cache" if "cache" in inspect.signature(forward).parameters else "past_key_values"


CACHE_KEYWORD = cache_keyword(DiffusionGemmaForBlockDiffusion.forward)


def with_cache(cache: object) -> dict[str, Any]:
    """``{CACHE_KEYWORD: cache}``, to splat into a DiffusionGemma forward call."""
    return {CACHE_KEYWORD: cache}

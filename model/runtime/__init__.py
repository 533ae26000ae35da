"""How the model is called: the three calls of an edit and what keeps them fast and the library quiet.

:mod:`forward` (the prefix into the KV cache, the lean decoder pass checked bit for bit against
``model(...)``, a finished block committed), :mod:`traced_layers` (decoder layers replayed from TorchScript
traces on the CPU), :mod:`conditioning` (the per-position self-conditioning signal, for the loop and for
training), :mod:`cache_kwarg` (the keyword that hands DiffusionGemma its cache, whichever transformers is
installed), :mod:`allocator` (freed vocabulary-sized tensors kept for the next pass) and
:mod:`library_warnings` (the library warnings Redraft cannot act on, silenced in one place).

No sampling decisions here (:mod:`model.edit`) and no loading (:mod:`model.checkpoint`).
Modules outside ``model/`` use ``cache_kwarg`` and ``library_warnings``; the rest serve the loop.
"""

__all__ = ["cache_kwarg", "library_warnings"]

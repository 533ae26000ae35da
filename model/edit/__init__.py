"""What happens to one edit: the request, its layout on canvases, and the one sampler loop that develops it.

Follow a request through the room: :mod:`request` (``EditRequest``, ``DenoiseOptions``: what a client asks
for, checked field by field) → :mod:`canvas` (the prompt, free slots per block, the pinned suffix, the
whitespace moved across the span's edges) → :mod:`engine` (``Engine.edit``, the loop) → per pass
:mod:`bans` (what a slot may not hold), :mod:`sampling` (which tokens to accept, when a block has settled)
and :mod:`draws` (the sample, as ``torch.multinomial`` draws it) → after the last pass :mod:`polish` (the
least likely tokens re-developed) and :mod:`ranking` (candidates scored) → :mod:`passes` (``Pass`` and
``EditResult``, what the loop yields and returns). :mod:`vocabulary` is the tokenizer as the loop needs it.
Beside the loop, :mod:`word_choices` is one reading of a word's place (``Engine.word_choices``, Words That Fit).

Around it, :mod:`shape` keeps the writer's layout: whitespace at the span's edges stays outside the canvas,
and a sentence's ending is held after the new text (:mod:`wrapping`: a hand-wrapped paragraph is rewritten
as prose and wrapped again; :mod:`typography`: the new text's quotation marks are the document's kind);
:mod:`changes` turns a finished draft into word-level
hunks against the original span, each for the writer to take or leave.

The model calls themselves live in :mod:`model.runtime`; the weights come from :mod:`model.checkpoint`.
:mod:`budget` prices an edit by the engine's measured pass: what would take too long is refused, and where
the editor asks, fewer drafts are developed.

Modules outside ``model/`` use ``request``, ``passes``, ``shape``, ``changes``, ``engine``, ``budget`` (the
editor's limit for its drafts) and ``typography`` (the editor types marks as drafts get them), and two
pieces for benches: ``canvas``, laid out the same for another library's sampler (``bench/peers.py``), and
``sampling``, whose stopping rule ``bench/stop_tuning.py`` records; ``word_choices`` for what Words That Fit
offers (and ``bench/word_choices.py``, which reads the same place with the writer's word left in); the rest are
the loop's own pieces.
"""

__all__ = [
    "budget", "canvas", "changes", "engine", "passes", "request", "sampling", "shape", "typography", "word_choices",
    "wrapping",
]  # fmt: skip

"""Training recipe for Redraft's built-in DiffusionGemma checkpoint (``resources/models/redraft-tiny``).

Modules: ``data`` (corpus, held-out split, canvas examples), ``tokenizer`` (8k byte-level BPE),
``objective`` (uniform-state noise, self-conditioning, loss), ``train`` (the loop, with checkpoints
and resume), ``evaluate`` (held-out denoising and infill accuracy) and ``export`` (checkpoint →
shipped model folder). Training never runs in CI; ``tests/test_training.py`` keeps it alive.

The Gemma 3 transplant (#47, docs/TRANSPLANT.md): ``transplant`` (the exact bridges), ``transplant_calibrate``
(o_proj refitted, agreement measured), ``transplant_vocab`` (the pruned vocabulary and tokenizer),
``transplant_source`` (Gemma 3 270M from the ``transplant`` extra), ``transplant_build`` (the folder), and
``adapt`` / ``adapt_compare`` (the adaptation recipe and its CPU comparison); ``tests/test_transplant.py``.
"""

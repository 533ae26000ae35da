"""Training recipe for Redraft's built-in DiffusionGemma checkpoint (``resources/models/redraft-tiny``).

Modules: ``data`` (corpus, held-out split, canvas examples), ``tokenizer`` (8k byte-level BPE),
``objective`` (uniform-state noise, self-conditioning, loss), ``train`` (the loop, with checkpoints
and resume), ``evaluate`` (held-out denoising and infill accuracy) and ``export`` (checkpoint →
shipped model folder). Training never runs in CI; ``tests/test_training.py`` keeps it alive.
"""

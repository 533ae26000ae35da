"""The built-in model's evaluation, as ``bench/builtin_model_eval.py`` and ``bench/server_modes.py`` run it.

``cases`` (held-out fills and rewrites from the corpus' held-out split), ``judge`` (the word trigram model
that scores fluency, with bootstrap intervals) and ``runs`` (fills and rewrites through the engine, and
the sampler sweep). The scripts in ``bench/`` are the commands; these are their parts.
"""

"""Start vLLM's OpenAI-compatible server with the CPU build's workarounds in every process it starts.

Runs with the vLLM virtual environment's Python (``scripts/test-vllm`` makes it), never Redraft's, and
imports nothing of ours. The workarounds live in one place, ``scripts/vllm_cpu/sitecustomize.py``, each
with a note of when it can go; this launcher puts that folder first on ``PYTHONPATH`` so that every
process of the server applies them at start-up (vLLM runs the model in subprocesses). Arguments are
those of ``python -m vllm.entrypoints.openai.api_server``:

    python scripts/vllm_launcher.py --model resources/models/redraft-tiny --language-model-only \\
        --host 127.0.0.1 --port 8811

The ``vllm`` command of the ``vllm-cpu`` package fails to find its own version under that package name,
hence the module. Workaround 3 is an argument: ``--language-model-only`` (DiffusionGemma's config carries
a vision tower that the text server does not need); this launcher adds it when it is missing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main() -> None:
    here = Path(__file__).resolve().parent / "vllm_cpu"
    paths = [str(here), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    os.environ["REDRAFT_VLLM_WORKAROUNDS"] = "1"
    os.environ.setdefault("TRITON_INTERPRET", "1")
    args = sys.argv[1:]
    if "--language-model-only" not in args:
        args.append("--language-model-only")
    os.execv(sys.executable, [sys.executable, "-m", "vllm.entrypoints.openai.api_server", *args])


if __name__ == "__main__":
    main()

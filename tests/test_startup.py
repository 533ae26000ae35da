"""The editor's window shows before torch loads: the GUI's modules import neither torch nor transformers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_window_and_the_cli_import_without_torch() -> None:
    # torch and transformers take seconds to import; the model thread imports them after the window shows.
    code = (
        "import sys; import app.gui, app.cli, app.window.main_window, app.rewrite.worker, app.dialogs.settings; "
        "from model.server import Endpoint, connect; "  # Settings' Test connection
        "heavy = sorted(m for m in ('torch', 'transformers', 'bitsandbytes') if m in sys.modules); "
        "print(','.join(heavy))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_the_built_in_model_loads_and_edits_without_bitsandbytes() -> None:
    # bitsandbytes' import pulls in torch's compiler: ~2.5 s of the editor's wait for the built-in model, which
    # is not quantized. Only a quantized model imports it (model.checkpoint.lazy_bnb).
    code = (
        "import sys; from model import EditRequest, Engine, load; "
        "engine = Engine(load(None, device='cpu')); "
        "engine.run(EditRequest(prefix='The cat sat. ', suffix=' It was happy.', mode='fill', max_new_tokens=4)); "
        "print('bitsandbytes' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False"

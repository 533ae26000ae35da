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

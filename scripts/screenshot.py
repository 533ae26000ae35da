"""Take docs/screenshot.png: the real window under Xvfb, mid-rewrite.

Run:  xvfb-run -s "-screen 0 1280x800x24" python scripts/screenshot.py [MODEL] [OUT]
Needs Debian's xvfb and libxcb-cursor0 (Qt 6.5+ will not load its xcb plugin without it), and pngquant to keep
the picture small (every byte of the tree travels in each call of the GPU plan).
MODEL defaults to the built-in model when it is installed, else a tiny random-weight one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "xcb")

import torch  # noqa: E402
from PySide6.QtCore import QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from app.rewrite.worker import Ink  # noqa: E402
from app.settings import SettingsStore  # noqa: E402
from app.window.main_window import MainWindow  # noqa: E402
from model.checkpoint.loading import builtin_model_folder, resources_dir  # noqa: E402
from model.checkpoint.tiny import build_tiny_checkpoint  # noqa: E402

SENTENCE = "She wrote the letter twice, then tore up both copies and walked to the harbour instead."
MIN_SETTLED = 5
MIN_NOISE = 4
LAST_CHANCE_PASS = 40


def rewrite_when_ready(window: MainWindow, sentence: str, then: Callable[[], None]) -> None:
    """Once the window's model is loaded, select ``sentence`` and rewrite it, then call ``then``."""
    if window.model_info is None:
        QTimer.singleShot(100, lambda: rewrite_when_ready(window, sentence, then))
        return
    begin = window.editor.plain_text().index(sentence)
    window.editor.select_range(begin, begin + len(sentence))
    window.rewrite_selection()
    then()


def keep_small(picture: Path) -> None:
    """``picture`` saved again in 256 colours by pngquant, where it is installed and that is smaller: a window's
    flat colours look the same, at less than half the bytes (docs/'s two screenshots: 205 KB -> 92 KB)."""
    before = picture.stat().st_size
    if shutil.which("pngquant") is None:
        print(f"{picture}: {before:,} bytes in full colour; install pngquant to save it in 256 colours")
        return
    # Exit status 98/99: not smaller, or below the quality floor; the full-colour file is kept then.
    subprocess.run(["pngquant", "--force", "--skip-if-larger", "--output", str(picture), "256", str(picture)],
                   check=False)  # fmt: skip
    print(f"{picture}: {before:,} -> {picture.stat().st_size:,} bytes")


def main() -> int:
    torch.set_num_threads(1)
    scratch = Path(tempfile.mkdtemp(prefix="redraft-shot-"))
    if len(sys.argv) > 1 and sys.argv[1]:
        model = sys.argv[1]
    elif builtin_model_folder().is_dir():
        model = "builtin"
    else:
        model = str(build_tiny_checkpoint(scratch / "tiny"))
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("docs/screenshot.png")

    app = QApplication(sys.argv)
    settings = SettingsStore(QSettings(str(scratch / "redraft.ini"), QSettings.Format.IniFormat))
    settings.update(model=model, device="cpu", max_denoising_steps=48, pass_display_ms=250, theme="light")
    if "tiny" in model:
        # Random weights are unsure of every token; a cooler, looser sampler lets several lock in per
        # pass, so the picture shows settled ink among the noise as a trained model's passes do.
        settings.update(t_max=0.3, t_min=0.1, entropy_bound=50.0, random_seed=False, seed=11)
    window = MainWindow(settings)
    window.move(0, 0)
    window.resize(1280, 800)
    window.show()
    window.open_path(resources_dir() / "sample.md")

    # (words in ink, slots still noise) per pass: ink comes in runs of adjacent tokens (one segment for
    # a whole settled phrase), noise one segment per slot.
    settled: list[tuple[int, int]] = []
    window.service.worker.passReady.connect(
        lambda _job, painted: settled.append(
            (
                sum(len(s.text.split()) for s in painted.frames[0] if s.ink is not Ink.NOISE),
                sum(s.ink is Ink.NOISE for s in painted.frames[0]),
            )
        )
    )

    def wait_for_passes() -> None:
        # A pass that shows both: several tokens in ink, several still noise. A trained model settles
        # most tokens in a few passes, a random one needs many.
        run = window.run
        inked, noise = settled[-1] if settled else (0, 0)
        ready = inked >= MIN_SETTLED and noise >= MIN_NOISE
        developing = run is not None and run.result is None
        # Shoot once the pass is right, or before the rewrite ends without one (never wait forever).
        if run is None or (developing and not ready and run.passes < LAST_CHANCE_PASS):
            QTimer.singleShot(20, wait_for_passes)
            return
        QTimer.singleShot(60, shoot)  # let the pass paint

    def shoot() -> None:
        screen = app.primaryScreen()
        picture = screen.grabWindow(0, 0, 0, window.width(), window.height())
        out.parent.mkdir(parents=True, exist_ok=True)
        picture.save(str(out))
        print(f"saved {out} ({picture.width()}x{picture.height()}) at pass {window.run.passes if window.run else '?'}")
        keep_small(out)
        window.cancel_rewrite()
        window.editor.document().setModified(False)
        window.close()

    QTimer.singleShot(300, lambda: rewrite_when_ready(window, SENTENCE, wait_for_passes))
    return app.exec()


if __name__ == "__main__":
    raise SystemExit(main())

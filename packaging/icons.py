"""Render the app icon (resources/icons/redraft.svg) into what the installers need.

    python packaging/icons.py OUT_DIR

writes OUT_DIR/hicolor/<n>x<n>/apps/redraft.png for the Linux icon theme, OUT_DIR/redraft.png (256 px)
and OUT_DIR/redraft.ico (16-256 px) for Windows. Qt renders the SVG, so the icons match what the
editor shows; the .ico is written here (PNG-compressed entries, which Windows reads since Vista).
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SVG = ROOT / "resources" / "icons" / "redraft.svg"
THEME_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)


def ico_bytes(pngs: list[tuple[int, bytes]]) -> bytes:
    """An .ico holding the given (size, PNG data) images; 256 is stored as 0 in the one-byte fields."""
    header = struct.pack("<HHH", 0, 1, len(pngs))
    offset = len(header) + 16 * len(pngs)
    entries, blobs = b"", b""
    for size, data in pngs:
        if not 1 <= size <= 256:
            raise ValueError(f"an .ico entry is 1 to 256 pixels, not {size}")
        side = size % 256
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(data), offset + len(blobs))
        blobs += data
    return header + entries + blobs


def render_png(size: int) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        raise RuntimeError(f"Qt cannot read {SVG}")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # the stubs want bytes, the binding a str
    return bytes(data.data())


def main(out: Path) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    _app = QGuiApplication.instance() or QGuiApplication([])
    pngs = {size: render_png(size) for size in sorted({*THEME_SIZES, *ICO_SIZES})}
    for size in THEME_SIZES:
        target = out / "hicolor" / f"{size}x{size}" / "apps" / "redraft.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(pngs[size])
    scalable = out / "hicolor" / "scalable" / "apps" / "redraft.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    scalable.write_bytes(SVG.read_bytes())
    (out / "redraft.png").write_bytes(pngs[256])
    (out / "redraft.ico").write_bytes(ico_bytes([(size, pngs[size]) for size in ICO_SIZES]))


if __name__ == "__main__":
    main(Path(sys.argv[1]))

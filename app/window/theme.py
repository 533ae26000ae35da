"""Fusion with a light or dark palette that follows the system scheme unless Settings overrides it, and the
typeface the text is set in."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette, QTextCharFormat
from PySide6.QtWidgets import QApplication

Role = QPalette.ColorRole
Group = QPalette.ColorGroup
# The text's book serifs, the first one installed; Settings ▸ Appearance may put the writer's choice first.
PROSE_FONTS = ("Charter", "Iowan Old Style", "Georgia", "Source Serif 4", "Noto Serif", "DejaVu Serif", "serif")


def prose_families(family: str) -> list[str]:
    """The font families the text is set in: the writer's choice, then the book serifs for what it lacks."""
    return [family, *PROSE_FONTS] if family else list(PROSE_FONTS)


_LIGHT = {
    Role.Window: "#f3f1ec",
    Role.WindowText: "#24211d",
    Role.Base: "#fdfcf9",
    Role.AlternateBase: "#f0ede6",
    Role.Text: "#24211d",
    Role.Button: "#ebe8e1",
    Role.ButtonText: "#24211d",
    Role.ToolTipBase: "#fffdf5",
    Role.ToolTipText: "#24211d",
    Role.PlaceholderText: "#8c877d",
    Role.Highlight: "#3d6fb6",
    Role.HighlightedText: "#ffffff",
    Role.Link: "#2f5f9e",
    Role.Mid: "#c9c4b9",
    Role.Dark: "#a39d90",
    Role.Light: "#ffffff",
}
_DARK = {
    Role.Window: "#24252a",
    Role.WindowText: "#e6e3dc",
    Role.Base: "#1b1c20",
    Role.AlternateBase: "#2a2b31",
    Role.Text: "#e6e3dc",
    Role.Button: "#2f3036",
    Role.ButtonText: "#e6e3dc",
    Role.ToolTipBase: "#2f3036",
    Role.ToolTipText: "#e6e3dc",
    Role.PlaceholderText: "#85827b",
    Role.Highlight: "#5b8ad6",
    Role.HighlightedText: "#ffffff",
    Role.Link: "#8fb4ef",
    Role.Mid: "#45464d",
    Role.Dark: "#15161a",
    Role.Light: "#3a3b42",
}


@dataclass(frozen=True)
class CanvasColors:
    """How a developing span is painted: settled ink, the pass's fresh tokens, and faded noise."""

    ink: QColor
    canvas: QColor  # background under the whole developing span
    fresh: QColor  # background of tokens that locked in on this pass
    noise: QColor  # foreground of slots not yet accepted
    review: QColor  # background of a finished rewrite waiting for Accept or Reject


@dataclass(frozen=True)
class ChangeColors:
    """Rewrite ▸ Show Changes (app/rewrite/tracked_changes.py): a draft's words against the original's."""

    removed: QColor  # the original's words a change takes out, struck through
    added: QColor  # the draft's words a change puts in, underlined
    current: QColor  # background of the change Next and Previous Change are on


def change_colors(dark: bool) -> ChangeColors:
    # Each ink keeps a 4.5:1 contrast on the span's review tint, on the current change's and in the drafts panel.
    if dark:
        return ChangeColors(removed=QColor("#ffa898"), added=QColor("#8fdca4"), current=QColor(233, 184, 77, 50))
    return ChangeColors(removed=QColor("#a82e1c"), added=QColor("#1b6633"), current=QColor(240, 190, 60, 100))


def system_is_dark() -> bool:
    hints = QGuiApplication.styleHints()
    return hints.colorScheme() == Qt.ColorScheme.Dark


def resolve_dark(theme: str) -> bool:
    return system_is_dark() if theme == "system" else theme == "dark"


def build_palette(dark: bool) -> QPalette:
    palette = QPalette()
    for role, color in (_DARK if dark else _LIGHT).items():
        palette.setColor(role, QColor(color))
    disabled = QColor("#6f6d68") if dark else QColor("#a9a59c")
    for role in (Role.Text, Role.WindowText, Role.ButtonText):
        palette.setColor(Group.Disabled, role, disabled)
    return palette


def apply_theme(app: QApplication, theme: str) -> bool:
    """Fusion plus our palette; returns whether the dark palette is in use."""
    dark = resolve_dark(theme)
    app.setStyle("Fusion")
    app.setPalette(build_palette(dark))
    return dark


def canvas_colors(dark: bool) -> CanvasColors:
    if dark:
        return CanvasColors(
            ink=QColor("#e6e3dc"),
            canvas=QColor(91, 138, 214, 38),
            fresh=QColor(233, 184, 77, 84),  # lighter than light mode's: the ink on it keeps a 4.5:1 contrast
            noise=QColor(230, 227, 220, 80),
            review=QColor(91, 138, 214, 60),
        )
    return CanvasColors(
        ink=QColor("#24211d"),
        canvas=QColor(61, 111, 182, 26),
        fresh=QColor(240, 190, 60, 140),
        noise=QColor(36, 33, 29, 72),
        review=QColor(61, 111, 182, 46),
    )


def recolored(text_format: QTextCharFormat, old: CanvasColors, new: CanvasColors) -> QTextCharFormat:
    """``text_format`` with ``old``'s span colours swapped for ``new``'s: a span painted before the theme
    changed takes the new theme's colours (it kept the dark ones on a light page, the ink unreadable)."""
    out = QTextCharFormat(text_format)
    if text_format.background().style() != Qt.BrushStyle.NoBrush:
        for before, after in ((old.canvas, new.canvas), (old.fresh, new.fresh), (old.review, new.review)):
            if text_format.background().color().rgba() == before.rgba():
                out.setBackground(after)
                break
    if text_format.foreground().style() != Qt.BrushStyle.NoBrush:
        for before, after in ((old.ink, new.ink), (old.noise, new.noise)):
            if text_format.foreground().color().rgba() == before.rgba():
                out.setForeground(after)
                break
    return out

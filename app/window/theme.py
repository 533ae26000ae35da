"""Fusion with a light or dark palette that follows the system scheme unless Settings overrides it, and the
typeface the text is set in."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPalette, QPen, QTextCharFormat
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleFactory, QStyleOption, QWidget

Role = QPalette.ColorRole
Group = QPalette.ColorGroup
# The text's book serifs, the first one installed; Settings ▸ Appearance may put the writer's choice first.
PROSE_FONTS = ("Charter", "Iowan Old Style", "Georgia", "Source Serif 4", "Noto Serif", "DejaVu Serif", "serif")


def prose_families(family: str) -> list[str]:
    """The font families the text is set in: the writer's choice, then the book serifs for what it lacks."""
    return [family, *PROSE_FONTS] if family else list(PROSE_FONTS)


# A link on paper (a PDF, a print) as in the light theme: white paper is the light theme's.
PAPER_LINK = QColor("#2f5f9e")
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
    Role.Link: PAPER_LINK.name(),
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


# The edge of a check box, a radio button, a text field, a spin box or a list to choose from: 3:1 or more against
# the window (WCAG's non-text contrast). Fusion draws it in the window's colour darkened, 1.1:1 on the dark theme
# (a check box was a black square on grey) and 2:1 on the light one.
CONTROL_EDGES = {False: QColor("#8a857b"), True: QColor("#7d7b76")}
_EDGED_PRIMITIVES = {
    QStyle.PrimitiveElement.PE_IndicatorCheckBox, QStyle.PrimitiveElement.PE_IndicatorRadioButton,
    QStyle.PrimitiveElement.PE_FrameLineEdit,
}  # fmt: skip
_EDGED_CONTROLS = {QStyle.ComplexControl.CC_SpinBox, QStyle.ComplexControl.CC_ComboBox}


class EdgedFusion(QProxyStyle):
    """Fusion, with the edges of the controls a writer sets drawn over in ``CONTROL_EDGES``' colour (a focused one
    keeps Fusion's highlight)."""

    def __init__(self) -> None:
        super().__init__(QStyleFactory.create("Fusion"))

    def drawPrimitive(self, element: QStyle.PrimitiveElement, option: QStyleOption, painter: QPainter,
                      widget: QWidget | None = None) -> None:  # fmt: skip  # noqa: N802 - Qt's name
        super().drawPrimitive(element, option, painter, widget)
        if element in _EDGED_PRIMITIVES:
            field = element == QStyle.PrimitiveElement.PE_FrameLineEdit
            _edge(option, painter, round_edge=element == QStyle.PrimitiveElement.PE_IndicatorRadioButton, field=field)

    def drawComplexControl(self, control: QStyle.ComplexControl, option: QStyleOption, painter: QPainter,
                           widget: QWidget | None = None) -> None:  # fmt: skip  # noqa: N802 - Qt's name
        super().drawComplexControl(control, option, painter, widget)  # type: ignore[arg-type]
        if control in _EDGED_CONTROLS and not (control == QStyle.ComplexControl.CC_ComboBox and _flat(option)):
            _edge(option, painter, round_edge=False, field=True)


def _flat(option: QStyleOption) -> bool:
    return not getattr(option, "frame", True)  # a combo box drawn without its frame (in a table, say)


def _edge(option: QStyleOption, painter: QPainter, round_edge: bool, field: bool = False) -> None:
    if field and option.state & QStyle.StateFlag.State_HasFocus:
        return  # Fusion's highlight round a focused field says where the keys go
    dark = option.palette.color(Role.Window).lightness() < 128
    edge = QColor(CONTROL_EDGES[dark])
    if not option.state & QStyle.StateFlag.State_Enabled:
        edge.setAlphaF(0.5)
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QPen(edge, 1))
    painter.setBrush(Qt.BrushStyle.NoBrush)
    rect = QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5)
    if round_edge:
        painter.drawEllipse(rect.adjusted(1, 1, -1, -1))
    else:
        painter.drawRoundedRect(rect, 2, 2)
    painter.restore()


def apply_theme(app: QApplication, theme: str) -> bool:
    """Fusion, its controls' edges drawn to be seen, plus our palette; returns whether the dark palette is in use."""
    dark = resolve_dark(theme)
    if not isinstance(app.style(), EdgedFusion):
        app.setStyle(EdgedFusion())
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

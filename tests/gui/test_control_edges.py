"""The controls a writer sets (Find's Match case, Settings' check boxes, text fields, spin boxes) show their edges
against the window in both themes: 3:1 or more, WCAG's non-text contrast. Fusion's own edge is the window's colour
darkened: on the dark theme an unchecked box was a black square on grey (1.1:1)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication, QCheckBox, QLineEdit, QStyle, QStyleOptionButton, QVBoxLayout, QWidget
from test_trial_rest import _contrast

from app.window.theme import apply_theme


@pytest.fixture
def themed(qapp: QApplication) -> Iterator[QApplication]:
    palette = qapp.palette()
    yield qapp
    qapp.setPalette(palette)


def strongest_edge(image: QImage, left: int, top: int, height: int, paper: QColor) -> float:
    """The highest contrast against ``paper`` among the pixels of the column at ``left`` (and the one beside it),
    over the middle half of ``height`` rows from ``top``."""
    return max(
        _contrast(image.pixelColor(x, y), paper)
        for x in (left, left + 1)
        for y in range(top + height // 4, top + 3 * height // 4)
    )


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_an_unchecked_box_and_a_text_field_stand_out_from_the_window(themed: QApplication, qtbot, theme: str) -> None:
    apply_theme(themed, theme)
    page = QWidget()
    qtbot.addWidget(page)
    layout = QVBoxLayout(page)
    focus_taker = QLineEdit("has the keys")  # the box and the field below are drawn without focus, as most are
    box, field = QCheckBox("Match case"), QLineEdit("Mara")
    for widget in (focus_taker, box, field):
        layout.addWidget(widget)
    page.resize(240, 120)
    page.show()
    focus_taker.setFocus()
    qtbot.waitExposed(page)
    paper = themed.palette().color(QPalette.ColorRole.Window)

    shot = box.grab().toImage()
    option = QStyleOptionButton()
    option.initFrom(box)
    indicator = box.style().subElementRect(QStyle.SubElement.SE_CheckBoxIndicator, option, box)
    assert strongest_edge(shot, indicator.left(), indicator.top(), indicator.height(), paper) >= 3.0

    shot = field.grab().toImage()
    assert strongest_edge(shot, 0, 0, field.height(), paper) >= 3.0

"""What the Settings pages are made of: the choices each combo offers, the small form builders the pages share
(a setting with one plain sentence under it, spin boxes whose 0 means "the model's default"), and the team
server's connection test, which runs off the GUI thread."""

from __future__ import annotations

import re
import threading

from PySide6.QtCore import QObject, QSize, Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractSlider,
    QAbstractSpinBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

FOUNDRY = re.compile(r" \[[^\]]*\]$")  # Qt names a family twice installed by its foundries: "Nimbus Sans [urw]"
BOOK_SERIFS = "Book serif (Charter, Georgia…)"  # the text's own typefaces (app.window.theme.PROSE_FONTS)
MODEL_SOURCES = (("Built-in model", "builtin"), ("Local folder", "folder"), ("Hugging Face Hub id", "hub"))
DEVICE_LABELS = (
    ("Automatic (the graphics card if it can)", "auto"),
    ("This computer's processor (CPU)", "cpu"),
    ("The NVIDIA graphics card (CUDA)", "cuda"),
)
# Where a Mixture-of-Experts model's routed experts live (Preferences.experts, issue #41).
EXPERT_LABELS = (
    ("Automatic (on the card when they fit)", "auto"),
    ("All on the graphics card", "device"),
    ("In the computer's memory, streamed to the card", "host-stream"),
    ("In the computer's memory, run by the processor", "host-compute"),
)
THEME_LABELS = (("Follow the system", "system"), ("Light", "light"), ("Dark", "dark"))
MODEL_DEFAULT = "Model default"
PASS_LABELS = (
    ("One request per edit (the text arrives whole)", "one-request"),
    ("One request per pass (every pass shows; fills read much worse)", "per-pass"),
)
PREFERRED_SIZE = QSize(760, 560)  # then fitted to the screen (app/dialogs/screen_fit.py)
WORDS_PER_TOKEN = 0.75  # English prose, roughly; only for saying a token budget in words


class ConnectionTest(QObject):
    """Runs ``model.server.connect`` off the GUI thread; ``done`` carries the line to show and success."""

    done = Signal(str, bool)

    def start(self, url: str, model: str | None, key: str | None) -> None:
        def probe() -> None:
            from model.server.contact import connect  # the standard library only: no torch for a test
            from model.server.http import Endpoint

            try:
                info = connect(Endpoint(url, key, timeout_s=20, connect_timeout_s=5), model)
            except Exception as error:  # every failure becomes the line the writer reads
                self.done.emit(f"✗ {error}", False)
                return
            others = [name for name in info.served if name != info.name]
            more = f" (also serves {', '.join(others)})" if others else ""
            self.done.emit(
                f"✓ {info.name}{more}: canvas {info.canvas_length} tokens, context {info.max_model_len} tokens", True
            )

        threading.Thread(target=probe, name="redraft-server-test", daemon=True).start()


def combo_box(items: tuple[tuple[str, str], ...], current: str) -> QComboBox:
    combo = QComboBox()
    for label, value in items:
        combo.addItem(label, value)
    combo.setCurrentIndex(max(0, combo.findData(current)))
    return combo


def font_box(current: str) -> QComboBox:
    """The text's typeface: the book serifs first (""), then this computer's families, each shown in itself. A
    saved family no longer installed stays listed, so passing through Settings keeps it."""
    combo = QComboBox()
    combo.addItem(BOOK_SERIFS, "")
    families = {FOUNDRY.sub("", f) for f in QFontDatabase.families() if text_family(f)}  # "Nimbus Sans [urw]"
    if current:
        families.add(current)
    for family in sorted(families, key=str.casefold):
        combo.addItem(family, family)
        combo.setItemData(combo.count() - 1, QFont(family), Qt.ItemDataRole.FontRole)
    combo.setCurrentIndex(max(0, combo.findData(current)))
    combo.setMaxVisibleItems(16)
    return combo


def text_family(family: str) -> bool:
    """Whether a family can set prose: public, with Latin letters, not a symbol font (Dingbats' letters are
    ornaments, and its name shown in itself is unreadable)."""
    if family.startswith(".") or QFontDatabase.isPrivateFamily(family):
        return False
    systems = QFontDatabase.writingSystems(family)
    return QFontDatabase.WritingSystem.Latin in systems and QFontDatabase.WritingSystem.Symbol not in systems


def double_box(value: float, maximum: float, step: float, decimals: int = 2) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(0.0, maximum)
    box.setDecimals(decimals)
    box.setSingleStep(step)
    box.setSpecialValueText(MODEL_DEFAULT)  # shown at 0: use the checkpoint's own default
    box.setValue(value)
    return box


def form_layout() -> QFormLayout:
    form = QFormLayout()
    form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)  # a narrow dialog puts fields under labels
    return form


def wrapped_label(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    return label


def described(control: QWidget, sentence: str) -> QWidget:
    """A setting with one plain sentence under it saying what it does for the writer."""
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    row = QHBoxLayout()
    row.addWidget(control)
    row.addStretch(1)
    layout.addLayout(row)
    layout.addWidget(wrapped_label(sentence))
    control.setAccessibleDescription(sentence)  # a screen reader says it after the setting's name
    return box


NAMED_BY_LABEL = (QAbstractSpinBox, QAbstractSlider, QComboBox, QLineEdit)


def _controls_in(item: QLayout | QWidget) -> list[QWidget]:
    """The controls a form's field holds that a label names (not a check box: its text is its name), in their
    order, through boxes and layouts."""
    if isinstance(item, NAMED_BY_LABEL):
        return [item]
    if isinstance(item, QWidget):
        return [child for child in item.findChildren(QWidget) if isinstance(child, NAMED_BY_LABEL)]
    found: list[QWidget] = []
    for index in range(item.count()):
        part = item.itemAt(index)
        inner = (part.widget() or part.layout()) if part is not None else None
        if inner is not None:
            found += _controls_in(inner)
    return found


def label_fields(form: QFormLayout) -> None:
    """Name the first control of each row's field by the row's label, for a screen reader. Qt names a control
    by a label whose buddy it is, but only the row's field is the buddy of the label ``addRow`` makes, and the
    control is often inside it, in a box with its sentence or beside a unit."""
    for row in range(form.rowCount()):
        label_item = form.itemAt(row, QFormLayout.ItemRole.LabelRole)
        field = form.itemAt(row, QFormLayout.ItemRole.FieldRole)
        label = label_item.widget() if label_item is not None else None
        inner = (field.widget() or field.layout()) if field is not None else None
        if not isinstance(label, QLabel) or inner is None:
            continue
        controls = _controls_in(inner)
        if controls:
            label.setBuddy(controls[0])  # Qt's own naming looks for the label among the control's siblings alone
            controls[0].setAccessibleName(label.text().replace("&", "").rstrip(":"))


def words_for(tokens: int) -> int:
    return max(1, round(tokens * WORDS_PER_TOKEN))


def context_words(tokens: int, model_cap: int | None) -> str:
    """The context budget in words, and where the chosen model reads less than that (its cap)."""
    words = f"about {round(tokens * WORDS_PER_TOKEN, -1 if tokens < 1400 else -2):,.0f} words"
    if model_cap is not None and tokens > model_cap:
        return f"{words}; the built-in model reads at most {model_cap} tokens"
    return words


def builtin_context_cap() -> int | None:
    """The most tokens before a span the built-in model reads (its ``max_context_tokens``), without loading it;
    a broken sampler file, which the loader refuses in words, only means nothing is said here."""
    from model.checkpoint.folders import builtin_model_folder, redraft_sampler_settings  # light: no torch
    from model.errors import ModelLoadError

    try:
        return redraft_sampler_settings(builtin_model_folder()).get("max_context_tokens")
    except ModelLoadError:
        return None


def integer_box(value: int, minimum: int, maximum: int, special: str = "") -> QSpinBox:
    box = QSpinBox()
    box.setRange(minimum, maximum)
    if special:
        box.setSpecialValueText(special)
    box.setValue(value)
    return box

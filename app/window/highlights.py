"""The editor's extra selections in layers: Keep Words' marks (app.rewrite.steering) and Find's matches
(app.window.find_bar) are drawn together, each owner setting only its own layer. Qt holds one list per editor, so
an owner that set it whole would wipe the other's."""

from __future__ import annotations

from weakref import WeakKeyDictionary

from PySide6.QtWidgets import QPlainTextEdit, QTextEdit

_layers: WeakKeyDictionary[QPlainTextEdit, dict[str, list[QTextEdit.ExtraSelection]]] = WeakKeyDictionary()


def set_layer(editor: QPlainTextEdit, name: str, selections: list[QTextEdit.ExtraSelection]) -> None:
    """Put ``selections`` in ``editor``'s layer ``name`` (an empty list clears it) and draw every layer; those set
    later are drawn over those set earlier."""
    layers = _layers.setdefault(editor, {})
    layers[name] = selections
    editor.setExtraSelections([selection for layer in layers.values() for selection in layer])


def layer(editor: QPlainTextEdit, name: str) -> list[QTextEdit.ExtraSelection]:
    """What ``editor``'s layer ``name`` holds now."""
    return list(_layers.get(editor, {}).get(name, []))

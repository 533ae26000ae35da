"""The status bar makes room for a long message: the figures at its right (a rewrite's, the counts, the model's
name) step aside while it shows, least needed first, and come back when it clears; Qt would cut it off."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

KEYS = ("Change 2 of 4 (undecided) · Alt+Return accepts it, Alt+Delete rejects it · Enter: the text as it stands"
        " · Esc: the original")  # fmt: skip


def message_room(window) -> int:
    """The width Qt paints a message in: from 6 px in to 2 px short of the first permanent widget shown."""
    bar = window.statusBar()
    QApplication.processEvents()  # the widgets' places after a change of width
    shown = [widget.x() for widget in (window.cancel_button, window.load_progress, window.backend_label,
                                       window.model_label, window.figures_label, window.session_goal.label,
                                       window.counts_label) if widget.isVisibleTo(bar)]  # fmt: skip
    return min(shown, default=bar.width() - 10) - 2 - 6


def test_a_long_message_squeezes_the_figures_until_it_fits_and_they_come_back(document_window) -> None:
    window = document_window()
    window.resize(1100, 720)  # the window's first size, and the room a 1366x768 screen leaves without maximising
    window.figures_label.setText("4 drafts · 58.4 s")
    window.session_goal.set_goal(500)
    window._update_counts()
    bar = window.statusBar()
    width = bar.fontMetrics().horizontalAdvance
    assert message_room(window) < width(KEYS)  # as the window starts: it would be cut off

    bar.showMessage(KEYS)
    assert message_room(window) >= width(KEYS)
    squeezed = [label for label in (window.figures_label, window.session_goal.label, window.counts_label,
                                    window.model_label, window.backend_label) if label.width() == 0]  # fmt: skip
    assert squeezed and squeezed[0] is window.figures_label  # the least needed first
    assert window.backend_label.width() > 0  # only as many as it takes

    window.counts_label.setVisible(False)  # as a rewrite hides it, while the message shows
    bar.clearMessage()
    QApplication.processEvents()
    assert window.figures_label.width() > 0 and window.session_goal.label.width() > 0
    assert not window.counts_label.isVisibleTo(bar)  # hidden by its owner: stays hidden
    window.counts_label.setVisible(True)
    QApplication.processEvents()
    assert window.counts_label.width() >= window.counts_label.sizeHint().width()

    bar.showMessage("Saved chapter.md")  # a short one moves nothing
    assert all(label.width() > 0 for label in (window.figures_label, window.counts_label, window.model_label))


def test_a_narrower_window_makes_more_room_for_the_message_it_shows(document_window) -> None:
    window = document_window()
    window.resize(1300, 720)
    window._update_counts()
    bar = window.statusBar()
    bar.showMessage(KEYS)
    QApplication.processEvents()
    assert window.counts_label.width() > 0  # room enough at this width
    window.resize(950, 720)
    QApplication.processEvents()
    assert message_room(window) >= bar.fontMetrics().horizontalAdvance(KEYS)
    assert window.counts_label.width() == 0

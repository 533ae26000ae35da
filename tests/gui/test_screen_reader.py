"""A writer who listens to a screen reader (app/window/announce.py): every control has a name that says what
it is, and what the window shows only in pixels (a draft, a status message, a notice, a search's count) is
said through Qt's accessibility bridge. The real worker thread and the tiny model; the names are read through
Qt's own accessibility interfaces, which the AT-SPI and UI Automation bridges read."""

from __future__ import annotations

from gui_helpers import DOCUMENT, SIGNAL_TIMEOUT_MS, letters_in, select, unnamed_controls
from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QAbstractButton

from app.dialogs.settings import SettingsDialog
from app.rewrite.run import without_lead
from app.window.announce import SETTLE_MS, SPOKEN_DRAFT_CHARS, SpokenNotification, draft_announcement, joined, spoken
from app.window.editor_widget import Phase
from app.window.speech_route import RouteChooser


def hear(window) -> list[tuple[str, bool]]:
    said: list[tuple[str, bool]] = []
    window.announcer.said.connect(lambda message, assertive: said.append((message, assertive)))
    return said


def test_every_control_of_the_window_has_a_name_a_screen_reader_can_say(document_window, qtbot) -> None:
    window = document_window()
    window.find_bar.open(replace=True)
    window.outline.show()
    window.message_bar.show_message("A notice", "info")
    assert unnamed_controls(window) == []
    editor = QAccessible.queryAccessibleInterface(window.editor)
    assert editor.text(QAccessible.Text.Name) == "Document"
    names = {QAccessible.queryAccessibleInterface(button).text(QAccessible.Text.Name)
             for button in window.find_bar.findChildren(QAbstractButton)}  # fmt: skip
    assert {"Previous match", "Next match", "Close the find bar"} <= names


def test_the_popups_and_settings_name_their_controls(document_window, qtbot) -> None:
    window = document_window()
    dialog = SettingsDialog(window.prefs, window)
    qtbot.addWidget(dialog)
    dialog.show()
    for title in dialog.pages:
        dialog.show_page(title)
        assert unnamed_controls(dialog) == [], title
        assert letters_in(dialog) == ([], []), title  # each button and box its own letter: Alt+it, no mouse
    manager = window.show_model_manager()
    assert letters_in(manager) == ([], [])
    manager.close()
    # Named by their rows' labels, and described by the sentence under them (a combo box is named by its value on
    # Linux, where Qt gives its label as a relation).
    for control, name in ((dialog.context_budget, "Text read before"), (dialog.max_steps, "Most passes"),
                          (dialog.model_path, "Location"), (dialog.author_name, "Your name")):  # fmt: skip
        assert QAccessible.queryAccessibleInterface(control).text(QAccessible.Text.Name) == name
    described = QAccessible.queryAccessibleInterface(dialog.max_steps).text(QAccessible.Text.Description)
    assert described.startswith("More passes give the model more chances")
    dialog.reject()
    place = DOCUMENT.index("climbed")
    cursor = window.editor.textCursor()
    cursor.setPosition(place)
    window.editor.setTextCursor(cursor)
    window.show_fill_popup()
    qtbot.waitUntil(lambda: window.fill_popup is not None and window.fill_popup.isVisible())
    assert unnamed_controls(window.fill_popup) == []


def test_a_rewrite_is_heard_from_its_start_to_its_draft_and_its_end(document_window, qtbot) -> None:
    window = document_window(candidates=2, seed=5, fewer_drafts_when_slow=False)
    said = hear(window)
    select(window, "climbed the stairs")
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    result = window.run.result
    messages = [message for message, _ in said]
    assert messages[0] in ("Developing…", "Waiting for the model…")
    assert not any("pass " in message for message in messages)  # the progress is shown, never said pass by pass
    first = result.ranking[0]
    draft = draft_announcement(window.run.draft_label(first), without_lead(result.texts[first], window.run.lead))
    assert draft.startswith("Draft 1 of 2: ")
    # The draft's words, then what the keys do with it, in that order, and neither interrupts.
    assert messages[-2:] == [draft, "Enter in the draft: accept, Esc: reject, Ctrl+Shift+R: regenerate"]
    assert not any(assertive for _, assertive in said)

    said.clear()
    window.cycle_candidate(+1)
    second = result.ranking[1]
    assert said == [(draft_announcement("Draft 2 of 2", without_lead(result.texts[second], window.run.lead)), False)]

    said.clear()
    window.accept_rewrite()
    assert window.editor.phase is Phase.IDLE
    assert said == [("Rewrite accepted (Ctrl+Z undoes it).", False)]  # not the draft's words a second time


def test_a_rejected_or_failed_rewrite_is_heard(document_window, qtbot) -> None:
    window = document_window()
    said = hear(window)
    select(window, "climbed the stairs")
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    window.reject_rewrite()
    assert said[-1] == ("Rewrite rejected; the original is back.", False)
    window.message_bar.show_message("The rewrite failed: out of memory. Your text is unchanged.")
    assert said[-1] == ("The rewrite failed: out of memory. Your text is unchanged.", True)  # it interrupts
    window.message_bar.show_message("notes.md: its line ends were Windows'.", "info")
    assert said[-1] == ("notes.md: its line ends were Windows'.", False)


def test_an_orca_that_reads_no_announcements_hears_the_rewrite_as_notifications(document_window, qtbot) -> None:
    window = document_window(candidates=2, seed=5, fewer_drafts_when_slow=False)
    # The registry's answer with Orca 43 running: objects shown, no announcements (tests/test_speech_route.py).
    window.announcer.routes = RouteChooser(ask=lambda: ["Object:StateChanged:Showing", "Focus::"])
    said = hear(window)
    bar = window.statusBar()

    def notifications() -> list[SpokenNotification]:
        return [n for n in bar.findChildren(SpokenNotification) if not n.isHidden()]

    def last_heard() -> str:
        return notifications()[-1].label.text() if notifications() else ""

    QAccessible.setActive(True)  # as when a screen reader runs: nothing is sent otherwise
    try:
        select(window, "climbed the stairs")
        window.rewrite_selection()
        qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
        # The draft and its keys come together: one notification, or Orca would cut the draft off with the keys.
        qtbot.waitUntil(lambda: "Enter in the draft" in last_heard(), timeout=SIGNAL_TIMEOUT_MS)
        notification = notifications()[-1]
        # ("Developing…" is in it too where the tiny model's draft came as fast.)
        assert notification.label.text().endswith(joined([message for message, _ in said[-2:]]))
        assert said[-2][0].startswith("Draft 1 of 2: ")
        interface = QAccessible.queryAccessibleInterface(notification)
        assert interface.role() == QAccessible.Role.Notification
        assert interface.child(0).text(QAccessible.Text.Name) == notification.label.text()
        assert notification.size().isEmpty()  # heard, never seen

        window.accept_rewrite()
        qtbot.waitUntil(lambda: last_heard() == "Rewrite accepted (Ctrl+Z undoes it).", timeout=SIGNAL_TIMEOUT_MS)
        qtbot.waitUntil(lambda: len(bar.findChildren(SpokenNotification)) == 1)  # each replaces the one before

        window.message_bar.show_message("The rewrite failed: out of memory. Your text is unchanged.")
        # An error is shown at once, not gathered with what might follow.
        assert last_heard() == "The rewrite failed: out of memory. Your text is unchanged."
    finally:
        QAccessible.setActive(False)


def test_a_search_is_heard_once_the_typing_pauses_and_each_step_at_once(document_window, qtbot) -> None:
    text = "The cat sat.\n\nA dog barked at the cat for an hour, then slept.\n\nNo cat here, said the mouse."
    window = document_window(text)
    said = hear(window)
    window.find_bar.open()
    qtbot.keyClicks(window.find_bar.find_text, "cat")
    assert said == []  # "c", "ca", "cat": nothing yet, the typing has not paused
    qtbot.waitUntil(lambda: len(said) == 1, timeout=SETTLE_MS * 5)
    assert said == [("1 of 3 matches: The cat sat.", False)]
    qtbot.keyClick(window.find_bar.find_text, Qt.Key.Key_Return)
    assert said[-1] == ("2 of 3 matches: A dog barked at the cat for an hour, then slept.", False)
    window.editor.insertPlainText("x")  # the text changes under the open bar: the count follows, unsaid
    qtbot.wait(SETTLE_MS * 2)
    assert len(said) == 2
    window.find_bar.find_text.setText("zebra")
    qtbot.waitUntil(lambda: len(said) == 3, timeout=SETTLE_MS * 5)
    assert said[-1] == ("No matches", False)


def test_a_match_far_along_a_line_is_said_with_the_words_around_it(document_window, qtbot) -> None:
    line = "🌊 " * 40 + "the cat slept on the warm stone by the door of the lighthouse."
    window = document_window(line + "\n")
    said = hear(window)
    window.find_bar.open()
    window.find_bar.find_text.setText("cat")
    qtbot.waitUntil(lambda: len(said) == 1, timeout=SETTLE_MS * 5)
    # From a word's edge some 60 characters before the match (Qt counts each emoji twice; the words do not).
    assert said == [("1 of 1 match: …" + line[24:], False)]


def test_a_long_draft_is_said_up_to_a_sentences_end() -> None:
    assert spoken("Enter in the draft: accept · Esc: reject\n  now") == "Enter in the draft: accept, Esc: reject now"
    long = " ".join(f"Sentence {n} runs on for a while." for n in range(60))
    said = draft_announcement("Draft", long)
    assert said.startswith("Draft: Sentence 0 runs") and said.endswith(". …")
    assert len(said) <= SPOKEN_DRAFT_CHARS + 12
    assert draft_announcement("Fill", "  ") == "Fill: the model wrote nothing here."

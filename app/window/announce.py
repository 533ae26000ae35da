"""What the window shows only in pixels, said to a screen reader.

A rewrite develops in place, its drafts sit in a side panel, and its outcome and most of Redraft's feedback
land in the status bar: a writer who listens to Orca or NVDA hears none of it, because a status message or a
repainted span is no event an assistive tool reads. :class:`Announcer` says them through the platform's
accessibility bridge, as Qt's announcement events (AT-SPI's ``object:announcement`` on Linux, UI
Automation's notification on Windows, NSAccessibility's announcement on macOS):

- every status-bar message, but for the per-pass progress of a rewrite (:func:`show_quietly`), which would
  talk over everything else;
- every notice of the bar above the text, an error at once (it interrupts), anything else in turn;
- a finished draft, and each draft the writer steps to: its label and its words, which are the point;
- the find bar's "3 of 17 matches", once the typing pauses.

No event is sent while no assistive tool listens (``QAccessible.isActive``); ``Announcer.said`` reports each all
the same. On Linux, where the screen reader listens for shown notifications but not for announcements (Orca
before 46, :mod:`app.window.speech_route`), the words go as a notification in the status bar instead: a
:class:`SpokenNotification`, no pixels on screen, messages that come together joined into one (Orca says each
notification at once, cutting off the one before).
"""

from __future__ import annotations

import re
import time

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAccessible, QAccessibleAnnouncementEvent, QAccessibleInterface
from PySide6.QtWidgets import QAccessibleWidget, QLabel, QStatusBar, QWidget

from app.window.speech_route import NOTIFICATION, RouteChooser

Politeness = QAccessible.AnnouncementPoliteness
QUIET = "redraftQuiet"  # a status bar's dynamic property: the message being shown is not to be said
HELD_UNTIL = "redraftHeldUntil"  # a status bar's dynamic property: no progress over its message before then
SETTLE_MS = 600  # a message that follows the typing (the find bar's count) is said once it pauses this long
SPOKEN_DRAFT_CHARS = 600  # a long draft is said up to a sentence's end near this length
# Notifications: messages this close together are said as one (a finished draft's words and then its keys).
GATHER_MS = 250


def spoken(text: str) -> str:
    """``text`` as a speech engine should read it: the status bar's middle dots ("Esc: reject · Ctrl+Shift+R")
    are read aloud as "middle dot" by some engines; a comma is a pause; white space runs become one space."""
    return re.sub(r"\s+", " ", text.replace(" · ", ", ")).strip()


def draft_announcement(label: str, text: str) -> str:
    """What a finished draft says: its label, then its words (up to a sentence near ``SPOKEN_DRAFT_CHARS``)."""
    words = spoken(text)
    if not words:
        return f"{label}: the model wrote nothing here."
    if len(words) > SPOKEN_DRAFT_CHARS:
        cut = max(words.rfind(mark, 0, SPOKEN_DRAFT_CHARS) for mark in (". ", "? ", "! "))
        words = (words[: cut + 1] if cut > SPOKEN_DRAFT_CHARS // 2 else words[:SPOKEN_DRAFT_CHARS]) + " …"
    return f"{label}: {words}"


def show_held(bar: QStatusBar, message: str, ms: int) -> None:
    """Show ``message`` for ``ms`` with no rewrite's progress over it meanwhile: why a key did nothing while a
    span develops (a pass's progress came within 60 ms and took the bar, so the writer never read it)."""
    bar.setProperty(HELD_UNTIL, time.monotonic() + ms / 1000)
    bar.showMessage(message, ms)


def show_quietly(bar: QStatusBar, message: str) -> None:
    """Show ``message`` in the status bar without saying it (a rewrite's progress, pass after pass); not over a
    message :func:`show_held` holds (the next pass after it shows its own)."""
    if time.monotonic() < (bar.property(HELD_UNTIL) or 0.0):
        return
    bar.setProperty(QUIET, True)
    try:
        bar.showMessage(message)
    finally:
        bar.setProperty(QUIET, False)


def joined(messages: list[str]) -> str:
    """Messages said as one: each ends as a sentence, so the speech engine pauses between them."""
    return " ".join(m if m.endswith((".", "!", "?", "…", ":")) else m + "." for m in messages)


class SpokenNotification(QWidget):
    """What an older screen reader hears: a notification with one label, ``text``. It takes no room (0×0): a
    notification in a status bar is read whether or not its label is on screen (Orca's rule)."""

    def __init__(self, parent: QWidget, text: str) -> None:
        super().__init__(parent)
        self.setFixedSize(0, 0)
        self.label = QLabel(text, self)


def _notification_role(_class_name: str, candidate: QObject) -> QAccessibleInterface | None:
    """Qt's accessibility factory: the notification role for a :class:`SpokenNotification`, else Qt's own."""
    if isinstance(candidate, SpokenNotification):
        return QAccessibleWidget(candidate, QAccessible.Role.Notification)
    return None


_factory_installed = False


def _install_notification_role() -> None:
    global _factory_installed
    if not _factory_installed:
        QAccessible.installFactory(_notification_role)
        _factory_installed = True


class Announcer(QObject):
    """A window's voice for screen readers; ``said`` reports each announcement made (its text, and whether it
    interrupts), for a log or a test, whether or not an assistive tool is listening."""

    said = Signal(str, bool)

    def __init__(self, parent: QObject, routes: RouteChooser | None = None) -> None:
        super().__init__(parent)
        self.source = parent  # the object a screen reader hears it from: the window
        self.routes = routes or RouteChooser()
        # Where a notification is shown: the status bar once followed (Orca reads one there unseen).
        self._notification_parent: QWidget | None = parent if isinstance(parent, QWidget) else None
        self.notification: SpokenNotification | None = None  # the last one shown
        self._gathered: list[str] = []
        self._gather = QTimer(self)
        self._gather.setSingleShot(True)
        self._gather.setInterval(GATHER_MS)
        self._gather.timeout.connect(self._notify)
        self._settled_message = ""
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(lambda: self.say(self._settled_message))

    def say(self, message: str, assertive: bool = False) -> None:
        """Announce ``message``: ``assertive`` interrupts what is being said (errors); else it waits its turn."""
        message = spoken(message)
        if not message:
            return
        self.said.emit(message, assertive)
        if not QAccessible.isActive():
            return
        if self._notification_parent is not None and self.routes.route() == NOTIFICATION:
            self._gathered.append(message)
            if assertive:
                self._notify()
            elif not self._gather.isActive():
                self._gather.start()
            return
        event = QAccessibleAnnouncementEvent(self.source, message)
        event.setPoliteness(Politeness.Assertive if assertive else Politeness.Polite)
        QAccessible.updateAccessibility(event)

    def _notify(self) -> None:
        """Show what was gathered as one new notification, in place of the last."""
        self._gather.stop()
        if not self._gathered or self._notification_parent is None:
            return
        _install_notification_role()
        if self.notification is not None:
            self.notification.deleteLater()
        # A new object each time: a screen reader may hold the last one's words in its cache.
        self.notification = SpokenNotification(self._notification_parent, joined(self._gathered))
        self._gathered.clear()
        self.notification.show()

    def follow_status_bar(self, bar: QStatusBar) -> None:
        """Say each message the status bar shows, but those shown with :func:`show_quietly`."""
        self._notification_parent = bar
        bar.messageChanged.connect(lambda message: None if bar.property(QUIET) else self.say(message))

    def say_settled(self, message: str) -> None:
        """Say ``message`` once no other has come for ``SETTLE_MS``: a count that follows the typing is said once
        the typing pauses, not at each key."""
        self._settled_message = message
        self._settle.start()

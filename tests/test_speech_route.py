"""Which way a Linux screen reader hears Redraft (app/window/speech_route.py): announcements where something
listens for them, notifications where the screen reader only listens for objects shown (Orca before 46)."""

from __future__ import annotations

from app.window.speech_route import ANNOUNCEMENT, NOTIFICATION, REFRESH_S, RouteChooser, listens_for, route_for

# What Debian 12's Orca 43.1 registered on the accessibility bus, read from the registry (2026-12-06), in part.
ORCA_43 = [
    "Focus::", "Document:LoadComplete:", "Mouse:Button:", "Object:PropertyChange:AccessibleName",
    "Object:TextCaretMoved:", "Object:TextChanged:Insert", "Object:ChildrenChanged:Add",
    "Object:StateChanged:Focused", "Object:StateChanged:Showing", "Object:StateChanged:Selected",
    "Object:ValueChanged:", "Window:Activate:", "Window:Deactivate:",
]  # fmt: skip
# Orca 46 and later listen for announcements as well (their default script's object:announcement handler).
ORCA_46 = [*ORCA_43, "Object:Announcement:"]


def test_a_listener_takes_the_events_its_name_covers() -> None:
    assert listens_for(["Object:StateChanged:Showing"], "Object:StateChanged:Showing")
    assert listens_for(["Object:StateChanged:"], "Object:StateChanged:Showing")  # every state
    assert listens_for(["Object::"], "Object:Announcement:")  # every object event
    assert listens_for(["object:announcement:"], "Object:Announcement:")
    assert not listens_for(["Object:StateChanged:Focused"], "Object:StateChanged:Showing")
    assert not listens_for(["Window::", "Focus::"], "Object:Announcement:")
    assert not listens_for([], "Object:Announcement:")


def test_an_orca_that_reads_no_announcements_gets_notifications() -> None:
    assert route_for(ORCA_43) == NOTIFICATION
    assert route_for(ORCA_46) == ANNOUNCEMENT  # never both: a newer Orca would say each twice
    assert route_for(["Object::"]) == ANNOUNCEMENT
    # Nothing listening, or nothing known (Windows, macOS, no session bus): Qt's own announcements.
    assert route_for([]) == ANNOUNCEMENT
    assert route_for(None) == ANNOUNCEMENT


def test_the_registry_is_asked_again_only_once_the_answer_is_old() -> None:
    now = [100.0]
    answers = [ORCA_43, ORCA_46]
    asked: list[int] = []

    def ask() -> list[str]:
        asked.append(1)
        return answers[min(len(asked), len(answers)) - 1]

    chooser = RouteChooser(ask=ask, clock=lambda: now[0])
    assert chooser.route() == NOTIFICATION
    now[0] += REFRESH_S / 2
    assert chooser.route() == NOTIFICATION and len(asked) == 1
    now[0] += REFRESH_S  # Orca was upgraded and restarted meanwhile
    assert chooser.route() == ANNOUNCEMENT and len(asked) == 2

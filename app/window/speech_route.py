"""Which way a screen reader on Linux hears what :class:`app.window.announce.Announcer` says.

Qt sends an announcement as AT-SPI's ``object:announcement``, which Orca reads from release 46 on. Orca 43
(Debian 12's) and older never listen for it: they would hear nothing of a rewrite. What every Orca reads is a
notification shown (``object:state-changed:showing`` on an object of the notification role), as it reads the
desktop's own notifications. Saying everything both ways would make a newer Orca say it twice, so the route
is chosen by asking the accessibility bus's registry which events its listeners want, as Qt's own bridge
does to decide what to send: announcements where anything listens for them, notifications where something
listens for objects being shown but not for announcements.

The registry is asked at most once per ``REFRESH_S`` (a screen reader started or upgraded after Redraft is
met at the next message after that), with a short timeout; anywhere it cannot be asked (Windows, macOS, no
session bus) the route is the announcement, which UI Automation and NSAccessibility deliver.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterable
from typing import Literal

log = logging.getLogger(__name__)

Route = Literal["announcement", "notification"]
ANNOUNCEMENT: Route = "announcement"
NOTIFICATION: Route = "notification"
REFRESH_S = 5.0
REGISTRY_TIMEOUT_S = 0.25  # per D-Bus call; a bus that does not answer costs at most two of these a refresh


def listens_for(registered: Iterable[str], event: str) -> bool:
    """Whether a listener registered for any of ``registered`` receives ``event``.

    Both are AT-SPI event names as the registry keeps them, "Interface:Member:Detail" in D-Bus's spelling
    (``Object:StateChanged:Showing``); a listener's empty member or detail takes every one
    (``Object::`` is all object events, ``Object:Announcement:`` every announcement)."""
    wanted = (event.split(":") + ["", ""])[:3]
    for name in registered:
        parts = (name.split(":") + ["", ""])[:3]
        if parts[0].lower() != wanted[0].lower():
            continue
        pairs = zip(parts[1:], wanted[1:], strict=True)
        if all(mine == "" or mine.lower() == theirs.lower() for mine, theirs in pairs):
            return True
    return False


def route_for(registered: Iterable[str] | None) -> Route:
    """The route for listeners registered for ``registered`` (None: the registry could not be asked)."""
    if registered is None:
        return ANNOUNCEMENT
    events = list(registered)
    if listens_for(events, "Object:Announcement:"):
        return ANNOUNCEMENT
    if listens_for(events, "Object:StateChanged:Showing"):
        return NOTIFICATION
    return ANNOUNCEMENT


def registered_events(timeout: float = REGISTRY_TIMEOUT_S) -> list[str] | None:
    """The events the accessibility bus's listeners registered for, or None where they cannot be known."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        from jeepney import DBusAddress, new_method_call
        from jeepney.io.blocking import open_dbus_connection

        bus = DBusAddress("/org/a11y/bus", bus_name="org.a11y.Bus", interface="org.a11y.Bus")
        with open_dbus_connection(bus="SESSION") as session:
            address = session.send_and_get_reply(new_method_call(bus, "GetAddress"), timeout=timeout).body[0]
        registry = DBusAddress(
            "/org/a11y/atspi/registry", bus_name="org.a11y.atspi.Registry", interface="org.a11y.atspi.Registry"
        )
        with open_dbus_connection(bus=address) as accessibility:
            reply = accessibility.send_and_get_reply(new_method_call(registry, "GetRegisteredEvents"), timeout=timeout)
        return [str(event) for _listener, event in reply.body[0]]
    except Exception as error:  # noqa: BLE001  no session bus, no registry, an old at-spi2-core: Qt's default
        log.debug("could not ask the accessibility registry what its listeners want: %s", error)
        return None


class RouteChooser:
    """The route, asked of the registry again once it is ``REFRESH_S`` old."""

    def __init__(
        self,
        ask: Callable[[], list[str] | None] = registered_events,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ask = ask
        self._clock = clock
        self._route: Route = ANNOUNCEMENT
        self._asked_at: float | None = None

    def route(self) -> Route:
        now = self._clock()
        if self._asked_at is None or now - self._asked_at >= REFRESH_S:
            route = route_for(self._ask())
            if route != self._route:
                log.info("screen reader feedback goes as %ss now", route)
            self._route, self._asked_at = route, now
        return self._route

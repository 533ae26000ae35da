"""Redraft as a screen reader meets it, over AT-SPI, for test_screen_reader_bus.py.

    dbus-run-session -- /usr/bin/python3 tests/gui/atspi_reader.py [--as-orca-43] REPORT.json SENTENCE EDITOR-COMMAND...
    dbus-run-session -- /usr/bin/python3 tests/gui/atspi_reader.py --outline REPORT.json - EDITOR-COMMAND...
    dbus-run-session -- /usr/bin/python3 tests/gui/atspi_reader.py --drafts REPORT.json SENTENCE EDITOR-COMMAND...

Run by the system's Python, which has Debian's python3-pyatspi (the library Orca reads applications with),
inside a D-Bus session of its own: it starts the accessibility bus, an X server (Xvfb) and the editor, then
does what a blind writer's screen reader does. It reads the window's controls, waits to hear that the model
is ready, selects SENTENCE through the text's accessible Text interface, presses Rewrite through its
accessible action, listens for the draft, presses Accept, and reads the text back. Everything it heard
(``object:announcement`` events) and read goes to REPORT.json. With ``--as-orca-43`` it listens as Orca 43
does: for no announcement, but for notifications shown (``object:state-changed:showing``), whose labels it hears.
With ``--outline`` it reads the Outline from the keys instead: once the model is ready it gives the window the
keyboard (xdotool), presses OUTLINE_KEYS one at a time, and writes down what each focus event named and what
it heard. With ``--drafts`` it rewrites SENTENCE as without, but once the draft is heard it presses DRAFTS_KEYS
instead of Accept: F6 to the drafts, Down to the next, Enter to accept it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

import pyatspi
from gi.repository import GLib

TIMEOUT_S = 150
OUTLINE_KEYS = ("F6", "Down", "Left", "Left")  # to the Outline, the next heading, out to its part, the part folded
DRAFTS_KEYS = ("F6", "Down", "Return")  # to the drafts, the next one in the text, accepted
CONTROL_ROLES = {"push button", "toggle button", "check box", "radio button", "text", "combo box", "spin button",
                 "slider", "list", "tree", "tree table", "table", "page tab", "menu item"}  # fmt: skip


def walk(node: Any) -> Any:
    """``node`` and everything under it, depth first."""
    yield node
    for index in range(node.childCount):
        child = node.getChildAtIndex(index)
        if child is not None:
            yield from walk(child)


def showing(node: Any) -> bool:
    return node.getState().contains(pyatspi.STATE_SHOWING)


class Reader:
    def __init__(self, sentence: str) -> None:
        self.sentence = sentence
        self.report: dict[str, Any] = {"heard": [], "controls": [], "steps": [], "text_changes": 0}
        self.app: Any = None
        self.step = "find the window"
        self.started = time.monotonic()
        self.pressed = 0.0

    def heard(self, event: Any) -> None:
        self.report["heard"].append([str(event.any_data), int(event.detail1)])

    def notified(self, event: Any) -> None:
        """A notification shown: its labels' words, as Orca 43 reads them (politeness -1: a notification has none)."""
        if event.detail1 and event.source.getRoleName() == "notification":
            labels = [child.name for child in walk(event.source) if child.getRoleName() == "label"]
            self.report["heard"].append([" ".join(labels), -1])

    def text_changed(self, event: Any) -> None:
        if self.step == "wait for the draft":
            self.report["text_changes"] += 1

    def find(self, role: str, name: str) -> Any:
        for node in walk(self.app):
            if node.getRoleName() == role and node.name == name and showing(node):
                return node
        return None

    def said(self, words: str) -> bool:
        return any(words in text for text, _ in self.report["heard"])  # a notification may hold several

    def tick(self) -> bool:
        """One look at the window; moves to the next step when this one is done. False ends the loop."""
        if time.monotonic() - self.started > TIMEOUT_S:
            self.report["steps"].append(f"timed out at: {self.step}")
            pyatspi.Registry.stop()
            return False
        try:
            self.advance()
        except Exception as error:  # a node gone between two calls: look again at the next tick
            self.report.setdefault("errors", []).append(f"{self.step}: {error!r}")
        if self.step == "done":
            pyatspi.Registry.stop()
            return False
        return True

    def advance(self) -> None:
        if self.step == "find the window":
            desktop = pyatspi.Registry.getDesktop(0)
            apps = [desktop.getChildAtIndex(i) for i in range(desktop.childCount)]
            self.app = next((app for app in apps if app is not None and app.name == "Redraft"), None)
            if self.app is not None and self.find("text", "Document") is not None:
                self.step = "wait for the model"
        elif self.step == "wait for the model" and self.said("Model ready"):
            frame = next(node for node in walk(self.app) if node.getRoleName() == "frame")
            self.report["controls"] = [[node.getRoleName(), node.name] for node in walk(frame)
                                       if node.getRoleName() in CONTROL_ROLES and showing(node)]  # fmt: skip
            document = self.find("text", "Document").queryText()
            start = document.getText(0, -1).index(self.sentence)
            document.addSelection(start, start + len(self.sentence))
            self.step = "press Rewrite"
        elif self.step == "press Rewrite":
            # Pressed until it is heard: the button is enabled a moment after the selection (the state AT-SPI
            # caches may say otherwise), and pressing a disabled one does nothing.
            if self.said("Developing") or self.said("Waiting for the model"):
                self.step = "wait for the draft"
            elif time.monotonic() - self.pressed > 1:
                self.find("push button", "Rewrite").queryAction().doAction(0)
                self.report["steps"].append("pressed Rewrite")
                self.pressed = time.monotonic()
        elif self.step == "wait for the draft" and self.said("Enter in the draft"):
            self.find("push button", "Accept").queryAction().doAction(0)
            self.report["steps"].append("pressed Accept")
            self.step = "wait for the accept"
        elif self.step == "wait for the accept" and self.said("Rewrite accepted"):
            self.report["text"] = self.find("text", "Document").queryText().getText(0, -1)
            self.step = "done"


class KeysReader(Reader):
    """A reader that presses keys as the writer would (xdotool, one a second, each key's events heard before the
    next) and writes down what each focus event named."""

    def __init__(self, sentence: str, display: str, keys: tuple[str, ...]) -> None:
        super().__init__(sentence)
        self.display = display
        self.report["focused"] = []
        self.keys = list(keys)

    def focused(self, event: Any) -> None:
        if event.detail1:
            node = event.source
            self.report["focused"].append([node.getRoleName(), node.name, node.description])

    def take_the_keyboard(self) -> None:
        xdotool = ["xdotool", "search", "--onlyvisible", "--name", "Redraft", "windowfocus", "--sync"]
        subprocess.run(xdotool, env={**os.environ, "DISPLAY": self.display}, timeout=30, check=True)

    def press_next_key(self) -> bool:
        """The next key pressed, a second after the last; False once none is left."""
        if time.monotonic() - self.pressed > 1:
            if not self.keys:
                return False
            key = self.keys.pop(0)
            subprocess.run(["xdotool", "key", key], env={**os.environ, "DISPLAY": self.display}, timeout=30,
                           check=True)  # fmt: skip
            self.report["steps"].append(f"pressed {key}")
            self.pressed = time.monotonic()
        return True


class OutlineReader(KeysReader):
    """The Outline from the keys, as a screen reader follows the focus: what each key's focus event names."""

    def __init__(self, display: str) -> None:
        super().__init__("", display, OUTLINE_KEYS)

    def advance(self) -> None:
        if self.step == "find the window":
            desktop = pyatspi.Registry.getDesktop(0)
            apps = [desktop.getChildAtIndex(i) for i in range(desktop.childCount)]
            self.app = next((app for app in apps if app is not None and app.name == "Redraft"), None)
            if self.app is not None and self.said("Model ready"):
                self.take_the_keyboard()
                self.step = "press the keys"
        elif self.step == "press the keys" and not self.press_next_key():
            self.step = "hear the fold"
        elif self.step == "hear the fold" and (self.said("folded") or time.monotonic() - self.pressed > 15):
            self.step = "done"


class DraftsReader(KeysReader):
    """A rewrite's drafts from the keys: once the draft is heard, F6 to them, Down, and Enter to accept."""

    def __init__(self, sentence: str, display: str) -> None:
        super().__init__(sentence, display, DRAFTS_KEYS)

    def advance(self) -> None:
        if self.step == "wait for the draft" and self.said("Enter in the draft"):
            self.take_the_keyboard()
            self.step = "press the keys"
        elif self.step == "press the keys":
            if not self.press_next_key():
                self.step = "wait for the accept"
        else:
            super().advance()


def main() -> int:
    outline, drafts = sys.argv[1] == "--outline", sys.argv[1] == "--drafts"
    as_orca_43 = sys.argv[1] == "--as-orca-43"
    arguments = sys.argv[1 + (as_orca_43 or outline or drafts) :]
    report_path, sentence, editor_command = arguments[0], arguments[1], arguments[2:]
    # In a process group of its own: the bus's daemon, its child, goes with it (else it holds the output open).
    bus = subprocess.Popen(["/usr/libexec/at-spi-bus-launcher", "--launch-immediately"], start_new_session=True)
    read, write = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1366x768x24", "-nolisten", "tcp"],
                            pass_fds=(write,), stderr=subprocess.DEVNULL)  # fmt: skip
    os.close(write)
    display = ":" + os.read(read, 16).decode().strip()
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb", "QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1"}
    reader = OutlineReader(display) if outline else DraftsReader(sentence, display) if drafts else Reader(sentence)
    # Listening before the editor starts, as a screen reader already running is: the editor asks the bus's
    # registry what its listeners want (app/window/speech_route.py).
    if as_orca_43:
        pyatspi.Registry.registerEventListener(reader.notified, "object:state-changed:showing")
    else:
        pyatspi.Registry.registerEventListener(reader.heard, "object:announcement")
    pyatspi.Registry.registerEventListener(reader.text_changed, "object:text-changed")
    if isinstance(reader, KeysReader):
        pyatspi.Registry.registerEventListener(reader.focused, "object:state-changed:focused")
    editor = subprocess.Popen(editor_command, env=env)
    try:
        GLib.timeout_add(250, reader.tick)
        pyatspi.Registry.start()
    finally:
        editor.kill()
        xvfb.kill()
        os.killpg(bus.pid, signal.SIGKILL)
    with open(report_path, "w", encoding="utf-8") as file:
        json.dump(reader.report, file, indent=1, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Editing on a team's server, through the real window: the Server page and its Test connection, where the
API key is kept, the status bar's local/server indicator, and a server edit in the editor (veil, result,
accept, failures, cancel).

The server is tests/vllm_stub.py's stand-in for vLLM on 127.0.0.1 (the real vLLM is tests/
test_vllm_integration.py's); the keyring is an in-memory backend, as this machine has no system keyring.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import keyring
import keyring.errors
import pytest
from gui_helpers import DOCUMENT, SIGNAL_TIMEOUT_MS, PassRecorder, place_cursor, select
from keyring.backend import KeyringBackend
from keyring.backends import fail
from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from vllm_stub import Stub, free_port, serving

from app.dialogs.settings import SettingsDialog
from app.model_sources import server_key
from app.rewrite.worker import Ink
from app.settings import Preferences, SettingsStore
from app.window.editor_widget import Phase
from app.window.main_window import MainWindow

SPAN = "climbed the stairs"
KEY = "team-key-7f3a9c"  # distinctive, so its absence from the settings file means something


class MemoryKeyring(KeyringBackend):
    """A keyring that keeps passwords in a dict: what a system keyring does, minus the system."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.passwords.pop((service, username), None)


@pytest.fixture()
def stub() -> Iterator[tuple[Stub, str]]:
    with serving() as running:
        yield running


@pytest.fixture()
def keyring_backend() -> Iterator[Callable[[KeyringBackend], None]]:
    """Install a keyring backend for one test; the previous one and the session's keys come back after."""
    previous = keyring.get_keyring()
    yield keyring.set_keyring
    keyring.set_keyring(previous)
    server_key._session.clear()


def _settings_bytes(store: SettingsStore) -> bytes:
    store.qsettings.sync()
    return Path(store.qsettings.fileName()).read_bytes()


def _in_settings_dialog(qtbot: Any, window: MainWindow, act: Callable[[SettingsDialog], None]) -> None:
    """Open Settings as the writer does (modal), let ``act`` fill it in, and press OK."""
    seen: list[SettingsDialog] = []

    def drive() -> None:
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, SettingsDialog)
        seen.append(dialog)
        act(dialog)
        dialog.accept()

    QTimer.singleShot(0, drive)
    window.show_settings()
    assert seen, "the Settings dialog never opened"


def _server_window(make_window: Callable[..., MainWindow], url: str, **overrides: Any) -> MainWindow:
    window = make_window(use_server=True, server_url=url, **overrides)
    assert window.model_info is not None and window.model_info.precision == "server"
    return window


# -- the Server page ------------------------------------------------------------------------------------


def test_test_connection_names_the_served_model_and_its_canvas(qtbot: Any, stub: tuple[Stub, str]) -> None:
    state, url = stub
    state.models = ["stub-model", "other-model"]
    dialog = SettingsDialog(Preferences())
    qtbot.addWidget(dialog)
    dialog.server_url.setText(url)
    dialog.server_model.setText("stub-model")
    qtbot.mouseClick(dialog.test_connection, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.connection_ok is not None, timeout=SIGNAL_TIMEOUT_MS)
    line = dialog.connection_result.text()
    assert dialog.connection_ok is True
    assert line == "✓ stub-model (also serves other-model): canvas 16 tokens, context 4096 tokens"
    assert dialog.test_connection.isEnabled()  # ready for another try


def test_test_connection_to_a_dead_port_says_nothing_answers(qtbot: Any) -> None:
    dialog = SettingsDialog(Preferences())
    qtbot.addWidget(dialog)
    dialog.server_url.setText(f"http://127.0.0.1:{free_port()}")
    qtbot.mouseClick(dialog.test_connection, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.connection_ok is not None, timeout=SIGNAL_TIMEOUT_MS)
    assert dialog.connection_ok is False
    line = dialog.connection_result.text()
    assert line.startswith("✗ nothing answers at http://127.0.0.1:") and "(connection refused)" in line


def test_test_connection_names_a_model_the_server_does_not_serve(qtbot: Any, stub: tuple[Stub, str]) -> None:
    _, url = stub
    dialog = SettingsDialog(Preferences())
    qtbot.addWidget(dialog)
    dialog.server_url.setText(url)
    dialog.server_model.setText("gemma")
    qtbot.mouseClick(dialog.test_connection, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.connection_ok is not None, timeout=SIGNAL_TIMEOUT_MS)
    assert "serves stub-model, not 'gemma'" in dialog.connection_result.text()


# -- the API key ------------------------------------------------------------------------------------------


def test_the_key_goes_to_the_keyring_and_never_to_the_settings_file(
    qtbot: Any, make_window: Callable[..., MainWindow], settings_store: SettingsStore, stub: tuple[Stub, str],
    keyring_backend: Callable[[KeyringBackend], None],
) -> None:
    state, url = stub
    store = MemoryKeyring()
    keyring_backend(store)
    window = make_window()  # local: the writer now switches to the team's server
    state.key = KEY

    def fill_in(dialog: SettingsDialog) -> None:
        assert "system keyring (MemoryKeyring)" in dialog.key_storage.text()
        dialog.use_server.setChecked(True)
        dialog.server_url.setText(url)
        dialog.server_key.setText(KEY)

    _in_settings_dialog(qtbot, window, fill_in)
    assert store.passwords == {(server_key.SERVICE, url): KEY}
    assert KEY.encode() not in _settings_bytes(settings_store)
    assert url.encode() in _settings_bytes(settings_store)  # the file was written, with the server in it
    # The key reached the server: the window connected with it (the stub refuses any other).
    qtbot.waitUntil(lambda: window.model_info is not None and window.model_info.precision == "server",
                    timeout=SIGNAL_TIMEOUT_MS)

    server_key._session.clear()  # a restart: only the keyring remembers
    assert SettingsDialog(window.prefs).server_key.text() == KEY


def test_without_a_keyring_the_key_lives_for_the_session_only(
    qtbot: Any, make_window: Callable[..., MainWindow], settings_store: SettingsStore, stub: tuple[Stub, str],
    keyring_backend: Callable[[KeyringBackend], None],
) -> None:
    _, url = stub
    keyring_backend(fail.Keyring())
    window = make_window()
    shown: list[str] = []

    def fill_in(dialog: SettingsDialog) -> None:
        shown.append(dialog.key_storage.text())
        dialog.use_server.setChecked(True)
        dialog.server_url.setText(url)
        dialog.server_key.setText(KEY)

    _in_settings_dialog(qtbot, window, fill_in)
    assert "No system keyring" in shown[0] and "for this session only" in shown[0]
    assert server_key.load_key(url) == KEY  # this session still edits with it
    assert KEY.encode() not in _settings_bytes(settings_store)
    server_key._session.clear()  # a restart
    assert server_key.load_key(url) is None


class RefusingKeyring(MemoryKeyring):
    """A keyring that is there but will not store anything (locked, or the writer said no)."""

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.PasswordSetError("the keyring is locked")


def test_a_keyring_that_refuses_the_key_is_said_and_the_key_stays_out_of_the_file(
    qtbot: Any, make_window: Callable[..., MainWindow], settings_store: SettingsStore, stub: tuple[Stub, str],
    keyring_backend: Callable[[KeyringBackend], None],
) -> None:
    _, url = stub
    store = RefusingKeyring()
    keyring_backend(store)
    window = make_window()

    def fill_in(dialog: SettingsDialog) -> None:
        dialog.use_server.setChecked(True)
        dialog.server_url.setText(url)
        dialog.server_key.setText(KEY)

    _in_settings_dialog(qtbot, window, fill_in)
    assert store.passwords == {}
    assert window.message_bar.isVisible()
    assert "did not take the server's API key" in window.message_bar.label.text()
    assert "for this session only" in window.message_bar.label.text()
    assert server_key.load_key(url) == KEY
    assert KEY.encode() not in _settings_bytes(settings_store)
    qtbot.waitUntil(lambda: window.backend_label.text() == "⇅ Server", timeout=SIGNAL_TIMEOUT_MS)


# -- the status bar's indicator ----------------------------------------------------------------------------


def test_the_indicator_reads_local_or_server_and_follows_the_setting(
    qtbot: Any, make_window: Callable[..., MainWindow], stub: tuple[Stub, str]
) -> None:
    _, url = stub
    window = make_window()
    assert window.backend_label.text() == "● Local"

    window.apply_preferences(replace(window.prefs, use_server=True, server_url=url))
    qtbot.waitUntil(lambda: window.backend_label.text() == "⇅ Server", timeout=SIGNAL_TIMEOUT_MS)
    assert url in window.backend_label.toolTip()
    assert window.model_info is not None and window.model_info.precision == "server"

    window.apply_preferences(replace(window.prefs, use_server=False))
    qtbot.waitUntil(lambda: window.backend_label.text() == "● Local", timeout=SIGNAL_TIMEOUT_MS)


def test_words_that_fit_reads_the_servers_likeliest_words_at_the_words_place(
    qtbot: Any, make_window: Callable[..., MainWindow], stub: tuple[Stub, str]
) -> None:
    state, url = stub
    # The stub's tokens are characters: a line's first word of two letters, whose choices are letters. The served
    # model's likeliest there, then its runners-up (an end marker, a space and the word itself among them).
    text = "The keeper climbed the stairs.\nHe wrote the letter twice.\n"
    state.fill = "I"
    state.runners_up = ["A", "<eos>", " ", "H", "W"]
    window = _server_window(make_window, url)
    window.editor.setPlainText(text)
    place_cursor(window, text.index("He") + 1)
    QTest.keyClick(window.editor, Qt.Key.Key_F7, Qt.KeyboardModifier.ControlModifier)
    words = window.word_choices
    qtbot.waitUntil(lambda: words.menu is not None and words.menu.isVisible(), timeout=SIGNAL_TIMEOUT_MS)
    assert [entry.text() for entry in words.menu.actions()[1:]] == ["I", "A", "H", "W"]
    # One pass on a one-slot canvas, the text after the word pinned, the likeliest twenty asked for, four noises.
    bodies = state.bodies[-4:]
    assert len({body["vllm_xargs"]["diffusion_seed_canvas"][0] for body in bodies}) == 4
    for body in bodies:
        xargs = body["vllm_xargs"]
        assert xargs["diffusion_max_steps"] == 1 and xargs["diffusion_pinned"] == list(range(1, state.canvas))
        assert body["logprobs"] == 20 and body["return_tokens_as_token_ids"]
    words.menu.actions()[2].trigger()
    assert window.editor.plain_text() == text.replace("He", "A", 1)


@pytest.mark.parametrize(
    ("problem", "words"),
    [
        ("wrong-model", "serves stub-model, not 'gemma'; choose one of those in Settings ▸ Server"),
        ("small-canvas", "the server's canvas is 4 tokens, too small"),
        ("tls", "the secure connection to https://127.0.0.1:"),
    ],
)
def test_a_server_the_window_cannot_use_is_named_and_the_editor_stays(
    qtbot: Any, make_window: Callable[..., MainWindow], stub: tuple[Stub, str], problem: str, words: str
) -> None:
    state, url = stub
    overrides: dict[str, Any] = {"use_server": True, "server_url": url}
    if problem == "wrong-model":
        overrides["server_model"] = "gemma"
    elif problem == "small-canvas":
        state.canvas = 4
    else:
        overrides["server_url"] = url.replace("http://", "https://")
    window = make_window(wait_for_model=False, **overrides)
    qtbot.waitUntil(lambda: not window.model_loading, timeout=SIGNAL_TIMEOUT_MS)
    assert window.model_info is None
    message = window.message_bar.label.text()
    assert message.startswith("could not use the server: ") and words in message
    assert window.backend_label.text() == "⇅ Server: not connected"
    assert words in window.backend_label.toolTip()
    window.editor.setPlainText(DOCUMENT)  # still a plain editor
    assert window.editor.plain_text() == DOCUMENT


# -- a server edit in the editor ---------------------------------------------------------------------------


def test_a_server_edit_veils_the_span_until_the_text_arrives_then_accepts_as_one_undo_step(
    qtbot: Any, make_window: Callable[..., MainWindow], stub: tuple[Stub, str]
) -> None:
    state, url = stub
    window = _server_window(make_window, url)
    editor = window.editor
    editor.setPlainText(DOCUMENT)
    editor.document().setModified(False)
    start, end = select(window, SPAN)
    prefix, suffix = DOCUMENT[:start], DOCUMENT[end:]
    state.delay_s = 0.6  # long enough for several waiting passes
    # Several candidates (the default) over two of the stub's 16-token canvases: while the second block
    # waits, no candidate's first block may show (none is chosen before the ranking).
    assert window.prefs.candidates > 1 and len(" " + SPAN) > state.canvas
    veils: list[str] = []

    def check(_job: int, painted: Any) -> None:
        if painted.raw.waiting:
            frame = painted.frames[painted.shown]
            assert all(segment.ink is Ink.NOISE for segment in frame), frame
            text = editor.plain_text()
            assert text.startswith(prefix) and text.endswith(suffix)  # only the span moves
            veils.append(text[start : len(text) - len(suffix)])

    recorder = PassRecorder(window, check)
    job = window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    assert len(veils) >= 3 and len(set(veils)) >= 2  # the veil keeps moving while the server works
    assert SPAN not in veils
    assert recorder.count(job) > len(veils)  # then the text itself
    result = window.run.result
    assert result is not None and "word" in result.text
    assert editor.phase is Phase.REVIEW
    assert editor.plain_text() == prefix + result.text + suffix

    qtbot.keyClick(editor, Qt.Key.Key_Return)
    accepted = prefix + result.text + suffix
    assert editor.plain_text() == accepted and editor.phase is Phase.IDLE
    window.undo()  # one step, however many waiting passes were painted
    assert editor.plain_text() == DOCUMENT
    assert not editor.document().isModified()


@pytest.mark.parametrize("failure", ["http-500", "refused"])
def test_a_failing_server_leaves_the_document_and_says_why(
    qtbot: Any, make_window: Callable[..., MainWindow], failure: str
) -> None:
    with serving() as (state, url):
        window = _server_window(make_window, url, candidates=1)
        if failure == "http-500":
            state.status = 500
            _rewrite_and_wait_for_the_message(qtbot, window)
    if failure == "refused":  # the server has gone since the window connected
        _rewrite_and_wait_for_the_message(qtbot, window)
    words = {
        "http-500": f"the server at {url} failed (HTTP 500: engine exploded)",
        "refused": f"nothing answers at {url} (connection refused)",
    }[failure]
    editor = window.editor
    message = window.message_bar.label.text()
    assert message.startswith("The rewrite failed: ") and message.endswith("Your text is unchanged.")
    assert words in message
    assert editor.plain_text() == DOCUMENT  # byte for byte
    assert editor.phase is Phase.IDLE and editor.live_span is None
    assert not editor.document().isModified() and not editor.document().isUndoAvailable()


def test_per_pass_mode_paints_every_server_pass_and_lands_the_text(
    qtbot: Any, make_window: Callable[..., MainWindow], stub: tuple[Stub, str]
) -> None:
    state, url = stub
    window = _server_window(make_window, url, candidates=1, server_passes="per-pass")
    editor = window.editor
    editor.setPlainText(DOCUMENT)
    start, end = select(window, SPAN)
    recorder = PassRecorder(window)
    job = window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    result = window.run.result
    assert result is not None
    assert all(b["vllm_xargs"]["diffusion_max_steps"] == 1 for b in state.bodies)  # one request a pass
    assert recorder.count(job) == result.passes == len(state.bodies) >= 2  # each painted, none waiting
    assert not any(painted.raw.waiting for _, painted in recorder.passes)
    assert editor.plain_text() == DOCUMENT[:start] + result.text + DOCUMENT[end:]


def _rewrite_and_wait_for_the_message(qtbot: Any, window: MainWindow) -> None:
    window.editor.setPlainText(DOCUMENT)
    window.editor.document().setModified(False)
    window.editor.document().clearUndoRedoStacks()
    select(window, SPAN)
    window.rewrite_selection()
    qtbot.waitUntil(window.message_bar.isVisible, timeout=SIGNAL_TIMEOUT_MS)


def test_escape_during_a_slow_request_restores_the_span_and_closes_the_connection(
    qtbot: Any, make_window: Callable[..., MainWindow], stub: tuple[Stub, str]
) -> None:
    state, url = stub
    window = _server_window(make_window, url, candidates=1)
    editor = window.editor
    editor.setPlainText(DOCUMENT)
    editor.document().setModified(False)
    select(window, SPAN)
    state.delay_s = 30
    recorder = PassRecorder(window)
    job = window.rewrite_selection()
    qtbot.waitUntil(lambda: recorder.count(job) >= 2, timeout=SIGNAL_TIMEOUT_MS)  # the veil is up
    assert editor.plain_text() != DOCUMENT

    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert editor.plain_text() == DOCUMENT
    assert editor.phase is Phase.IDLE and window.run is None
    assert editor.textCursor().selectedText() == SPAN
    assert state.disconnected.wait(5), "the server never saw the request closed"
    qtbot.waitUntil(lambda: job in recorder.cancelled, timeout=SIGNAL_TIMEOUT_MS)
    assert not window.message_bar.isVisible()  # a cancel is not a failure

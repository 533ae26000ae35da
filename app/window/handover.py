"""One Redraft for the writer: a later start hands its files to the Redraft already running, and ends.

Opening a document from the file manager, or typing ``redraft notes.md``, while Redraft runs would start a second
process: a second copy of the model in memory (about 18 GB for the 26B at 4 bit), a second recovery area, settings
and own words that drift apart. Instead the later start passes its files through a local socket (QLocalServer: a
Unix socket in the user's runtime folder, a named pipe on Windows) to the running process, which opens each in a
window of its own on the model it holds (app.gui.open_handed_over). The door is named by the settings folder, so a
portable copy (``REDRAFT_HOME``) and every other user have their own; only the user's own processes may knock.

The message is one JSON line, ``{"files": ["/abs/path", ...]}``, answered by ``opened`` as soon as it is read
(before the files open: one may ask the writer about its encoding); a Redraft that does not answer within
``ANSWER_MS`` (hung) is not waited for: the start goes on as a process of its own.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtNetwork import QAbstractSocket, QLocalServer, QLocalSocket

from app.userdirs import user_dirs

log = logging.getLogger(__name__)

CONNECT_MS = 1_000
ANSWER_MS = 10_000  # a running Redraft answers as soon as it has read the message
OPENED = b"opened\n"
MAX_MESSAGE_BYTES = 1 << 20  # a thousand long paths; anything longer is not a start's files


def door_name() -> str:
    """The running Redraft's door for this settings folder: a socket path in the user's runtime folder (only the
    user can reach it there) or, on Windows, a pipe name."""
    settings = str(user_dirs().settings.absolute())
    name = "redraft-" + hashlib.sha256(settings.encode("utf-8")).hexdigest()[:16]
    if sys.platform == "win32":
        return name
    try:
        return str(private_folder() / name)
    except OSError as error:  # Qt's own place then (the temporary folder), still for this user only
        log.warning("no private folder for Redraft's door: %s", error)
        return name


def private_folder() -> Path:
    """The user's runtime folder (``XDG_RUNTIME_DIR``), else one of Redraft's own in the temporary folder, made
    readable by the user alone and refused if anyone else owns it or can enter it."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and Path(runtime).is_dir():
        return Path(runtime)
    folder = Path(tempfile.gettempdir()) / f"redraft-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    status = folder.lstat()
    if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.getuid() or status.st_mode & 0o077:
        raise OSError(f"{folder} is not the user's own private folder")
    return folder


def hand_over(files: Sequence[Path], name: str | None = None) -> bool:
    """Pass ``files`` (none: the writer asks for a window) to the Redraft running behind the door ``name``;
    whether it took them (then this start has nothing more to do). Blocking; no QApplication needed."""
    socket = QLocalSocket()
    socket.connectToServer(name or door_name())
    if not socket.waitForConnected(CONNECT_MS):
        return False  # none running (or a crashed one's socket: the door reopens it)
    # ASCII with escapes: a name that is not UTF-8 (its bytes kept as lone surrogates) crosses unharmed.
    message = json.dumps({"files": [str(Path(file).absolute()) for file in files]}) + "\n"
    socket.write(message.encode("ascii"))
    socket.waitForBytesWritten(CONNECT_MS)
    answer = b""
    while OPENED not in answer and socket.waitForReadyRead(ANSWER_MS):
        answer += bytes(socket.readAll().data())
    socket.disconnectFromServer()
    if OPENED not in answer:
        log.warning("the Redraft already running did not answer in %d s: starting another", ANSWER_MS // 1000)
        return False
    return True


class Door(QObject):
    """The running Redraft's side: ``filesArrived`` with each later start's files (absolute paths)."""

    filesArrived = Signal(list)  # list[Path]; empty: a window asked for

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._on_connection)

    def open(self, name: str | None = None) -> bool:
        """Listen at ``name`` (default :func:`door_name`); False where another Redraft holds it or it cannot be
        made (this one then runs as before, on its own)."""
        name = name or door_name()
        knock = QLocalSocket()
        knock.connectToServer(name)
        if knock.waitForConnected(CONNECT_MS):  # one started at the same moment as this one: it is the door
            knock.disconnectFromServer()  # (Qt would put this one's socket in its place, not refuse it)
            return False
        if self.server.listen(name):
            return True
        if self.server.serverError() == QAbstractSocket.SocketError.AddressInUseError:
            QLocalServer.removeServer(name)  # a socket a killed Redraft left: nothing answers behind it
            if self.server.listen(name):
                return True
        log.warning("no door for later starts at %s: %s", name, self.server.errorString())
        return False

    def close(self) -> None:
        self.server.close()

    def _on_connection(self) -> None:
        while (socket := self.server.nextPendingConnection()) is not None:
            received = bytearray()
            socket.readyRead.connect(lambda socket=socket, received=received: self._read(socket, received))

    def _read(self, socket: QLocalSocket, received: bytearray) -> None:
        received += bytes(socket.readAll().data())
        if len(received) > MAX_MESSAGE_BYTES:
            self._let_go(socket)
            return
        if b"\n" not in received:
            return  # more to come
        line = bytes(received).split(b"\n", 1)[0]
        try:
            files = json.loads(line.decode("utf-8"))["files"]
            if not isinstance(files, list) or not all(isinstance(file, str) for file in files):
                raise ValueError("files must be a list of paths")
        except (ValueError, KeyError, TypeError, RecursionError) as error:
            log.warning("a later start's message was not understood: %s", error)
            self._let_go(socket)
            return
        socket.write(OPENED)  # taken: answered before they open, which may ask the writer (an unknown encoding)
        self._let_go(socket)
        paths = [Path(file) for file in files]
        QTimer.singleShot(0, self, lambda: self.filesArrived.emit(paths))

    @staticmethod
    def _let_go(socket: QLocalSocket) -> None:
        """The visit is over: the answer written out now (a few bytes: the socket takes them at once)."""
        socket.readyRead.disconnect()
        socket.flush()
        socket.disconnectFromServer()
        socket.deleteLater()

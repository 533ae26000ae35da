"""A small Hugging Face hub on 127.0.0.1 for the model manager's tests: the endpoints huggingface_hub and
Redraft call, serving real checkpoint folders, with faults on demand.

    /api/models/{repo}[/revision/{rev}]   model_info (siblings with sizes, blob ids, LFS sha256; card data)
    /api/models/{repo}/tree/{rev}         the tree listing snapshot_download reads
    /{repo}/resolve/{rev}/{file}          HEAD and GET with ETag, X-Repo-Commit, X-Linked-Etag/-Size, Range

Faults (``HubStub.fault``): "drop" closes the connection halfway through a weights file (``drops`` times),
"reset" closes it before any byte of a weights file (a network that is gone),
"slow" trickles weights at ``trickle_bytes_per_s``, "401" / "403" / "404" / "500" answer every request so,
"corrupt" flips a byte of the weights, "stall" holds every answer until the fault changes (a hub that stopped
answering). ``token``, when set, is required (401 without it, 403 for another).
``sent`` counts the body bytes sent per file, so a resumed download can be shown to fetch only the rest.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

TRICKLE_CHUNK = 4096
TINY_REPO = "acme/tiny-diffusion"  # the repo the tests' stub serves the tiny checkpoint as
MAX_TRICKLE_S = 60.0  # a trickle never holds a test longer than this


@dataclass
class StubFile:
    data: bytes
    lfs: bool

    @property
    def git_oid(self) -> str:
        return hashlib.sha1(f"blob {len(self.data)}\0".encode() + self.data).hexdigest()

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def etag(self) -> str:
        return self.sha256 if self.lfs else self.git_oid


@dataclass
class StubRepo:
    files: dict[str, StubFile]
    commit: str
    licence: str | None = "apache-2.0"
    gated: bool = False
    model_type: str = "diffusion_gemma"


@dataclass
class HubStub:
    repos: dict[str, StubRepo] = field(default_factory=dict)
    fault: str | None = None
    drops: int = 1
    after_drops: str | None = None  # the fault that follows the last drop ("reset": the network then goes)
    trickle_bytes_per_s: int = 64 * 1024
    token: str | None = None
    sent: dict[str, int] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    starts: list[tuple[str, int]] = field(default_factory=list)  # (file, first byte) of each GET of a file
    lock: threading.Lock = field(default_factory=threading.Lock)
    generation: int = 0  # bumped by reset(): bytes a handler of an earlier test still sends are not counted
    server: ThreadingHTTPServer | None = None

    def add_folder(self, repo_id: str, folder: Path, **extra: Any) -> StubRepo:
        files = {
            path.name: StubFile(path.read_bytes(), lfs=path.suffix == ".safetensors")
            for path in sorted(folder.iterdir())
            if path.is_file()
        }
        commit = hashlib.sha1(repo_id.encode() + b"".join(f.data[:64] for f in files.values())).hexdigest()
        repo = StubRepo(files, commit, **extra)
        self.repos[repo_id] = repo
        return repo

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> HubStub:
        stub = self

        class Handler(_Handler):
            hub = stub

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def reset(self) -> None:
        with self.lock:
            self.fault, self.drops, self.after_drops, self.token = None, 1, None, None
            self.generation += 1
            self.sent.clear()
            self.requests.clear()
            self.starts.clear()

    def count(self, name: str, amount: int, generation: int) -> None:
        with self.lock:
            if generation == self.generation:
                self.sent[name] = self.sent.get(name, 0) + amount


def serving(repo_id: str, folder: Path) -> Iterator[HubStub]:
    """A started stub serving ``folder`` as ``repo_id``, stopped afterwards (the body of a module fixture)."""
    hub = HubStub().start()
    hub.add_folder(repo_id, folder)
    yield hub
    hub.stop()


def point_hub_at(stub: HubStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HubStub:
    """The stub, reset, with this process's huggingface_hub pointed at it and at a fresh cache under
    ``tmp_path`` (no token from the user's machine, Redraft's home there too)."""
    stub.reset()
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "ENDPOINT", stub.url)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    monkeypatch.setenv("REDRAFT_HOME", str(tmp_path / "redraft"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    return stub


class _Handler(BaseHTTPRequestHandler):
    hub: HubStub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the tests read ``requests``
        pass

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def do_GET(self) -> None:
        self._answer(head=False)

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _answer(self, head: bool) -> None:
        hub = self.hub
        path = self.path.split("?", 1)[0]
        hub.requests.append(f"{self.command} {path}")
        deadline = time.monotonic() + MAX_TRICKLE_S
        while hub.fault == "stall" and time.monotonic() < deadline:
            time.sleep(0.05)
        fault = hub.fault
        if fault in ("401", "403", "404", "500"):
            code = {"401": "RepoNotFound", "403": "GatedRepo", "404": "RepoNotFound", "500": ""}[fault]
            self._send_json(int(fault), {"error": "stub fault"}, {"X-Error-Code": code} if code else None)
            return
        if hub.token is not None:
            given = self.headers.get("Authorization", "")
            if not given:
                self._send_json(401, {"error": "auth"}, {"X-Error-Code": "RepoNotFound"})
                return
            if given != f"Bearer {hub.token}":
                self._send_json(403, {"error": "no access"}, {"X-Error-Code": "GatedRepo"})
                return
        api = re.fullmatch(r"/api/models/([^/]+/[^/]+)(?:/revision/([^/]+))?", path)
        tree = re.fullmatch(r"/api/models/([^/]+/[^/]+)/tree/([^/]+)(?:/.*)?", path)
        resolve = re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
        if tree:
            repo = hub.repos.get(tree.group(1))
            if repo is None:
                self._send_json(404, {"error": "no repo"}, {"X-Error-Code": "RepoNotFound"})
                return
            self._send_json(200, [_tree_entry(name, f) for name, f in repo.files.items()])
            return
        if api:
            repo = hub.repos.get(api.group(1))
            if repo is None:
                self._send_json(404, {"error": "no repo"}, {"X-Error-Code": "RepoNotFound"})
                return
            self._send_json(200, _model_info(api.group(1), repo))
            return
        if resolve:
            repo = hub.repos.get(resolve.group(1))
            stub_file = repo.files.get(resolve.group(3)) if repo is not None else None
            if repo is None or stub_file is None:
                self._send_json(404, {"error": "no entry"}, {"X-Error-Code": "EntryNotFound"})
                return
            self._send_file(repo, resolve.group(3), stub_file, head)
            return
        self._send_json(404, {"error": "unknown endpoint"})

    def _drop(self) -> None:
        """The connection cut, as a network fault would; a client already gone leaves nothing to cut (and no
        traceback in the test log)."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _send_file(self, repo: StubRepo, name: str, stub_file: StubFile, head: bool) -> None:
        hub = self.hub
        data = stub_file.data
        if hub.fault == "corrupt" and stub_file.lfs:
            data = data[:-1] + bytes([data[-1] ^ 0xFF])
        start = 0
        match = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", ""))
        if match and int(match.group(1)) < len(data):
            start = int(match.group(1))
        self.send_response(206 if start else 200)
        self.send_header("Content-Length", str(len(data) - start))
        self.send_header("Accept-Ranges", "bytes")
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        self.send_header("ETag", f'"{stub_file.git_oid}"')
        self.send_header("X-Repo-Commit", repo.commit)
        if stub_file.lfs:
            self.send_header("X-Linked-Etag", f'"{stub_file.sha256}"')
            self.send_header("X-Linked-Size", str(len(data)))
        self.end_headers()
        if head:
            return
        hub.starts.append((name, start))
        generation = hub.generation
        body = data[start:]
        if hub.fault == "reset" and stub_file.lfs:  # the network gone: no byte of the body comes
            self._drop()
            return
        if hub.fault == "drop" and stub_file.lfs and hub.drops > 0:
            hub.drops -= 1
            if hub.drops == 0:
                hub.fault = hub.after_drops
            half = body[: len(body) // 2]
            self.wfile.write(half)
            hub.count(name, len(half), generation)
            self.wfile.flush()
            self._drop()
            return
        if hub.fault == "slow" and stub_file.lfs:
            deadline = time.monotonic() + MAX_TRICKLE_S
            pause = TRICKLE_CHUNK / hub.trickle_bytes_per_s
            for offset in range(0, len(body), TRICKLE_CHUNK):
                piece = body[offset : offset + TRICKLE_CHUNK]
                try:
                    self.wfile.write(piece)
                    self.wfile.flush()
                except OSError:  # the client went away (killed, cancelled)
                    return
                hub.count(name, len(piece), generation)
                if hub.fault != "slow" or generation != hub.generation or time.monotonic() > deadline:
                    self._drop()  # the trickle ends with the fault: a dropped connection
                    return
                time.sleep(pause)
            return
        try:
            self.wfile.write(body)
        except OSError:
            return
        hub.count(name, len(body), generation)


def _tree_entry(name: str, stub_file: StubFile) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "file", "path": name, "size": len(stub_file.data), "oid": stub_file.git_oid}
    if stub_file.lfs:
        entry["lfs"] = {"oid": stub_file.sha256, "size": len(stub_file.data), "pointerSize": 134}
    return entry


def _model_info(repo_id: str, repo: StubRepo) -> dict[str, Any]:
    siblings = []
    for name, stub_file in repo.files.items():
        sibling: dict[str, Any] = {"rfilename": name, "size": len(stub_file.data), "blobId": stub_file.git_oid}
        if stub_file.lfs:
            sibling["lfs"] = {"size": len(stub_file.data), "sha256": stub_file.sha256, "pointerSize": 134}
        siblings.append(sibling)
    card = {"license": repo.licence} if repo.licence else {}
    return {
        "id": repo_id,
        "sha": repo.commit,
        "private": False,
        "gated": "manual" if repo.gated else False,
        "tags": [f"license:{repo.licence}"] if repo.licence else [],
        "cardData": card,
        "config": {"model_type": repo.model_type},
        "siblings": siblings,
    }

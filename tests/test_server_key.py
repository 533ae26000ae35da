"""A team server's API key never shows: not in a message, a log line or a repr, however it was pasted."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from vllm_stub import Stub, serving

from app.model_sources import server_key
from app.rewrite.cancel_board import CancelBoard
from app.rewrite.worker import ModelWorker, ServerSpec
from model.server import ServerEngine
from model.server.http import Endpoint, ServerError

ROOT = Path(__file__).resolve().parent.parent
KEY = "sk-Zq81xWv0TopSecret"


@pytest.fixture
def stub() -> Iterator[tuple[Stub, str]]:
    with serving() as (state, url):
        state.key = KEY
        yield state, url


def test_a_key_read_from_a_file_loses_its_newline_and_works(stub: tuple[Stub, str]) -> None:
    _state, url = stub
    endpoint = Endpoint(url, f"  {KEY}\r\n")
    assert endpoint.api_key == KEY and KEY not in repr(endpoint)
    assert ServerEngine.open(url, api_key=KEY + "\n").name == "stub-model"
    assert Endpoint(url, " \n").api_key is None


@pytest.mark.parametrize(("pasted", "words"), [(KEY[:8] + "\n" + KEY[8:], "a line break inside it (character 9 of 21)"),
                                               (KEY[:8] + "\x00" + KEY[8:], "a control character"),
                                               (KEY[:8] + " " + KEY[8:], "a space"),
                                               (KEY[:8] + "é" + KEY[8:], "not plain ASCII")])  # fmt: skip
def test_a_key_broken_inside_is_refused_without_quoting_it(pasted: str, words: str) -> None:
    with pytest.raises(ServerError) as caught:
        Endpoint("http://127.0.0.1:9", pasted)
    assert words in str(caught.value)
    for piece in (KEY[:8], KEY[8:], pasted):
        assert piece not in str(caught.value) and piece not in repr(caught.value)


def test_the_editor_reports_a_broken_key_in_words_and_logs_no_key(stub: tuple[Stub, str],
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    _state, url = stub
    worker = ModelWorker(CancelBoard())
    failures: list[str] = []
    worker.loadFailed.connect(failures.append)
    spec = ServerSpec(url, api_key=KEY[:8] + "\n" + KEY[8:])
    with caplog.at_level(logging.DEBUG):
        worker._connect(spec)
    (failure,) = failures
    assert "the API key has a line break inside it" in failure
    shown = failure + caplog.text + repr(spec) + "".join(str(r.exc_info) for r in caplog.records)
    assert KEY[:8] not in shown and KEY[8:] not in shown


def test_the_command_line_takes_a_key_with_a_newline_and_never_prints_one(stub: tuple[Stub, str]) -> None:
    _state, url = stub
    request = json.dumps({"prefix": "The cat sat. ", "suffix": "It was happy.", "max_new_tokens": 4}) + "\n"

    def fill(key: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "app.cli", "fill", "--json", "--server", url, "--api-key-env",
                               "TEAM_KEY"], input=request.encode(), capture_output=True, cwd=ROOT, timeout=120,
                              env={**os.environ, "TEAM_KEY": key})  # fmt: skip

    good = fill(KEY + "\n")
    assert good.returncode == 0, good.stderr
    assert "text" in json.loads(good.stdout)
    bad = fill(KEY[:8] + "\n" + KEY[8:])
    assert bad.returncode == 1 and b"the API key has a line break inside it" in bad.stderr
    for piece in (KEY[:8], KEY[8:]):
        assert piece.encode() not in bad.stdout + bad.stderr + good.stderr


def test_the_keyring_store_keeps_the_key_without_its_newline() -> None:
    url = "http://team.example:8000"
    try:
        server_key.save_key(url, KEY + "\n")
        assert server_key.load_key(url) == KEY
    finally:
        server_key.save_key(url, "")  # out of a real keyring again, where there is one

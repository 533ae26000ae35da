"""The headless ``redraft`` subcommands, run as a user runs them (a subprocess)."""

from __future__ import annotations

import codecs
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from transformers import AutoTokenizer

ENV = {**os.environ, "OMP_NUM_THREADS": "1"}
ROOT = Path(__file__).resolve().parent.parent


def redraft(*args: str, stdin: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        input=stdin.encode("utf-8"), capture_output=True, env=env or ENV, timeout=300,
        cwd=Path(__file__).resolve().parent.parent,
    )
    # Decode by hand: text mode would translate "\r\n" and hide whether line endings survive.
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode("utf-8"),
                                       done.stderr.decode("utf-8"))


def test_fill_json_answers_a_batch(tiny_checkpoint: Path) -> None:
    requests = [
        {"prefix": "The lighthouse keeper", "suffix": " every evening.", "max_new_tokens": 6, "seed": 1},
        {"prefix": "Rain fell on the", "max_new_tokens": 40, "seed": 2},
        {"prefix": "", "suffix": "begins the story.", "max_new_tokens": 5},
    ]
    stdin = "".join(json.dumps(r) + "\n" for r in requests)
    done = redraft("fill", "--json", "--model", str(tiny_checkpoint), "--steps", "8", stdin=stdin)
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == 3
    for answer in answers:
        assert set(answer) == {"text", "passes", "tokens_per_forward", "ms_per_pass"}
        assert isinstance(answer["text"], str)
        assert 1 <= answer["passes"] <= 8 * 2  # the 40-token request spans two canvases
        assert answer["ms_per_pass"] > 0
    # Same request and seed, same text.
    again = redraft("fill", "--json", "--model", str(tiny_checkpoint), "--steps", "8",
                    stdin=json.dumps(requests[0]) + "\n")
    assert json.loads(again.stdout)["text"] == answers[0]["text"]


def test_polish_rounds_flag_adds_that_many_passes(tiny_checkpoint: Path) -> None:
    request = json.dumps({"prefix": "The lighthouse keeper", "suffix": " every evening.", "max_new_tokens": 6,
                          "seed": 1}) + "\n"
    answers = [
        json.loads(redraft("fill", "--json", "--model", str(tiny_checkpoint), "--steps", "8", "--polish-rounds",
                           rounds, stdin=request).stdout)
        for rounds in ("0", "5")
    ]
    assert answers[1]["passes"] == answers[0]["passes"] + 5


def test_fill_json_lists_candidates_best_first(tiny_checkpoint: Path) -> None:
    request = {"prefix": "The lighthouse keeper", "suffix": " every evening.", "max_new_tokens": 6, "seed": 1,
               "candidates": 3}
    done = redraft("fill", "--json", "--model", str(tiny_checkpoint), "--steps", "8",
                   stdin=json.dumps(request) + "\n")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert len(answer["candidates"]) == len(answer["scores"]) == 3
    assert answer["text"] == answer["candidates"][0]
    scores = [-1e9 if score is None else score for score in answer["scores"]]  # None: wrote nothing
    assert scores == sorted(scores, reverse=True)
    assert all(score <= 0 for score in scores)  # mean log-probabilities


def test_fill_json_candidates_try_shorter_lengths_unless_told_not_to(tiny_checkpoint: Path) -> None:
    base = {"prefix": "The lighthouse keeper", "suffix": " every evening.", "max_new_tokens": 12, "seed": 1,
            "candidates": 4}
    lines = [json.dumps(base), json.dumps({**base, "vary_length": False}), json.dumps({**base, "vary_length": 1})]
    done = redraft("fill", "--json", "--model", str(tiny_checkpoint), "--steps", "8", stdin="\n".join(lines) + "\n")
    varied, fixed, bad = (json.loads(line) for line in done.stdout.splitlines())
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_checkpoint))

    def tokens(answer: dict[str, Any]) -> int:
        return sum(len(tokenizer.encode(text, add_special_tokens=False)) for text in answer["candidates"])

    # A random-weight model writes (nearly) every slot it is given: 12+8+6+4 slots against 4 x 12.
    assert tokens(varied) < tokens(fixed) - 10
    assert bad == {"error": "request on line 3: vary_length must be true or false, got 1"}
    assert done.returncode != 0


def test_fill_json_reports_bad_lines_and_keeps_going(tiny_checkpoint: Path) -> None:
    stdin = 'not json\n{"prefix": "", "suffix": ""}\n{"prefix": "Once", "max_new_tokens": 3, "seed": 1}\n'
    done = redraft("fill", "--json", "--model", str(tiny_checkpoint), "--steps", "4", stdin=stdin)
    assert done.returncode == 1
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert "line 1" in answers[0]["error"]
    assert "empty" in answers[1]["error"]
    assert "text" in answers[2]
    assert "line 1" in done.stderr and "line 2" in done.stderr


def test_fill_json_answers_bad_fields_in_words(tiny_checkpoint: Path) -> None:
    lines = [
        b'{"prefix": "a", "candidates": "x"}',
        b'{"prefix": "\\ud800", "max_new_tokens": 3}',  # a lone surrogate, as JSON escapes it
        b'{"prefix": "caf\xe9", "max_new_tokens": 3}',  # Latin-1, not UTF-8
        b'{"prefix": "a", "max_new_tokens": true}',
        b'{"prefix": "a", "seed": -1, "max_new_tokens": 3}',
        b'{"prefix": "a", "max_new_tokens": 3, "language": "German"}',
    ]
    done = subprocess.run([sys.executable, "-m", "app.cli", "fill", "--json", "--model", str(tiny_checkpoint)],
                          input=b"\n".join(lines) + b"\n", capture_output=True, env=ENV, timeout=300,
                          cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 1
    errors = [json.loads(line)["error"] for line in done.stdout.decode("utf-8").splitlines()]
    assert errors == [
        "request on line 1: candidates must be a whole number, got 'x'",
        "request on line 2: prefix is not valid Unicode text: character 0 is a lone surrogate (U+D800), which "
        "usually means the text was decoded with the wrong encoding",
        "request on line 3: the line is not UTF-8 text (invalid continuation byte at byte 15)",
        "request on line 4: max new tokens must be a whole number, got True",
        "request on line 5: the seed must be a non-negative 63-bit integer, got -1",
        "request on line 6: language must be a code such as \"de\", or \"\" for none, got 'German'",
    ]
    assert "Traceback" not in done.stderr.decode("utf-8")


def test_rewrite_prints_passes_and_the_document(tiny_checkpoint: Path, tmp_path: Path) -> None:
    document = "Première ligne.\r\nThe rain fell on the square.\r\nFin — ☕\n"
    path = tmp_path / "doc.txt"
    path.write_bytes(document.encode("utf-8"))
    start = document.index("rain")
    end = start + len("rain fell")
    done = redraft("rewrite", str(path), "--span", f"{start}:{end}", "--model", str(tiny_checkpoint),
                   "--steps", "5", "--seed", "3")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("pass ") >= 1 and "tokens per forward" in done.stderr
    assert done.stdout.startswith(document[:start]) and done.stdout.endswith(document[end:])


def test_a_word_document_is_rewritten_as_the_markdown_open_reads(tiny_checkpoint: Path) -> None:
    from app.documents.doc_import import read_doc

    returned = Path(__file__).parent / "fixtures" / "returned-libreoffice.doc"
    markdown = read_doc(returned).text  # its tracked changes accepted, as File ▸ Open's Accept All
    start = markdown.index("because")
    end = start + len("because the sea")
    done = redraft("rewrite", str(returned), "--span", f"{start}:{end}", "--model", str(tiny_checkpoint),
                   "--steps", "4", "--seed", "1", "--quiet")  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout.replace("\r\n", "\n")
    assert out.startswith(markdown[:start]) and out.endswith(markdown[end:])
    assert "<!-- Maya: Every single one? -->" in out and "[^1]: His father had kept it too." in out


def test_fill_at_offset(tiny_checkpoint: Path, tmp_path: Path) -> None:
    path = tmp_path / "doc.txt"
    path.write_text("Before the gap. After the gap.", encoding="utf-8")
    done = redraft("fill", str(path), "--at", "15", "--max-new-tokens", "4", "--model", str(tiny_checkpoint),
                   "--steps", "4", "--only-span", "--quiet")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert len(done.stdout) > 0


def test_stderr_stays_quiet_with_every_warning_shown(tiny_checkpoint: Path, tmp_path: Path) -> None:
    # The quiet stderr is Redraft's promise, not the libraries' default filters: with Python told to show
    # every warning, what libraries raise about their own code (model.runtime.library_warnings) still stays off it.
    path = tmp_path / "doc.txt"
    path.write_text("Before the gap. After the gap.", encoding="utf-8")
    done = redraft("fill", str(path), "--at", "15", "--max-new-tokens", "4", "--model", str(tiny_checkpoint),
                   "--steps", "4", "--only-span", "--quiet", env={**ENV, "PYTHONWARNINGS": "always"})
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


@pytest.mark.parametrize(
    "args, message",
    [
        (["rewrite", "{doc}", "--span", "5:999"], "ends past the end of the text, which is 15 characters long"),
        (["rewrite", "{doc}", "--span", "9:3"], "starts after it ends"),
        (["fill", "{doc}", "--at", "9999"], "position 9999 is past the end of the text"),
        (["rewrite", "{doc}", "--span", "five"], "START:END"),
        (["fill", "{doc}"], "--at"),
        (["fill", "{doc}", "--at", "3", "--max-new-tokens", "0"], "max new tokens"),
        (["fill", "{missing}", "--at", "3"], "cannot read"),
        (["fill", "{binary}", "--at", "3"], "binary"),
        (["fill", "{broken}", "--at", "3"], "(Word 97–2003): the file is damaged"),
        (["fill", "{doc}", "--at", "3", "--left-to-right-bias", "-1"], "left-to-right bias must be >= 0"),
        (["fill", "{doc}", "--at", "3", "--polish-rounds", "-1"], "polish rounds must be between 0 and 64"),
    ],
)
def test_errors_go_to_stderr_with_a_nonzero_exit(tiny_checkpoint: Path, tmp_path: Path,
                                                  args: list[str], message: str) -> None:
    (tmp_path / "doc.txt").write_text("Some text here.", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (tmp_path / "broken.doc").write_bytes(bytes.fromhex("d0cf11e0a1b11ae1") + b"\0" * 600)
    paths = {"doc": tmp_path / "doc.txt", "missing": tmp_path / "nope.txt", "binary": tmp_path / "image.png",
             "broken": tmp_path / "broken.doc"}  # fmt: skip
    done = redraft(*[a.format(**paths) for a in args], "--model", str(tiny_checkpoint))
    assert done.returncode != 0
    assert message in done.stderr
    assert done.stdout == ""


def test_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    done = redraft("fill", "--json", "--model", str(tmp_path / "no-model"), stdin="{}\n")
    assert done.returncode == 1
    assert "does not exist" in done.stderr


def test_fill_json_uses_the_builtin_model_by_default() -> None:
    request = {"prefix": "Once upon a time, there was a", "max_new_tokens": 8, "seed": 1}
    done = redraft("fill", "--json", stdin=json.dumps(request) + "\n")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["text"].strip()


def test_the_document_goes_out_as_utf8_bytes_with_its_bom_and_line_endings(tiny_checkpoint: Path,
                                                                           tmp_path: Path) -> None:
    document = "Première ligne.\r\nThe rain fell on the square.\r\nFin — ☕\r\n"
    path = tmp_path / "doc.txt"
    path.write_bytes(codecs.BOM_UTF8 + document.encode("utf-8"))
    start = document.index("rain")
    end = start + len("rain fell")
    done = subprocess.run([sys.executable, "-m", "app.cli", "rewrite", str(path), "--span", f"{start}:{end}",
                           "--model", str(tiny_checkpoint), "--steps", "3", "--seed", "3", "--quiet"],
                          capture_output=True, env=ENV, timeout=300, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(codecs.BOM_UTF8 + document[:start].encode("utf-8"))
    assert done.stdout.endswith(document[end:].encode("utf-8")) and b"\r\r\n" not in done.stdout


@pytest.mark.parametrize("command", ["fill", "json"])
def test_a_cp1252_text_mode_stdout_gets_the_bytes_and_raises_nothing(tiny_checkpoint: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     command: str) -> None:
    # Windows' console as Python sets it up: a cp1252 text stream that writes "\n" as "\r\n".
    from app.cli import main

    written = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(written, encoding="cp1252", newline="\r\n"))
    document = "Tea ☕ first.\nThen the gap:  and after it, the end.\n"
    path = tmp_path / "doc.txt"
    path.write_bytes(document.encode("utf-8"))
    at = document.index(":") + 2
    model = ["--model", str(tiny_checkpoint), "--steps", "2", "--seed", "1", "--max-new-tokens", "3"]
    if command == "fill":
        assert main(["fill", str(path), "--at", str(at), "--quiet", *model]) == 0
        out = written.getvalue()
        assert out.startswith(document[:at].encode("utf-8")) and out.endswith(document[at:].encode("utf-8"))
        assert b"\r\n" not in out
    else:
        request = json.dumps({"prefix": document[:at], "suffix": document[at:]}) + "\n"
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(request.encode("utf-8"))))
        assert main(["fill", "--json", *model]) == 0
        assert written.getvalue().endswith(b"}\n") and "text" in json.loads(written.getvalue())


def test_doctor_help_prints_only_the_usage() -> None:
    done = redraft("doctor", "--help")
    assert done.returncode == 0 and done.stdout.startswith("usage: redraft doctor"), done.stdout[:200]
    assert "PyTorch" not in done.stdout and "default: the built-in model" in done.stdout


# -- steering a rewrite (#37): kept words, gaps, length -----------------------------------------------------


def test_fill_json_steers_rewrites_keeps_words_and_fills_gaps(tiny_checkpoint: Path) -> None:
    span = "The quiet river ran past the old mills at dusk."
    gapped = "We ___ the farm, and [...] nobody [\u2026] at all."
    lines = [
        {"prefix": "We left early. ", "span": span, "suffix": " Nobody spoke.", "keep": [[4, 15], [29, 38]],
         "seed": 1, "candidates": 2},
        {"prefix": "It rained. ", "span": gapped, "mode": "gaps", "max_new_tokens": 4, "seed": 2},
        {"prefix": "It rained. ", "span": span, "length": "shorter", "seed": 3},
        {"prefix": "It rained. ", "span": span, "length": "longer", "seed": 3},
    ]
    done = redraft("fill", "--json", "--model", str(tiny_checkpoint), "--steps", "4",
                   stdin="".join(json.dumps(line) + "\n" for line in lines))
    assert done.returncode == 0, done.stderr
    kept, gaps, shorter, longer = (json.loads(line) for line in done.stdout.splitlines())
    for text in [kept["text"], *kept["candidates"]]:
        assert "quiet river" in text and text.index("quiet river") < text.index("old mills"), text
    held = ["We", " the farm, and", " nobody", " at all."]  # each gap takes the single space before it
    pattern = "".join(re.escape(piece) + ("(.*)" if n < 3 else "") for n, piece in enumerate(held))
    assert re.fullmatch(pattern, gaps["text"], re.DOTALL), gaps["text"]
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_checkpoint))
    # A random model writes (nearly) every slot it is offered: 0.6x against 1.5x of the span's tokens.
    assert len(tokenizer.encode(shorter["text"])) < len(tokenizer.encode(longer["text"]))


def test_fill_json_answers_bad_steering_in_words(tiny_checkpoint: Path) -> None:
    lines = [
        {"prefix": "a", "span": "red fox", "keep": [[0, 99]]},
        {"prefix": "a", "span": "red fox", "keep": "0:3"},
        {"prefix": "a", "span": "red fox", "keep": [[0, 3], [4, 7]]},
        {"prefix": "a", "span": "red fox", "length": "tiny"},
        {"prefix": "a", "length": "shorter", "max_new_tokens": 3},
        {"prefix": "a", "mode": "gaps"},
        {"prefix": "a", "span": "no marks here", "mode": "gaps"},
        {"prefix": "a", "span": "red ___ fox", "mode": "gaps", "keep": [[0, 3]]},
        {"prefix": "a", "span": "red fox", "mode": "instruct"},
    ]
    done = redraft("fill", "--json", "--model", str(tiny_checkpoint),
                   stdin="".join(json.dumps(line) + "\n" for line in lines))
    assert done.returncode == 1
    errors = [json.loads(line)["error"].split(": ", 1)[1] for line in done.stdout.splitlines()]
    assert errors == [
        "the kept words 0:99 lie outside the selection, which is 7 characters long: mark words inside it",
        "keep must be a list of [start, end] character offsets, got '0:3'",
        "every word of the selection is kept: leave some words free to rewrite",
        "length must be one of shorter, same, longer, got 'tiny'",
        '"length" applies to a rewrite only: send the text to rewrite as "span"',
        'mode "gaps" needs a "span": the text to fill',
        "the selection holds no gap to fill: mark each gap with [...] (or three or more underscores)",
        "only a rewrite keeps words (fill and instructions have none to keep)",
        "mode must be one of fill, rewrite, gaps, got 'instruct'",
    ]
    assert "Traceback" not in done.stderr


def test_rewrite_keeps_words_and_fill_gaps_holds_the_rest(tiny_checkpoint: Path, tmp_path: Path) -> None:
    document = "Première ligne.\r\nThe rain fell softly on the old square.\r\nFin — ☕\n"
    path = tmp_path / "doc.txt"
    path.write_bytes(document.encode("utf-8"))
    start = document.index("The rain")
    end = document.index("square.") + len("square.")
    model = ["--model", str(tiny_checkpoint), "--steps", "4", "--seed", "3", "--quiet"]
    old = document.index("old") - start
    done = redraft("rewrite", str(path), "--span", f"{start}:{end}", "--keep", "4:8", "--keep", f"{old}:{old + 3}",
                   "--length", "longer", *model)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(document[:start]) and done.stdout.endswith(document[end:])
    new = done.stdout[start : len(done.stdout) - len(document) + end]
    assert "rain" in new and "old" in new[new.index("rain") :], new

    gapped = "Première ligne.\r\nThe ___ fell on the [...] square.\r\nFin — ☕\n"
    path.write_bytes(gapped.encode("utf-8"))
    start, end = gapped.index("The"), gapped.index("square.") + len("square.")
    done = redraft("fill", str(path), "--gaps", "--span", f"{start}:{end}", "--max-new-tokens", "3", *model)
    assert done.returncode == 0, done.stderr
    before, rest = gapped.split("___")
    middle, after = rest.split("[...]")
    assert re.fullmatch(re.escape(before[:-1]) + "(.*)" + re.escape(middle[:-1]) + "(.*)" + re.escape(after),
                        done.stdout, re.DOTALL), done.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["rewrite", "{doc}", "--span", "0:14", "--keep", "five"], "--keep must be START:END character offsets "
         "inside the span, got 'five'"),
        (["rewrite", "{doc}", "--span", "0:14", "--keep", "5:40"], "the kept words 5:40 lie outside"),
        (["rewrite", "{doc}", "--span", "0:14", "--length", "tiny"], "length must be one of shorter, same, longer"),
        (["fill", "{doc}", "--gaps", "--span", "0:14"], "the selection holds no gap to fill"),
        (["fill", "{doc}", "--gaps", "--at", "3"], "fill --gaps needs --span START:END"),
        (["fill", "{doc}", "--span", "0:4"], "fill --span needs --gaps"),
        (["fill", "--json", "--gaps"], "a JSON line sends \"span\" and \"mode\": \"gaps\""),
    ],
)
def test_bad_steering_options_are_one_message(tiny_checkpoint: Path, tmp_path: Path, args: list[str],
                                              message: str) -> None:
    (tmp_path / "doc.txt").write_text("Some text here.", encoding="utf-8")
    done = redraft(*[a.format(doc=tmp_path / "doc.txt") for a in args], "--model", str(tiny_checkpoint))
    assert done.returncode == 1
    assert done.stderr.startswith("redraft: ") and message in done.stderr and done.stderr.count("\n") == 1
    assert done.stdout == "" and "Traceback" not in done.stderr


# -- routed experts in host memory (#41) ----------------------------------------------------------------------


def test_experts_in_host_memory_fill_the_same_text_as_on_the_device(tiny_checkpoint: Path, tmp_path: Path) -> None:
    request = json.dumps({"prefix": "The lighthouse keeper", "suffix": " every evening.", "max_new_tokens": 6,
                          "seed": 1, "candidates": 2}) + "\n"
    answers = {}
    for experts in ("device", "host-stream", "host-compute"):
        # A home each, so every run quantizes the checkpoint itself rather than read another's copy.
        env = {**ENV, "REDRAFT_HOME": str(tmp_path / experts)}
        done = redraft("fill", "--json", "--model", str(tiny_checkpoint), "--precision", "4bit", "--device", "cpu",
                       "--experts", experts, "--steps", "8", stdin=request, env=env)
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        answers[experts] = {key: answer[key] for key in ("text", "candidates", "scores", "passes")}
    assert answers["host-stream"] == answers["device"]
    assert answers["host-compute"] == answers["device"]


def test_experts_in_host_memory_at_full_precision_is_one_clear_message(tiny_checkpoint: Path) -> None:
    done = redraft("fill", "--json", "--model", str(tiny_checkpoint), "--precision", "fp32", "--device", "cpu",
                   "--experts", "host-stream", stdin='{"prefix": "Once", "max_new_tokens": 3}\n')
    assert done.returncode == 1
    assert done.stderr.startswith("redraft: ") and "only at 4 or 8 bit" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    unknown = redraft("fill", "--json", "--model", str(tiny_checkpoint), "--experts", "gpu")
    assert unknown.returncode == 2 and "invalid choice: 'gpu'" in unknown.stderr


# -- a rewrite as tracked changes (#48) ----------------------------------------------------------------------


def _rebuilt(original: str, changes: list[dict[str, Any]]) -> str:
    """``original`` with each ``[start, end)`` replaced by its ``text``, checked to be in order and apart."""
    out, position = [], 0
    for change in changes:
        assert set(change) == {"start", "end", "text"}
        start, end = change["start"], change["end"]
        assert isinstance(start, int) and isinstance(end, int) and position <= start <= end <= len(original)
        out += [original[position:start], change["text"]]
        position = end
    return "".join(out) + original[position:]


def test_fill_json_rewrite_answers_carry_their_word_changes(tiny_checkpoint: Path) -> None:
    span = "  The quiet river ran past the old mills at dusk.\n"
    lines = [
        {"prefix": "We left early.", "span": span, "suffix": "Nobody spoke.", "seed": 1, "candidates": 3},
        {"prefix": "It rained. ", "span": "We ___ the farm at dawn.", "mode": "gaps", "max_new_tokens": 4, "seed": 2},
        {"prefix": "The lighthouse keeper", "suffix": " every evening.", "max_new_tokens": 6, "seed": 1},
    ]
    done = redraft("fill", "--json", "--model", str(tiny_checkpoint), "--steps", "4",
                   stdin="".join(json.dumps(line) + "\n" for line in lines))
    assert done.returncode == 0, done.stderr
    rewrite, gaps, fill = (json.loads(line) for line in done.stdout.splitlines())
    assert rewrite["changes"], "a random model rewrites the span: something changed"
    assert _rebuilt(span, rewrite["changes"]) == rewrite["text"]
    assert len(rewrite["candidate_changes"]) == len(rewrite["candidates"]) == 3
    for text, changes in zip(rewrite["candidates"], rewrite["candidate_changes"], strict=True):
        assert _rebuilt(span, changes) == text
    assert _rebuilt(lines[1]["span"], gaps["changes"]) == gaps["text"]
    assert all(change["start"] >= len("We ") for change in gaps["changes"])  # the words before the gap are held
    assert "changes" not in fill  # a fill has no original span to change


def test_rewrite_changes_prints_the_original_with_word_diff_marks(tiny_checkpoint: Path, tmp_path: Path) -> None:
    document = "Première ligne.\r\nThe rain fell on the old square at noon.\r\nFin — ☕\n"
    path = tmp_path / "doc.txt"
    path.write_bytes(document.encode("utf-8"))
    start = document.index("The rain")
    end = document.index(" at noon")
    args = ("rewrite", str(path), "--span", f"{start}:{end}", "--model", str(tiny_checkpoint), "--steps", "5",
            "--seed", "3", "--quiet")
    plain = redraft(*args)
    marked = redraft(*args, "--changes")
    assert plain.returncode == 0 and marked.returncode == 0, marked.stderr
    assert marked.stdout.startswith(document[:start]) and marked.stdout.endswith(document[end:])
    assert "[-" in marked.stdout or "{+" in marked.stdout
    # Dropping the additions gives the original back; taking them and dropping the removals, the rewrite.
    removed, added = re.compile(r"\[-(.*?)-\]", re.DOTALL), re.compile(r"\{\+(.*?)\+\}", re.DOTALL)
    assert removed.sub(r"\1", added.sub("", marked.stdout)) == document
    assert added.sub(r"\1", removed.sub("", marked.stdout)) == plain.stdout


def test_words_lists_what_fits_in_place_of_the_word_at_the_offset(tmp_path: Path) -> None:
    text = "It was a wonderful day, and the children played in the garden.\n"
    path = tmp_path / "day.txt"
    path.write_text(text, encoding="utf-8")
    inside = text.index("wonderful") + 4
    listed = redraft("words", str(path), "--at", str(inside))  # the built-in model
    assert listed.returncode == 0, listed.stderr
    words = listed.stdout.splitlines()
    assert 0 < len(words) <= 8 and "wonderful" not in words
    assert {"great", "happy", "good", "fun", "special", "beautiful", "lovely"} & set(words), words
    answer = json.loads(redraft("words", str(path), "--at", str(inside), "--json", "--count", "3").stdout)
    assert (answer["word"], answer["start"], answer["end"]) == ("wonderful", 9, 18)
    assert [choice["word"] for choice in answer["choices"]] == words[:3]
    assert all(0 < choice["share"] < 1 for choice in answer["choices"])
    assert path.read_text(encoding="utf-8") == text  # the file is only read


@pytest.mark.parametrize(
    ("at", "words"),
    [("23", "no word at character 23"), ("999", "--at 999 is outside the document"),
     ("-1", "--at -1 is outside the document")],
)
def test_words_refuses_an_offset_off_any_word_in_words(tmp_path: Path, at: str, words: str) -> None:
    path = tmp_path / "day.txt"
    path.write_text("It was a wonderful day, and the children played.\n", encoding="utf-8")
    done = redraft("words", str(path), "--at", at)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith(f"redraft: {words}"), done.stderr


def test_compare_prints_the_later_version_with_the_changes_since_the_earlier_marked(tmp_path: Path) -> None:
    before, after = tmp_path / "sent.md", tmp_path / "mine.md"
    before.write_text("The keeper climbed the stairs.\n\nHe lit the lamp. The sea was calm.\n", encoding="utf-8")
    after.write_text("The old keeper climbed the steps.\n\nThe sea was calm.\n", encoding="utf-8")
    done = redraft("compare", str(before), str(after), "--author", "Ann Lee")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("The {++old ++}{>>Ann Lee<<}keeper climbed the {~~stairs~>steps~~}{>>Ann Lee<<}.\n\n"
                           "{--He lit the lamp. --}{>>Ann Lee<<}The sea was calm.\n")  # fmt: skip
    after.write_text("He wrote {++this++} himself.\n", encoding="utf-8")
    refused = redraft("compare", str(before), str(after))
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.startswith("redraft: a version holds CriticMarkup's own signs")

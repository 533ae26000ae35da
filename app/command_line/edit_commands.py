"""``redraft fill``, ``redraft rewrite`` and ``redraft words``, headless: JSON lines in and out (``fill --json``),
or a file's gap or span developed pass by pass on the terminal with the document written to stdout. No Qt here.

What goes to stdout is UTF-8 bytes through ``sys.stdout.buffer`` with the text's own line endings (and the
input's BOM), whatever the console's code page and newline translation. A Word, LibreOffice or RTF document is
read as File ▸ Open reads it, as Markdown with its tracked changes accepted: offsets count that text's characters,
and that text is what is written out (the document itself is never written).
"""

from __future__ import annotations

import argparse
import codecs
import json
import math
import sys
from pathlib import Path
from typing import Any, BinaryIO, TextIO

EXIT_OK, EXIT_ERROR = 0, 1
FILL_TOKENS = 32  # a gap's longest text when neither the line nor --max-new-tokens says


def _load(args: argparse.Namespace) -> Any:
    from model import load

    return load(
        args.model,
        precision=args.precision,
        device=args.device,
        experts=args.experts,
        allow_download=args.allow_download,
    )


def _engine(args: argparse.Namespace) -> Any:
    """The local engine on a loaded model, or with ``--server`` a client of a vLLM server (same interface)."""
    if getattr(args, "server", None):
        import os

        from model.errors import RequestError
        from model.server import ServerEngine

        key = None
        if args.api_key_env:
            key = (os.environ.get(args.api_key_env) or "").strip()  # Endpoint refuses what is wrong inside
            if not key:
                raise RequestError(f"--api-key-env names {args.api_key_env}, which is not set or empty")
        return ServerEngine.open(args.server, args.server_model, key, passes=args.server_passes)
    from model import Engine

    return Engine(_load(args))


def _options(args: argparse.Namespace) -> Any:
    from model import DenoiseOptions

    return DenoiseOptions(
        max_denoising_steps=args.steps, left_to_right_bias=args.left_to_right_bias, polish_rounds=args.polish_rounds
    )


JSON_FIELDS = (
    "prefix", "suffix", "max_new_tokens", "seed", "candidates", "vary_length", "span", "keep", "length", "mode",
    "language",
)  # fmt: skip
# What a line's "mode" may say; a "span" alone makes the line a rewrite (as ``redraft rewrite``).
JSON_MODES = ("fill", "rewrite", "gaps")


def request_from_json_line(line: bytes, args: argparse.Namespace) -> Any:
    """The :class:`EditRequest` one JSON line asks for, validated; RequestError says what is wrong.

    A line without ``span`` is a fill at the gap between ``prefix`` and ``suffix``; with ``span`` it is a
    rewrite of that text (``keep``: ``[start, end]`` offsets inside it held verbatim, ``length``), or with
    ``"mode": "gaps"`` a fill of every gap mark in it. ``args`` gives the command line's defaults for the
    fields a line leaves out.
    """
    from model import EditRequest, RequestError

    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RequestError(f"the line is not UTF-8 text ({error.reason} at byte {error.start})") from None
    try:
        fields = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise RequestError(f"the line is not valid JSON ({error})") from None
    if not isinstance(fields, dict):
        raise RequestError(f"a request must be a JSON object like {{\"prefix\": \"...\"}}, got {text.strip()[:40]!r}")
    unknown = set(fields) - set(JSON_FIELDS)
    if unknown:
        raise RequestError(f"unknown fields: {', '.join(sorted(unknown))} (known: {', '.join(JSON_FIELDS)})")
    span = fields.get("span")
    mode = fields.get("mode", "fill" if span is None else "rewrite")
    if mode not in JSON_MODES:
        raise RequestError(f"mode must be one of {', '.join(JSON_MODES)}, got {mode!r:.40}")
    if mode != "fill" and span is None:
        raise RequestError(f'mode "{mode}" needs a "span": the text to {"fill" if mode == "gaps" else "rewrite"}')
    if "length" in fields and mode != "rewrite":
        raise RequestError('"length" applies to a rewrite only: send the text to rewrite as "span"')
    tokens = args.max_new_tokens if args.max_new_tokens is not None or mode != "fill" else FILL_TOKENS
    request = EditRequest(
        prefix=fields.get("prefix", ""),
        suffix=fields.get("suffix", ""),
        span=span,
        mode=mode,
        max_new_tokens=fields.get("max_new_tokens", tokens),
        seed=fields.get("seed", args.seed),
        candidates=fields.get("candidates", 1),
        options=_options(args),
        context_budget=args.context_budget,
        vary_length=fields.get("vary_length", not args.fixed_length),
        keep=_json_ranges(fields.get("keep", ())),
        length=fields.get("length", "same"),
        language=fields.get("language", args.language),
    )
    request.validate()
    return request


def _json_ranges(value: object) -> Any:
    """JSON's ``[[start, end], ...]`` as the tuple of pairs ``EditRequest.keep`` holds; anything else is
    passed on as it is, for ``validate`` to name."""
    if isinstance(value, list):
        return tuple(tuple(item) if isinstance(item, list) else item for item in value)
    return value


def stdout_bytes() -> BinaryIO:
    """stdout's byte stream (after whatever was printed to the text stream)."""
    sys.stdout.flush()
    return sys.stdout.buffer


def fill_json(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """One JSON line out per request line in; a bad request gets an ``error`` line and exit status 1."""
    from model import RedraftError

    engine = _engine(args)
    status = EXIT_OK
    # Bytes, decoded line by line: one line that is not UTF-8 is that line's error, not a traceback.
    for number, line in enumerate(stdin, start=1):
        if not line.strip():
            continue
        try:
            request = request_from_json_line(line, args)
            result = engine.run(request)
            answer: dict[str, Any] = {
                "text": result.text,
                "passes": result.passes,
                "tokens_per_forward": round(result.tokens_per_forward, 3),
                "ms_per_pass": round(result.ms_per_pass, 2),
            }
            if request.span is not None:  # a rewrite (or gaps): its word-level changes, each to take or leave
                answer["changes"] = _changes(request.span, result.text)
            if len(result.texts) > 1:
                # Best first, with the model's own score (Engine._candidate_scores; null: wrote nothing).
                answer["candidates"] = [result.texts[c] for c in result.ranking]
                answer["scores"] = [
                    round(result.scores[c], 3) if math.isfinite(result.scores[c]) else None for c in result.ranking
                ]
                if request.span is not None:
                    answer["candidate_changes"] = [_changes(request.span, result.texts[c]) for c in result.ranking]
        except RedraftError as error:
            message = f"request on line {number}: {error}"
            print(f"redraft: {message}", file=sys.stderr)
            answer = {"error": message}
            status = EXIT_ERROR
        except Exception as error:  # a bug of ours must not cost the rest of the batch its answers
            message = f"request on line {number} failed inside Redraft ({type(error).__name__}: {error}); "
            message += "please report it"
            print(f"redraft: {message}", file=sys.stderr)
            answer = {"error": message}
            status = EXIT_ERROR
        try:
            line = json.dumps(answer, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate (in an echoed field) goes as a JSON escape
            line = json.dumps(answer).encode("ascii")
        stdout.write(line + b"\n")
        stdout.flush()
    return status


def _changes(original: str, draft: str) -> list[dict[str, int | str]]:
    """``draft``'s word-level changes against ``original``, as JSON: character offsets into ``original``."""
    from model.edit.changes import word_changes

    return [change.as_dict() for change in word_changes(original, draft)]


def _read_document(path: Path) -> tuple[str, bool]:
    """The file's text, line endings untouched (offsets count them as they are), and whether it had a BOM; a
    .docx, .doc, .odt or .rtf as the Markdown File ▸ Open makes of it, its tracked changes accepted."""
    from app.documents.fileio import FileError
    from app.documents.imports import reader_for
    from model.errors import RequestError

    reader = reader_for(path)
    if reader is not None:
        kind, read = reader
        try:
            return read(path, True).text, False
        except FileError as error:
            raise RequestError(f"cannot read {path} ({kind}): {error}") from error
    try:
        data = path.read_bytes()
    except OSError as error:
        raise RequestError(f"cannot read {path}: {error.strerror}") from error
    if b"\x00" in data[:8192]:
        raise RequestError(f"{path} looks like a binary file, not text")
    try:
        return data.decode("utf-8-sig"), data.startswith(codecs.BOM_UTF8)
    except UnicodeDecodeError as error:
        raise RequestError(f"{path} is not UTF-8 text ({error.reason} at byte {error.start})") from error


def _parse_span(text: str, option: str = "--span", where: str = "") -> tuple[int, int]:
    from model.errors import RequestError

    try:
        start, end = (int(part) for part in text.split(":"))
    except ValueError as error:
        raise RequestError(f"{option} must be START:END character offsets{where}, got {text!r}") from error
    return start, end


def edit_file(args: argparse.Namespace) -> int:
    from model import RequestError

    if args.file is None:
        raise RequestError("fill needs a FILE with --at OFFSET, or --json to read requests from stdin")
    document, bom = _read_document(args.file)
    request = file_request(args, document)
    request.validate()  # before the (slow) model load
    engine = _engine(args)
    display = None if args.quiet else PassDisplay(sys.stderr)
    result = engine.run(request, on_pass=display)
    if display is not None:
        display.done(result)
    new_text = result.text
    if getattr(args, "changes", False) and request.span is not None:
        from model.edit.changes import word_changes, word_diff

        # The original span with the changes written in, as ``git diff --word-diff`` shows them.
        new_text = word_diff(request.span, word_changes(request.span, new_text))
    whole = (codecs.BOM_UTF8 if bom else b"") + (request.prefix + new_text + request.suffix).encode("utf-8")
    out = stdout_bytes()
    out.write(new_text.encode("utf-8") if args.only_span else whole)
    out.flush()
    return EXIT_OK


def file_request(args: argparse.Namespace, document: str) -> Any:
    """The :class:`EditRequest` ``redraft fill FILE`` or ``redraft rewrite FILE`` asks of ``document``."""
    from app.window.dictionary import detect_language  # no Qt: the editor's reading of a text's language
    from model import EditRequest, RequestError, split_document

    common: dict[str, Any] = {
        "seed": args.seed,
        "candidates": args.candidates,
        "options": _options(args),
        "context_budget": args.context_budget,
        "max_new_tokens": args.max_new_tokens,
        # A new text's marks: its language's, as the editor gives them (the text's own where it has some).
        "language": args.language or detect_language(document) or "",
    }
    if args.command == "fill" and args.gaps:
        if args.span is None or args.at is not None:
            raise RequestError("fill --gaps needs --span START:END (the text whose gap marks to fill), not --at")
        prefix, span, suffix = split_document(document, *_parse_span(args.span))
        request = EditRequest(
            prefix=prefix, span=span, suffix=suffix, mode="gaps", vary_length=not args.fixed_length, **common
        )
    elif args.command == "fill":
        if args.span is not None:
            raise RequestError("fill --span needs --gaps (to rewrite a span, use redraft rewrite)")
        if args.at is None:
            raise RequestError("fill FILE needs --at OFFSET (the character offset of the gap)")
        prefix, _, suffix = split_document(document, args.at, args.at)
        if common["max_new_tokens"] is None:
            common["max_new_tokens"] = FILL_TOKENS
        request = EditRequest(prefix=prefix, suffix=suffix, mode="fill", vary_length=not args.fixed_length, **common)
    else:
        prefix, span, suffix = split_document(document, *_parse_span(args.span))
        if not span.strip():
            raise RequestError("the span is empty or only whitespace; use fill to write into a gap")
        keep = tuple(_parse_span(text, "--keep", " inside the span") for text in args.keep)
        request = EditRequest(
            prefix=prefix, span=span, suffix=suffix, mode="rewrite", vary_length=not args.fixed_length,
            keep=keep, length=args.length, **common,
        )  # fmt: skip
    return request


def words_file(args: argparse.Namespace) -> int:
    """``redraft words FILE --at OFFSET``: the words the model finds fitting in place of the word at OFFSET, one a
    line, likeliest first (``--json``: the word, its offsets and each choice with its share), as Words That Fit
    lists them before the editor's dictionary check."""
    from model.edit.request import word_at
    from model.errors import RequestError

    document, _bom = _read_document(args.file)
    if not 0 <= args.at <= len(document):
        raise RequestError(f"--at {args.at} is outside the document (0 to {len(document)} characters)")
    found = word_at(document, args.at)
    if found is None:
        raise RequestError(f"no word at character {args.at}: give the offset of a word, or of its first or last letter")
    start, end = found
    choices = _engine(args).word_choices(document[:start], document[start:end], document[end:], args.count)
    out = stdout_bytes()
    if args.json:
        answer = {"word": document[start:end], "start": start, "end": end,
                  "choices": [{"word": choice.word, "share": round(choice.share, 6)} for choice in choices]}
        out.write((json.dumps(answer, ensure_ascii=False) + "\n").encode("utf-8"))
    else:
        out.write("".join(choice.word + "\n" for choice in choices).encode("utf-8"))
    out.flush()
    return EXIT_OK


def compare_files(args: argparse.Namespace) -> int:
    """``redraft compare BEFORE AFTER``: AFTER with every change since BEFORE marked as CriticMarkup
    ({~~old~>new~~}, {++added++}, {--removed--}), each signed ``--author``, as Edit ▸ Tracked Changes ▸ Mark Changes
    Since… marks them (a sentence rewritten whole is one change); the editor reviews them and a Word export keeps
    them as tracked changes. Nothing is written to either file."""
    from app.documents.critic_markup import mark_up, marks, signed_by
    from model.errors import RequestError

    before, _bom = _read_document(args.before)
    after, _bom = _read_document(args.after)
    marked = None if marks(before) or marks(after) else mark_up(before, after, signed_by(args.author), True)
    if marked is None:
        raise RequestError("a version holds CriticMarkup's own signs ({++ {-- {~~), so changes could not be told "
                           "from its words")  # fmt: skip
    out = stdout_bytes()
    out.write(marked.encode("utf-8"))
    out.flush()
    return EXIT_OK


class PassDisplay:
    """Shows each pass on stderr: accepted text in ink, the rest as dim noise (one line per pass off a TTY)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.live = stream.isatty()

    def __call__(self, step: Any) -> None:
        if getattr(step, "waiting", False):
            return  # a server edit's veil while its request runs: nothing to show on a terminal
        pieces, accepted = step.pieces[0], step.accepted[0]
        if self.live:
            dim, reset = "\033[2m", "\033[0m"
            body = "".join(p if ok else f"{dim}{p}{reset}" for p, ok in zip(pieces, accepted, strict=True))
            line = f"pass {step.step + 1:>3}  {step.committed[0]}{body}".replace("\n", "⏎")
            self.stream.write("\r\033[K" + line[:400])
        else:
            shown = "".join(p if ok else "·" for p, ok in zip(pieces, accepted, strict=True))
            self.stream.write(f"pass {step.step + 1:>3}: {step.committed[0]}{shown}".replace("\n", "⏎") + "\n")
        self.stream.flush()

    def done(self, result: Any) -> None:
        if self.live:
            self.stream.write("\r\033[K")
        self.stream.write(
            f"{result.passes} passes, {result.tokens_per_forward:.2f} tokens per forward, "
            f"{result.ms_per_pass:.1f} ms per pass\n"
        )
        self.stream.flush()


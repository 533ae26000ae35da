"""The ``redraft`` command: the editor by default, plus headless subcommands for scripts.

    redraft [FILE]                        open the editor (on the built-in model unless --model)
    redraft fill --json                   JSON lines in (prefix, suffix, max_new_tokens, seed; span, keep,
                                          length, mode "gaps" to steer a rewrite), JSON lines out
    redraft fill FILE --at OFFSET         fill a gap, showing each pass; the document goes to stdout
    redraft fill FILE --gaps --span S:E   fill every gap mark (___, [...]) in a span, the rest held as it is
    redraft rewrite FILE --span START:END rewrite a span, showing each pass; the document goes to stdout
                                          (--keep S:E holds words inside it verbatim, --length shorter|longer)
    redraft doctor                        will this model fit this machine? (and which torch runs)
    redraft model list|download|remove    the installed models; download one from the hub (resumable)
    redraft --self-test                   load the built-in model, fill one gap, print timings (checks a build)
    redraft enable-gpu / disable-gpu      add or remove the CUDA build of torch for an installed copy

Headless commands never import Qt. Errors go to stderr with a non-zero exit status. What goes to stdout
is UTF-8 bytes written through ``sys.stdout.buffer`` with the text's own line endings (and the input's
BOM), whatever the console's code page and newline translation (Windows' text-mode stdout would turn
"\r\n" into "\r\r\n" and fail on characters outside its code page).
"""

from __future__ import annotations

import argparse
import codecs
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO, TextIO

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2
FILL_TOKENS = 32  # a gap's longest text when neither the line nor --max-new-tokens says
SUBCOMMANDS = ("fill", "rewrite", "doctor", "edit", "model")


def _model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=None, help="model folder or hub id (default: the built-in model)")
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument(
        "--precision", default="auto", choices=("auto", "4bit", "8bit", "bf16", "fp32"), help="weight precision"
    )
    parser.add_argument(
        "--experts",
        default="auto",
        choices=("auto", "device", "host-stream", "host-compute"),  # model.checkpoint.expert_placement's
        help="where a Mixture-of-Experts model's routed experts live at 4/8 bit on a GPU: in host memory, streamed "
        "to the GPU per layer or computed on the CPU, so a 12-16 GB card runs the 26B-A4B (slower per pass); "
        "auto: host memory only when the GPU is too small",
    )
    parser.add_argument("--allow-download", action="store_true", help="let a hub id download (off by default)")
    _server_options(parser)


def _server_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--server", default=None, metavar="URL", help="edit on a team's vLLM server instead")
    parser.add_argument("--server-model", default=None, help="the served model's name (default: the first listed)")
    parser.add_argument(
        "--api-key-env", default=None, metavar="VAR", help="environment variable holding the server's API key"
    )
    parser.add_argument(
        "--server-passes",
        default="one-request",
        choices=("one-request", "per-pass"),
        help="one request per span (default) or one per denoising pass",
    )


def _sampler_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=None, help="fix the noise for reproducible results")
    parser.add_argument("--steps", type=int, default=None, help="maximum denoising passes per canvas")
    parser.add_argument(
        "--left-to-right-bias",
        type=float,
        default=None,
        help="prefer settling words from the left (nats per slot; 0: the published sampler; default: the model's)",
    )
    parser.add_argument(
        "--polish-rounds",
        type=int,
        default=None,
        help="rounds that re-develop the least likely words of the finished text (0: the published sampler; "
        "default: the model's)",
    )
    parser.add_argument("--candidates", type=int, default=1, help="candidates developed side by side")
    parser.add_argument("--context-budget", type=int, default=2048, help="prefix tokens kept as context")
    parser.add_argument("--only-span", action="store_true", help="print only the new text, not the document")
    parser.add_argument("--quiet", action="store_true", help="do not show the passes as they develop")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="redraft", description="Rewrite text in place with a diffusion model.")
    commands = parser.add_subparsers(dest="command")

    edit = commands.add_parser("edit", help="open the editor (the default)")
    edit.add_argument("file", nargs="?", type=Path)
    edit.add_argument("--model", default=None, help="model folder or hub id (default: the built-in model)")

    fill = commands.add_parser("fill", help="fill a gap in a file, or answer JSON-lines requests")
    fill.add_argument("file", nargs="?", type=Path)
    fill.add_argument("--json", action="store_true", help="read JSON-lines requests from stdin")
    fill.add_argument("--at", type=int, default=None, help="character offset of the gap")
    fill.add_argument(
        "--gaps", action="store_true", help="fill every gap mark (___ or [...]) inside --span, holding the rest"
    )
    fill.add_argument("--span", default=None, help="with --gaps: START:END character offsets of the text to fill")
    fill.add_argument(
        "--max-new-tokens",
        type=int,
        default=None,
        help=f"longest text the gap may get (default {FILL_TOKENS}; with --gaps, per gap, default 16)",
    )
    fill.add_argument(
        "--fixed-length",
        action="store_true",
        help="develop every candidate at --max-new-tokens (default: gap candidates try shorter lengths too)",
    )
    _model_options(fill)
    _sampler_options(fill)

    rewrite = commands.add_parser("rewrite", help="rewrite a span of a file")
    rewrite.add_argument("file", type=Path)
    rewrite.add_argument("--span", required=True, help="START:END character offsets")
    rewrite.add_argument("--max-new-tokens", type=int, default=None, help="cap on the new span's tokens")
    rewrite.add_argument(
        "--keep",
        action="append",
        default=[],
        metavar="START:END",
        help="words to keep verbatim: character offsets inside the span (repeatable)",
    )
    rewrite.add_argument(
        "--length", default="same", help="how long the new text comes out: shorter, same (default) or longer"
    )
    rewrite.add_argument(
        "--fixed-length",
        action="store_true",
        help="develop every candidate at the span's length plus slack (default: candidates try shorter ones too)",
    )
    _model_options(rewrite)
    _sampler_options(rewrite)

    commands.add_parser("doctor", help="check whether a model fits this machine (see redraft doctor --help)")
    commands.add_parser("model", help="list, download or remove models (see redraft model --help)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    installed = _installed_app_command(args_list)
    if installed is not None:
        return installed
    if args_list[:1] == ["doctor"]:
        from model.checkpoint.doctor import doctor_main  # owns its own options

        fits = doctor_main(args_list[1:])
        return max(fits, _doctor_display())
    if args_list[:1] == ["model"]:
        from app.model_sources.model_command import model_main  # owns its own options

        return model_main(args_list[1:])
    if not args_list or (args_list[0] not in SUBCOMMANDS and not args_list[0].startswith("-")):
        args_list = ["edit", *args_list]
    args = build_parser().parse_args(args_list)
    if args.command in (None, "edit"):
        from app.command_line.platform_check import check_platform

        report = check_platform()  # before Qt's GUI modules load: a missing library would abort them
        if report is not None and not report.ok:
            print(f"redraft: {report.message()}", file=sys.stderr)
            return EXIT_ERROR
        from app.gui import run_editor  # Qt only for the editor

        return run_editor(model_spec=getattr(args, "model", None), file=getattr(args, "file", None))
    from model.errors import RedraftError, RequestError

    try:
        if args.command == "fill" and args.json:
            if args.gaps or args.span is not None:
                raise RequestError('--gaps and --span apply to a FILE; a JSON line sends "span" and "mode": "gaps"')
            return _fill_json(args, sys.stdin.buffer, _stdout_bytes())
        return _edit_file(args)
    except RedraftError as error:
        print(f"redraft: {error}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("redraft: interrupted", file=sys.stderr)
        return 130


def _doctor_display() -> int:
    """``redraft doctor``'s display section: can Qt open a window here?

    EXIT_ERROR when libraries or the plugin are missing (the install is incomplete); a shell without a
    display is only reported, since doctor is also run on headless machines to size a GPU.
    """
    from app.command_line.platform_check import check_platform

    report = check_platform()
    if report is None:
        print("\nDisplay: nothing to check on this system (Qt brings its own platform plugin)")
        return EXIT_OK
    if report.ok:
        print(f"\nDisplay: Qt's {report.platform!r} platform plugin has every library it needs")
        return EXIT_OK
    print(f"\nDisplay: {report.message()}")
    return EXIT_ERROR if report.missing or not report.plugin_found else EXIT_OK


def _installed_app_command(args_list: list[str]) -> int | None:
    """What installed copies need before anything imports torch (model_sources/gpu_env.py, command_line/selftest.py).

    Puts a GPU build of torch first on the import path if the writer enabled one, then answers
    ``--self-test``, ``--version``, ``enable-gpu`` and ``disable-gpu``; None lets ``main`` go on.
    """
    from app.model_sources import gpu_env
    from app.userdirs import log_when_windowless

    log_when_windowless()  # redraftw.exe / pythonw.exe have no stderr: tracebacks go to the log folder
    first = args_list[:1]
    if first in (["enable-gpu"], ["disable-gpu"]):
        return gpu_env.main(args_list)
    gpu_env.activate()
    if first == ["--self-test"]:
        from app.command_line.selftest import self_test

        return self_test()
    if first == ["--version"]:
        from importlib.metadata import version

        print(f"redraft {version('redraft')}")
        return EXIT_OK
    if first == ["doctor"] and not {"-h", "--help"} & set(args_list):  # --help prints the usage alone
        print(gpu_env.describe_torch() + "\n", flush=True)
    return None


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
    "prefix", "suffix", "max_new_tokens", "seed", "candidates", "vary_length", "span", "keep", "length", "mode"
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
    )
    request.validate()
    return request


def _json_ranges(value: object) -> Any:
    """JSON's ``[[start, end], ...]`` as the tuple of pairs ``EditRequest.keep`` holds; anything else is
    passed on as it is, for ``validate`` to name."""
    if isinstance(value, list):
        return tuple(tuple(item) if isinstance(item, list) else item for item in value)
    return value


def _stdout_bytes() -> BinaryIO:
    """stdout's byte stream (after whatever was printed to the text stream)."""
    sys.stdout.flush()
    return sys.stdout.buffer


def _fill_json(args: argparse.Namespace, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """One JSON line out per request line in; a bad request gets an ``error`` line and exit status 1."""
    from model import RedraftError

    engine = _engine(args)
    status = EXIT_OK
    # Bytes, decoded line by line: one line that is not UTF-8 is that line's error, not a traceback.
    for number, line in enumerate(stdin, start=1):
        if not line.strip():
            continue
        try:
            result = engine.run(request_from_json_line(line, args))
            answer: dict[str, Any] = {
                "text": result.text,
                "passes": result.passes,
                "tokens_per_forward": round(result.tokens_per_forward, 3),
                "ms_per_pass": round(result.ms_per_pass, 2),
            }
            if len(result.texts) > 1:
                # Best first, with the model's own score (Engine._candidate_scores; null: wrote nothing).
                answer["candidates"] = [result.texts[c] for c in result.ranking]
                answer["scores"] = [
                    round(result.scores[c], 3) if math.isfinite(result.scores[c]) else None for c in result.ranking
                ]
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


def _read_document(path: Path) -> tuple[str, bool]:
    """The file's text, line endings untouched (offsets count them as they are), and whether it had a BOM."""
    from model.errors import RequestError

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


def _edit_file(args: argparse.Namespace) -> int:
    from model import EditRequest, RequestError, split_document

    if args.file is None:
        raise RequestError("fill needs a FILE with --at OFFSET, or --json to read requests from stdin")
    document, bom = _read_document(args.file)
    common: dict[str, Any] = {
        "seed": args.seed,
        "candidates": args.candidates,
        "options": _options(args),
        "context_budget": args.context_budget,
        "max_new_tokens": args.max_new_tokens,
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
    request.validate()  # before the (slow) model load
    engine = _engine(args)
    display = None if args.quiet else PassDisplay(sys.stderr)
    result = engine.run(request, on_pass=display)
    if display is not None:
        display.done(result)
    new_text = result.text
    whole = (codecs.BOM_UTF8 if bom else b"") + (prefix + new_text + suffix).encode("utf-8")
    out = _stdout_bytes()
    out.write(new_text.encode("utf-8") if args.only_span else whole)
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


if __name__ == "__main__":
    raise SystemExit(main())

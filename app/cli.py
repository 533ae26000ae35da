"""The ``redraft`` command: the editor by default, plus headless subcommands for scripts.

    redraft [FILE]                        open the editor (on the built-in model unless --model)
    redraft fill --json                   JSON lines in (prefix, suffix, max_new_tokens, seed; span, keep,
                                          length, mode "gaps" to steer a rewrite), JSON lines out
    redraft fill FILE --at OFFSET         fill a gap, showing each pass; the document goes to stdout
    redraft fill FILE --gaps --span S:E   fill every gap mark ([...], ___) in a span, the rest held as it is
    redraft rewrite FILE --span START:END rewrite a span, showing each pass; the document goes to stdout
                                          (--keep S:E holds words inside it verbatim, --length shorter|longer;
                                          --changes marks what changed: [-removed-]{+added+})
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
import sys
from collections.abc import Sequence
from pathlib import Path

from app.command_line.edit_commands import EXIT_ERROR, EXIT_OK, FILL_TOKENS

EXIT_USAGE = 2
SUBCOMMANDS = ("fill", "rewrite", "words", "compare", "doctor", "edit", "model")
DOCUMENT_HELP = "a UTF-8 text or Markdown file (a .docx, .doc, .odt or .rtf is read as Markdown, as File > Open does)"


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
    parser.add_argument(
        "--context-budget", type=int, default=2048,
        help="prefix tokens kept as context (the built-in model reads at most 128)",
    )
    parser.add_argument(
        "--language", default="", metavar="CODE",
        help="the text's language (en, de, fr…): a text with too few quotation marks or dashes of its own gets "
        "its language's (default: the language a FILE plainly reads as; none for --json lines)",
    )
    parser.add_argument("--only-span", action="store_true", help="print only the new text, not the document")
    parser.add_argument("--quiet", action="store_true", help="do not show the passes as they develop")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="redraft", description="Rewrite text in place with a diffusion model.")
    commands = parser.add_subparsers(dest="command")

    edit = commands.add_parser("edit", help="open the editor (the default)")
    edit.add_argument("files", nargs="*", type=Path, metavar="file", help="documents to open, each in a window")
    edit.add_argument(
        "--model", default=None,
        help="model folder or hub id (default: the settings' model); a Redraft of its own, even if one runs",
    )

    fill = commands.add_parser("fill", help="fill a gap in a file, or answer JSON-lines requests")
    fill.add_argument("file", nargs="?", type=Path, help=DOCUMENT_HELP)
    fill.add_argument("--json", action="store_true", help="read JSON-lines requests from stdin")
    fill.add_argument("--at", type=int, default=None, help="character offset of the gap")
    fill.add_argument(
        "--gaps", action="store_true", help="fill every gap mark ([...] or ___) inside --span, holding the rest"
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
    rewrite.add_argument("file", type=Path, help=DOCUMENT_HELP)
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
    rewrite.add_argument(
        "--changes",
        action="store_true",
        help="print the original with the rewrite's changes in it, [-removed-]{+added+}, as git diff --word-diff",
    )
    _model_options(rewrite)
    _sampler_options(rewrite)

    words = commands.add_parser("words", help="list the words that fit in place of a word of a file")
    words.add_argument("file", type=Path, help=DOCUMENT_HELP)
    words.add_argument("--at", type=int, required=True, help="character offset of the word (or of its edge)")
    words.add_argument("--count", type=int, default=8, help="the most words listed (default 8)")
    words.add_argument("--json", action="store_true", help="one JSON line: the word, its offsets and each choice")
    _model_options(words)

    compare = commands.add_parser(
        "compare", help="print a file with the changes since an earlier version marked as tracked changes"
    )
    compare.add_argument("before", type=Path, help="the earlier version: " + DOCUMENT_HELP)
    compare.add_argument("after", type=Path, help="the version as it is now, printed with the changes marked")
    compare.add_argument("--author", default="", help="the name each change is signed with ({>>NAME<<})")

    commands.add_parser("doctor", help="check whether a model fits this machine (see redraft doctor --help)")
    commands.add_parser("model", help="list, download or remove models (see redraft model --help)")
    return parser


def _handed_over(files: Sequence[Path]) -> bool:
    """Whether a Redraft already running took ``files`` (app/window/handover.py): it opens them on the model it
    holds, and this start ends. Where Qt's network library cannot load, never: a Redraft of its own, as before."""
    try:
        from app.window.handover import hand_over
    except ImportError:
        return False
    if not hand_over(files):
        return False
    if sys.stdout is not None:  # a windowless start has none
        print("Opened in the Redraft already running." if files else "A new window of the running Redraft.")
    return True


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
        model, files = getattr(args, "model", None), getattr(args, "files", None) or ()
        if model is None and _handed_over(files):  # a --model start is a process of its own, on that model
            return 0
        from app.gui import run_editor  # Qt only for the editor

        return run_editor(model_spec=model, files=files)
    from app.command_line.edit_commands import compare_files, edit_file, fill_json, stdout_bytes, words_file
    from model.errors import RedraftError, RequestError

    try:
        if args.command == "compare":
            return compare_files(args)
        if args.command == "words":
            if args.count < 1:
                raise RequestError(f"--count must be at least 1, got {args.count}")
            return words_file(args)
        if args.command == "fill" and args.json:
            if args.gaps or args.span is not None:
                raise RequestError('--gaps and --span apply to a FILE; a JSON line sends "span" and "mode": "gaps"')
            return fill_json(args, sys.stdin.buffer, stdout_bytes())
        return edit_file(args)
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


if __name__ == "__main__":
    raise SystemExit(main())

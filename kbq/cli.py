"""The `kbq` command. The only place that prints or exits; the library raises typed errors."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import NoReturn, TextIO

from kbq.errors import (
    CHECK_FAILED,
    InternalError,
    KbqError,
    KnowledgeFileError,
    NoResultError,
    QueryTimeoutError,
    UnknownTermError,
    UsageError,
    ValidationError,
)
from kbq.sanitize import clean
from kbq.version import __version__

EXAMPLES = """questions people ask:
  kbq "does llama 3.1 8b fit on rtx 4090"     (--check: exit 4 if it does not)
  kbq "how much vram for llama 3.1 70b"
  kbq "how fast is llama 3.1 8b on rtx 4090"
  kbq "how many h100 sxm5 for llama 3.1 405b inference"
  kbq "gpu for llama 3.1 8b inference"        (cheapest, best value, fastest)
  kbq "cheapest gpu to run llama 3.1 8b"
  kbq "best value gpu for resnet-50 training under $2000"
  kbq "is rtx 3090 good for llama 3.1 8b inference"
  kbq "compare rtx 4090 vs rtx 3090"          kbq "describe rtx 4090"
more forms:
  kbq "gpu for llama 3.1 70b inference at int4 in an 8-card server"
  kbq "gpus where memory >= 24gb and nvlink = yes order by bandwidth desc"
  kbq "best gpu for bert on dense 9-card chassis as of 2020-03"
  kbq "frameworks for rnn"          kbq "sdks for inference"
  kbq "requirements for lstm"       kbq "why quadro rtx 8000 for bert"
  kbq "keys"                    (every attribute for where / order by)
  kbq sparql "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
  kbq help [FORM]               (the language reference, exit codes)
  kbq build | kbq validate [FILE...] | kbq shell | kbq serve | kbq export
output: the headline first, then the table fitted to $COLUMNS (80 in a pipe);
NO_COLOR and FORCE_COLOR set the colour
"""
COMMANDS = {"build", "validate", "sparql", "shell", "serve", "export", "help"}


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors raised as UsageError (so `--format json` gets them as JSON too)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.format_usage().rstrip()}\n{self.prog}: error: {message}")


def _seconds(text: str) -> float:
    value = float(text)
    if not 0 < value < 1e6:  # also NaN
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds between 0 and 1000000")
    return value


def _progress(message: str) -> None:
    print(clean(message), file=sys.stderr, flush=True)


def _question_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="kbq",
        description="Ask kbq which GPU a deep-learning workload needs, and why.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("question", help="a kbq question (quote it), or one of: " + ", ".join(sorted(COMMANDS)))
    _common(p)
    p.add_argument("--sparql", action="store_true", help="print the compiled SPARQL instead of running it")
    p.add_argument("--explain", action="store_true", help="also list the GPUs each constraint removed")
    p.add_argument(
        "--check",
        action="store_true",
        help=f"exit {CHECK_FAILED} when the answer is 'does not fit' or no candidate remains (0 otherwise): for scripts",
    )
    p.add_argument("--version", action="version", version=f"kbq {__version__}")
    return p


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--format",
        choices=["table", "json", "csv", "chart"],
        default="table",
        help="output format (default: table; chart: Unicode bars of a memory estimate, ranking or comparison)",
    )
    p.add_argument("--kb", action="append", default=[], metavar="FILE", help="a Turtle overlay (repeatable)")
    p.add_argument("--endpoint", metavar="URL", help="ask an external SPARQL endpoint holding `kbq export` data")


def _open(args: argparse.Namespace):
    from kbq.api import KnowledgeBase

    if getattr(args, "endpoint", None):
        return KnowledgeBase.remote(args.endpoint)
    return KnowledgeBase.load(*args.kb, progress=_progress, engine=os.environ.get("KBQ_ENGINE", "sparql"))


def _print_answer(result, fmt: str, out: TextIO, *, explain: bool) -> None:
    from kbq import output

    if fmt == "json":
        print(output.to_json(result.to_dict()), file=out)
        return
    if fmt == "csv":
        print(output.to_csv(result.columns, result.rows), file=out)
        return
    read_as = getattr(result, "read_as", None)
    if read_as and fmt not in ("json", "csv"):  # a sentence: first say which canonical question answers it
        print(f"read as: {read_as}\n", file=out)
    from kbq import render

    if fmt == "chart" and not isinstance(result.extra.get("chart"), dict):
        print(f"(no chart for a {result.kind} answer: the table)", file=sys.stderr)
    print(render.answer(result, fmt, width=render.width(out), color=render.use_color(out), explain=explain), file=out)


def ask(argv: list[str]) -> int:
    args = _question_parser().parse_args(argv)
    kb = _open(args)
    if args.sparql:
        print(clean(kb.compile(args.question)))
        return 0
    try:
        result = kb.answer(args.question, explain=args.explain)
    except NoResultError as exc:
        if args.check:
            exc.exit_code = CHECK_FAILED  # no candidate remains: the check fails
        raise
    _print_answer(result, args.format, sys.stdout, explain=args.explain)
    if args.check and result.verdict is not None and not result.verdict["fits"]:
        return CHECK_FAILED
    return 0


def cmd_sparql(argv: list[str]) -> int:
    p = _Parser(prog="kbq sparql", description="Run raw SPARQL over the inferred KB.")
    p.add_argument("query", help="a SPARQL 1.1 query, or @FILE to read it from a file")
    _common(p)
    p.add_argument(
        "--allow-service", action="store_true", help="let SERVICE send parts of the query to other endpoints (refused by default)"
    )
    p.add_argument("--timeout", type=_seconds, default=30.0, metavar="S", help="seconds the query may run (default 30)")
    args = p.parse_args(argv)
    from kbq import output

    query = args.query
    if query.startswith("@"):
        try:
            query = Path(query[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise KnowledgeFileError(query[1:], None, f"cannot read: {exc.strerror}") from None
    table = _open(args).table(query, allow_service=args.allow_service, timeout=args.timeout)
    if args.format == "json":
        print(output.to_json({"columns": table.columns, "rows": table.rows}))
    elif args.format == "csv":
        print(output.to_csv(table.columns, table.rows))
    else:
        from kbq import render

        print(render.table(table.columns, table.rows, width=render.width(sys.stdout), color=render.use_color(sys.stdout)))
    return 0


def cmd_build(argv: list[str]) -> int:
    p = _Parser(prog="kbq build", description="Rebuild the inferred snapshot now.")
    p.add_argument(
        "--engine", choices=["sparql", "reasonable", "owlrl"], default="sparql", help="OWL-RL engine (owlrl: the reference)"
    )
    p.add_argument("--kb", action="append", default=[], metavar="FILE", help="a Turtle overlay (repeatable)")
    args = p.parse_args(argv)
    from kbq.build import pipeline

    _store, info = pipeline.ensure([Path(f) for f in args.kb], engine=args.engine, rebuild=True, progress=_progress)
    print(
        clean(
            f"snapshot {info.key} ({info.engine}): {info.asserted} triples asserted, {info.inferred} inferred "
            f"in {info.rounds} rounds; reasoning {info.reason_seconds:.2f} s, build {info.build_seconds:.2f} s\n{info.path}"
        )
    )
    return 0


def cmd_validate(argv: list[str]) -> int:
    p = _Parser(prog="kbq validate", description="Check Turtle files against kbq's SHACL shapes.")
    p.add_argument("files", nargs="*", help="Turtle files (overlays) to check together with the shipped KB")
    p.add_argument("--only", action="store_true", help="check the given files without the shipped KB")
    args = p.parse_args(argv)
    from kbq.build.validate import validate_files

    found = validate_files([Path(f) for f in args.files], shipped=not args.only)
    if found:
        raise ValidationError(found)
    print(f"ok: the knowledge conforms ({len(args.files)} overlay file(s){'' if args.only else ' + the shipped KB'})")
    return 0


def cmd_shell(argv: list[str]) -> int:
    p = _Parser(prog="kbq shell", description="Ask questions interactively (history kept).")
    _common(p)
    args = p.parse_args(argv)
    try:
        import readline

        history = Path.home() / ".kbq_history"
        if history.exists():
            readline.read_history_file(history)
    except (ImportError, OSError):
        readline, history = None, None  # type: ignore[assignment]
    kb = _open(args)
    print("kbq shell: ask a question, 'help' for examples, 'quit' to leave.", file=sys.stderr)
    while True:
        try:
            line = input("kbq> ").strip()
        except EOFError:
            print(file=sys.stderr)
            break
        if line in ("quit", "exit"):
            break
        if line in ("help", "?"):
            print(EXAMPLES)
            continue
        if not line:
            continue
        try:
            _print_answer(kb.answer(line), args.format, sys.stdout, explain=False)
        except KbqError as exc:
            print(clean(str(exc)), file=sys.stderr)
    if readline is not None and history is not None:
        try:
            readline.write_history_file(history)
        except OSError:
            pass
    return 0


def cmd_help(argv: list[str]) -> int:
    p = _Parser(
        prog="kbq help", description="The language reference (docs/language.md): forms, clauses, words, keys, units, errors."
    )
    p.add_argument("name", nargs="?", help="a section to print (without one: the list of sections)")
    p.add_argument("--all", action="store_true", help="print the whole reference (markdown)")
    p.add_argument("--write", metavar="FILE", help="write the whole reference to FILE (e.g. docs/language.md)")
    p.add_argument("--kb", action="append", default=[], metavar="FILE", help="a Turtle overlay (repeatable)")
    args = p.parse_args(argv)
    from kbq.lang import reference

    names = [name for name, _title, _syntax in reference.listing()]
    if args.name is None and not (args.all or args.write):
        width = max(len(n) for n in names)
        for name, title, syntax in reference.listing():
            print(f"{name.ljust(width)}  {title}" + (f"\n{' ' * width}    {syntax}" if syntax else ""))
        print("\nkbq help NAME prints a section; kbq help --all the whole reference (docs/language.md).")
        return 0
    if args.name is not None and args.name not in names:
        import difflib

        raise UnknownTermError(
            f"no section '{args.name}' in the language reference (kbq help lists them)",
            suggestions=difflib.get_close_matches(args.name, names, n=3, cutoff=0.5),
        )
    kb = _open(argparse.Namespace(kb=args.kb, endpoint=None))
    ref = reference.Reference(kb.catalog, kb.table)
    if args.write:
        Path(args.write).write_text(ref.markdown(), encoding="utf-8")
        print(f"wrote {args.write}", file=sys.stderr)
    if args.all:
        print(clean(ref.markdown()), end="")
    if args.name is not None:
        print(clean(ref.section(args.name)), end="")
    return 0


def cmd_serve(argv: list[str]) -> int:
    from kbq.serve.app import main as serve_main

    return serve_main(argv)


def cmd_export(argv: list[str]) -> int:
    p = _Parser(
        prog="kbq export",
        description="Write the inferred graph for an external SPARQL store.",
        epilog="nt and ttl merge the asserted and inferred triples into one default graph, which is what kbq's "
        "questions read. nq keeps them in two named graphs: the store must then query their union as its default "
        "graph (Oxigraph: --union-default-graph; Fuseki: tdb:unionDefaultGraph true), or kbq --endpoint finds nothing.",
    )
    p.add_argument(
        "--format",
        choices=["nt", "ttl", "nq"],
        default="nt",
        help="nt (default) and ttl: one merged graph; nq: two named graphs, needs a union default graph (see below)",
    )
    p.add_argument("--kb", action="append", default=[], metavar="FILE", help="a Turtle overlay (repeatable)")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    args = p.parse_args(argv)
    from kbq.store.export import export

    kb = _open(argparse.Namespace(kb=args.kb, endpoint=None))
    data = export(kb.store, args.format)
    if args.output:
        Path(args.output).write_bytes(data)
        print(f"wrote {len(data)} bytes to {args.output}", file=sys.stderr)
    else:
        sys.stdout.buffer.write(data)
    return 0


def _wants_json(argv: list[str]) -> bool:
    """`--format json` (or `--format=json`) anywhere: errors then go to stdout as a JSON object too."""
    for i, arg in enumerate(argv):
        if arg == "--format=json" or (arg == "--format" and i + 1 < len(argv) and argv[i + 1] == "json"):
            return True
    return False


def cmd_model(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="kbq model", description="Models from local files.")
    sub = p.add_subparsers(dest="action", required=True)
    imp = sub.add_parser(
        "import",
        help="read a config.json, a GGUF header or a safetensors header/index and write a Turtle overlay (use it with --kb)",
    )
    imp.add_argument("file", help="config.json, MODEL.gguf, MODEL.safetensors or model.safetensors.index.json")
    imp.add_argument("--name", help="the model's name in the KB (default: the file's own name for it)")
    imp.add_argument("-o", "--output", metavar="FILE", help="write the overlay here (default: standard output)")
    args = p.parse_args(argv)
    from kbq.build.model_import import read_model, to_turtle

    turtle = to_turtle(read_model(args.file, args.name), args.file)
    if args.output:
        Path(args.output).write_text(turtle, encoding="utf-8")
        print(f"wrote {args.output}: ask with --kb {args.output}", file=sys.stderr)
    else:
        print(turtle)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    handlers = {
        "sparql": cmd_sparql,
        "build": cmd_build,
        "validate": cmd_validate,
        "shell": cmd_shell,
        "serve": cmd_serve,
        "export": cmd_export,
        "help": cmd_help,
        "model": cmd_model,
    }
    as_json = _wants_json(argv)
    try:
        if argv and argv[0] in handlers:
            return handlers[argv[0]](argv[1:])
        return ask(argv)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except QueryTimeoutError as exc:
        code = _report(exc, as_json)
        sys.stdout.flush()
        os._exit(code)  # the engine's thread cannot be stopped: end the process with it
    except KbqError as exc:
        return _report(exc, as_json)
    except RecursionError:
        return _report(UsageError("the input nests too deeply to be read"), as_json)
    except Exception as exc:
        if os.environ.get("KBQ_DEBUG"):
            raise
        error = InternalError(f"kbq: internal error: {type(exc).__name__}: {exc} (set KBQ_DEBUG=1 for a traceback)")
        return _report(error, as_json)


def _report(exc: KbqError, as_json: bool) -> int:
    """An error: as JSON on stdout under `--format json`, and always as text on stderr."""
    no_result = isinstance(exc, NoResultError)
    if as_json:
        from kbq import output

        print(output.to_json({**exc.to_dict(), "no_result": True} if no_result else exc.to_dict()))
    print(clean(f"no result: {exc}" if no_result else str(exc)), file=sys.stderr)
    return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())

"""The `kbq` command. The only place that prints or exits; the library raises typed errors."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TextIO

from kbq.errors import KbqError, KnowledgeFileError, NoResultError, UnknownTermError, ValidationError
from kbq.version import __version__

EXAMPLES = """examples:
  kbq "gpu for lstm where cooling=blower"
  kbq "best gpu for bert on dense 9-card chassis as of 2020-03"
  kbq "gpus where memory >= 24gb and nvlink = yes order by bandwidth desc limit 5"
  kbq "gpu for llama 3.1 70b inference at int4 in an 8-card server"
  kbq "frameworks for rnn"          kbq "sdks for inference"
  kbq "applications of gan"         kbq "algorithms for machine translation"
  kbq "requirements for lstm"       kbq "requirements for bert using dettmers"
  kbq "compare rtx 2080 ti and titan rtx"
  kbq "describe quadro rtx 8000"    kbq "why quadro rtx 8000 for bert"
  kbq "keys"                        (every attribute you can use in where / order by)
  kbq sparql "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
  kbq help [FORM]                   (the language reference: every form, word, key, unit and error)
  kbq build | kbq validate [FILE...] | kbq shell | kbq serve | kbq export
"""
COMMANDS = {"build", "validate", "sparql", "shell", "serve", "export", "help"}


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _question_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kbq",
        description="Ask kbq which GPU a deep-learning workload needs, and why.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("question", help="a kbq question (quote it), or one of: " + ", ".join(sorted(COMMANDS)))
    _common(p)
    p.add_argument("--sparql", action="store_true", help="print the compiled SPARQL instead of running it")
    p.add_argument("--explain", action="store_true", help="also list the GPUs each constraint removed")
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
    return KnowledgeBase.load(*args.kb, progress=_progress, engine=os.environ.get("KBQ_ENGINE", "reasonable"))


def _print_answer(result, fmt: str, out: TextIO, *, explain: bool) -> None:
    from kbq import output

    if fmt == "json":
        print(output.to_json(result.to_dict()), file=out)
        return
    if fmt == "csv":
        print(output.to_csv(result.columns, result.rows), file=out)
        return
    read_as = getattr(result, "read_as", None)
    if read_as:  # a sentence: first say which canonical question answers it
        print(f"read as: {read_as}\n", file=out)
    chart = result.extra.get("chart") if fmt == "chart" else None
    if isinstance(chart, dict):
        from kbq import charts

        print(charts.render(chart, width=charts.terminal_width(out), color=charts.use_color(out)), file=out)
    else:
        if fmt == "chart":
            print(f"(no chart for a {result.kind} answer: the table)", file=sys.stderr)
        print(output.table(result.columns, result.rows, result.units), file=out)
    if result.explanation:
        print(file=out)
        for line in result.explanation:
            if not (read_as and line == f"read as: {read_as}"):
                print(f"  {line}", file=out)
    if explain and result.removed:
        print("\nremoved:", file=out)
        print(output.table(["gpu", "name", "removed by"], result.removed), file=out)


def ask(argv: list[str]) -> int:
    args = _question_parser().parse_args(argv)
    kb = _open(args)
    if args.sparql:
        print(kb.compile(args.question))
        return 0
    result = kb.answer(args.question, explain=args.explain)
    _print_answer(result, args.format, sys.stdout, explain=args.explain)
    return 0


def cmd_sparql(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="kbq sparql", description="Run raw SPARQL over the inferred KB.")
    p.add_argument("query", help="a SPARQL 1.1 query, or @FILE to read it from a file")
    _common(p)
    p.add_argument(
        "--allow-service", action="store_true", help="let SERVICE send parts of the query to other endpoints (refused by default)"
    )
    args = p.parse_args(argv)
    from kbq import output

    query = args.query
    if query.startswith("@"):
        try:
            query = Path(query[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise KnowledgeFileError(query[1:], None, f"cannot read: {exc.strerror}") from None
    table = _open(args).table(query, allow_service=args.allow_service)
    if args.format == "json":
        print(output.to_json({"columns": table.columns, "rows": table.rows}))
    elif args.format == "csv":
        print(output.to_csv(table.columns, table.rows))
    else:
        print(output.table(table.columns, table.rows))
    return 0


def cmd_build(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="kbq build", description="Rebuild the inferred snapshot now.")
    p.add_argument(
        "--engine", choices=["reasonable", "owlrl"], default="reasonable", help="OWL-RL engine (owlrl is the slow reference)"
    )
    p.add_argument("--kb", action="append", default=[], metavar="FILE", help="a Turtle overlay (repeatable)")
    args = p.parse_args(argv)
    from kbq.build import pipeline

    _store, info = pipeline.ensure([Path(f) for f in args.kb], engine=args.engine, rebuild=True, progress=_progress)
    print(
        f"snapshot {info.key} ({info.engine}): {info.asserted} triples asserted, {info.inferred} inferred "
        f"in {info.rounds} rounds; reasoning {info.reason_seconds:.2f} s, build {info.build_seconds:.2f} s\n{info.path}"
    )
    return 0


def cmd_validate(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="kbq validate", description="Check Turtle files against kbq's SHACL shapes.")
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
    p = argparse.ArgumentParser(prog="kbq shell", description="Ask questions interactively (history kept).")
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
            print(str(exc), file=sys.stderr)
    if readline is not None and history is not None:
        try:
            readline.write_history_file(history)
        except OSError:
            pass
    return 0


def cmd_help(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
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
        print(ref.markdown(), end="")
    if args.name is not None:
        print(ref.section(args.name), end="")
    return 0


def cmd_serve(argv: list[str]) -> int:
    from kbq.serve.app import main as serve_main

    return serve_main(argv)


def cmd_export(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="kbq export", description="Write the inferred graph for an external SPARQL store.")
    p.add_argument("--format", choices=["nt", "ttl", "nq"], default="nt")
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
    except NoResultError as exc:
        if as_json:
            from kbq import output

            print(output.to_json({**exc.to_dict(), "no_result": True}))
        print(f"no result: {exc}", file=sys.stderr)
        return exc.exit_code
    except KbqError as exc:
        if as_json:
            from kbq import output

            print(output.to_json(exc.to_dict()))
        print(str(exc), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if os.environ.get("KBQ_DEBUG"):
            raise
        print(f"kbq: internal error: {type(exc).__name__}: {exc} (set KBQ_DEBUG=1 for a traceback)", file=sys.stderr)
        return 70


if __name__ == "__main__":
    sys.exit(main())

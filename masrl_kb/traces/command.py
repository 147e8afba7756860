"""The ``masrl-kb trace`` command: validate, measure, import and synthesise orchestration traces
(imports stay light: ``trace validate`` loads neither pandas nor the network clients)."""

from __future__ import annotations

import argparse
import gc
import json
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from masrl_kb.kb.atomic import write_atomic
from masrl_kb.traces.jsonfile import open_regular
from masrl_kb.traces.trace_checks import TraceGraph, inspect_file, printable, shorten

USAGE_ERROR = 2
DEFAULT_MAX_PROBLEMS = 50
# Long lists (critical path, agents, pairs) are cut in the text listing; --json has them all.
TEXT_ITEMS = 8
# What marks a file of spans (OTLP JSON, console exporter) in its first bytes; a trace names
# its events there.
SNIFF_BYTES = 64 * 1024
_SPAN_MARKS = ((b'"resourceSpans"',), (b'"context"', b'"span_id"', b'"trace_id"'))


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive number")
    return value


def raw_spans(file: str) -> bool:
    """Whether ``file`` holds OpenTelemetry spans rather than a trace (by its first bytes)."""
    try:
        with open_regular(file) as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError:
        return False
    if b'"events"' in head:
        return False
    return any(all(mark in head for mark in marks) for marks in _SPAN_MARKS)


def _valid(
    args: argparse.Namespace, failures: list[int]
) -> Iterator[tuple[str, dict, TraceGraph | None]]:
    """Each valid file of ``args.files`` with its trace and graph (read and checked once);
    an invalid one has its first problems printed and their count added to ``failures``
    (spans, not a trace: one line saying to import them)."""
    for file in args.files:
        inspection = inspect_file(file, limit=args.max_problems)
        if inspection.doc is not None and not inspection.log:
            yield file, inspection.doc, inspection.graph
            continue
        if raw_spans(file):
            failures.append(1)
            hint = f"run `masrl-kb trace import otel {file} -o TRACE.json` first"
            print(printable(f"{file}: $: spans, not a trace: {hint}"), file=sys.stderr)
            continue
        failures.append(inspection.log.total)
        for problem in inspection.log.shown:
            print(problem, file=sys.stderr)
        if inspection.log.summary():
            print(inspection.log.summary(), file=sys.stderr)


def cmd_validate(args: argparse.Namespace) -> int:
    """Validate each trace file; exit 1 if any has a problem."""
    failures: list[int] = []
    for file, doc, _ in _valid(args, failures):
        print(f"{file}: ok ({len(doc['events'])} events, {len(doc['edges'])} edges)")
    if failures:
        count, failed = sum(failures), len(failures)
        print(f"{count} problem(s) in {failed} of {len(args.files)} file(s)", file=sys.stderr)
        return 1
    return 0


def _listing(items: list[str]) -> str:
    if len(items) <= TEXT_ITEMS:
        return ", ".join(items)
    return ", ".join(items[:TEXT_ITEMS]) + f", ... ({len(items)} in all)"


def _text_value(key: str, value: Any) -> str:
    if key == "critical_path":
        ids = list(value)
        if len(ids) > TEXT_ITEMS:
            ids = ids[: TEXT_ITEMS // 2] + ["..."] + ids[-TEXT_ITEMS // 2 :]
        return (" -> ".join(ids) + f" ({len(value)} events)") if value else "none"
    if key == "agent_time":
        items = [f"{a} {t['busy_s']:g}/{t['idle_s']:g}" for a, t in value.items()]
        return "busy/idle s: " + _listing(items)
    if key == "decision_latency":
        items = [
            f"{d} {v['events']} (mean {v['mean_s']:g} s, max {v['max_s']:g} s)"
            if v["mean_s"] is not None
            else f"{d} {v['events']}"
            for d, v in value.items()
            if v["events"]
        ]
        return ", ".join(items) or "none"
    if key == "tokens_by_agent":
        items = [f"{a} {t:g}" for a, t in value.items()]
        return _listing(items) or "none"
    if key == "communication":
        items = [f"{p['from']} -> {p['to']} {p['events']}" for p in value]
        return _listing(items) or "none"
    if isinstance(value, dict):
        shown = [f"{k} {v}" for k, v in value.items() if v or key == "reported"]
        return ", ".join(shown) if shown else "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "n/a" if value is None else str(value)


def metrics_text(results: dict[str, dict]) -> str:
    """Plain-text listing of each file's metrics."""
    blocks = []
    for file, metrics in results.items():
        width = max(map(len, metrics))
        # Agent names and ids come from the trace: no control character reaches the terminal.
        lines = [printable(file)] + [
            printable(f"  {k:<{width}}  {_text_value(k, v)}") for k, v in metrics.items()
        ]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


# Larger imports are written without indentation: json indents only in pure Python.
INDENT_LIMIT = 10_000


def output_problem(out: str) -> str | None:
    """Why ``out`` may not be written (None: it is new, or a regular file to replace): a
    device, FIFO, socket, folder or symbolic link is never replaced."""
    try:
        info = os.lstat(out)
    except FileNotFoundError:
        return None  # a new file (a missing folder fails the write itself: exit 1)
    except OSError as exc:
        return exc.strerror or str(exc)
    if stat.S_ISLNK(info.st_mode):
        return "it is a symbolic link"
    if stat.S_ISDIR(info.st_mode):
        return "it is a folder"
    if not stat.S_ISREG(info.st_mode):
        return "it is not a regular file (a device, FIFO or socket)"
    return None


def refuse_output(out: str | None) -> int:
    """0 when ``out`` (if given) may be written; else the reason on one line, and exit 2."""
    problem = output_problem(out) if out is not None else None
    if problem is None:
        return 0
    message = f"error: will not write {out}: {problem}; give a new file or a regular one"
    print(printable(message), file=sys.stderr)
    return USAGE_ERROR


def _output(out: str | None, pieces: list[str], note: str = "") -> int:
    """Write ``pieces`` to standard output, or replace ``out`` with them in one step (a
    temporary file in the same folder, renamed) and say so (with ``note``); exit status 2
    for a path that is not a regular file or new, 1 when the file cannot be written."""
    if out is None:
        sys.stdout.writelines(pieces)
        return 0
    if refuse_output(out):
        return USAGE_ERROR
    try:
        write_atomic(Path(out), "".join(pieces))
    except OSError as exc:
        print(f"error: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(printable(f"wrote {out}" + (f": {note}" if note else "")), file=sys.stderr)
    return 0


def cmd_metrics(args: argparse.Namespace) -> int:
    """Print the metrics of each valid trace (read and checked once, the metrics reuse the
    checked graph); invalid ones are reported and give exit 1."""
    from masrl_kb.traces.metrics import trace_metrics

    if refuse_output(args.html):
        return USAGE_ERROR
    results: dict[str, dict] = {}
    docs: dict[str, dict] = {}
    failures: list[int] = []
    for file, doc, graph in _valid(args, failures):
        results[file] = trace_metrics(doc, graph)
        if args.html:
            docs[file] = doc
    if args.json:
        # allow_nan=False: the output is JSON or an error, never Infinity or NaN.
        print(json.dumps(results, indent=2, allow_nan=False))
    elif results:
        print(metrics_text(results))
    if args.html and results:
        from masrl_kb.traces.timeline import timeline_page

        written = _output(args.html, [timeline_page(docs, results)])
        if written:
            return written
    return 1 if failures else 0


def cmd_synth(args: argparse.Namespace) -> int:
    """Write a synthetic trace to ``--out`` or standard output."""
    from masrl_kb.traces.synth import min_steps, synth_trace

    if refuse_output(args.out):
        return USAGE_ERROR
    if args.steps < min_steps(args.agents):
        print(
            f"error: --steps must be at least {min_steps(args.agents)} for {args.agents} "
            "agent(s) (a spawn and a return per sub-agent, plus O1, aggregate and O5)",
            file=sys.stderr,
        )
        return USAGE_ERROR
    text = json.dumps(synth_trace(args.agents, args.steps, args.seed), separators=(",", ":"))
    note = f"{args.steps} events, {args.agents} agents"
    return _output(args.out, [text, "\n"], note)


def _trace_json(doc: dict) -> list[str]:
    """The trace as JSON in pieces: standard output takes them one by one."""
    indent = 1 if len(doc["events"]) <= INDENT_LIMIT else None
    separators = None if indent else (",", ":")
    encoder = json.JSONEncoder(indent=indent, separators=separators, allow_nan=False)
    return [*encoder.iterencode(doc, _one_shot=True), "\n"]


def cmd_import_otel(args: argparse.Namespace) -> int:
    """Map a file of OpenTelemetry spans to a trace; exit 2 if it cannot be mapped."""
    if refuse_output(args.out):
        return USAGE_ERROR
    # The spans and events built here hold no reference cycles: the collector's passes over
    # a million live objects cost a third of the import and would free nothing.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _import_otel(args)
    finally:
        if collecting:
            gc.enable()


def _import_otel(args: argparse.Namespace) -> int:
    from masrl_kb.traces.otel import import_otel
    from masrl_kb.traces.spans import OtelImportError, read_span_file

    try:
        spans = read_span_file(args.file)
        doc, warnings = import_otel(spans, args.trace_id, args.task_id, args.topology)
    except OtelImportError as exc:
        place = f"{args.file}:{exc.line}" if exc.line is not None else args.file
        print(shorten(f"{place}: {exc}"), file=sys.stderr)
        return USAGE_ERROR
    del spans  # the trace holds what it needs
    for warning in warnings:
        print(printable(f"{args.file}: warning: {warning}"), file=sys.stderr)
    decisions = sum(e["type"] == "orchestrator_decision" for e in doc["events"])
    note = f"{len(doc['events'])} events, {decisions} decisions, topology {doc['topology']}"
    return _output(args.out, _trace_json(doc), note)


def _import_parser(sources: argparse._SubParsersAction, name: str, about: str) -> None:
    from masrl_kb.traces.trace_schema import topology_ids

    parser = sources.add_parser(
        name,
        help=about,
        description=(
            "Read spans (OTLP JSON, JSON lines, or the SDK console exporter's output; GenAI or "
            "OpenInference attributes) and write a trace with its O1-O5 decisions."
        ),
    )
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("-o", "--out", metavar="OUT", help="write here instead of standard output")
    parser.add_argument(
        "--trace-id", metavar="ID", help="the trace to take (hex, as OTel tools show it)"
    )
    parser.add_argument(
        "--task-id", default="unknown", metavar="ID", help="the trace's task_id (unknown)"
    )
    parser.add_argument(
        "--topology",
        choices=[t for t in topology_ids() if t != "unknown"],
        help="set the topology instead of inferring it from the decisions",
    )
    parser.set_defaults(func=cmd_import_otel)


def cmd_schema(args: argparse.Namespace) -> int:
    """Print the trace schema shipped with the package."""
    from masrl_kb.traces.trace_schema import SCHEMA_FILE

    sys.stdout.write(SCHEMA_FILE.read_text(encoding="utf-8"))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``trace validate|metrics|import|synth|schema`` to the main parser's sub-commands."""
    trace = sub.add_parser(
        "trace",
        help="validate, measure, import and synthesise orchestration traces",
        description="Orchestration traces: `masrl-kb trace schema` prints the format.",
    )
    commands = trace.add_subparsers(dest="trace_command", metavar="COMMAND", required=True)
    files = argparse.ArgumentParser(add_help=False)  # what validate and metrics share
    files.add_argument("files", nargs="+", metavar="FILE")
    files.add_argument(
        "--max-problems",
        type=_positive_int,
        default=DEFAULT_MAX_PROBLEMS,
        metavar="N",
        help=f"show the first N problems per file and count the rest ({DEFAULT_MAX_PROBLEMS})",
    )

    about = "check trace files against the schema and graph rules"
    commands.add_parser("validate", parents=[files], help=about).set_defaults(func=cmd_validate)

    metrics = commands.add_parser("metrics", parents=[files], help="print each trace's metrics")
    metrics.add_argument("--json", action="store_true", help="print JSON keyed by file")
    metrics.add_argument(
        "--html",
        metavar="OUT",
        help="also write one self-contained HTML page with each trace's timeline",
    )
    metrics.set_defaults(func=cmd_metrics)

    importer = commands.add_parser("import", help="convert spans from other tools to a trace")
    sources = importer.add_subparsers(dest="source", metavar="SOURCE", required=True)
    _import_parser(sources, "otel", "OpenTelemetry spans (GenAI semantic conventions)")
    _import_parser(sources, "openinference", "OpenInference spans (the same reader)")

    synth = commands.add_parser(
        "synth", help="write a valid synthetic trace (one step = one event)"
    )
    synth.add_argument("--agents", type=_positive_int, required=True, metavar="N")
    synth.add_argument("--steps", type=_positive_int, required=True, metavar="M")
    synth.add_argument("-o", "--out", metavar="FILE", help="write here instead of standard output")
    synth.add_argument("--seed", type=int, default=0, metavar="S")
    synth.set_defaults(func=cmd_synth)

    about = "print the trace format (a JSON Schema)"
    commands.add_parser("schema", help=about).set_defaults(func=cmd_schema)

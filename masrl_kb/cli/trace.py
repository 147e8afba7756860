"""The ``masrl-kb trace`` command: validate, measure and synthesise orchestration traces."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

# The trace modules load jsonschema: imported by the commands that use them, not by --help.
if TYPE_CHECKING:
    from masrl_kb.traces.validate import Problem

USAGE_ERROR = 2


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive number")
    return value


def _report(problems: list[Problem]) -> None:
    for problem in problems:
        print(problem, file=sys.stderr)


def cmd_validate(args: argparse.Namespace) -> int:
    """Validate each trace file; exit 1 if any has a problem."""
    from masrl_kb.traces.validate import check_file

    failed = 0
    count = 0
    for file in args.files:
        doc, problems = check_file(file)
        if problems:
            _report(problems)
            failed += 1
            count += len(problems)
        else:
            print(f"{file}: ok ({len(doc['events'])} events, {len(doc['edges'])} edges)")
    if failed:
        print(f"{count} problem(s) in {failed} of {len(args.files)} file(s)", file=sys.stderr)
        return 1
    return 0


def _text_value(value: object) -> str:
    if isinstance(value, dict):
        shown = [f"{key} {count}" for key, count in value.items() if count]
        return ", ".join(shown) if shown else "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "n/a" if value is None else str(value)


def metrics_text(results: dict[str, dict]) -> str:
    """Plain-text listing of each file's metrics."""
    from masrl_kb.traces.metrics import METRIC_KEYS

    width = max(len(key) for key in METRIC_KEYS)
    blocks = []
    for file, metrics in results.items():
        lines = [file] + [f"  {k:<{width}}  {_text_value(metrics[k])}" for k in METRIC_KEYS]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def cmd_metrics(args: argparse.Namespace) -> int:
    """Print the metrics of each valid trace; invalid ones are reported and give exit 1."""
    from masrl_kb.traces.metrics import trace_metrics
    from masrl_kb.traces.validate import check_file

    results: dict[str, dict] = {}
    failed = False
    for file in args.files:
        doc, problems = check_file(file)
        if problems:
            _report(problems)
            failed = True
        else:
            results[file] = trace_metrics(doc)
    if args.json:
        print(json.dumps(results, indent=2))
    elif results:
        print(metrics_text(results))
    return 1 if failed else 0


def cmd_synth(args: argparse.Namespace) -> int:
    """Write a synthetic trace to ``--out`` or standard output."""
    from masrl_kb.traces.synth import min_steps, synth_trace

    if args.steps < min_steps(args.agents):
        print(
            f"error: --steps must be at least {min_steps(args.agents)} for {args.agents} "
            "agent(s) (a spawn and a return per sub-agent, plus O1, aggregate and O5)",
            file=sys.stderr,
        )
        return USAGE_ERROR
    text = json.dumps(synth_trace(args.agents, args.steps, args.seed), separators=(",", ":"))
    if args.out is None:
        print(text)
        return 0
    try:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        print(f"error: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}: {args.steps} events, {args.agents} agents", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``trace validate|metrics|synth`` to the main parser's sub-commands."""
    trace = sub.add_parser(
        "trace",
        help="validate, measure and synthesise orchestration traces",
        description="Orchestration traces: see traces/trace.schema.json for the format.",
    )
    commands = trace.add_subparsers(dest="trace_command", metavar="COMMAND", required=True)

    validate = commands.add_parser(
        "validate", help="check trace files against the schema and the graph rules"
    )
    validate.add_argument("files", nargs="+", metavar="FILE")
    validate.set_defaults(func=cmd_validate)

    metrics = commands.add_parser("metrics", help="print each trace's metrics")
    metrics.add_argument("files", nargs="+", metavar="FILE")
    metrics.add_argument("--json", action="store_true", help="print JSON keyed by file")
    metrics.set_defaults(func=cmd_metrics)

    synth = commands.add_parser(
        "synth", help="write a valid synthetic trace (one step = one event)"
    )
    synth.add_argument("--agents", type=_positive_int, required=True, metavar="N")
    synth.add_argument("--steps", type=_positive_int, required=True, metavar="M")
    synth.add_argument("--out", metavar="FILE", help="write here instead of standard output")
    synth.add_argument("--seed", type=int, default=0, metavar="S")
    synth.set_defaults(func=cmd_synth)

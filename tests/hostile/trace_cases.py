"""Hostile inputs for the trace commands (issue 27): numbers and nesting that broke the
streamed span reader, ids of the wrong size, parents that are not ids, raw spans given to
``validate``/``metrics``, and output paths that are not regular files.

Each case runs ``python -m masrl_kb.traces`` in a child process (a crash of the C parser
must not take the corpus down) under an address-space cap and a deadline. Rejected cleanly:
the documented exit code, exactly one line on standard error holding the expected words,
printable and short, no traceback, and every planted file as it was (an output path is
neither created nor replaced).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.hostile.running import one_error_line, tally

ROOT = Path(__file__).resolve().parents[2]
CASE_SECONDS = 60
MEMORY_CAP = 3 * 1024**3  # the 200,000-bracket file took over 3 GB before the bounds
MAX_LINE = 600
TRACE = "ab" * 16


@dataclass(frozen=True)
class TraceCase:
    """One hostile input: ``plant`` writes it in a folder and returns the command's arguments
    (after ``trace``) and the paths that must stay as they were."""

    name: str
    plant: Callable[[Path], tuple[list[str], list[Path]]]
    message: str
    exit: int = 2
    group: str = "traces"

    @property
    def id(self) -> str:
        return f"{self.group}/{self.name}"


@dataclass
class TraceOutcome:
    kind: str  # rejected / unclear / accepted / crashed
    reason: str
    output: str


# ------------------------------------------------------------------ inputs


def _span(span_id: str = "1".rjust(16, "0"), **extra: object) -> dict:
    span = {
        "traceId": TRACE,
        "spanId": span_id,
        "name": "c",
        "startTimeUnixNano": "0",
        "endTimeUnixNano": "1000",
        "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}],
    }
    return span | extra


def _otlp(*spans: dict) -> dict:
    return {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}


def _import(text: str | bytes, name: str = "spans.json") -> Callable:
    """``trace import otel FILE -o OUT``: OUT must not appear."""

    def plant(folder: Path) -> tuple[list[str], list[Path]]:
        path = folder / name
        data = text.encode("utf-8") if isinstance(text, str) else text
        path.write_bytes(data)
        out = folder / "trace.json"
        return ["import", "otel", str(path), "-o", str(out)], [path, out]

    return plant


def _streamed(doc: dict, marker: str, raw: str) -> str:
    """``doc`` as indented JSON (read streamed, not as JSON lines) with ``"marker"`` replaced
    by ``raw`` JSON text."""
    return json.dumps(doc, indent=1).replace(json.dumps(marker), raw)


def _number_cases() -> list[TraceCase]:
    found = "a number of more than"
    big = "9" * 4301
    attr = [{"key": "n", "value": {"intValue": "X"}}]
    console = {
        "name": "c",
        "context": {"trace_id": "0x" + TRACE, "span_id": "0x" + "1".rjust(16, "0")},
        "start_time": "2026-01-01T00:00:00Z",
        "end_time": "2026-01-01T00:00:01Z",
        "attributes": {"gen_ai.operation.name": "chat", "n": "X"},
    }
    return [
        TraceCase(
            "otlp-int-4301-digits",
            _import(_streamed(_otlp(_span(attributes=attr)), "X", big)),
            found,
        ),
        TraceCase(
            "otlp-int-before-spans",
            _import(_streamed({"n": "X", **_otlp(_span())}, "X", big)),
            found,
        ),
        TraceCase(
            "otlp-int-100000-digits-time",
            _import(_streamed(_otlp(_span(endTimeUnixNano="X")), "X", "7" * 100_000)),
            found,
        ),
        TraceCase("console-int-4301-digits", _import(_streamed(console, "X", big)), found),
        TraceCase("console-array-int", _import("[" + _streamed(console, "X", big) + "]"), found),
    ]


def _nesting_cases() -> list[TraceCase]:
    deep = "nested more than"
    n = 200_000
    brackets = "[" * n + "]" * n
    objects = '{"a":' * n + "1" + "}" * n
    attr = [{"key": "n", "value": "X"}]
    return [
        TraceCase(
            "otlp-200000-brackets-in-a-span",
            _import(_streamed(_otlp(_span(x="X")), "X", brackets)),
            deep,
        ),
        TraceCase(
            "otlp-200000-brackets-before-spans",
            _import(_streamed({"x": "X", **_otlp(_span())}, "X", brackets)),
            deep,
        ),
        TraceCase(
            "otlp-200000-objects-in-an-attribute",
            _import(_streamed(_otlp(_span(attributes=attr)), "X", objects)),
            deep,
        ),
        TraceCase("console-200000-brackets", _import('{"context": ' + brackets + "}"), deep),
    ]


def _id_cases() -> list[TraceCase]:
    sid = "1".rjust(16, "0")
    size = "is neither a hex id nor base64 of"
    cases = [
        ("span-id-1-byte", _span("01"), size),
        ("span-id-6-bytes", _span("0102030405aa"), size),
        ("span-id-base64-6-bytes", _span("AQIDBAWq"), size),
        ("span-id-0x-9-bytes", _span("0x" + "ab" * 9), size),
        ("span-id-all-zero", _span("0" * 16), "an all-zero id is invalid"),
        ("trace-id-8-bytes", _span(traceId="ab" * 8), size),
        ("trace-id-all-zero", _span(traceId="0" * 32), "an all-zero id is invalid"),
        ("parent-false", _span(parentSpanId=False), "parentSpanId: expected an id"),
        ("parent-empty-array", _span(parentSpanId=[]), "parentSpanId: expected an id"),
        ("parent-empty-object", _span(parentSpanId={}), "parentSpanId: expected an id"),
        ("parent-zero", _span(parentSpanId=0), "parentSpanId: expected an id"),
        ("parent-1-byte", _span(parentSpanId="01"), size),
        ("link-span-id-6-bytes", _span(links=[{"spanId": "0102030405aa"}]), size),
        ("link-all-zero", _span(links=[{"traceId": TRACE, "spanId": "0" * 16}]), "all-zero"),
    ]
    out = [TraceCase(name, _import(json.dumps(_otlp(span))), msg) for name, span, msg in cases]
    # The same in JSON lines (each line parsed whole) and the console exporter's layout.
    line = json.dumps(_otlp(_span("0" * 16))) + "\n" + json.dumps(_otlp(_span(sid))) + "\n"
    out.append(TraceCase("jsonl-span-id-all-zero", _import(line), "an all-zero id is invalid"))
    context = {"trace_id": "0x" + TRACE, "span_id": "0x0102"}
    console: dict[str, Any] = {
        "name": "c",
        "context": context,
        "parent_id": None,
        "start_time": "2026-01-01T00:00:00Z",
        "end_time": "2026-01-01T00:00:01Z",
    }
    out.append(TraceCase("console-span-id-2-bytes", _import(json.dumps(console, indent=1)), size))
    context["span_id"], console["parent_id"] = "0x" + sid, []
    text = json.dumps(console, indent=1)
    out.append(TraceCase("console-parent-empty-array", _import(text), "parent_id: expected an id"))
    return out


def _raw_spans_cases() -> list[TraceCase]:
    hint = "spans, not a trace: run `masrl-kb trace import otel"
    otlp = json.dumps(_otlp(_span()))
    console = json.dumps({"name": "c", "context": {"trace_id": "0x1", "span_id": "0x2"}})
    layouts = {
        "otlp": otlp,
        "jsonl": otlp + "\n" + otlp + "\n",
        "console": json.dumps(json.loads(console), indent=1) * 2,
    }
    cases = []
    for command in ("validate", "metrics"):
        for layout, text in layouts.items():

            def plant(folder: Path, text: str = text, command: str = command) -> tuple:
                path = folder / "spans.json"
                path.write_text(text, encoding="utf-8")
                return [command, str(path)], [path]

            cases.append(TraceCase(f"{command}-raw-{layout}-spans", plant, hint, exit=1))
    return cases


def _not_regular(kind: str) -> Callable[[Path], Path]:
    """A path of ``kind`` that an output must not replace."""

    def make(folder: Path) -> Path:
        path = folder / "out.html"
        if kind == "symlink":
            (folder / "target.html").write_text("keep me", encoding="utf-8")
            path.symlink_to(folder / "target.html")
        elif kind == "dangling-symlink":
            path.symlink_to(folder / "nowhere.html")
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "folder":
            path.mkdir()
        elif kind == "device":
            os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # like /dev/null
        return path

    return make


def _output_cases() -> list[TraceCase]:
    kinds = ["symlink", "dangling-symlink", "fifo", "folder"]
    if os.geteuid() == 0:  # making a device node needs root (as replacing one did)
        kinds.append("device")
    cases = []
    for kind in kinds:
        make = _not_regular(kind)

        def html(folder: Path, make: Callable = make) -> tuple:
            trace = folder / "trace.json"
            trace.write_bytes((ROOT / "traces" / "examples" / "centralized.json").read_bytes())
            out = make(folder)
            return ["metrics", str(trace), "--html", str(out)], [trace, out, folder]

        def synth(folder: Path, make: Callable = make) -> tuple:
            out = make(folder)
            return ["synth", "--agents", "2", "--steps", "9", "-o", str(out)], [out, folder]

        def imported(folder: Path, make: Callable = make) -> tuple:
            spans = folder / "spans.json"
            spans.write_text(json.dumps(_otlp(_span())), encoding="utf-8")
            out = make(folder)
            return ["import", "otel", str(spans), "-o", str(out)], [spans, out, folder]

        for command, plant in (
            ("metrics-html", html),
            ("synth-out", synth),
            ("import-o", imported),
        ):
            cases.append(TraceCase(f"{command}-to-{kind}", plant, "will not write"))
    return cases


def trace_cases() -> list[TraceCase]:
    """Every hostile trace case, in a stable order."""
    return [
        *_number_cases(),
        *_nesting_cases(),
        *_id_cases(),
        *_raw_spans_cases(),
        *_output_cases(),
    ]


# ------------------------------------------------------------------ running


def _state(path: Path) -> tuple | None:
    """What must not change about a planted path: its kind, link target and content."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return ("link", os.readlink(path))
    if stat.S_ISDIR(info.st_mode):
        return ("folder", tuple(sorted(os.listdir(path))))
    if stat.S_ISREG(info.st_mode):
        return ("file", path.read_bytes())
    return ("special", stat.S_IFMT(info.st_mode), info.st_rdev)


def capped(command: list[str], cap: int = MEMORY_CAP) -> tuple[list[str], dict[str, Any]]:
    """``command`` under an address-space cap of ``cap`` bytes, and the keyword arguments for
    ``subprocess.run``: util-linux's ``prlimit`` sets it when present, so the child is
    spawned without copying the test process (a ``preexec_fn`` forces a fork of it, tens
    of milliseconds for a test session's heap); else a ``preexec_fn`` sets it."""
    prlimit = shutil.which("prlimit")
    if prlimit:
        return [prlimit, f"--as={cap}", "--", *command], {}

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    return command, {"preexec_fn": limit}


def run_trace_case(case: TraceCase, folder: Path) -> TraceOutcome:
    """Plant the case in ``folder``, run the command in a child process and judge it."""
    argv, protected = case.plant(folder)
    before = {p: _state(p) for p in protected}
    command, limit = capped([sys.executable, "-m", "masrl_kb.traces", "trace", *argv])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=CASE_SECONDS,
            env=env,
            check=False,
            **limit,  # only sets a limit, no threads here
        )
    except subprocess.TimeoutExpired:
        return TraceOutcome("crashed", f"hung past {CASE_SECONDS} s", "")
    # validate's closing count ("1 problem(s) in 1 of 1 file(s)") is no second error.
    err = "".join(line for line in done.stderr.splitlines(True) if not line.endswith("file(s)\n"))
    if done.returncode < 0 or "Traceback" in err:
        return TraceOutcome("crashed", f"exit {done.returncode}", err[-2000:])
    reasons = []
    if done.returncode != case.exit:
        reasons.append(f"exit {done.returncode}, expected {case.exit}")
    if (problem := one_error_line(err, case.message)) is not None:
        reasons.append(problem)
    if any(len(line) > MAX_LINE or not line.isprintable() for line in err.splitlines()):
        reasons.append("an overlong or unprintable line")
    changed = [str(p) for p in protected if _state(p) != before[p]]
    if changed:
        reasons.append(f"changed: {changed}")
    if not reasons:
        return TraceOutcome("rejected", "", err)
    kind = "accepted" if done.returncode == 0 else "unclear"
    return TraceOutcome(kind, "; ".join(reasons), err[-2000:])


def _verdict(case: TraceCase, outcome: TraceOutcome) -> tuple[str, tuple[str, str, str] | None]:
    if outcome.kind == "rejected":
        return "rejected", None
    return outcome.kind, (case.id, outcome.kind, outcome.reason or outcome.output[-300:])


def trace_counts(bad: list) -> dict[str, int]:
    """Counts by outcome for tests/hostile/run_corpus.py; failures appended to ``bad``."""
    return tally(trace_cases(), run_trace_case, _verdict, bad)

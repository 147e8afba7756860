"""Hostile trace input: every file of ``tests/hostile/traces/`` gives one clean outcome, and
the inputs that are too big, too many or not files at all are refused without a hang."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import pytest

from masrl_kb.traces.trace_checks import MAX_MESSAGE
from tests.hostile.trace_cases import TraceCase, run_trace_case, trace_cases
from tests.test_traces_cli import run

CORPUS = Path(__file__).parent / "hostile" / "traces"
CASES = {
    name: case
    for name, case in json.loads((CORPUS / "cases.json").read_text(encoding="utf-8")).items()
    if not name.startswith("_")
}
# Longest line a problem can print: the file name, a JSON path and a message cut to size.
MAX_LINE = 2 * MAX_MESSAGE + 200


def test_every_corpus_file_has_an_expected_outcome() -> None:
    files = {p.name for p in CORPUS.iterdir() if p.name != "cases.json"}
    assert files == set(CASES)


def _command(path: Path) -> list[str]:
    if path.name.startswith("otel_"):
        return ["trace", "import", "otel", str(path)]
    return ["trace", "metrics", "--json", str(path)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_input_is_handled_cleanly(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = CORPUS / name
    case = CASES[name]
    assert run(_command(path)) == case["exit"]
    out, err = capsys.readouterr()
    assert case["stderr"] in err
    assert "Traceback" not in err
    # One short, printable line per problem: no terminal control codes, no forged lines.
    for line in err.splitlines():
        assert len(line) <= MAX_LINE
        assert line.isprintable()
        # "FILE: ..." or, for a line-oriented file, "FILE:LINE: ..."
        assert re.match(rf"{re.escape(str(path))}(:\d+)?: ", line) or line.endswith("file(s)")
    if out:
        json.loads(out)  # standard output, when there is any, is JSON


def test_big_but_bounded_numbers_give_finite_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["trace", "metrics", "--json", str(CORPUS / "big_but_bounded.json")]) == 0
    metrics = next(iter(json.loads(capsys.readouterr().out).values()))
    numbers = [metrics[k] for k in ("total_work_s", "critical_path_s", "parallel_speedup")]
    assert all(math.isfinite(n) for n in numbers)
    assert metrics["tokens"] == 1e15


def _trace_with_dangling_edges(n: int) -> dict:
    events = [{"id": "e1", "t": 0, "type": "aggregate", "agent": "a"}]
    edges = [{"src": "e1", "dst": f"gone{i}", "type": "causal"} for i in range(n)]
    return {
        "trace_id": "t",
        "task_id": "t",
        "events": events,
        "edges": edges,
        "rewards": {},
        "costs": {"tokens": 0, "wall_clock_s": 0},
    }


def test_a_flood_of_problems_prints_a_screenful_and_a_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "flood.json"
    path.write_text(json.dumps(_trace_with_dangling_edges(200_000)), encoding="utf-8")
    assert run(["trace", "validate", "--max-problems", "20", str(path)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 22
    assert lines[20] == f"{path}: ... and 199980 more problem(s) not shown"
    assert lines[21] == "200000 problem(s) in 1 of 1 file(s)"


def test_past_the_limit_schema_failures_are_counted_as_a_lower_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _trace_with_dangling_edges(0)
    # Each bad event breaks two rules (negative start and an unknown type).
    doc["events"] += [{"id": f"x{i}", "t": -1, "type": "?", "agent": "a"} for i in range(30)]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert run(["trace", "validate", "--max-problems", "10", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}: ... and at least 25 more problem(s) not shown" in err


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory", "device-link"])
def test_files_that_are_not_plain_files_are_refused(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "trace.json"
    if kind == "symlink":
        target = tmp_path / "real.json"
        target.write_text(json.dumps(_trace_with_dangling_edges(0)), encoding="utf-8")
        path.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(path)  # opening it would block forever
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    assert run(["trace", "validate", str(path)]) == 1
    err = capsys.readouterr().err
    reason = "it is a symbolic link" if "link" in kind else "not a regular file"
    assert f"{path}: $: cannot read the file: {reason}" in err


TRACE_CASES = trace_cases()


@pytest.mark.parametrize("case", TRACE_CASES, ids=[c.id for c in TRACE_CASES])
def test_trace_commands_refuse_a_hostile_input_cleanly(case: TraceCase, tmp_path: Path) -> None:
    """tests/hostile/trace_cases.py: one line, the documented exit, nothing planted changed."""
    outcome = run_trace_case(case, tmp_path)
    assert outcome.kind == "rejected", f"{outcome.kind}: {outcome.reason}\n{outcome.output}"


def test_validate_reads_a_file_without_reserving_the_largest_allowed_size() -> None:
    """Under a 1 GiB address-space cap (asking for 4 GiB + 1 failed there)."""
    import subprocess
    import sys

    from tests.hostile.trace_cases import capped

    example = Path(__file__).parents[1] / "traces" / "examples" / "centralized.json"
    root = str(Path(__file__).parents[1])
    command = [sys.executable, "-m", "masrl_kb.traces", "trace", "validate", str(example)]
    command, limit = capped(command, 1024**3)
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": root},
        check=False,
        timeout=120,
        **limit,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith(f"{example}: ok (")


def test_more_spans_than_the_bound_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from masrl_kb.traces import spans

    monkeypatch.setattr(spans, "MAX_SPANS", 2)
    span = {"traceId": "ab" * 16, "startTimeUnixNano": "0", "endTimeUnixNano": "1"}
    many = [span | {"spanId": f"{i:016x}"} for i in range(1, 4)]
    path = tmp_path / "spans.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": many}]}]}))
    out = tmp_path / "trace.json"
    assert run(["trace", "import", "otel", str(path), "-o", str(out)]) == 2
    assert capsys.readouterr().err == f"{path}: $: more than 2 spans; split the file by trace\n"
    assert not out.exists()

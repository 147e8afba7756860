"""Benchmark: trace commands against the ``json.load`` floor, in the same run (by hand).

    python bench/bench_traces.py                      # 100,000 and 1,000,000 events
    python bench/bench_traces.py --sizes 100000 --repeat 3 --shapes fanout
    python bench/bench_traces.py --no-trace --repeat 1 # only the span import

For each size a synthetic trace (``trace synth``, 300 agents) and an OTLP JSON file of as many
GenAI spans are written, then each case runs in a fresh interpreter, as a command would:

* ``json.load``: parse the trace file and nothing else (the floor);
* ``validate``: ``trace validate FILE`` (read, schema, graph rules);
* ``metrics``: ``trace metrics --json FILE`` (the same single pass, then the metrics);
* ``json.load otlp`` and ``import otel``: the same for an OTLP file and ``trace import otel``
  (streamed read, mapping, O1-O5 decisions, the check of the result, the JSON written out),
  for each span shape of ``--shapes``: ``nested``, 299 workers whose spans lie inside the
  lead's, and ``fanout``, 50,000 workers started at once whose spans outlive the lead's
  (issue 27: the shape that cost 8.9x).

Each figure is CPU seconds (user + system, the lowest of ``--repeat`` runs: neighbours on a
shared machine only ever add time, and wall time says more about them than about the code) and
the peak resident memory of that process, each also as a ratio to its ``json.load`` in the same
run. Targets: validate and metrics within 5x of ``json.load`` in time, within 1.5x in memory
(issue 14); ``import otel`` within 5x of ``json.load`` of the same OTLP file in time, within 2x
in memory (issue 21). Each row says whether it meets its target.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AGENTS = 300
FANOUT_WORKERS = 50_000
SHAPES = ("nested", "fanout")
# (time, memory) ratios to json.load each case should stay within.
TARGETS = {"validate": (5.0, 1.5), "metrics": (5.0, 1.5), "import otel": (5.0, 2.0)}
CHILD = """
import json, resource, sys, time
case, path = sys.argv[1], sys.argv[2]
if case != "json.load":
    from masrl_kb.traces.__main__ import main  # start-up is not what this measures
start = time.process_time()
if case == "json.load":
    with open(path, encoding="utf-8") as handle:
        json.load(handle)
    code = 0
else:
    sys.stdout = open("/dev/null", "w")
    argv = {"validate": ["validate"], "metrics": ["metrics", "--json"]}
    code = main(["trace", *argv.get(case, ["import", "otel"]), path])
    sys.stdout = sys.__stdout__
cpu = time.process_time() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"cpu": cpu, "peak": peak, "exit": code}))
"""


def run_case(case: str, path: Path) -> dict:
    """One fresh interpreter: CPU seconds, peak RSS in bytes and exit code."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, case, str(path)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    result = json.loads(out.stdout.splitlines()[-1])
    if result["exit"] != 0:
        raise SystemExit(f"{case} {path} exited {result['exit']}: {out.stderr[:500]}")
    return result


def measure(case: str, path: Path, repeat: int) -> dict:
    runs = [run_case(case, path) for _ in range(repeat)]
    return {
        "cpu": min(r["cpu"] for r in runs),
        "peak": min(r["peak"] for r in runs),
    }


def write_trace(folder: Path, events: int) -> Path:
    from masrl_kb.traces.synth import synth_trace

    path = folder / f"synth-{events}.json"
    path.write_text(json.dumps(synth_trace(AGENTS, events), separators=(",", ":")))
    return path


def _attr(key: str, value: object) -> dict:
    kind = "intValue" if isinstance(value, int) else "stringValue"
    return {"key": key, "value": {kind: str(value)}}


def _agent(name: str) -> list[dict]:
    return [_attr("gen_ai.operation.name", "invoke_agent"), _attr("gen_ai.agent.name", name)]


def write_otlp(folder: Path, spans: int, shape: str = "nested") -> Path:
    """An orchestrator with workers; each worker alternates model and tool calls, and every
    fourth model call links to the latest call of another worker (a message). ``nested``:
    AGENTS-1 workers in eight waves, all inside the orchestrator's span; ``fanout``:
    FANOUT_WORKERS workers started in the orchestrator's first millisecond, which ends then,
    long before them."""
    trace_id = "0" * 31 + "1"
    workers = AGENTS - 1 if shape == "nested" else min(FANOUT_WORKERS, max(spans // 2, 1))
    per_worker = max((spans - 1 - workers) // workers, 1)
    out = []
    ms = 1_000_000

    def span(sid: int, parent: int | None, start: int, end: int, attrs: list, links=()) -> dict:
        return {
            "traceId": trace_id,
            "spanId": f"{sid:016x}",
            "parentSpanId": f"{parent:016x}" if parent is not None else "",
            "name": attrs[0]["value"]["stringValue"],
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(end),
            "attributes": attrs,
            "links": [{"traceId": trace_id, "spanId": f"{s:016x}"} for s in links],
        }

    latest: dict[int, tuple[int, int]] = {}  # worker -> (span id, end)
    next_id = 2
    root_end = 0
    for w in range(workers):
        agent_id, next_id = next_id, next_id + 1
        t = (w % 8) * 10 * ms if shape == "nested" else w % 1000
        start = t
        for k in range(per_worker):
            sid, next_id = next_id, next_id + 1
            duration = (5 + (k * 7 + w) % 20) * ms
            if k % 2:
                attrs = [_attr("gen_ai.operation.name", "execute_tool")]
                attrs.append(_attr("gen_ai.tool.name", ("search", "python")[k % 4 // 2]))
                out.append(span(sid, agent_id, t, t + duration, attrs))
            else:
                attrs = [_attr("gen_ai.operation.name", "chat")]
                attrs.append(_attr("gen_ai.usage.input_tokens", 40))
                attrs.append(_attr("gen_ai.usage.output_tokens", 9))
                other = latest.get((w - 1) % workers)
                links = [other[0]] if k % 4 == 0 and other and other[1] <= t else []
                out.append(span(sid, agent_id, t, t + duration, attrs, links))
            latest[w] = (sid, t + duration)
            t += duration
        out.append(span(agent_id, 1, start, t, _agent(f"w{w}")))
        root_end = max(root_end, t)
    lead_end = root_end + ms if shape == "nested" else ms
    out.append(span(1, None, 0, lead_end, _agent("orchestrator")))
    doc = {
        "resourceSpans": [
            {
                "resource": {"attributes": [_attr("service.name", "bench")]},
                "scopeSpans": [{"scope": {"name": "bench"}, "spans": out}],
            }
        ]
    }
    path = folder / f"otlp-{shape}-{spans}.json"
    path.write_text(json.dumps(doc, separators=(",", ":")))
    return path


def _row(name: str, m: dict, floor: dict) -> str:
    cpu, peak = m["cpu"] / floor["cpu"], m["peak"] / floor["peak"]
    target = TARGETS.get(name)
    verdict = ""
    if target is not None:
        met = cpu <= target[0] and peak <= target[1]
        verdict = f"  {'meets' if met else 'MISSES'} {target[0]:g}x / {target[1]:g}x"
    return (
        f"  {name:<15} {m['cpu']:8.2f} s  {cpu:5.2f}x   "
        f"{m['peak'] / 2**20:8.0f} MB  {peak:5.2f}x{verdict}"
    )


def bench_size(folder: Path, events: int, repeat: int, shapes: list[str], with_trace: bool) -> None:
    print(f"\n{events:,} events / spans")
    print(f"  {'case':<15} {'CPU':>10}  {'ratio':>6}   {'peak RSS':>11}  {'ratio':>6}")
    if with_trace:
        trace = write_trace(folder, events)
        print(f"  trace file of {events:,} events ({trace.stat().st_size / 2**20:.0f} MB)")
        floor = measure("json.load", trace, repeat)
        print(_row("json.load", floor, floor))
        for case in ("validate", "metrics"):
            print(_row(case, measure(case, trace, repeat), floor))
        trace.unlink()
    for shape in shapes:
        otlp = write_otlp(folder, events, shape)
        floor = measure("json.load", otlp, repeat)
        size = otlp.stat().st_size / 2**20
        print(f"  OTLP file of {events:,} spans, {shape} ({size:.0f} MB)")
        print(_row("json.load otlp", floor, floor))
        print(_row("import otel", measure("import", otlp, repeat), floor))
        otlp.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument(
        "--shapes", nargs="*", choices=SHAPES, default=list(SHAPES), help="span shapes to import"
    )
    parser.add_argument("--no-otel", action="store_true", help="skip the OTLP import cases")
    parser.add_argument(
        "--no-trace", action="store_true", help="skip the trace file cases (validate, metrics)"
    )
    args = parser.parse_args()
    print("CPU seconds and peak RSS per case; ratios to json.load of the same file, same run")
    with tempfile.TemporaryDirectory() as tmp:
        for events in args.sizes:
            shapes = [] if args.no_otel else args.shapes
            bench_size(Path(tmp), events, args.repeat, shapes, not args.no_trace)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"\nlargest child peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()

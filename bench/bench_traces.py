"""Benchmark: validate and measure synthetic orchestration traces (run by hand).

    python bench/bench_traces.py
    python bench/bench_traces.py --sizes 25000 50000 100000 200000

Targets on the 2-core reference machine: a 300-agent, 4,000-step trace read, validated and
measured in under 2 s; a 100,000-event trace in under 15 s; peak memory growing linearly
with the number of events (the memory table should show a roughly constant KB per event).
Each case starts with cold validator caches, as a fresh ``masrl-kb trace`` process would.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
import tracemalloc
from pathlib import Path

from masrl_kb.traces.metrics import trace_metrics
from masrl_kb.traces.schema import trace_validators
from masrl_kb.traces.synth import synth_trace
from masrl_kb.traces.validate import read_trace, validate_trace


def _write(folder: Path, agents: int, steps: int) -> Path:
    path = folder / f"synth-{agents}x{steps}.json"
    path.write_text(json.dumps(synth_trace(agents, steps), separators=(",", ":")))
    return path


def _check(path: Path) -> dict:
    """Read, validate and measure one file, as ``masrl-kb trace metrics`` does."""
    doc, problems = read_trace(path)
    assert doc is not None and not problems, problems
    problems = validate_trace(doc, str(path))
    assert not problems, problems[:5]
    return trace_metrics(doc)


def time_case(path: Path, target_s: float) -> None:
    """Print the time of each stage for one trace file."""
    trace_validators.cache_clear()
    start = time.perf_counter()
    doc, _ = read_trace(path)
    read_s = time.perf_counter() - start
    problems = validate_trace(doc, str(path))
    validate_s = time.perf_counter() - start - read_s
    metrics = trace_metrics(doc)
    total_s = time.perf_counter() - start
    assert not problems, problems[:5]
    verdict = "ok" if total_s < target_s else "TOO SLOW"
    print(
        f"{path.name:<26} {metrics['events']:>7} events {metrics['agents']:>4} agents  "
        f"read {read_s:5.2f} s  validate {validate_s:5.2f} s  "
        f"metrics {total_s - read_s - validate_s:5.2f} s  total {total_s:5.2f} s  "
        f"(target < {target_s:g} s: {verdict})"
    )


def memory_case(path: Path, events: int) -> None:
    """Print the peak Python allocation while reading, validating and measuring."""
    trace_validators.cache_clear()
    tracemalloc.start()
    _check(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"{events:>8} events  peak {peak / 2**20:7.1f} MB  {peak / events / 1024:5.2f} KB/event")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--agents", type=int, default=300)
    parser.add_argument("--steps", type=int, default=4000)
    parser.add_argument("--big", type=int, default=100_000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[12_500, 25_000, 50_000, 100_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print("time (read + validate + metrics, cold caches)")
        time_case(_write(folder, args.agents, args.steps), target_s=2)
        time_case(_write(folder, args.agents, args.big), target_s=15)
        print("\nmemory (tracemalloc, run separately because it slows everything down)")
        for size in args.sizes:
            memory_case(_write(folder, args.agents, size), size)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nprocess peak memory (max RSS) {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()

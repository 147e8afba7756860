"""Benchmarks outside the pool, read from ``benchmarks.yaml``.

Papers report results on many benchmarks the survey did not pool (GSM8K,
SWE-bench Verified...). Each has one entry here, with a sourced URL, so that
``evaluated_on`` names it by id and every paper spells it the same way.
Pooled benchmark records are named by their own key instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from masrl_kb.kb.fields import BENCHMARK_FIELDS
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.yamlio import LineDict, load_yaml_file

BENCHMARKS_FILE = "benchmarks.yaml"


@dataclass(frozen=True)
class Benchmark:
    """One benchmark outside the pool."""

    id: str
    name: str
    url: str
    evaluates: str
    multi_agent_native: bool


@dataclass(frozen=True)
class BenchmarkFile:
    """The parsed registry and its problems as ``(line, field, message)``."""

    benchmarks: tuple[Benchmark, ...]
    problems: tuple[tuple[int, str, str], ...]
    entries: tuple[LineDict, ...] = ()


def _entries(path: Path) -> tuple[list, list[tuple[int, str, str]]]:
    if not os.path.lexists(path):  # a dangling link is still reported below
        return [], []
    loaded = load_yaml_file(path)  # refuses links, FIFOs, devices and oversized files
    if loaded.problems:
        return [], [(p.line, p.field, p.message) for p in loaded.problems]
    data = loaded.data
    raw = data.get("benchmarks") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        return [], [(1, "benchmarks", "expected a list of benchmarks")]
    return raw, []


def read_benchmarks(root: str | os.PathLike[str] | None = None) -> BenchmarkFile:
    """Read ``benchmarks.yaml`` (absent: an empty registry).

    Only structure is checked here; the field rules run with the records'
    validator so that every problem reads ``path:line: field: message``.
    """
    raw, problems = _entries(find_root(root) / BENCHMARKS_FILE)
    benchmarks = []
    entries = [e for e in raw if isinstance(e, LineDict)]
    for i, entry in enumerate(raw):
        if not isinstance(entry, LineDict):
            problems.append((1, f"benchmarks[{i}]", "expected a mapping"))
            continue
        if all(isinstance(entry.get(f.name), str | bool) for f in BENCHMARK_FIELDS):
            benchmarks.append(
                Benchmark(
                    entry["id"],
                    entry["name"],
                    entry["url"],
                    entry["evaluates"],
                    entry["multi_agent_native"] is True,
                )
            )
    return BenchmarkFile(tuple(benchmarks), tuple(problems), tuple(entries))

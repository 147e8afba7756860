"""Benchmarks outside the pool (GSM8K, SWE-bench Verified...), read from ``benchmarks.yaml``
so that ``evaluated_on`` names them by id (the rules: :mod:`masrl_kb.kb.crossrules`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from masrl_kb.kb.model.base import validate_mapping
from masrl_kb.kb.model.paper import BenchmarkEntry as Benchmark
from masrl_kb.kb.paths import Root, find_root
from masrl_kb.kb.yamlio import load_yaml_file

__all__ = ["BENCHMARKS_FILE", "Benchmark", "BenchmarkFile", "read_benchmarks"]
BENCHMARKS_FILE = "benchmarks.yaml"


@dataclass(frozen=True)
class BenchmarkFile:
    """The registry: its valid benchmarks, the file's problems as ``(line, field, message)``
    and every entry as loaded (checked field by field with the records)."""

    benchmarks: tuple[Benchmark, ...]
    problems: tuple[tuple[int, str, str], ...]
    entries: tuple[object, ...] = ()


def read_benchmarks(root: Root = None) -> BenchmarkFile:
    """Read ``benchmarks.yaml`` (absent: an empty registry)."""
    path = find_root(root) / BENCHMARKS_FILE
    if not os.path.lexists(path):  # a dangling link is still reported below
        return BenchmarkFile((), ())
    loaded = load_yaml_file(path)  # refuses links, FIFOs, devices and oversized files
    raw = loaded.data.get("benchmarks") if isinstance(loaded.data, dict) else None
    if loaded.problems or not isinstance(raw, list):
        found = [(p.line, p.field, p.message) for p in loaded.problems]
        return BenchmarkFile(
            (), tuple(found or [(1, "benchmarks", "expected a list of benchmarks")])
        )
    valid = (validate_mapping(Benchmark, e, BENCHMARKS_FILE)[0] for e in raw)
    return BenchmarkFile(tuple(b for b in valid if b), (), tuple(raw))

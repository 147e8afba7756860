"""Benchmark: validate and load N synthetic records (run by hand).

    python bench/bench_records.py --papers 10000

Targets on the 2-core reference machine: 10,000 records validated and loaded
in under 3 s each, peak memory under 500 MB.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time

from masrl_kb.kb.synthetic import write_synthetic_root
from masrl_kb.kb.validate import validate
from masrl_kb.query.frames import load_papers


def _timed(label: str, func) -> object:
    start = time.perf_counter()
    result = func()
    print(f"{label:<22} {time.perf_counter() - start:7.2f} s")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--papers", type=int, default=10_000)
    parser.add_argument("--exclusions", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = _timed(
            "write records", lambda: write_synthetic_root(tmp, args.papers, args.exclusions)
        )
        report = _timed("validate", lambda: validate(root))
        print(f"  {report.summary()}")
        frame = _timed("load_papers", lambda: load_papers(root))
        print(f"  {len(frame)} rows x {len(frame.columns)} columns")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # Large record sets are parsed in a process pool: report its largest worker too.
    child_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak memory (max RSS)  {peak_mb:7.0f} MB (largest worker {child_mb:.0f} MB)")


if __name__ == "__main__":
    main()

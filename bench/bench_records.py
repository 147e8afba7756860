"""Benchmark: validate and load N synthetic records, against their floors (run by hand).

    python bench/bench_records.py --papers 10000 [--repeat 3]

Each figure is the median CPU time (this process plus its parse pool) of
``--repeat`` runs, so other load on a shared machine barely moves it, and is
shown as a ratio to two floors measured in the same run on the same data:

- the YAML parse floor: reading every file and parsing it with PyYAML's C
  loader, nothing else;
- ``pandas.read_csv`` of the same records exported as one CSV file.

``cold`` runs start with an empty cache; ``warm`` runs find it filled by the run
before: an unchanged pool's validation report and frames, kept in the per-user
cache folder (:mod:`masrl_kb.kb.cache`; here a temporary one, through
``MASRL_KB_CACHE_DIR``). Nothing is cached per file, so a pool with one changed
file costs a cold run. Target (issue 14): an unchanged 10k pool loads
(``load_papers``, validation included) within 3x of ``read_csv``. Peak memory is
reported as well. Versions that kept their caches in ``<root>/.cache/`` run too.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import yaml

from masrl_kb.contrib.export.tables import to_csv
from masrl_kb.kb.synthetic import write_synthetic_root
from masrl_kb.query.datafiles import validate
from masrl_kb.query.frames import load_papers

OLD_CACHE = ".cache"  # where versions before issue 22 kept theirs, inside the data root


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the parse pool)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _median(func: Callable[[], object], repeat: int, before: Callable[[], None]) -> float:
    times = []
    for _ in range(repeat):
        before()
        start = _cpu()
        func()
        times.append(_cpu() - start)
    return statistics.median(times)


def _yaml_floor(root: Path) -> None:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for folder in ("papers", "exclusions"):
        for path in sorted((root / folder).glob("*.yaml")):
            yaml.load(path.read_bytes(), Loader=loader)  # noqa: S506 - the safe C loader


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--papers", type=int, default=10_000)
    parser.add_argument("--exclusions", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        kept = Path(tmp) / "cache"
        os.environ["MASRL_KB_CACHE_DIR"] = str(kept)
        root = write_synthetic_root(Path(tmp) / "kb", args.papers, args.exclusions)
        csv_path = Path(tmp) / "papers.csv"
        csv_path.write_text(to_csv(load_papers(root)), encoding="utf-8")

        def drop_cache() -> None:
            shutil.rmtree(root / OLD_CACHE, ignore_errors=True)
            shutil.rmtree(kept, ignore_errors=True)

        drop_cache()

        def keep() -> None:
            pass

        floors = {
            "YAML parse": _median(lambda: _yaml_floor(root), args.repeat, keep),
            "read_csv": _median(lambda: pd.read_csv(csv_path), args.repeat, keep),
        }
        report = validate(root)
        assert report.ok, report.problems[:3]
        figures = {
            "validate, cold": _median(lambda: validate(root), args.repeat, drop_cache),
            "load_papers, cold": _median(lambda: load_papers(root), args.repeat, drop_cache),
        }
        validate(root)  # fill the cache
        load_papers(root)
        figures["validate, warm"] = _median(lambda: validate(root), args.repeat, keep)
        figures["load_papers, warm"] = _median(lambda: load_papers(root), args.repeat, keep)
    print(f"{args.papers} papers, {args.exclusions} exclusions, median of {args.repeat}")
    print(f"{'':<22}{'CPU s':>9}{'x YAML parse':>14}{'x read_csv':>12}")
    for name, seconds in {**floors, **figures}.items():
        ratios = [seconds / floors[f] for f in ("YAML parse", "read_csv")]
        print(f"{name:<22}{seconds:>9.3f}{ratios[0]:>14.2f}{ratios[1]:>12.1f}")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # Large record sets are parsed in a process pool: report its largest worker too.
    child_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak memory (max RSS)  {peak_mb:7.0f} MB (largest worker {child_mb:.0f} MB)")


if __name__ == "__main__":
    main()

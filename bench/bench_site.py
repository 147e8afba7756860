"""Benchmark: build the site from N synthetic papers (run by hand).

    python bench/bench_site.py --papers 300 1000 3000

For each size prints the time to render the pages, the whole MkDocs build
(wall and CPU seconds, the build runs in a child process), the site's size,
its page count, its largest pages, and the cost per paper (CPU ms and KB);
with several sizes, also the marginal cost of one more paper.
Targets on the 2-core reference machine (issue #3): with 1,000 papers the
site stays under 60 MB and builds in under 60 s; issue #14 asks for half the
CPU and bytes per paper of its baseline.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from masrl_kb.kb.synthetic import write_synthetic_root
from masrl_kb.site import build_site, site_files

TARGET_MB, TARGET_S = 60, 60


def _size_mb(files: list[Path]) -> float:
    return sum(f.stat().st_size for f in files) / 1e6


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def report(site: Path) -> tuple[float, int]:
    """Print the site's size, page count and largest files; return (MB, pages)."""
    files = [f for f in site.rglob("*") if f.is_file()]
    pages = [f for f in files if f.name == "index.html"]
    size = _size_mb(files)
    print(f"site size              {size:7.1f} MB ({len(files)} files, {len(pages)} pages)")
    print(
        f"html pages             {_size_mb(pages):7.1f} MB, "
        f"mean {_size_mb(pages) * 1000 / max(len(pages), 1):.0f} KB"
    )
    for f in sorted(files, key=lambda f: f.stat().st_size, reverse=True)[:5]:
        print(f"  {f.stat().st_size / 1e3:9.0f} KB  {f.relative_to(site)}")
    return size, len(pages)


def bench(papers: int, exclusions: int) -> tuple[float, float]:
    """Build one synthetic pool of ``papers``; print the figures; return (CPU s, MB)."""
    print(f"== {papers} papers, {exclusions} exclusions")
    with tempfile.TemporaryDirectory() as tmp:
        root = write_synthetic_root(Path(tmp) / "kb", papers, exclusions)
        start = time.perf_counter()
        files = site_files(root)
        print(
            f"render pages           {time.perf_counter() - start:7.2f} s "
            f"({len(files)} generated files)"
        )
        start, cpu = time.perf_counter(), _children_cpu()
        code = build_site(root, site_dir=Path(tmp) / "site")
        seconds, cpu = time.perf_counter() - start, _children_cpu() - cpu
        print(f"mkdocs build --strict  {seconds:7.2f} s wall, {cpu:7.2f} s CPU (exit {code})")
        size, _ = report(Path(tmp) / "site")
        print(
            f"per paper              {cpu * 1000 / papers:7.1f} ms CPU, "
            f"{size * 1000 / papers:7.1f} KB"
        )
    ok = code == 0 and (papers > 1000 or (size < TARGET_MB and seconds < TARGET_S))
    print(
        f"targets: < {TARGET_MB} MB and < {TARGET_S} s at <= 1000 papers: "
        f"{'met' if ok else 'MISSED'}"
    )
    return cpu, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--papers", type=int, nargs="+", default=[1000])
    parser.add_argument("--exclusions", type=int, default=50)
    args = parser.parse_args()
    runs = {papers: bench(papers, args.exclusions) for papers in args.papers}
    if len(runs) > 1:
        # What one more paper costs, free of the fixed part (theme assets, section pages).
        low, high = min(runs), max(runs)
        extra = high - low
        cpu = (runs[high][0] - runs[low][0]) * 1000 / extra
        size = (runs[high][1] - runs[low][1]) * 1000 / extra
        print(f"== marginal cost per paper ({low} -> {high}): {cpu:.1f} ms CPU, {size:.1f} KB")


if __name__ == "__main__":
    main()

"""Benchmark: build the site from N synthetic papers, against its floors (run by hand).

    python bench/bench_site.py --papers 300 1000 3000 [--repeat 3]
        [--json out.json] [--against base.json]

For each size: the time to render the pages in this process, the whole MkDocs
build (wall and CPU seconds, medians of ``--repeat`` builds; the build runs in a
child process, and one run on a shared machine can be 20% off), the site's
size, page count and largest files, and the cost per paper (CPU ms and KB).
Two floors are measured in the same run on the same records, and the build is
shown as a ratio to each:

- CPU: parsing every record with PyYAML's C loader (the parse every build pays);
- bytes: the records themselves (``papers/*.yaml`` and ``exclusions/*.yaml``).

With several sizes, also the marginal cost of one more paper. ``--json``
writes the figures; ``--against`` reads such a file from another commit (run
this script there, with its own synthetic records) and prints each figure as
a ratio to it. Targets on the 2-core reference machine: with 1,000 papers the
site stays under 60 MB and builds in under 60 s (issue #3); issue #14 asks
for half the CPU and bytes per paper of its baseline at 300, 1,000 and 3,000.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import yaml

from masrl_kb.site import build_site, site_files

try:  # the synthetic pool moved into masrl_kb.kb; older commits keep it at the top
    from masrl_kb.kb.synthetic import write_synthetic_root
except ImportError:  # pragma: no cover - only when run against an older commit
    from masrl_kb.synthetic import write_synthetic_root

TARGET_MB, TARGET_S = 60, 60


def _size_mb(files: list[Path]) -> float:
    return sum(f.stat().st_size for f in files) / 1e6


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _records(root: Path) -> list[Path]:
    return sorted(p for folder in ("papers", "exclusions") for p in (root / folder).glob("*.yaml"))


def yaml_floor(root: Path) -> float:
    """CPU seconds to read and parse every record with the C loader, nothing else."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    start = time.process_time()
    for path in _records(root):
        yaml.load(path.read_bytes(), Loader=loader)  # noqa: S506 - the safe C loader
    return time.process_time() - start


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


def timed_build(root: Path, site: Path) -> tuple[int, float, float]:
    """One build into a fresh ``site``: (exit code, wall s, CPU s of the child)."""
    shutil.rmtree(site, ignore_errors=True)
    start, cpu = time.perf_counter(), _children_cpu()
    code = build_site(root, site_dir=site)
    return code, time.perf_counter() - start, _children_cpu() - cpu


def bench(papers: int, exclusions: int, repeat: int = 1) -> dict[str, float]:
    """Build one synthetic pool of ``papers``; print the figures; return them."""
    print(f"== {papers} papers, {exclusions} exclusions")
    with tempfile.TemporaryDirectory() as tmp:
        root = write_synthetic_root(Path(tmp) / "kb", papers, exclusions)
        floor_cpu, floor_mb = yaml_floor(root), _size_mb(_records(root))
        start = time.perf_counter()
        files = site_files(root)
        print(
            f"render pages           {time.perf_counter() - start:7.2f} s "
            f"({len(files)} generated files)"
        )
        builds = [timed_build(root, Path(tmp) / "site") for _ in range(repeat)]
        code = max(b[0] for b in builds)
        seconds = statistics.median(b[1] for b in builds)
        cpu = statistics.median(b[2] for b in builds)
        print(
            f"mkdocs build --strict  {seconds:7.2f} s wall, {cpu:7.2f} s CPU (exit {code}; "
            f"median of {repeat})"
        )
        size, _ = report(Path(tmp) / "site")
    print(
        f"per paper              {cpu * 1000 / papers:7.1f} ms CPU, {size * 1000 / papers:7.1f} KB"
    )
    print(
        f"floors                 YAML parse {floor_cpu:.3f} s CPU -> build {cpu / floor_cpu:.0f}x; "
        f"records {floor_mb:.1f} MB -> site {size / floor_mb:.1f}x"
    )
    ok = code == 0 and (papers > 1000 or (size < TARGET_MB and seconds < TARGET_S))
    print(
        f"targets: < {TARGET_MB} MB and < {TARGET_S} s at <= 1000 papers: "
        f"{'met' if ok else 'MISSED'}"
    )
    return {"cpu": cpu, "mb": size, "floor_cpu": floor_cpu, "floor_mb": floor_mb, "exit": code}


def marginal(runs: dict[int, dict[str, float]]) -> dict[str, float]:
    """What one more paper costs between the smallest and largest size (ms, KB)."""
    low, high = min(runs), max(runs)
    extra = high - low
    return {
        "cpu_ms": (runs[high]["cpu"] - runs[low]["cpu"]) * 1000 / extra,
        "kb": (runs[high]["mb"] - runs[low]["mb"]) * 1000 / extra,
    }


def compare(runs: dict[int, dict[str, float]], against: dict[str, dict[str, float]]) -> None:
    """Each size's CPU and bytes as a ratio to the same size in another run."""
    print("== against the other run (ratio = this / that)")
    for papers, now in runs.items():
        then = against.get(str(papers))
        if then:
            print(
                f"{papers:6d} papers  CPU {now['cpu']:6.2f} s / {then['cpu']:6.2f} s = "
                f"{now['cpu'] / then['cpu']:.2f}x   bytes {now['mb']:6.1f} MB / "
                f"{then['mb']:6.1f} MB = {now['mb'] / then['mb']:.2f}x"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--papers", type=int, nargs="+", default=[1000])
    parser.add_argument("--exclusions", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=1, help="builds per size (median)")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument("--against", type=Path, help="a --json file from another commit")
    args = parser.parse_args()
    runs = {papers: bench(papers, args.exclusions, args.repeat) for papers in args.papers}
    out: dict[str, object] = {str(k): v for k, v in runs.items()}
    if len(runs) > 1:
        # What one more paper costs, free of the fixed part (theme assets, section pages).
        extra = marginal(runs)
        out["marginal"] = extra
        print(
            f"== marginal cost per paper ({min(runs)} -> {max(runs)}): "
            f"{extra['cpu_ms']:.1f} ms CPU, {extra['kb']:.1f} KB"
        )
    if args.against:
        against = json.loads(args.against.read_text())
        compare(runs, against)
        if "marginal" in out and "marginal" in against:
            now, then = out["marginal"], against["marginal"]
            print(
                f"marginal  CPU {now['cpu_ms'] / then['cpu_ms']:.2f}x   "
                f"bytes {now['kb'] / then['kb']:.2f}x"
            )
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()

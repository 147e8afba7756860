"""Benchmark: build the site from N synthetic papers (run by hand).

    python bench/bench_site.py --papers 1000

Targets on the 2-core reference machine (issue #3): with 1,000 papers the
site stays under 60 MB and builds in under 60 s. Prints the time to render
the pages, the whole MkDocs build, the site's size, its page count and its
largest pages.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from masrl_kb.kb.synthetic import write_synthetic_root
from masrl_kb.site import build_site, site_files

TARGET_MB, TARGET_S = 60, 60


def _size_mb(files: list[Path]) -> float:
    return sum(f.stat().st_size for f in files) / 1e6


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--papers", type=int, default=1000)
    parser.add_argument("--exclusions", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = write_synthetic_root(Path(tmp) / "kb", args.papers, args.exclusions)
        start = time.perf_counter()
        files = site_files(root)
        print(
            f"render pages           {time.perf_counter() - start:7.2f} s "
            f"({len(files)} generated files)"
        )
        start = time.perf_counter()
        code = build_site(root, site_dir=Path(tmp) / "site")
        seconds = time.perf_counter() - start
        print(f"mkdocs build --strict  {seconds:7.2f} s (exit {code})")
        size, _ = report(Path(tmp) / "site")
    ok = code == 0 and size < TARGET_MB and seconds < TARGET_S
    print(f"targets: < {TARGET_MB} MB and < {TARGET_S} s: {'met' if ok else 'MISSED'}")


if __name__ == "__main__":
    main()

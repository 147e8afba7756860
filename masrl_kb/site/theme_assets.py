"""What the theme ships but no reader loads: source maps, and the search tokenisers
of languages the index does not use."""

from __future__ import annotations

from pathlib import Path


def lunr_files(languages: list[str]) -> set[str]:
    """The files under ``assets/javascripts/lunr`` the theme's search worker loads
    for an index in ``languages`` (the worker's own rule)."""
    files = set()
    for lang in languages:
        if lang == "ja":
            files.add("tinyseg.js")
        if lang in ("hi", "th"):
            files.add("wordcut.js")
        if lang != "en":
            files.add(f"min/lunr.{lang}.min.js")
    if len(languages) > 1:
        files.add("min/lunr.multi.min.js")
    return files | {"min/lunr.stemmer.support.min.js"} if files else set()


def unused_assets(site: Path, languages: list[str]) -> list[Path]:
    """Theme files in a built site that no page or worker loads."""
    assets = site / "assets"
    lunr = assets / "javascripts" / "lunr"
    keep = {lunr / name for name in lunr_files(languages)}
    maps = [p for p in assets.rglob("*.map") if p.is_file()]
    tokenisers = [p for p in lunr.rglob("*") if p.is_file() and p not in keep]
    return sorted(maps + tokenisers)


def prune(site: Path, languages: list[str]) -> None:
    """Remove the unused theme files, then any folder left empty."""
    for path in unused_assets(site, languages):
        path.unlink()
    for folder in sorted((site / "assets").rglob("*"), reverse=True):  # deepest first
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()

"""A citable release: ``masrl-kb release VERSION`` stamps ``CITATION.cff`` (only its
``version`` and ``date-released`` lines) and writes ``.zenodo.json``, which Zenodo
reads to mint the tagged release's DOI; its counts are computed from the records.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path

import yaml

from masrl_kb.kb.atomic import write_atomic
from masrl_kb.kb.paths import find_root

CITATION = "CITATION.cff"
ZENODO = ".zenodo.json"
VERSION = re.compile(r"^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})$")
MAX_CITATION_BYTES = 64 * 1024


class ReleaseError(ValueError):
    """A bad version or date, or a citation file that cannot be stamped."""


def parse_version(text: str) -> tuple[int, ...]:
    """``MAJOR.MINOR.PATCH`` as numbers; :class:`ReleaseError` otherwise."""
    match = VERSION.match(text)
    if not match:
        raise ReleaseError(f"version {text!r}: expected MAJOR.MINOR.PATCH, e.g. 0.2.0")
    return tuple(int(g) for g in match.groups())


def read_citation(root: Path) -> tuple[str, dict]:
    """The citation file's text and its parsed mapping (a regular file, bounded)."""
    path = root / CITATION
    if path.is_symlink() or not path.is_file():
        raise ReleaseError(f"{CITATION}: expected a regular file (not a link) in {root}")
    if path.stat().st_size > MAX_CITATION_BYTES:
        raise ReleaseError(f"{CITATION}: larger than {MAX_CITATION_BYTES} bytes")
    text = path.read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ReleaseError(f"{CITATION}: not YAML ({err.__class__.__name__})") from None
    if not isinstance(data, dict) or "version" not in data or "date-released" not in data:
        raise ReleaseError(f"{CITATION}: needs top-level version: and date-released: lines")
    return text, data


def stamped_citation(text: str, version: str, date: dt.date) -> str:
    """The citation text with its version and release date replaced, nothing else."""
    text = re.sub(r"(?m)^version: .*$", f"version: {version}", text, count=1)
    return re.sub(r"(?m)^date-released: .*$", f"date-released: {date.isoformat()}", text, count=1)


def zenodo_metadata(cff: dict, version: str, date: dt.date, counts: dict[str, object]) -> dict:
    """Zenodo's deposit metadata for this release, from the citation file and the pool."""
    creators = [{"name": a.get("name") or _person(a)} for a in cff.get("authors", [])]
    description = (
        f"{cff.get('abstract', '').strip()} Version {version}: {counts['papers']} pooled papers "
        f"and {counts['exclusions']} exclusion records; the pool covers papers up to "
        f"{counts['coverage']}."
    )
    related = [
        {"relation": "isSupplementTo", "identifier": ref_url, "scheme": "url"}
        for ref_url in (r.get("url") for r in cff.get("references", []))
        if isinstance(ref_url, str)
    ]
    return {
        "title": cff.get("title", ""),
        "upload_type": "dataset",
        "description": description,
        "creators": creators,
        "version": version,
        "publication_date": date.isoformat(),
        "license": "cc-zero",
        "keywords": list(cff.get("keywords", [])),
        "related_identifiers": related,
    }


def _person(author: dict) -> str:
    return ", ".join(p for p in (author.get("family-names"), author.get("given-names")) if p)


def pool_counts(root: Path) -> dict[str, object]:
    """Papers, exclusions and the coverage date, as the release describes them."""
    from masrl_kb.query.frames import load_pool
    from masrl_kb.query.views import pool_coverage

    papers, exclusions = load_pool(root)
    return {"papers": len(papers), "exclusions": len(exclusions), "coverage": pool_coverage(root)}


def release(version: str, date: dt.date, root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Stamp CITATION.cff and write .zenodo.json; the version must not go backwards."""
    base = find_root(root)
    text, cff = read_citation(base)
    new = parse_version(version)
    old = str(cff["version"])
    if VERSION.match(old) and parse_version(old) > new:
        raise ReleaseError(f"version {version} is older than the citation file's {old}")
    target = base / ZENODO
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise ReleaseError(f"{ZENODO}: expected a regular file (not a link) in {base}")
    meta = zenodo_metadata(cff, version, date, pool_counts(base))
    files = {
        base / CITATION: stamped_citation(text, version, date),
        target: json.dumps(meta, indent=2, ensure_ascii=False, default=str) + "\n",
    }
    for path, content in files.items():
        write_atomic(path, content)
    return list(files)

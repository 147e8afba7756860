"""A citable release: CITATION.cff stamped, .zenodo.json written, bad input refused."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from masrl_kb.contrib.release import CITATION, ZENODO, ReleaseError, release
from masrl_kb.query.frames import load_pool
from tests.conftest import REPO, run_cli

DAY = dt.date(2026, 12, 1)


@pytest.fixture
def root(mini_root: Path) -> Path:
    shutil.copy(REPO / CITATION, mini_root / CITATION)
    return mini_root


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}


def test_release_stamps_version_and_date_and_nothing_else(root: Path) -> None:
    before = (root / CITATION).read_text().splitlines()
    release("9.1.0", DAY, root)
    after = (root / CITATION).read_text().splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert sorted(b for _, b in changed) == ["date-released: 2026-12-01", "version: 9.1.0"]


def test_zenodo_metadata_counts_come_from_the_records(root: Path) -> None:
    release("9.1.0", DAY, root)
    meta = json.loads((root / ZENODO).read_text())
    papers, exclusions = load_pool(root)
    assert meta["version"] == "9.1.0"
    assert meta["publication_date"] == "2026-12-01"
    assert meta["upload_type"] == "dataset" and meta["license"] == "cc-zero"
    assert f"{len(papers)} pooled papers and {len(exclusions)} exclusion" in meta["description"]
    assert {
        "relation": "isSupplementTo",
        "identifier": "https://arxiv.org/abs/2605.02801",
        "scheme": "url",
    } in meta["related_identifiers"]


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("0.0.1", "older than"),
        ("1.2", "MAJOR.MINOR.PATCH"),
        ("1.2.3\nversion: 0", "MAJOR.MINOR.PATCH"),
        ("01.2.3", "MAJOR.MINOR.PATCH"),
        ("99999.0.0", "MAJOR.MINOR.PATCH"),
    ],
)
def test_bad_versions_are_refused_and_nothing_is_written(root, capsys, version, message) -> None:
    release("1.0.0", DAY, root)
    before = _snapshot(root)
    assert run_cli("--root", str(root), "release", version, "--date", "2026-12-01") == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert _snapshot(root) == before


@pytest.mark.parametrize("name", [CITATION, ZENODO])
def test_links_are_refused(root: Path, tmp_path: Path, name: str) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    target = root / name
    if target.exists():
        outside.write_text(target.read_text())
        target.unlink()
    target.symlink_to(outside)
    kept = outside.read_text()
    with pytest.raises(ReleaseError, match="not a link"):
        release("9.0.0", DAY, root)
    assert outside.read_text() == kept


def test_a_citation_file_without_version_lines_is_refused(root: Path) -> None:
    (root / CITATION).write_text("title: x\n")
    with pytest.raises(ReleaseError, match="version: and date-released:"):
        release("9.0.0", DAY, root)
    assert not (root / ZENODO).exists()


def test_the_cite_page_names_the_released_version(root: Path) -> None:
    from masrl_kb.site.pages import site_files

    release("9.1.0", DAY, root)
    cite = site_files(root)["cite/index.md"]
    assert 'data-kb-version="9.1.0"' in cite
    assert "masrl-kb 9.1.0, released 2026-12-01" in cite

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
from tests.hostile.release_cases import as_first_release, make_root

DAY = dt.date(2026, 12, 1)


@pytest.fixture
def root(mini_root: Path) -> Path:
    shutil.copy(REPO / CITATION, mini_root / CITATION)
    as_first_release(mini_root)
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
        ("0.2.0\n", "MAJOR.MINOR.PATCH"),
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
    with pytest.raises(ReleaseError, match="link"):
        release("9.0.0", DAY, root)
    assert outside.read_text() == kept


def test_a_citation_file_without_version_lines_is_refused(root: Path) -> None:
    (root / CITATION).write_text("title: x\n")
    with pytest.raises(ReleaseError, match=r"CITATION\.cff:1: version: missing"):
        release("9.0.0", DAY, root)
    assert not (root / ZENODO).exists()


def test_the_cite_page_names_the_released_version(root: Path) -> None:
    from masrl_kb.site.pages import site_files

    release("9.1.0", DAY, root)
    cite = site_files(root)["cite/index.md"]
    assert 'data-kb-version="9.1.0"' in cite
    assert "masrl-kb 9.1.0, released 2026-12-01" in cite


# ---------------------------------------------------------------- issue 27


@pytest.fixture
def clone_like(tmp_path: Path) -> Path:
    """A data root holding copies of the clone's CITATION.cff, pyproject.toml and
    masrl_kb/__init__.py, as the release workflow's checkout does."""
    return make_root(tmp_path)


def test_the_clone_keeps_its_three_versions_in_step() -> None:
    import tomllib

    import masrl_kb

    cff = (REPO / CITATION).read_text(encoding="utf-8")
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert f"\nversion: {project['version']}\n" in cff
    assert masrl_kb.__version__ == project["version"]


def test_release_stamps_the_package_version_in_step(clone_like: Path) -> None:
    import ast
    import tomllib

    before = {
        rel: (clone_like / rel).read_text() for rel in ("pyproject.toml", "masrl_kb/__init__.py")
    }
    written = release("0.2.0", DAY, clone_like)
    assert {p.relative_to(clone_like).as_posix() for p in written} == {
        CITATION,
        ZENODO,
        "pyproject.toml",
        "masrl_kb/__init__.py",
    }
    pyproject = (clone_like / "pyproject.toml").read_text()
    assert tomllib.loads(pyproject)["project"]["version"] == "0.2.0"
    init = (clone_like / "masrl_kb/__init__.py").read_text()
    assert 'version = "0.2.0"' in pyproject and '__version__ = "0.2.0"' in init
    ast.parse(init)
    for rel, old in before.items():
        new = (clone_like / rel).read_text().splitlines()
        changed = [b for a, b in zip(old.splitlines(), new, strict=True) if a != b]
        assert len(changed) == 1 and "0.2.0" in changed[0], (rel, changed)


def test_crlf_line_ends_are_kept(clone_like: Path) -> None:
    for rel in (CITATION, "pyproject.toml"):
        path = clone_like / rel
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    release("0.2.0", DAY, clone_like)
    for rel in (CITATION, "pyproject.toml"):
        raw = (clone_like / rel).read_bytes()
        assert raw.count(b"\n") == raw.count(b"\r\n") > 10, rel
    assert (
        b"\r\nversion: 0.2.0\r\ndate-released: 2026-12-01\r\n"
        in (clone_like / CITATION).read_bytes()
    )


def test_a_quoted_version_value_keeps_its_quotes(clone_like: Path) -> None:
    path = clone_like / CITATION
    path.write_text(path.read_text().replace("version: 0.1.0", 'version: "0.1.0"'))
    release("0.2.0", DAY, clone_like)
    assert '\nversion: "0.2.0"\n' in path.read_text()


def test_a_failed_write_puts_back_what_was_written(
    clone_like: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from masrl_kb.contrib import release as module

    before = _snapshot(clone_like) | {"init": (clone_like / "masrl_kb/__init__.py").read_bytes()}
    real, calls = module.write_atomic, []

    def failing(path: Path, data) -> None:
        calls.append(path.name)
        if path.name == ZENODO:
            raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr(module, "write_atomic", failing)
    with pytest.raises(OSError, match="No space"):
        release("0.2.0", DAY, clone_like)
    after = _snapshot(clone_like) | {"init": (clone_like / "masrl_kb/__init__.py").read_bytes()}
    assert after == before and calls[0] == CITATION and not (clone_like / ZENODO).exists()


def test_the_release_date_is_not_in_the_future(clone_like: Path) -> None:
    with pytest.raises(ReleaseError, match="after today"):
        release("0.2.0", dt.date(2026, 12, 2), clone_like, today=DAY)
    release("0.2.0", DAY, clone_like, today=DAY)

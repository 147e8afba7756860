"""The cache contract: one private folder per user, outside every clone.

The folder is used only when it is a real folder owned by this user that no one
else may change; anything else is one line of warning and an uncached run, never
an error. A relative ``MASRL_KB_CACHE_DIR`` or ``XDG_CACHE_HOME`` is ignored.
Nothing in the clone is read as a cache, and ``validate``, ``load_papers()`` and
``build`` write nothing there but ``site/``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

import pytest

from masrl_kb.kb import cache
from masrl_kb.kb.synthetic import write_synthetic_root
from tests.conftest import REPO, run_cli

WARNING = "running without the cache"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache folder of the test (absent until a command makes it)."""
    path = tmp_path / "user-cache" / "masrl-kb"
    monkeypatch.setenv(cache.ENV_DIR, str(path))
    cache.warn.cache_clear()
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_synthetic_root(tmp_path / "kb", papers=3, exclusions=2)


def _run(root: Path, capsys: pytest.CaptureFixture[str], command: str = "validate") -> str:
    """Run a command that must succeed; its standard error."""
    capsys.readouterr()
    assert run_cli("--root", str(root), command) == 0
    return capsys.readouterr().err


def snapshot(folder: Path) -> dict[str, object]:
    """Relative path -> content hash (or link target) of everything under ``folder``."""
    found: dict[str, object] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            found[rel] = ("link", os.readlink(path))
        elif path.is_file():
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[rel] = "folder"
    return found


def test_a_fresh_folder_is_private_and_holds_the_entries(
    folder: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(root)
    assert _run(root, capsys) == "" and _run(root, capsys, "stats") == ""
    info = os.stat(folder)
    assert info.st_mode & 0o777 == 0o700 and info.st_uid == os.geteuid()
    names = sorted(p.name.split("-")[0] for p in folder.iterdir())
    assert names == ["frames", "validate"]
    assert snapshot(root) == before


def _warned_once(root: Path, capsys: pytest.CaptureFixture[str], command: str) -> str:
    cache.warn.cache_clear()
    err = _run(root, capsys, command)
    assert err.count("\n") == 1 and WARNING in err, err
    return err


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o720, 0o702, 0o775])
def test_a_folder_others_may_change_is_refused(
    mode: int, folder: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder.mkdir(parents=True)
    os.chmod(folder, mode)
    for command in ("validate", "stats"):
        assert f"has mode {mode:o}" in _warned_once(root, capsys, command)
    assert list(folder.iterdir()) == []
    assert stat.S_IMODE(os.stat(folder).st_mode) == mode  # never changed


def test_a_folder_owned_by_someone_else_is_refused(
    folder: Path, root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _run(root, capsys)
    real = os.geteuid()
    monkeypatch.setattr(cache.os, "geteuid", lambda: real + 1)
    cache.warn.cache_clear()
    assert cache.folder() is None
    assert cache.load("anything") is None
    assert f"is owned by user {real}, not by you" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a folder to another user")
def test_a_folder_given_to_another_user_is_refused(
    folder: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder.mkdir(parents=True, mode=0o700)
    os.chown(folder, 65534, 65534)
    for command in ("validate", "stats"):
        assert "is owned by user 65534, not by you" in _warned_once(root, capsys, command)
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("kind", ["link", "dangling-link", "file"])
def test_a_folder_that_is_a_link_or_a_file_is_refused(
    kind: str, folder: Path, tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    if kind == "link":
        elsewhere.mkdir(mode=0o700)
    folder.parent.mkdir(parents=True)
    if kind == "file":
        folder.write_text("not a folder\n")
    else:
        folder.symlink_to(elsewhere)
    for command in ("validate", "stats"):
        assert "symbolic link or not a folder" in _warned_once(root, capsys, command)
    assert not elsewhere.exists() or list(elsewhere.iterdir()) == []
    assert folder.is_symlink() or folder.read_text() == "not a folder\n"


@pytest.mark.parametrize("variable", [cache.ENV_DIR, "XDG_CACHE_HOME"])
def test_a_relative_location_is_ignored(
    variable: str,
    tmp_path: Path,
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv(cache.ENV_DIR, raising=False)
    monkeypatch.setenv(variable, "relative-cache")
    monkeypatch.chdir(root)
    cache.warn.cache_clear()
    before = snapshot(root)
    assert _run(root, capsys) == ""
    assert snapshot(root) == before
    expected = cache._location()
    assert expected.is_absolute() and expected.is_relative_to(tmp_path / "home")
    assert any(expected.glob("validate-*"))


@pytest.mark.parametrize("command", ["validate", "stats"])
def test_a_cache_planted_in_the_clone_is_never_read_nor_followed(
    command: str, folder: Path, tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before issue 22 the caches lived in ``<root>/.cache``: whatever sits there now,
    a link, a file or entries claiming a broken record is valid, is left alone."""
    target = tmp_path / "target"
    target.mkdir()
    assert _run(root, capsys, command) == ""
    planted = root / ".cache"
    planted.mkdir()
    for entry in folder.iterdir():  # this user's own valid entries, copied into the clone
        shutil.copy(entry, planted / entry.name)
    (planted / "frames-v1.json").symlink_to(target)
    shutil.rmtree(folder)
    bad = sorted((root / "papers").glob("*.yaml"))[0]
    bad.write_text(bad.read_text("utf-8").replace("year: ", "year: 1", 1), "utf-8")
    before = snapshot(root)
    capsys.readouterr()
    assert run_cli("--root", str(root), command) == 2
    assert "year" in "".join(capsys.readouterr())
    assert snapshot(root) == before and list(target.iterdir()) == []


@pytest.mark.slow  # copies the clone and builds the whole site
def test_validate_load_and_build_write_nothing_in_the_clone_but_site(
    folder: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A copy of the repository's data and site sources, as a clone holds them."""
    import masrl_kb
    from masrl_kb.site.build import build_site

    def ignore(folder: str, names: list[str]) -> list[str]:
        top = {"site", "build", "tests"} if Path(folder) == REPO else set()
        return [n for n in names if n.startswith(".") or n in top or n == "__pycache__"]

    clone = tmp_path / "clone"
    shutil.copytree(REPO, clone, ignore=ignore, symlinks=True)
    # The interpreter's own bytecode files are not the tool's writes (and are git-ignored).
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    before = snapshot(clone)
    assert _run(clone, capsys) == ""
    masrl_kb.load_papers(clone)
    masrl_kb.load_papers(clone, drafts="exclude")
    assert build_site(clone, strict=True) == 0
    after = snapshot(clone)
    assert {k: v for k, v in after.items() if k != "site" and not k.startswith("site/")} == before
    assert "site/index.html" in after
    kept = sorted(p.name.split("-")[0] for p in folder.glob("*.pickle"))
    assert kept == ["bibtex", "frames", "validate"]


def test_the_kept_bibtex_is_the_built_one_and_follows_the_papers_shown(
    tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The site's BibTeX comes from the cache on an unchanged pool, equals a fresh
    rendering, and a changed record (or another set of papers shown) is a miss."""
    from masrl_kb.contrib.export.bibtex import to_bibtex
    from masrl_kb.site.context import load_context

    root = write_synthetic_root(tmp_path / "kb", papers=6)
    first = load_context(root)
    assert first.bibtex == to_bibtex(first.papers)
    kept = list(folder.glob("bibtex-*"))  # its own folder: other tests' pools share keys
    assert len(kept) == 1
    with monkeypatch.context() as patched:  # an unchanged pool renders nothing again
        patched.setattr("masrl_kb.site.context.to_bibtex", lambda papers: "rendered again")
        assert load_context(root).bibtex == first.bibtex

    shown = load_context(root)
    shown.papers = shown.papers.iloc[:3]
    assert shown.bibtex == to_bibtex(shown.papers) != first.bibtex

    record = sorted((root / "papers").glob("*.yaml"))[0]
    record.write_text(record.read_text().replace("title: ", "title: Changed ", 1))
    changed = load_context(root)
    assert "Changed" in changed.bibtex and changed.bibtex == to_bibtex(changed.papers)

"""Issue 27, item 6: the cache keeps a value only under the fingerprint of the files it
was computed from, and never uses a cache folder inside a data root.

A record edited while ``validate`` (or ``load_papers()``) runs must not leave a report of
one content kept under another content's key; the edit is simulated by wrapping the step
that reads the records. A pickle planted in the clone is never loaded, even when
``MASRL_KB_CACHE_DIR`` or ``XDG_CACHE_HOME`` points there (a pickle runs code).
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

import masrl_kb
from masrl_kb.kb import cache
from masrl_kb.kb.synthetic import write_synthetic_root
from masrl_kb.query import datafiles, pool
from tests.conftest import run_cli


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "user-cache"
    monkeypatch.setenv(cache.ENV_DIR, str(path))
    cache.warn.cache_clear()
    return path


@pytest.fixture
def root(tmp_path: Path, folder: Path) -> Path:
    return write_synthetic_root(tmp_path / "kb", papers=3, exclusions=1)


def _record(root: Path) -> Path:
    return sorted((root / "papers").glob("*.yaml"))[0]


def _set_year(root: Path, year: str) -> None:
    path = _record(root)
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text(
        "\n".join(f"year: {year}" if ln.startswith("year:") else ln for ln in lines) + "\n",
        encoding="utf-8",
    )


def _entries(folder: Path, name: str) -> list[str]:
    return sorted(p.name for p in folder.glob(f"{name}-*")) if folder.is_dir() else []


def test_a_record_broken_while_validate_runs_is_not_kept_as_ok(
    root: Path, folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = datafiles.compute_report

    def edited_after_reading(base: Path):
        report = real(base)  # read while the record was valid
        _set_year(root, "not-a-year")  # the editor saves before validate stores its report
        return report

    monkeypatch.setattr(datafiles, "compute_report", edited_after_reading)
    assert run_cli("--root", str(root), "validate") == 0  # what it read was valid
    assert _entries(folder, "validate") == []  # but the files changed: nothing kept
    monkeypatch.setattr(datafiles, "compute_report", real)
    capsys.readouterr()
    assert run_cli("--root", str(root), "validate") == 2
    assert f"papers/{_record(root).name}:" in capsys.readouterr().out


def test_a_record_fixed_while_validate_runs_is_not_kept_for_the_broken_content(
    root: Path, folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The report is of the fixed files; kept under the broken content's key (taken before
    reading), undoing the fix would be a warm "ok" for an invalid record."""
    _set_year(root, "not-a-year")
    real = datafiles.compute_report

    def fixed_before_reading(base: Path):
        _set_year(root, "2025")
        return real(base)

    monkeypatch.setattr(datafiles, "compute_report", fixed_before_reading)
    assert run_cli("--root", str(root), "validate") == 0
    assert _entries(folder, "validate") == []
    monkeypatch.setattr(datafiles, "compute_report", real)
    _set_year(root, "not-a-year")  # the fix undone
    capsys.readouterr()
    assert run_cli("--root", str(root), "validate") == 2
    assert "year: expected a whole number" in capsys.readouterr().out


def test_an_unchanged_pool_is_still_kept_and_read_warm(
    root: Path, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli("--root", str(root), "validate") == 0
    assert len(_entries(folder, "validate")) == 1
    key = cache.data_fingerprint(root, "validate")
    assert _entries(folder, "validate") == [f"validate-{key}{cache.SUFFIX}"]
    assert datafiles.kept_report(root) is not None


def test_frames_of_a_record_edited_while_loading_are_not_kept(
    root: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _set_year(root, "not-a-year")
    real = pool.read_records

    def fixed_before_reading(base, *args, **kwargs):
        _set_year(root, "2025")
        return real(base, *args, **kwargs)

    monkeypatch.setattr(pool, "read_records", fixed_before_reading)
    assert len(masrl_kb.load_papers(root)) == 3
    assert _entries(folder, "frames") == []
    monkeypatch.setattr(pool, "read_records", real)
    _set_year(root, "not-a-year")
    with pytest.raises(masrl_kb.InvalidRecordsError, match="year"):
        masrl_kb.load_papers(root)
    _set_year(root, "2025")
    assert len(masrl_kb.load_papers(root)) == 3  # unchanged while loading: kept
    assert len(_entries(folder, "frames")) == 1


class _Ran:
    """Unpickling this creates ``path``: proof that a planted pickle was loaded."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (os.mkdir, (str(self.path),))


def _plant(entries: Path, root: Path, marker: Path) -> list[Path]:
    """A pickle under the exact keys validate and the frames look up, in ``entries``."""
    entries.mkdir(parents=True, mode=0o700, exist_ok=True)
    os.chmod(entries, 0o700)  # private and this user's: every other check of the folder passes
    salt = f"frames {pool.pd.__version__} {pool.np.__version__}"
    keys = [
        f"validate-{cache.data_fingerprint(root, 'validate')}",
        f"frames-{cache.pool_fingerprint(root, salt)}",
    ]
    planted = []
    for key in keys:
        path = entries / f"{key}{cache.SUFFIX}"
        path.write_bytes(pickle.dumps(_Ran(marker)))
        planted.append(path)
    return planted


@pytest.mark.parametrize("variable", [cache.ENV_DIR, "XDG_CACHE_HOME"])
def test_a_pickle_planted_in_the_data_root_is_never_loaded(
    variable: str,
    root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    marker = tmp_path / "the-pickle-ran"
    monkeypatch.delenv(cache.ENV_DIR, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    if variable == cache.ENV_DIR:
        monkeypatch.setenv(cache.ENV_DIR, str(root / ".cache" / "masrl-kb"))
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", str(root / ".cache"))
    assert cache._location() == root / ".cache" / "masrl-kb"
    planted = _plant(root / ".cache" / "masrl-kb", root, marker)
    _set_year(root, "not-a-year")  # a planted entry could also say ok for a broken pool
    planted += _plant(root / ".cache" / "masrl-kb", root, marker)  # under the broken keys
    before = {p: p.read_bytes() for p in planted}
    for command, code in (("validate", 2), ("stats", 2)):
        cache.warn.cache_clear()
        capsys.readouterr()
        assert run_cli("--root", str(root), command) == code
        err = capsys.readouterr().err
        assert "inside the data root" in err and "running without the cache" in err
    with pytest.raises(masrl_kb.InvalidRecordsError):
        masrl_kb.load_papers(root)
    assert not marker.exists()
    assert {p: p.read_bytes() for p in planted} == before
    assert sorted(p.name for p in (root / ".cache" / "masrl-kb").iterdir()) == sorted(
        p.name for p in planted
    )  # nothing written there either


def test_a_folder_inside_the_named_root_is_refused_even_without_marker_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bare = tmp_path / "bare"  # a --root with a taxonomy but no papers/ yet
    (bare / "cache").mkdir(parents=True, mode=0o700)
    monkeypatch.setenv(cache.ENV_DIR, str(bare / "cache"))
    cache.warn.cache_clear()
    assert cache.folder() == bare / "cache"  # not a data root by its files
    assert cache.folder(bare) is None  # but the root a command reads
    assert cache.load("anything", bare) is None
    cache.store("anything", 1, bare)
    assert list((bare / "cache").iterdir()) == []
    assert "inside the data root" in capsys.readouterr().err


def test_a_link_to_a_folder_inside_the_root_is_refused(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / ".cache").mkdir(mode=0o700)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "link").symlink_to(root / ".cache")
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "elsewhere" / "link" / "masrl-kb"))
    cache.warn.cache_clear()
    assert cache.folder(root) is None and cache.folder() is None
    assert not (root / ".cache" / "masrl-kb").exists()

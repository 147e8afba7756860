"""What the per-user cache keeps: an unchanged pool's frames and validation report.

An entry is named by a hash of every file the value depends on, the day, the
package's version and code: any change is a miss. A corrupt, oversized, linked or
foreign entry is a miss too, and the value is computed (and kept) again.
"""

from __future__ import annotations

import datetime as dt
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from masrl_kb.kb import cache
from masrl_kb.kb.synthetic import write_synthetic_root
from masrl_kb.query import datafiles, pool

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "user-cache"
    monkeypatch.setenv(cache.ENV_DIR, str(path))
    return path


@pytest.fixture
def root(tmp_path: Path, folder: Path) -> Path:
    return write_synthetic_root(tmp_path / "kb", papers=5, exclusions=2)


def _entries(folder: Path, kind: str = "frames") -> list[Path]:
    return sorted(folder.glob(f"{kind}-*{cache.SUFFIX}"))


def _types(value: object) -> object:
    """The shape of a value with the type of every part (LineDict is not a dict)."""
    if isinstance(value, dict):
        return (type(value), {k: _types(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value)


def _assert_same(kept: pd.DataFrame, built: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(kept, built)
    for column in [c for c in built.columns if built[c].dtype == np.dtype(object)]:
        assert [_types(v) for v in kept[column]] == [_types(v) for v in built[column]], column


def _reads(monkeypatch: pytest.MonkeyPatch, module=pool) -> list[Path]:
    """Count the record reads of ``module`` from now on."""
    calls: list[Path] = []
    real = module.read_records if module is pool else module.compute_report
    name = "read_records" if module is pool else "compute_report"
    monkeypatch.setattr(module, name, lambda r: calls.append(r) or real(r))
    return calls


def _check_kept_equals_built(root: Path, folder: Path, monkeypatch) -> None:
    built = pool.load_pool(root)
    assert len(_entries(folder)) == 1
    reads = _reads(monkeypatch)
    kept = pool.load_pool(root)
    for a, b in zip(kept, built, strict=True):
        _assert_same(a, b)
    day = built[0]["added"].median()
    for a, b in zip(pool.load_pool(root, as_of=day), pool.pool_as_of(*built, day), strict=True):
        _assert_same(a, b)
    assert pool.load_papers(root, drafts="exclude").equals(built[0])
    assert reads == []


def test_kept_frames_equal_built_ones_on_a_synthetic_pool(tmp_path, folder, monkeypatch) -> None:
    root = write_synthetic_root(tmp_path / "kb", papers=40, exclusions=6)
    _check_kept_equals_built(root, folder, monkeypatch)


def test_kept_frames_equal_built_ones_on_the_real_records(tmp_path, folder, monkeypatch) -> None:
    root = tmp_path / "kb"
    shutil.copytree(REPO, root, ignore=shutil.ignore_patterns(".*", "site", "build", "*.egg-info"))
    _check_kept_equals_built(root, folder, monkeypatch)


def _edit(root: Path, old: str, new: str, index: int = 1) -> None:
    path = sorted((root / "papers").glob("*.yaml"))[index]
    path.write_text(path.read_text().replace(old, new, 1))


def test_a_changed_record_is_read_again(root: Path) -> None:
    pool.load_papers(root)
    _edit(root, "Synthetic University", "Changed University")
    papers = pool.load_papers(root)
    assert (papers["affiliation"] == "Changed University").sum() == 1
    (root / "papers" / "extra.txt").write_text("a stray file")
    with pytest.raises(pool.InvalidRecordsError):
        pool.load_papers(root)


def test_an_invalid_pool_is_never_kept(root: Path, folder: Path) -> None:
    pool.load_papers(root)
    _edit(root, "year: ", "year: 0x")
    for _ in range(2):
        with pytest.raises(pool.InvalidRecordsError):
            pool.load_papers(root)
    assert len(_entries(folder)) == 1  # the valid pool's, from before


def test_a_pool_with_drafts_is_not_kept(root: Path, folder: Path) -> None:
    _edit(root, "summary: ", "summary: TODO\nx_summary: ", 0)
    with pytest.raises(pool.InvalidRecordsError):
        pool.load_papers(root)
    assert len(pool.load_papers(root, drafts="exclude")) == 4
    assert _entries(folder) == []


def _corrupt(kind: str, path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if kind == "truncated":
        path.write_bytes(path.read_bytes()[:-100])
    elif kind == "garbage":
        path.write_bytes(b"not a pickle at all")
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "wrong-type":
        path.write_bytes(pickle.dumps(("a", "b")))
    elif kind == "one-frame":
        path.write_bytes(pickle.dumps((pd.DataFrame(),)))
    elif kind == "link":
        path.unlink()
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        path.unlink()
        os.mkfifo(path)
    elif kind == "folder":
        path.unlink()
        path.mkdir()
    else:  # larger than an entry may be
        monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", 1000)


KINDS = [
    "truncated",
    "garbage",
    "empty",
    "wrong-type",
    "one-frame",
    "link",
    "fifo",
    "folder",
    "big",
]


@pytest.mark.parametrize("kind", KINDS)
def test_a_corrupt_or_unsafe_entry_is_a_miss(
    kind: str, root: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = pool.load_pool(root)
    (entry,) = _entries(folder)
    _corrupt(kind, entry, monkeypatch)
    reads = _reads(monkeypatch)
    for a, b in zip(pool.load_pool(root), built, strict=True):
        _assert_same(a, b)
    assert len(reads) == 1
    if kind not in ("fifo", "folder", "big"):  # those stay in the way: never replaced
        assert cache.load(entry.name.removesuffix(cache.SUFFIX)) is not None


def test_a_pool_that_holds_a_link_is_never_kept(root: Path, folder: Path) -> None:
    (root / "readings").mkdir(exist_ok=True)
    (root / "readings" / "link.yaml").symlink_to(root / "taxonomy.yaml")
    assert cache.pool_fingerprint(root, "") is None
    (root / "readings" / "link.yaml").unlink()
    assert cache.pool_fingerprint(root, "") is not None
    (root / "readings").rmdir()
    (root / "readings").symlink_to(root / "papers")
    assert cache.pool_fingerprint(root, "") is None


@pytest.mark.parametrize(
    "name",
    ["taxonomy.yaml", "benchmarks.yaml", "protocol.yaml", "sources.yaml", "readings/.r.yaml"],
)
def test_every_file_a_read_depends_on_is_in_the_fingerprint(root: Path, name: str) -> None:
    (root / "readings").mkdir(exist_ok=True)
    key = cache.pool_fingerprint(root, "salt")
    path = root / name
    original = path.read_bytes() if path.exists() else None
    path.write_text((path.read_text() if path.exists() else "") + "\n# edited\n")
    assert cache.pool_fingerprint(root, "salt") != key
    if original is None:
        path.unlink()
    else:
        path.write_bytes(original)
    assert cache.pool_fingerprint(root, "salt") == key
    assert cache.pool_fingerprint(root, "another salt") != key


def test_the_version_the_code_and_the_day_are_in_the_fingerprint(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import masrl_kb

    key = cache.pool_fingerprint(root)
    monkeypatch.setattr(masrl_kb, "__version__", "99.0")
    cache.code_fingerprint.cache_clear()
    assert cache.pool_fingerprint(root) != key
    monkeypatch.undo()
    cache.code_fingerprint.cache_clear()
    assert cache.pool_fingerprint(root) == key
    code = tmp_path / "code"
    shutil.copytree(cache.PACKAGE, code, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache, "PACKAGE", code)
    cache.code_fingerprint.cache_clear()
    assert cache.pool_fingerprint(root) == key
    (code / "query" / "pool.py").write_text((code / "query" / "pool.py").read_text() + "#\n")
    cache.code_fingerprint.cache_clear()
    assert cache.pool_fingerprint(root) != key
    monkeypatch.undo()
    cache.code_fingerprint.cache_clear()

    tomorrow = dt.date.today() + dt.timedelta(days=1)
    monkeypatch.setattr(cache, "dt", SimpleNamespace(date=SimpleNamespace(today=lambda: tomorrow)))
    assert cache.pool_fingerprint(root) != key


def test_the_validation_report_of_an_unchanged_pool_is_kept(
    root: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert datafiles.validate(root).ok
    reads = _reads(monkeypatch, datafiles)
    assert datafiles.validate(root).ok and reads == []
    _edit(root, "year: ", "year: 0x")
    report = datafiles.validate(root)
    assert not report.ok and "year" in str(report.problems[0]) and len(reads) == 1
    assert datafiles.validate(root).problems == report.problems and len(reads) == 1
    assert len(_entries(folder, "validate")) == 2


def test_only_the_newest_entries_stay(folder: Path) -> None:
    for i in range(cache.KEEP + 3):
        cache.store(f"entry-{i}", i)
        os.utime(folder / f"entry-{i}{cache.SUFFIX}", (i, i))
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        f"entry-{i}{cache.SUFFIX}" for i in range(3, cache.KEEP + 3)
    )
    assert [cache.load(f"entry-{i}") for i in (2, 3)] == [None, 3]


def test_a_value_that_cannot_be_pickled_is_not_kept(folder: Path) -> None:
    cache.store("lambda", lambda: None)
    assert cache.load("lambda") is None and not any(folder.iterdir())


@pytest.mark.parametrize("name", ["claims.yaml", "screening/2026-05-04_2026-05-31/round.yaml"])
def test_validate_s_key_covers_the_claims_and_every_round(root: Path, name: str) -> None:
    (root / "screening" / "2026-05-04_2026-05-31").mkdir(parents=True)
    key = cache.data_fingerprint(root, "salt")
    assert key is not None and cache.pool_fingerprint(root, "salt") != key
    (root / name).write_text("# a new file\n")
    added = cache.data_fingerprint(root, "salt")
    (root / name).write_text("# edited\n")
    assert len({key, added, cache.data_fingerprint(root, "salt")}) == 3


def test_a_linked_round_is_never_kept(root: Path, tmp_path: Path) -> None:
    (root / "screening").mkdir()
    assert cache.data_fingerprint(root) is not None
    (tmp_path / "elsewhere").mkdir()
    (root / "screening" / "2026-05-04_2026-05-31").symlink_to(tmp_path / "elsewhere")
    assert cache.data_fingerprint(root) is None
    (root / "screening" / "2026-05-04_2026-05-31").unlink()
    (root / "screening" / "2026-05-04_2026-05-31").mkdir()
    (root / "screening" / "2026-05-04_2026-05-31" / "round.yaml").symlink_to(root / "claims.yaml")
    assert cache.data_fingerprint(root) is None


def test_a_warm_validate_loads_no_model(root: Path, folder: Path) -> None:
    """The kept report answers alone: no pydantic, no taxonomy model, same output."""
    probe = (
        "import sys; from masrl_kb.cli.main import main; code = main(['--root', sys.argv[1],"
        " 'validate']); print(sorted(m for m in sys.modules if m.startswith('pydantic'))[:1]);"
        " sys.exit(code)"
    )
    env = {**os.environ, cache.ENV_DIR: str(folder), "PYTHONPATH": str(REPO)}
    runs = [
        subprocess.run(
            [sys.executable, "-c", probe, str(root)], env=env, capture_output=True, text=True
        )
        for _ in range(2)
    ]
    assert [r.returncode for r in runs] == [0, 0]
    assert runs[0].stdout.splitlines() == [
        f"ok: 5 papers and 2 exclusions are valid in {root}",
        "['pydantic']",
    ]
    assert runs[1].stdout.splitlines() == [
        f"ok: 5 papers and 2 exclusions are valid in {root}",
        "[]",
    ]

"""The kept papers/exclusions frames of an unchanged pool (issue 14, item 4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from masrl_kb.kb import cache
from masrl_kb.kb.synthetic import write_synthetic_root
from masrl_kb.query import frames
from masrl_kb.query.framecache import FRAMES_FILE

REPO = Path(__file__).resolve().parent.parent


def _frames_path(root: Path) -> Path:
    return root / cache.CACHE_DIR / FRAMES_FILE


def _types(value: object) -> object:
    """The shape of a value with the type of every part (LineDict is not a dict)."""
    if isinstance(value, dict):
        extra = (value.line, value.key_lines, value.raw) if hasattr(value, "key_lines") else None
        return (type(value), extra, {k: _types(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value)


def _assert_same(kept: pd.DataFrame, built: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(kept, built)
    for column in [c for c in built.columns if built[c].dtype == np.dtype(object)]:
        assert [_types(v) for v in kept[column]] == [_types(v) for v in built[column]], column


def _no_build(monkeypatch) -> None:
    def refuse(root):
        raise AssertionError("the records were read again")

    monkeypatch.setattr(frames, "_valid_records", refuse)


def _check_kept_equals_built(root: Path, monkeypatch) -> None:
    built = frames.load_pool(root)
    assert _frames_path(root).is_file()
    with monkeypatch.context() as m:
        _no_build(m)
        kept = frames.load_pool(root)
    for a, b in zip(kept, built, strict=True):
        _assert_same(a, b)
    with monkeypatch.context() as m:
        _no_build(m)
        day = built[0]["added"].median()
        kept = frames.load_pool(root, as_of=day)
        for a, b in zip(kept, frames.pool_as_of(*built, day), strict=True):
            _assert_same(a, b)


def test_kept_frames_equal_built_ones_on_a_synthetic_pool(tmp_path, monkeypatch) -> None:
    root = write_synthetic_root(tmp_path / "kb", papers=40, exclusions=6)
    _check_kept_equals_built(root, monkeypatch)


def test_kept_frames_equal_built_ones_on_the_real_records(tmp_path, monkeypatch) -> None:
    root = tmp_path / "kb"
    shutil.copytree(REPO, root, ignore=shutil.ignore_patterns(".*", "site", "build", "*.egg-info"))
    _check_kept_equals_built(root, monkeypatch)


def _break_or_change(root: Path, old: str, new: str) -> None:
    path = sorted((root / "papers").glob("*.yaml"))[1]
    path.write_text(path.read_text().replace(old, new, 1))


def test_a_changed_record_is_read_again(tmp_path) -> None:
    root = write_synthetic_root(tmp_path / "kb", papers=5, exclusions=2)
    frames.load_papers(root)
    _break_or_change(root, "Synthetic University", "Changed University")
    papers = frames.load_papers(root)
    assert (papers["affiliation"] == "Changed University").sum() == 1
    (root / "papers" / "extra.txt").write_text("a stray file")
    with pytest.raises(frames.InvalidRecordsError):
        frames.load_papers(root)


def test_an_invalid_pool_is_never_kept(tmp_path) -> None:
    root = write_synthetic_root(tmp_path / "kb", papers=5, exclusions=2)
    frames.load_papers(root)
    _break_or_change(root, "year: ", "year: 0x")
    for _ in range(2):
        with pytest.raises(frames.InvalidRecordsError):
            frames.load_papers(root)


def _rewrite(root: Path, change, sign: bool) -> None:
    path = _frames_path(root)
    head, _, body = path.read_bytes().partition(b"\n")
    body = change(body)
    meta = json.loads(head)
    if sign:
        meta["mac"] = cache._mac(cache._cache_key(), body)
    path.write_bytes(json.dumps(meta).encode() + b"\n" + body)


def test_a_tampered_frames_file_is_ignored(tmp_path) -> None:
    root = write_synthetic_root(tmp_path / "kb", papers=5, exclusions=2)
    built = frames.load_papers(root)
    _rewrite(root, lambda b: b.replace(b"Synthetic University", b"Forged University"), False)
    pd.testing.assert_frame_equal(frames.load_papers(root), built)
    assert b"Forged" not in _frames_path(root).read_bytes()  # rebuilt and kept again


@pytest.mark.parametrize(
    "change",
    [
        lambda b: b"[[]]",
        lambda b: b"not json",
        lambda b: b.replace(b'"obj",', b'"obj",99', 1),
        lambda b: b.replace(b'"cat",[', b'"cat",[999,', 1),
        lambda b: b.replace(b'"plain"', b'"pickle"', 1),
        lambda b: b"[" * 100_000,
    ],
)
def test_a_signed_but_malformed_frames_file_is_a_miss(tmp_path, change) -> None:
    root = write_synthetic_root(tmp_path / "kb", papers=5, exclusions=2)
    built = frames.load_pool(root)
    _rewrite(root, change, True)
    for a, b in zip(frames.load_pool(root), built, strict=True):
        pd.testing.assert_frame_equal(a, b)


def test_an_unsafe_frames_file_is_ignored(tmp_path) -> None:
    root = write_synthetic_root(tmp_path / "kb", papers=5, exclusions=2)
    built = frames.load_papers(root)
    path = _frames_path(root)
    path.unlink()
    path.symlink_to("/dev/zero")
    pd.testing.assert_frame_equal(frames.load_papers(root), built)


def test_a_pool_with_a_linked_record_is_not_kept(tmp_path) -> None:
    root = write_synthetic_root(tmp_path / "kb", papers=5, exclusions=2)
    (root / "readings").mkdir(exist_ok=True)
    (root / "readings" / "link.yaml").symlink_to(root / "taxonomy.yaml")
    assert cache.pool_fingerprint(root, "") is None


def test_a_changed_reading_or_taxonomy_file_is_read_again(tmp_path, monkeypatch) -> None:
    root = write_synthetic_root(tmp_path / "kb", papers=5, exclusions=2)
    (root / "readings").mkdir(exist_ok=True)
    frames.load_papers(root)
    key = cache.pool_fingerprint(root, "")
    (root / "readings" / ".hidden.yaml").write_text("not: read\n")
    assert cache.pool_fingerprint(root, "") != key
    (root / "readings" / ".hidden.yaml").unlink()
    assert cache.pool_fingerprint(root, "") == key
    tax = root / "taxonomy.yaml"
    tax.write_text(tax.read_text() + "\n# a comment\n")
    assert cache.pool_fingerprint(root, "") != key
    calls = []
    real = frames._valid_records
    monkeypatch.setattr(frames, "_valid_records", lambda r: calls.append(r) or real(r))
    frames.load_papers(root)
    assert len(calls) == 1


def test_cells_that_do_not_read_back_the_same_are_not_kept(tmp_path) -> None:
    from masrl_kb.query.framecache import write_frames

    root = write_synthetic_root(tmp_path / "kb", papers=3, exclusions=1)
    papers, exclusions = frames.load_pool(root)
    for odd in ({1: "a key that is not text"}, {"\ue000": [1, [], [], []]}, {"x": {"\ue000d": 1}}):
        changed = papers.copy()
        changed["artifacts"] = [odd, *changed["artifacts"][1:]]  # a column of mappings
        _frames_path(root).unlink(missing_ok=True)
        write_frames(root, "key", changed, exclusions)
        assert not _frames_path(root).exists(), odd
    write_frames(root, "key", papers, exclusions)
    assert _frames_path(root).exists()

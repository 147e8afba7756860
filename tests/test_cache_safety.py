"""The cache key and cache folders: trusted only when they are the user's own.

A key file others can read or write, or owned by someone else, or a link, is
refused with one line of warning and the command runs uncached; a relative
``XDG_CACHE_HOME`` is ignored; a ``.cache`` link never redirects writes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from masrl_kb.kb import cache
from masrl_kb.kb.synthetic import write_synthetic_root
from tests.conftest import run_cli


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    cache.warn.cache_clear()
    return home


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_synthetic_root(tmp_path / "kb", papers=3, exclusions=2)


def _key(xdg: Path) -> Path:
    return xdg / cache.KEY_DIR / cache.KEY_FILE


def _validate(root: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert run_cli("--root", str(root), "validate") == 0
    return capsys.readouterr().err


def test_a_fresh_key_is_private_and_the_cache_is_written(
    xdg: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _validate(root, capsys) == ""
    info = os.stat(_key(xdg))
    assert info.st_mode & 0o777 == 0o600 and info.st_uid == os.geteuid()
    assert os.stat(_key(xdg).parent).st_mode & 0o777 == 0o700
    assert (root / cache.CACHE_DIR / cache.CACHE_FILE).is_file()


@pytest.mark.parametrize("mode", [0o644, 0o604, 0o660, 0o666, 0o640])
def test_a_key_others_may_read_or_write_is_refused(
    mode: int, xdg: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _key(xdg).parent.mkdir(parents=True, mode=0o700)
    _key(xdg).write_bytes(b"k" * 32)
    os.chmod(_key(xdg), mode)
    err = _validate(root, capsys)
    assert err.count("\n") == 1 and "running without the cache" in err
    assert f"has mode {mode:o}" in err
    assert not (root / cache.CACHE_DIR).exists()
    assert cache._cache_key() is None
    assert _key(xdg).read_bytes() == b"k" * 32  # never rewritten


def test_a_key_owned_by_someone_else_is_refused(
    xdg: Path, root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _validate(root, capsys) == ""  # makes the key and its folder, owned by this user
    real = os.geteuid()
    monkeypatch.setattr(cache.os, "geteuid", lambda: real + 1)  # both are now a stranger's
    cache.warn.cache_clear()
    assert cache._cache_key() is None
    assert "may be changed by another user" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_a_key_file_given_to_another_user_is_refused(
    xdg: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _validate(root, capsys) == ""
    os.chown(_key(xdg), 65534, 65534)
    cache.warn.cache_clear()
    assert cache._cache_key() is None
    assert "is owned by user 65534, not by you" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["key-link", "folder-link", "folder-open"])
def test_a_linked_or_open_key_location_is_refused(
    kind: str, xdg: Path, tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (elsewhere / cache.KEY_FILE).write_bytes(b"s" * 32)
    os.chmod(elsewhere / cache.KEY_FILE, 0o600)
    xdg.mkdir()
    if kind == "key-link":
        (xdg / cache.KEY_DIR).mkdir(mode=0o700)
        _key(xdg).symlink_to(elsewhere / cache.KEY_FILE)
    elif kind == "folder-link":
        (xdg / cache.KEY_DIR).symlink_to(elsewhere)
    else:
        (xdg / cache.KEY_DIR).mkdir()
        os.chmod(xdg / cache.KEY_DIR, 0o777)
    err = _validate(root, capsys)
    assert err.count("\n") == 1 and "running without the cache" in err
    assert not (root / cache.CACHE_DIR).exists()
    assert sorted(p.name for p in elsewhere.iterdir()) == [cache.KEY_FILE]


def test_a_relative_cache_home_is_ignored(
    tmp_path: Path, root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", "relative-cache")
    monkeypatch.chdir(root)
    assert cache._key_path() == tmp_path / "home" / ".cache" / cache.KEY_DIR / cache.KEY_FILE
    _validate(root, capsys)
    assert not (root / "relative-cache").exists()
    assert (tmp_path / "home" / ".cache" / cache.KEY_DIR / cache.KEY_FILE).is_file()


@pytest.mark.parametrize("command", ["validate", "stats"])
def test_a_committed_cache_link_does_not_redirect_writes(
    command: str, xdg: Path, tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (root / cache.CACHE_DIR).symlink_to(target)
    capsys.readouterr()
    assert run_cli("--root", str(root), command) == 0
    assert list(target.iterdir()) == []
    assert (root / cache.CACHE_DIR).is_symlink()
    assert capsys.readouterr().err.count("running without the cache") == 1


def test_a_cache_folder_that_is_a_file_is_left_alone(
    xdg: Path, root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (root / cache.CACHE_DIR).write_text("not a folder\n")
    _validate(root, capsys)
    assert (root / cache.CACHE_DIR).read_text() == "not a folder\n"

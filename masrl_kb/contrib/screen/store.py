"""Writing a round's folder safely: whole folders swapped in, one writer at a time.

A round folder is built beside ``screening/<id>/`` under a dot-name and renamed into place
(a reader sees the old folder or the new one; a failure leaves the old one). Every writer of
a round holds its ``fcntl`` lock, ``screening/.<id>.lock``, so concurrent runs serialise
instead of losing each other's decisions. Symbolic links are refused: writes would follow
them elsewhere.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from masrl_kb.contrib.sources.http import env_seconds
from masrl_kb.kb.atomic import write_atomic
from masrl_kb.kb.rounds import SCREENING_DIR, RoundError, round_dir, screening_root

ENV_LOCK_WAIT = "MASRL_KB_LOCK_WAIT"
DEFAULT_LOCK_WAIT = 120.0


class ScreeningError(ValueError):
    """A user-facing reason why a screening command did nothing."""


class StoreError(ScreeningError):
    """A round folder cannot be read or written safely."""


@contextlib.contextmanager
def round_lock(root: Path, rid: str) -> Iterator[None]:
    """Hold round ``rid``'s lock (waiting for another run to finish, within a bound)."""
    try:
        base = screening_root(root)
        round_dir(root, rid)  # the id and the folder are checked before anything is created
        base.mkdir(exist_ok=True)
        path = base / f".{rid}.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except RoundError as err:
        raise StoreError(str(err)) from None
    except OSError as err:
        raise StoreError(f"{SCREENING_DIR}/.{rid}.lock: cannot open ({err.strerror})") from None
    try:
        end = time.monotonic() + env_seconds(ENV_LOCK_WAIT, DEFAULT_LOCK_WAIT, StoreError)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > end:
                    raise StoreError(
                        f"round {rid} is locked by another screening run; try again later"
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _check_folder(folder: Path) -> None:
    for path in [folder, *(folder.iterdir() if folder.is_dir() else ())]:
        if path.is_symlink():
            raise StoreError(f"{path}: a symbolic link; refused")


def write_round_folder(target: Path, files: dict[str, str], replace: bool = False) -> None:
    """Make ``target`` hold exactly ``files``, built beside it, then renamed in; an existing
    folder is an error unless ``replace`` (callers hold the round's lock)."""
    if target.is_symlink() or target.parent.is_symlink():
        raise StoreError(f"{target}: a symbolic link; refused")
    if target.exists() and not replace:
        raise StoreError(f"{target} already exists: refusing to overwrite a round")
    if replace:
        _check_folder(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    old = target.with_name(f".{target.name}.{os.getpid()}.old")
    for stale in (tmp, old):
        shutil.rmtree(stale, ignore_errors=True)
    tmp.mkdir()
    try:
        for name, text in files.items():
            with open(tmp / name, "x", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        if replace and target.exists():
            os.rename(target, old)
        os.rename(tmp, target)  # fails if a non-empty target appeared meanwhile
    except OSError as err:
        raise StoreError(f"cannot write {target}: {err.strerror or err}") from None
    finally:
        # Whatever stopped us (an error, Ctrl-C), the old folder goes back if the new one
        # is not in place.
        if old.exists() and not target.exists():
            os.rename(old, target)
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


def replace_file(path: Path, text: str) -> bool:
    """Atomically replace a machine-written file; False when the text is unchanged."""
    if path.is_symlink() or path.parent.is_symlink():
        raise StoreError(f"{path}: a symbolic link; refused")
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    write_atomic(path, text)
    return True

"""The per-user cache: values computed from the data, kept outside every clone.

One folder per user (platformdirs, or an absolute ``$MASRL_KB_CACHE_DIR``), used only
when it is a real folder this user alone may change and lies in no data root; entries are
plain pickle named by a hash of everything they depend on (taken before reading, and
kept only when it is the same after), so a change is a miss, never a stale value. The
whole contract is section 4 of ARCHITECTURE.md.
"""

from __future__ import annotations

import datetime as dt
import functools
import gc
import hashlib
import os
import pickle
import stat
import sys
from collections.abc import Callable
from pathlib import Path

from masrl_kb.kb.atomic import write_atomic
from masrl_kb.kb.paths import is_data_root
from masrl_kb.kb.yamlio import read_regular_file

ENV_DIR = "MASRL_KB_CACHE_DIR"
SUFFIX = ".pickle"
MAX_ENTRY_BYTES = 1 << 30
KEEP = 8  # entries kept, newest first: a few pools (branches, roots) stay warm
# What reading the records depends on besides the record files (validation reads them all).
POOL_FILES = ("taxonomy.yaml", "benchmarks.yaml", "protocol.yaml", "sources.yaml")
POOL_FOLDERS = ("papers", "exclusions", "readings")
# What the whole ``validate`` reads besides: the claims and each round's round.yaml.
DATA_FILES = ("claims.yaml",)
ROUNDS, ROUND_FILE = "screening", "round.yaml"
MAX_POOL_FILE = 1 << 24
PACKAGE = Path(__file__).resolve().parent.parent


@functools.cache
def warn(message: str) -> None:
    """One line on standard error, once per process: the cache is off, the command runs."""
    text = "".join(ch if ch.isprintable() else "?" for ch in message)
    print(f"masrl-kb: warning: {text}; running without the cache", file=sys.stderr)


def _location() -> Path:
    import platformdirs

    override = os.environ.get(ENV_DIR, "")
    path = Path(override if os.path.isabs(override) else platformdirs.user_cache_dir("masrl-kb"))
    return path if path.is_absolute() else Path.home() / ".cache" / "masrl-kb"


def _data_root_around(path: Path, root: Path | None) -> Path | None:
    """The data root ``path`` lies in: ``root`` or any folder above ``path`` holding a data
    root's marker files. A pull request can commit files there, and a pickle runs code."""
    real = Path(os.path.realpath(path))
    if root is not None and real.is_relative_to(os.path.realpath(root)):
        return root
    return next((f for f in (real, *real.parents) if is_data_root(f)), None)


def folder(root: Path | None = None) -> Path | None:
    """This user's cache folder (made, mode 0700, when missing), or None when it may not be
    trusted: inside ``root`` or any data root, a link, not a folder, another user's, or
    writable by others."""
    path = _location()
    inside = _data_root_around(path, root)
    if inside is not None:
        warn(f"{path}: cache folder is inside the data root {inside}, where a clone's files live")
        return None
    try:
        if not os.path.lexists(path):
            path.mkdir(mode=0o700, parents=True)
        info = os.lstat(path)
    except OSError as err:
        warn(f"{path}: cannot make the cache folder ({err.strerror or err})")
        return None
    if not stat.S_ISDIR(info.st_mode):
        problem = "is a symbolic link or not a folder"
    elif info.st_uid != os.geteuid():
        problem = f"is owned by user {info.st_uid}, not by you"
    elif info.st_mode & 0o022:
        problem = f"has mode {stat.S_IMODE(info.st_mode):o}: others may change it (chmod 700)"
    else:
        return path
    warn(f"{path}: cache folder {problem}")
    return None


@functools.cache
def code_fingerprint() -> str:
    """This package's version and the bytes of every module: a change to the code is a miss."""
    from masrl_kb import __version__

    digest = hashlib.blake2b(f"{__version__} {sys.version}".encode(), digest_size=16)
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(f"\0{path.relative_to(PACKAGE)}\0".encode() + path.read_bytes())
    return digest.hexdigest()


def _add_file(digest: hashlib.blake2b, name: str, path: Path) -> bool:
    """Hash a regular file's name and bytes; False for anything else (a link is not followed,
    a FIFO never blocks). Leaner than yamlio.read_regular_file: a warm run does this per file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_POOL_FILE:
            return False
        raw = os.read(fd, info.st_size + 1)
    except OSError:
        return False
    finally:
        os.close(fd)
    digest.update(f"\0{name}\0{len(raw)}\0".encode())
    digest.update(raw)
    return True


def _names(folder: Path) -> list[str] | None:
    """Every name in a folder, hidden ones too (readings/ reads them); None for a link."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        return sorted(os.listdir(fd))
    finally:
        os.close(fd)


def _add_pool(digest: hashlib.blake2b, root: Path, names: tuple[str, ...]) -> bool:
    """Hash each named file or flat folder under ``root``; False when any is not plain."""
    for name in names:
        path = root / name
        if not os.path.lexists(path):
            digest.update(f"\0no {name}".encode())
        elif name not in POOL_FOLDERS:
            if not _add_file(digest, name, path):
                return False
        else:
            names_in = _names(path)
            if names_in is None or not all(
                _add_file(digest, f"{name}/{n}", path / n) for n in names_in
            ):
                return False
    return True


def _add_rounds(digest: hashlib.blake2b, root: Path) -> bool:
    """Hash ``screening/``'s names and each round folder's ``round.yaml`` (all that
    ``validate`` reads there); False for a link anywhere on the way."""
    names = _names(root / ROUNDS) if os.path.lexists(root / ROUNDS) else []
    if names is None:
        return False
    digest.update(repr(names).encode())
    for name in names:
        mode = os.lstat(root / ROUNDS / name).st_mode
        if stat.S_ISLNK(mode):
            return False
        path = root / ROUNDS / name / ROUND_FILE
        if stat.S_ISDIR(mode) and os.path.lexists(path):
            if not _add_file(digest, f"{ROUNDS}/{name}/{ROUND_FILE}", path):
                return False
    return True


def _fingerprint(root: Path, salt: str, names: tuple[str, ...], rounds: bool) -> str | None:
    digest = hashlib.blake2b(digest_size=20)
    digest.update(repr((code_fingerprint(), salt, dt.date.today().isoformat())).encode())
    if not _add_pool(digest, root, names) or (rounds and not _add_rounds(digest, root)):
        return None
    return digest.hexdigest()


def pool_fingerprint(root: Path, salt: str = "") -> str | None:
    """One hash of every file a record read depends on (names and bytes), the day, the
    code and ``salt``; None when the pool holds anything but plain files (never cached)."""
    return _fingerprint(root, salt, (*POOL_FOLDERS, *POOL_FILES), rounds=False)


def data_fingerprint(root: Path, salt: str = "") -> str | None:
    """:func:`pool_fingerprint` plus the other files ``validate`` reads: the claims and the
    screening rounds."""
    return _fingerprint(root, salt, (*POOL_FOLDERS, *POOL_FILES, *DATA_FILES), rounds=True)


def load(key: str, root: Path | None = None) -> object | None:
    """The value kept under ``key``, or None: absent, oversized, not a regular file or corrupt
    (or no folder to trust, one inside ``root`` included)."""
    base = folder(root)
    if base is None:
        return None
    collecting = gc.isenabled()
    try:
        raw = read_regular_file(base / f"{key}{SUFFIX}", MAX_ENTRY_BYTES)
        # Unpickling makes only fresh objects: collecting meanwhile would walk them
        # again and again (it more than doubled the time of a 10k pool's frames).
        gc.disable()
        return pickle.loads(raw)  # noqa: S301 - the folder is this user's alone
    except Exception:  # a truncated or foreign entry raises anything unpickling can
        return None
    finally:
        if collecting:
            gc.enable()


def store(key: str, value: object, root: Path | None = None) -> None:
    """Keep ``value`` under ``key`` (atomically, best effort) and drop the oldest entries."""
    base = folder(root)
    if base is None:
        return
    try:
        raw = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        if len(raw) <= MAX_ENTRY_BYTES:
            write_atomic(base / f"{key}{SUFFIX}", raw)
        entries = sorted(base.glob(f"*{SUFFIX}"), key=lambda p: p.lstat().st_mtime_ns)
        for old in entries[:-KEEP]:
            old.unlink()
    except (OSError, pickle.PicklingError, TypeError, AttributeError, RecursionError):
        pass  # best effort: a value not kept is only computed again


def store_if_unchanged(
    name: str, key: str | None, value: object, again: Callable[[], str | None], root: Path
) -> bool:
    """Keep ``value`` as ``name-key`` only when ``key``, the fingerprint taken before its
    files were read, is still what ``again()`` gives after ``value`` was computed: a file
    edited meanwhile must not leave a report of one content under another's key (a valid
    report kept for a record that is not). True when kept."""
    if key is None or again() != key:
        return False
    store(f"{name}-{key}", value, root)
    return True

"""A parse cache for record files, keyed by each file's content hash.

Parsing YAML and checking records is most of the cost of reading a large
pool; an unchanged file parses to the same value and passes the same checks.
``<root>/.cache/records-v2.json`` keeps, under the BLAKE2 hash of each file's
bytes, its parsed value (line numbers, how non-string scalars were written,
read problems) and the per-record verdict of the validator for one taxonomy
and one day. A changed file has a new hash and is parsed again, alone.

The cache is never trusted blindly:

- it is tied to the code: a change to any module of ``masrl_kb/kb`` (the
  parser, a field list, a rule) empties it;
- it is JSON, never pickle, and every entry is checked shape by shape when
  read: a corrupt or foreign entry is a miss, not an error;
- the file carries an HMAC made with a key kept outside the clone
  (``$XDG_CACHE_HOME/masrl-kb/cache-key``, created on first use, mode 0600):
  a cache file that arrives with a pull request, or was edited by hand, fails
  the check and is ignored as a whole;
- the key is used only when it is a regular file owned by this user that no
  one else may read or write, in a folder only this user may change; a
  relative ``XDG_CACHE_HOME`` is ignored (it would put the key in the clone).
  Otherwise the command runs uncached, with one line of warning;
- a ``.cache`` that is a symbolic link (say, committed to the repository) is
  never read or written through.

Deleting the folder is always safe. The same key signs other files kept there
(:func:`write_signed`), such as the built frames of an unchanged pool, whose key
is :func:`pool_fingerprint`.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import hmac
import json
import os
import secrets
import stat
import tempfile
from pathlib import Path
from typing import Any

from masrl_kb.kb.yamlio import LineDict, LoadedYaml, UnsafeFileError, YamlProblem, read_regular_file

CACHE_DIR = ".cache"
CACHE_FILE = "records-v2.json"
# Bump when the parser, the encoding or a record rule changes what is stored.
FORMAT = "masrl-kb-records/2"
MAX_CACHE_BYTES = 1 << 30
# A record has about a hundred values; aliases can make a tiny file a huge tree
# ("billion laughs"): such a file is parsed each time rather than expanded here.
MAX_NODES = 20_000
KEY_ENV = "XDG_CACHE_HOME"
KEY_DIR = "masrl-kb"
KEY_FILE = "cache-key"
_LINE, _KEYS, _RAW, _DATE, _TIME = "\0l", "\0k", "\0r", "\0d", "\0t"


class _Corrupt(ValueError):
    """An entry that does not have the shape this module writes."""


@functools.cache
def code_fingerprint() -> str:
    """A hash of this package's record code (kb/*.py): any change to a parser or a
    rule makes every cached parse and verdict a miss, with no version to bump by hand."""
    digest = hashlib.blake2b(digest_size=12)
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def content_hash(raw: bytes) -> str:
    """The cache key of a file's bytes."""
    return hashlib.blake2b(raw, digest_size=20).hexdigest()


# ---------------------------------------------------------------- encoding
# A mapping is a JSON object with its own keys plus "\0l" (its line), "\0k"
# (each key's line, in key order) and "\0r" ([key, raw text] of non-string scalars);
# a date is {"\0d": "YYYY-MM-DD"}, a timestamp {"\0t": ISO text}. Mappings
# with keys that are not text are not cached (records never have them).


def _encode(value: Any, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise _Corrupt("too many values to cache")
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, LineDict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str) or k.startswith("\0"):
                raise _Corrupt("a key that is not text")
            out[k] = _encode(v, budget)
        out[_LINE] = value.line
        out[_KEYS] = [value.key_lines.get(k, value.line) for k in value]
        if value.raw:
            out[_RAW] = [[k, text] for k, text in value.raw.items()]  # a list: not a mapping
        return out
    if isinstance(value, list):
        return [_encode(v, budget) for v in value]
    if isinstance(value, dt.datetime):
        return {_TIME: value.isoformat()}
    if isinstance(value, dt.date):
        return {_DATE: value.isoformat()}
    raise _Corrupt(f"cannot cache a {type(value).__name__}")


_INT = {int}


def _hook(obj: dict) -> Any:
    """Rebuild one JSON object (called by the JSON parser, innermost first).

    Runs once per mapping of every cached record: the common case goes first.
    """
    line = obj.pop(_LINE, None)
    if line is None:
        if len(obj) == 1:
            ((tag, text),) = obj.items()
            if tag == _DATE and type(text) is str:
                return dt.date.fromisoformat(text)
            if tag == _TIME and type(text) is str:
                return dt.datetime.fromisoformat(text)
        raise _Corrupt("mapping")
    key_lines = obj.pop(_KEYS, None)
    pairs = obj.pop(_RAW, None)
    if (
        type(line) is not int
        or type(key_lines) is not list
        or len(key_lines) != len(obj)
        or (key_lines and not set(map(type, key_lines)) <= _INT)
    ):
        raise _Corrupt("mapping")
    out = LineDict(obj)
    out.line = line
    out.key_lines = dict(zip(obj, key_lines, strict=True))  # lengths checked above
    out.raw = raw = {}
    if pairs is not None:
        if type(pairs) is not list:
            raise _Corrupt("mapping")
        for pair in pairs:
            if type(pair) is not list or len(pair) != 2 or type(pair[1]) is not str:
                raise _Corrupt("mapping")
            if pair[0] not in obj:
                raise _Corrupt("mapping")
            raw[pair[0]] = pair[1]
    return out


def encode_loaded(loaded: LoadedYaml) -> str:
    """A parse result as JSON text (raises ValueError if it cannot be kept)."""
    problems = [[p.line, p.field, p.message] for p in loaded.problems]
    data = _encode(loaded.data, [MAX_NODES])
    return json.dumps([problems, data], ensure_ascii=False, separators=(",", ":"))


def decode_loaded(text: Any) -> LoadedYaml:
    """A parse result from :func:`encode_loaded`'s text (ValueError if malformed)."""
    if not isinstance(text, str):
        raise _Corrupt("entry")
    entry = json.loads(text, object_hook=_hook)
    if not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[0], list):
        raise _Corrupt("entry")
    return LoadedYaml(entry[1], [_problem(p) for p in entry[0]])


def _problem(p: Any) -> YamlProblem:
    if (
        not isinstance(p, list)
        or len(p) != 3
        or type(p[0]) is not int
        or not all(isinstance(x, str) for x in p[1:])
    ):
        raise _Corrupt("problem")
    return YamlProblem(*p)


# ---------------------------------------------------------------- the key


def _key_path() -> Path:
    """Where this user's key lives. A relative ``XDG_CACHE_HOME`` is ignored, as the
    XDG spec says: it would put the key inside whatever folder the command runs in."""
    base = os.environ.get(KEY_ENV, "")
    folder = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return folder / KEY_DIR / KEY_FILE


@functools.cache
def warn(message: str) -> None:
    """One line on standard error, once per process: the cache is off, the command runs."""
    import sys

    text = "".join(ch if ch.isprintable() else "?" for ch in message)
    print(f"masrl-kb: warning: {text}; running without the cache", file=sys.stderr)


def _key_problem(info: os.stat_result) -> str | None:
    """Why an existing key file may not be trusted, or None."""
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    if info.st_uid != os.geteuid():
        return f"is owned by user {info.st_uid}, not by you"
    if info.st_mode & 0o077:
        return f"has mode {stat.S_IMODE(info.st_mode):o}: others may read or change it (chmod 600)"
    return None


def _key_folder(path: Path) -> bool:
    """The key's folder exists (made if needed), is a real folder and is yours alone."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(path.parent)
    except OSError as err:
        warn(f"{path.parent}: cannot hold the cache key ({err.strerror or err})")
        return False
    problem = None
    if not stat.S_ISDIR(info.st_mode):
        problem = "is a symbolic link or not a folder"
    elif info.st_uid != os.geteuid() or info.st_mode & 0o022:
        problem = "may be changed by another user"
    if problem:
        warn(f"{path.parent}: cache key folder {problem}")
    return problem is None


def _cache_key() -> bytes | None:
    """This user's cache key, made on first use; None when it cannot be kept or trusted."""
    path = _key_path()
    if not _key_folder(path):
        return None
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return _new_key(path)
    except OSError:
        return None
    problem = "is a symbolic link" if stat.S_ISLNK(info.st_mode) else _key_problem(info)
    if problem:
        warn(f"{path}: cache key {problem}")
        return None
    try:
        key = read_regular_file(path, 1024)
    except UnsafeFileError as err:
        warn(f"{path}: cache key {err}")
        return None
    return key if len(key) >= 32 else None


def _new_key(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError:
        return None
    key = secrets.token_bytes(32)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
    return key


def cache_folder(root: Path) -> Path | None:
    """``<root>/.cache``, or None when it is a link or not a folder: a committed
    ``.cache`` link must not send the cache's writes anywhere else."""
    folder = root / CACHE_DIR
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return folder
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode):
        return folder
    warn(f"{folder}: a symbolic link or not a folder")
    return None


def _safe_parent(path: Path) -> bool:
    """A cache file may be written: its folder is a real folder (made if missing) and
    the file itself is absent or a regular file (a link there is left alone)."""
    try:
        path.parent.mkdir(exist_ok=True)
        if not stat.S_ISDIR(os.lstat(path.parent).st_mode):
            return False
        return stat.S_ISREG(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _mac(key: bytes, body: bytes) -> str:
    return hmac.new(key, body, hashlib.sha256).hexdigest()


# ---------------------------------------------------------------- the cache file


class ParseCache:
    """Cached parses and verdicts of one data root, loaded once per read."""

    def __init__(self, path: Path | None, key: bytes | None, entries: dict, checks: dict) -> None:
        self.path = path
        self.key = key
        self.entries: dict[str, Any] = entries
        self.checks: dict[str, Any] = checks
        self.used: set[str] = set()
        self.used_checks: set[str] = set()
        self.changed = False

    @classmethod
    def open(cls, root: Path) -> ParseCache:
        """The cache of a data root; empty when absent, unreadable, corrupt or forged."""
        folder = cache_folder(root)
        key = _cache_key() if folder is not None else None
        if folder is None or key is None:
            return cls(None, None, {}, {})
        path = folder / CACHE_FILE
        try:
            raw = read_regular_file(path, MAX_CACHE_BYTES)
        except UnsafeFileError:
            return cls(path, key, {}, {})
        head, _, body = raw.partition(b"\n")
        try:
            meta = json.loads(head)
            if (
                not isinstance(meta, dict)
                or meta.get("format") != FORMAT
                or meta.get("code") != code_fingerprint()
                or not hmac.compare_digest(str(meta.get("mac")), _mac(key, body))
            ):
                return cls(path, key, {}, {})
            data = json.loads(body)
        except (ValueError, RecursionError):
            return cls(path, key, {}, {})
        entries = data.get("entries") if isinstance(data, dict) else None
        checks = data.get("checks") if isinstance(data, dict) else None
        return cls(
            path,
            key,
            entries if isinstance(entries, dict) else {},
            checks if isinstance(checks, dict) else {},
        )

    @property
    def enabled(self) -> bool:
        return self.path is not None

    def get(self, digest: str | None) -> LoadedYaml | None:
        """The cached parse of the file with this hash, or None (absent or corrupt)."""
        entry = self.entries.get(digest)
        if entry is None:
            return None
        try:
            loaded = decode_loaded(entry)
        except (ValueError, KeyError, TypeError, RecursionError):
            del self.entries[digest]
            self.changed = True
            return None
        self.used.add(digest)
        return loaded

    def put(self, digest: str | None, loaded: LoadedYaml) -> None:
        """Keep a fresh parse (values that JSON cannot hold are simply not kept)."""
        if digest is None or not self.enabled:
            return
        try:
            self.entries[digest] = encode_loaded(loaded)
        except (ValueError, RecursionError):
            return
        self.used.add(digest)
        self.changed = True

    def get_check(self, slot: str) -> Any:
        """A stored verdict (JSON data) for ``slot``, or None."""
        value = self.checks.get(slot)
        if value is not None:
            self.used_checks.add(slot)
        return value

    def put_check(self, slot: str, value: Any) -> None:
        if not self.enabled:
            return
        self.checks[slot] = value
        self.used_checks.add(slot)
        self.changed = True

    def save(self) -> None:
        """Write the cache if anything changed, keeping only entries used since it opened.

        The write is atomic and best effort: a read-only clone simply has no cache.
        """
        # Verdicts are pruned only by a run that validated (and so used the live ones).
        checks = self.checks
        if self.used_checks:
            checks = {k: v for k, v in checks.items() if k in self.used_checks}
        stale = len(checks) != len(self.checks) or set(self.entries) - self.used
        if not self.enabled or not (self.changed or stale):
            return
        body = json.dumps(
            {
                "entries": {k: v for k, v in self.entries.items() if k in self.used},
                "checks": checks,
            },
            ensure_ascii=False,
            separators=(",", ":"),
        ).encode("utf-8")
        meta = {"format": FORMAT, "code": code_fingerprint(), "mac": _mac(self.key, body)}
        head = json.dumps(meta).encode()
        if not _safe_parent(self.path):
            return
        try:
            fd, tmp = tempfile.mkstemp(prefix=".records-", dir=self.path.parent)
        except OSError:
            return
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(head + b"\n" + body)
            os.replace(tmp, self.path)
            self.changed = False
        except OSError:
            pass
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)


# ---------------------------------------------------------------- signed files and pools
# What a record read depends on besides the record files (validation reads them all).
POOL_FILES = ("taxonomy.yaml", "benchmarks.yaml", "protocol.yaml", "sources.yaml")
POOL_FOLDERS = ("papers", "exclusions", "readings")
MAX_POOL_FILE = 1 << 24


def _regular_bytes(name: str, folder: int | None = None) -> bytes | None:
    """A regular file's bytes (links not followed; ``folder`` a directory descriptor);
    None for anything else."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=folder)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_POOL_FILE:
            return None
        return os.read(fd, MAX_POOL_FILE + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def pool_fingerprint(root: Path, salt: str) -> str | None:
    """One hash of every file a record read depends on (names and bytes), today's date
    and ``salt``; None when the pool holds anything but plain files (never cached)."""
    digest = hashlib.blake2b(digest_size=20)
    digest.update(repr((FORMAT, code_fingerprint(), salt, dt.date.today().isoformat())).encode())
    for folder in POOL_FOLDERS:
        try:
            dir_fd = os.open(root / folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except FileNotFoundError:
            digest.update(f"\0no {folder}".encode())
            continue
        except OSError:
            return None
        try:
            # Hidden files too: readings/ reads every *.yaml name.
            names = sorted(os.listdir(dir_fd))
            for name in names:
                raw = _regular_bytes(name, dir_fd)
                if raw is None:
                    return None
                digest.update(f"\0{folder}/{name}\0{len(raw)}\0".encode())
                digest.update(raw)
        finally:
            os.close(dir_fd)
    for name in POOL_FILES:
        raw = _regular_bytes(str(root / name)) if (root / name).exists() else b"\0absent"
        if raw is None:
            return None
        digest.update(f"\0{name}\0{len(raw)}\0".encode())
        digest.update(raw)
    return digest.hexdigest()


def read_signed(path: Path, meta: dict[str, str]) -> bytes | None:
    """The body of a file written by :func:`write_signed` with the same ``meta``;
    None when absent, unsafe, written for other meta, or not signed with this user's key."""
    if cache_folder(path.parent.parent) != path.parent:
        return None
    key = _cache_key()
    if key is None:
        return None
    try:
        raw = read_regular_file(path, MAX_CACHE_BYTES)
    except UnsafeFileError:
        return None
    head, _, body = raw.partition(b"\n")
    try:
        found = json.loads(head)
    except ValueError:
        return None
    if not isinstance(found, dict) or any(found.get(k) != v for k, v in meta.items()):
        return None
    if not hmac.compare_digest(str(found.get("mac")), _mac(key, body)):
        return None
    return body


def write_signed(path: Path, meta: dict[str, str], body: bytes) -> None:
    """Write ``body`` under a signed header, atomically and best effort."""
    key = _cache_key()
    if key is None or not _safe_parent(path):
        return
    head = json.dumps({**meta, "mac": _mac(key, body)}).encode()
    try:
        fd, tmp = tempfile.mkstemp(prefix=".frames-", dir=path.parent)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(head + b"\n" + body)
        os.replace(tmp, path)
    except OSError:
        pass
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)

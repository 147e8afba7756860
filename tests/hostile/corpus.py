"""The hostile-input corpus: every case, and how to run one and judge the outcome.

Cases come from three places:

- ``records/<group>/<name>.yaml``: a paper record file, put in a small valid
  data root as ``papers/bad.yaml``; ``records/expected.json`` names the field
  each one must be reported on;
- filesystem cases (links, FIFOs, devices, oversized and missing files), made
  here because git cannot hold them;
- ``taxonomy.yaml`` cases: the live taxonomy broken one rule at a time.

A case is *rejected cleanly* when the command exits non-zero, names the file
and the field, prints no traceback, no line longer than :data:`MAX_LINE`, none
of a secret file's content, and leaves the hostile file as it was.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from masrl_kb.kb.synthetic import write_synthetic_root
from tests.hostile.running import EXIT_BUG, deadline, run_cli

HERE = Path(__file__).resolve().parent
RECORDS = HERE / "records"
MAX_LINE = 600
CASE_SECONDS = 30
SECRET = "/etc/passwd"
SECRET_MARK = "root:"
BAD = "papers/bad.yaml"


@dataclass(frozen=True)
class Case:
    """One hostile input: how to plant it, which command reads it, what it must name."""

    group: str
    name: str
    field: str  # the field the message must name ("" when the file alone is named)
    plant: Callable[[Path], str]  # writes the input under a root; returns the path to name
    command: tuple[str, ...] = ("validate",)

    @property
    def id(self) -> str:
        return f"{self.group}/{self.name}"


# ---------------------------------------------------------------- records


def _record_file(rel: Path) -> Callable[[Path], str]:
    def plant(root: Path) -> str:
        (root / BAD).write_bytes((RECORDS / rel).read_bytes())
        return BAD

    return plant


def record_cases() -> list[Case]:
    expected = json.loads((RECORDS / "expected.json").read_text(encoding="utf-8"))
    cases = []
    for name, field in sorted(expected.items()):
        group, _, short = name.partition("/")
        cases.append(Case(group, short, field, _record_file(Path(f"{name}.yaml"))))
    return cases


# ---------------------------------------------------------------- filesystem


def _link(target: str, rel: str = BAD) -> Callable[[Path], str]:
    def plant(root: Path) -> str:
        os.symlink(target, root / rel)
        return rel

    return plant


def _loop(root: Path) -> str:
    os.symlink("loop-b.yaml", root / "papers/loop-a.yaml")
    os.symlink("loop-a.yaml", root / "papers/loop-b.yaml")
    return "papers/loop-a.yaml"


def _fifo(root: Path) -> str:
    os.mkfifo(root / BAD)
    return BAD


def _device(root: Path) -> str:
    try:
        os.mknod(root / BAD, 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # like /dev/zero
    except PermissionError:  # not root: a link to the device says the same
        os.symlink("/dev/zero", root / BAD)
    return BAD


def _socket(root: Path) -> str:
    import socket

    sock = socket.socket(socket.AF_UNIX)
    here = os.getcwd()
    os.chdir(root / "papers")  # AF_UNIX paths are short: bind relative to the folder
    try:
        sock.bind("bad.yaml")
    finally:
        os.chdir(here)
        sock.close()
    return BAD


def _oversized(root: Path) -> str:
    with open(root / BAD, "wb") as fh:
        fh.write(b"key: bad\nnotes: " + b"n" * (2 << 20) + b"\n")
    return BAD


def _sparse_huge(root: Path) -> str:
    with open(root / BAD, "wb") as fh:
        fh.truncate(8 << 30)  # 8 GB of holes: must be refused by size, not read
    return BAD


def _no_papers(root: Path) -> str:
    for path in (root / "papers").iterdir():
        path.unlink()
    (root / "papers").rmdir()
    return "papers/"


def _papers_link(root: Path) -> str:
    (root / "papers").rename(root / "elsewhere")
    os.symlink("elsewhere", root / "papers")
    return "papers/"


def _papers_file(root: Path) -> str:
    for path in (root / "papers").iterdir():
        path.unlink()
    (root / "papers").rmdir()
    (root / "papers").write_text("not a folder\n")
    return "papers/"


def filesystem_cases() -> list[Case]:
    g = "filesystem"
    return [
        Case(g, "symlink-to-secret", "file", _link(SECRET)),
        Case(g, "symlink-dangling", "file", _link("/nonexistent/record.yaml")),
        Case(g, "symlink-loop", "file", _loop),
        Case(g, "symlink-to-dev-zero", "file", _link("/dev/zero")),
        Case(g, "symlink-to-other-record", "file", _link("synthetic-00000.yaml")),
        Case(g, "fifo", "file", _fifo),
        Case(g, "device", "file", _device),
        Case(g, "socket", "file", _socket),
        Case(g, "oversized", "file", _oversized),
        Case(g, "sparse-8gb", "file", _sparse_huge),
        Case(g, "papers-missing", "folder", _no_papers),
        Case(g, "papers-is-symlink", "folder", _papers_link),
        Case(g, "papers-is-file", "folder", _papers_file),
    ]


# ---------------------------------------------------------------- taxonomy


def _taxonomy_edit(edit: Callable[[str], str]) -> Callable[[Path], str]:
    def plant(root: Path) -> str:
        path = root / "taxonomy.yaml"
        text = path.read_text(encoding="utf-8")
        new = edit(text)
        assert new != text or text == "", "the edit changed nothing"
        path.unlink()  # a fresh inode: the taxonomy cache keys on mtime and size
        path.write_text(new, encoding="utf-8")
        return "taxonomy.yaml"

    return plant


def _sub(pattern: str, repl: str, count: int = 1) -> Callable[[str], str]:
    return lambda text: re.sub(pattern, repl, text, count=count, flags=re.M)


def _taxonomy_missing(root: Path) -> str:
    (root / "taxonomy.yaml").unlink()
    return "taxonomy.yaml"


def taxonomy_cases() -> list[Case]:
    g = "taxonomy"
    edit = _taxonomy_edit
    cases = [
        # The command line may refuse a root without a taxonomy before reading it:
        # then the one line names the file, with no field to name.
        Case(g, "missing", "", _taxonomy_missing),
        Case(g, "empty", "taxonomy", edit(lambda t: "")),
        Case(g, "malformed", "yaml", edit(lambda t: t + "\n  broken: [unclosed\n")),
        Case(g, "a-list", "taxonomy", edit(lambda t: "- a\n- b\n")),
        Case(
            g,
            "repeated-id",
            "axes.topology.values[1].id",
            edit(_sub(r"id: planner_executor_critic", "id: centralized")),
        ),
        Case(
            g,
            "family-typo",
            "axes.reward_type.values[0].family",
            edit(_sub(r"family: R1$", "family: R1x")),
        ),
        Case(
            g,
            "axis-without-values",
            "axes.topology.values",
            edit(_sub(r"(  topology:\n(?:.*\n)*?    values:\n)((?:      .*\n)+)", r"\1", 1)),
        ),
        Case(
            g,
            "values-empty-list",
            "axes.topology.values",
            edit(_sub(r"(  topology:\n(?:.*\n)*?    values:)\n((?:      .*\n)+)", r"\1 []\n", 1)),
        ),
        Case(g, "missing-label", "axes.category.label", edit(_sub(r"^    label: Category\n", ""))),
        Case(
            g,
            "missing-axis",
            "axes.decision_status",
            edit(_sub(r"^  decision_status:\n(?:    .*\n|      .*\n|\n)+", "")),
        ),
        Case(g, "missing-version", "version", edit(_sub(r"^version: 1\n", ""))),
        Case(g, "unquoted-yes-id", "axes.is_rl.values[0].id", edit(_sub(r'id: "yes"', "id: yes"))),
        Case(
            g,
            "control-char-label",
            "axes.category.label",
            edit(lambda t: t.replace("label: Category", 'label: "Cat\\e[31megory"', 1)),
        ),
        Case(
            g,
            "unknown-value-key",
            "axes.category.values[0].colour",
            edit(_sub(r"(      - id: rl_method\n)", r"\1        colour: red\n")),
        ),
        Case(
            g,
            "python-tag",
            "version",
            edit(_sub(r"^version: 1", "version: !!python/object/apply:os.system ['echo pwned']")),
        ),
        Case(g, "symlink", "file", _taxonomy_symlink),
        Case(g, "fifo", "", _taxonomy_fifo),
    ]
    stats = [
        Case(g, f"{c.name}-stats", c.field, c.plant, ("stats",))
        for c in cases
        if c.name in ("missing", "empty", "malformed", "repeated-id", "family-typo")
    ]
    return cases + stats


def _taxonomy_symlink(root: Path) -> str:
    (root / "taxonomy.yaml").rename(root / "real-taxonomy.yaml")
    os.symlink("real-taxonomy.yaml", root / "taxonomy.yaml")
    return "taxonomy.yaml"


def _taxonomy_fifo(root: Path) -> str:
    (root / "taxonomy.yaml").unlink()
    os.mkfifo(root / "taxonomy.yaml")
    return "taxonomy.yaml"


def datafile_cases() -> list[Case]:
    """claims, protocol, rounds, readings and benchmarks broken: ``validate`` and
    ``build`` both refuse them in one line (build before starting MkDocs)."""
    from tests.hostile.datafiles import BUILD_ONLY, CASES

    cases = [Case("datafiles", name, field, plant) for name, field, plant in CASES]
    return cases + [
        Case("datafiles", f"{name}-build", field, plant, ("build",))
        for name, field, plant in CASES + BUILD_ONLY
    ]


def extra_cases() -> list[Case]:
    """Groups kept in their own modules (import-upstream). Caches and CSV formulas
    are probes (tests/hostile/probes.py): run cleanly rather than refused."""
    from tests.hostile.upstream import upstream_cases

    return upstream_cases()


def all_cases() -> list[Case]:
    """Every case of the corpus that a command-line run judges."""
    from tests.hostile.gate_cases import gate_cases  # builds on provenance_cases
    from tests.hostile.provenance_cases import provenance_cases  # builds on this module

    return (
        record_cases()
        + filesystem_cases()
        + taxonomy_cases()
        + datafile_cases()
        + extra_cases()
        + provenance_cases()
        + gate_cases()
    )


# ---------------------------------------------------------------- running


@dataclass
class Outcome:
    """How a case ended: ``rejected`` (cleanly), ``unclear``, ``accepted`` or ``crashed``."""

    kind: str
    code: int | None
    output: str
    reason: str = ""


def _snapshot(path: Path) -> tuple | None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISREG(info.st_mode) and info.st_size < (4 << 20):
        return (info.st_mode, path.read_bytes())
    if stat.S_ISLNK(info.st_mode):
        return (info.st_mode, os.readlink(path))
    return (info.st_mode, info.st_size)


def run_case(case: Case, tmp: Path) -> Outcome:
    """Plant the case in a fresh small data root, run its command, judge the outcome."""
    root = write_synthetic_root(tmp / "kb", papers=3, exclusions=2)
    named = case.plant(root)
    before = _snapshot(root / named.rstrip("/"))
    records = _records(root)
    command = [arg.replace("{root}", str(root)) for arg in case.command]
    with deadline(CASE_SECONDS):
        run = run_cli(["--root", str(root), *command])
    text, code = run.text, run.code
    if run.crash:
        return Outcome("crashed", None, text, "hung" if run.hung else run.crash)
    if code == 0:
        return Outcome("accepted", code, text)
    kind, code, text, reason = _judge(case, root, named, before, code, text)
    if _records(root) != records:
        kind, reason = "unclear", "; ".join(filter(None, [reason, "a record file changed"]))
    return Outcome(kind, code, text, reason)


def _records(root: Path) -> dict[str, tuple | None]:
    """Every record file's state (a refused command must leave all of them as they were)."""
    found = {}
    for folder in ("papers", "exclusions"):
        base = root / folder
        if base.is_dir() and not base.is_symlink():
            found.update({p.name: _snapshot(p) for p in sorted(base.iterdir())})
    return found


def _judge(case: Case, root: Path, named: str, before, code: int, text: str):
    reasons = []
    if "Traceback" in text:
        reasons.append("traceback")
    if code == EXIT_BUG:
        reasons.append(f"exit {EXIT_BUG}: an unexpected error, not a refusal")
    field = f" {case.field}:" if case.field else ""
    if not any(named in line and field in line for line in text.splitlines()):
        reasons.append(f"no line names {named} and field {case.field}")
    long = max((len(line) for line in text.splitlines()), default=0)
    if long > MAX_LINE:
        reasons.append(f"a {long}-character line")
    if SECRET_MARK in text and SECRET in str(before):
        reasons.append("secret content echoed")
    if _snapshot(root / named.rstrip("/")) != before:
        reasons.append("the file changed")
    kind = "unclear" if reasons else "rejected"
    return kind, code, text, "; ".join(reasons)

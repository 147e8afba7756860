"""Hostile data files besides the records: ``claims.yaml``, ``protocol.yaml``,
``screening/*/round.yaml``, ``readings/`` and ``benchmarks.yaml``.

Each case breaks one valid file one way; ``validate`` and ``build`` must both
refuse it with one line naming the file, line and field (exit 2), and ``build``
must not start MkDocs (no traceback from inside it).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ROUND = "2026-11-16_2026-11-22"
ROUND_FILE = f"screening/{ROUND}/round.yaml"

CLAIMS = """\
claims:
  - id: pool
    statement: The pool holds papers.
    table: papers
    op: ">="
    expected: 1
  - id: strict
    statement: Some papers hold under the strict reading.
    table: papers
    where: credit_strict
    op: ">="
    expected: 0
"""

ROUND_YAML = f"""\
round: {ROUND}
window:
  since: 2026-11-16
  until: 2026-11-22
run_on: 2026-11-23
families:
  - multi_agent_llm
counts:
  retrieved: 10
  outside_window: 1
  duplicates_removed: 2
  to_screen: 7
retrieved_per_family:
  multi_agent_llm: 10
"""


# The round with one named source batch (its counts the batch's), for the batch cases.
BATCH = """\
sources:
  - name: github:someone/awesome-list
    query: The list's multi-agent section.
    file: list.csv
    imported_on: 2026-11-23
    identified: 10
    duplicates_removed: 2
    outside_window: 1
    reached: 2026-11-20
    strategy: A
"""


def _batch(old: str, new: str) -> Callable[[Path], str]:
    """The round with :data:`BATCH`, one of its lines changed."""
    assert old in BATCH
    return _replace(ROUND_FILE, ROUND_YAML + BATCH.replace(old, new))


def valid_files(root: Path) -> None:
    """A valid claims.yaml, protocol.yaml and one screening round under ``root``."""
    (root / "claims.yaml").write_text(CLAIMS, encoding="utf-8")
    shutil.copy(REPO / "protocol.yaml", root / "protocol.yaml")
    (root / ROUND_FILE).parent.mkdir(parents=True)
    (root / ROUND_FILE).write_text(ROUND_YAML, encoding="utf-8")


def _edit(rel: str, pattern: str, repl: str) -> Callable[[Path], str]:
    def plant(root: Path) -> str:
        valid_files(root)
        path = root / rel
        text = path.read_text(encoding="utf-8")
        new = re.sub(pattern, repl, text, count=1, flags=re.M)
        assert new != text, f"{pattern!r} changed nothing in {rel}"
        path.unlink()
        path.write_text(new, encoding="utf-8")
        return rel

    return plant


def _replace(rel: str, text: str) -> Callable[[Path], str]:
    def plant(root: Path) -> str:
        valid_files(root)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return rel

    return plant


def _link(rel: str) -> Callable[[Path], str]:
    def plant(root: Path) -> str:
        valid_files(root)
        (root / rel).unlink()
        (root / rel).symlink_to("/etc/passwd")
        return rel

    return plant


C, P, R = "claims.yaml", "protocol.yaml", ROUND_FILE

# (name, field the line must name, plant)
CASES: list[tuple[str, str, Callable[[Path], str]]] = [
    ("claims-malformed-yaml", "yaml", _replace(C, "claims: [\n  - {id: x\n")),
    ("claims-not-a-list", "claims", _replace(C, "claims: 5\n")),
    ("claims-duplicate-id", "id", _edit(C, r"id: strict", "id: pool")),
    ("claims-expected-huge", "expected", _edit(C, r"expected: 1$", "expected: 1" + "0" * 40)),
    ("claims-expected-negative", "expected", _edit(C, r"expected: 1$", "expected: -5")),
    ("claims-expected-bool", "expected", _edit(C, r"expected: 1$", "expected: yes")),
    ("claims-expected-float", "expected", _edit(C, r"expected: 1$", "expected: 1.5e308")),
    ("claims-unknown-op", "op", _edit(C, r'op: ">="', "op: '=~'")),
    ("claims-unknown-table", "table", _edit(C, r"table: papers", "table: users")),
    ("claims-where-code", "where", _edit(C, r"where: credit_strict", "where: __import__('os')")),
    ("claims-where-not-text", "where", _edit(C, r"where: credit_strict", "where: [1, 2]")),
    ("claims-id-number", "id", _edit(C, r"id: pool", "id: 7")),
    (
        "claims-escape-in-statement",
        "statement",
        _edit(C, r"statement: The pool holds papers.", 'statement: "The \\\\e[2J pool"'),
    ),
    ("claims-unknown-field", "colour", _edit(C, r"(  - id: pool\n)", r"\1    colour: red\n")),
    ("claims-missing-statement", "statement", _edit(C, r"    statement: The pool.*\n", "")),
    (
        "claims-python-tag",
        "claims[0].expected",
        _edit(C, r"expected: 1$", "expected: !!python/name:os.system"),
    ),
    ("claims-symlink", "file", _link(C)),
    ("protocol-malformed-yaml", "yaml", _edit(P, r"^version: 1", "version: [1")),
    (
        "protocol-similarity-huge",
        "deduplication.title_similarity",
        _edit(P, r"title_similarity: .*", "title_similarity: 1e400"),
    ),
    (
        "protocol-weight-negative",
        "ranking.family_weight",
        _edit(P, r"family_weight: .*", "family_weight: -3"),
    ),
    ("protocol-unknown-top", "colour", _edit(P, r"^version: 1", "version: 1\ncolour: red")),
    ("protocol-symlink", "file", _link(P)),
    ("round-malformed-yaml", "yaml", _edit(R, r"^families:", "families: [")),
    (
        "round-counts-huge",
        "counts.retrieved",
        _edit(R, r"retrieved: 10", "retrieved: 10" + "0" * 30),
    ),
    ("round-counts-negative", "counts.to_screen", _edit(R, r"to_screen: 7", "to_screen: -7")),
    (
        "round-per-family-huge",
        "retrieved_per_family.multi_agent_llm",
        _edit(R, r"multi_agent_llm: 10", "multi_agent_llm: 99999999999"),
    ),
    ("round-window-reversed", "window", _edit(R, r"since: 2026-11-16", "since: 2026-11-30")),
    ("round-reached-after-window", "sources[0].reached", _batch("2026-11-20", "2026-11-23")),
    ("round-reached-long-before", "sources[0].reached", _batch("2026-11-20", "2026-10-01")),
    (
        "round-source-name-spaces",
        "sources[0].name",
        _batch("github:someone/awesome-list", "github:a b"),
    ),
    (
        "round-source-name-escape",
        "sources[0].name",
        _batch("github:someone/awesome-list", '"x\\e[2J"'),
    ),
    (
        "round-source-kind-unknown",
        "sources[0].name",
        _batch("github:someone/awesome-list", "nosuchkind:x"),
    ),
    ("round-strategy-bad", "sources[0].strategy", _batch("strategy: A", "strategy: '../A'")),
    (
        "round-source-under-two-strategies",
        "sources[1].strategy",
        _replace(
            ROUND_FILE,
            ROUND_YAML
            + BATCH.replace("identified: 10", "identified: 5").replace(
                "duplicates_removed: 2", "duplicates_removed: 1"
            )
            + BATCH.split("\n", 1)[1]
            .replace("identified: 10", "identified: 5")
            .replace("duplicates_removed: 2", "duplicates_removed: 1")
            .replace("outside_window: 1", "outside_window: 0")
            .replace("strategy: A", "strategy: B"),
        ),
    ),
    (
        "round-waiting-note-bidi",
        "waiting",
        _replace(R, ROUND_YAML + "waiting:\n  '2611.00001': \"no page \\u202e yet\"\n"),
    ),
    (
        "round-waiting-not-a-candidate",
        "waiting",
        _replace(R, ROUND_YAML + "waiting:\n  '2611.00001': no primary page yet\n"),
    ),
    ("round-run-on-far-future", "run_on", _edit(R, r"run_on: 2026-11-23", "run_on: 9999-01-01")),
    ("round-window-ancient", "window", _edit(R, r"since: 2026-11-16", "since: 1066-10-14")),
    ("round-id-mismatch", "round", _edit(R, r"^round: .*", "round: 2020-01-01_2020-01-07")),
    ("round-not-a-mapping", "round", _replace(R, "- just\n- a list\n")),
    (
        "round-decided-path-escape",
        "decided",
        _edit(
            R,
            r"^run_on:",
            "decided:\n  '2611.00001': {decision: include, record: ../../etc/passwd}\nrun_on:",
        ),
    ),
    ("round-family-not-text", "families", _edit(R, r"  - multi_agent_llm", "  - 5")),
    ("readings-malformed", "yaml", _replace("readings/bad.yaml", "reader: [\n")),
    (
        "readings-unknown-key",
        "readings[0].key",
        _replace(
            "readings/r.yaml",
            "reader: r\nname: R\nmethod: m\nsource: s\ndate: 2026-11-01\n"
            "readings:\n  - key: no-such-paper\n",
        ),
    ),
    ("benchmarks-malformed", "yaml", _replace("benchmarks.yaml", "benchmarks: [\n")),
    # Rules the typed models added: unknown keys anywhere, exact windows, typed readings.
    ("round-unknown-key", "colour", _edit(R, r"^run_on:", "colour: red\nrun_on:")),
    ("round-window-extra", "window", _edit(R, r"(  until: .*)", r"\1\n  during: 2026-11-20")),
    (
        "round-decided-extra",
        "decided",
        _edit(
            R,
            r"^run_on:",
            "decided:\n  '2611.00001': {decision: include, record: papers/a.yaml, x: 1}\nrun_on:",
        ),
    ),
    ("protocol-version-2", "version", _edit(P, r"^version: 1", "version: 2")),
    (
        "readings-date-not-a-date",
        "date",
        _replace(
            "readings/r.yaml",
            "reader: r\nname: R\nmethod: m\nsource: s\ndate: soon\n"
            "readings:\n  - key: synthetic-00000\n",
        ),
    ),
    (
        "readings-note-control",
        "readings[0].note",
        _replace(
            "readings/r.yaml",
            "reader: r\nname: R\nmethod: m\nsource: s\ndate: 2026-11-01\n"
            'readings:\n  - key: synthetic-00000\n    note: "a \\e[2J note"\n',
        ),
    ),
]

# Queries whose columns or values only a loaded table can check: validate (no pandas)
# lets them pass, build must still refuse them in one line before MkDocs starts.
BUILD_ONLY: list[tuple[str, str, Callable[[Path], str]]] = [
    (
        "claims-where-unknown-column",
        "where",
        _edit(C, r"where: credit_strict", "where: credit_strikt"),
    ),
    (
        "claims-where-unknown-value",
        "where",
        _edit(C, r"where: credit_strict", "where: topology == 'swarn'"),
    ),
]

"""``masrl-kb import-upstream``: compare a newer release of the survey's CSV files
with the records, and with ``apply=True`` update the differing facts and tags.

Only the survey's facts and tags are compared; our own text and judgements are never
touched, and curated values are *kept (curated)* (``curated()`` in
`masrl_kb/contrib/upstream_compare.py` says when). Applying is all or nothing: each edited
record is re-read and the would-be pool validated before files are swapped, and a failure
puts back every file already swapped. Reading a release lives in
`masrl_kb/contrib/upstream_release.py`, comparing it in `masrl_kb/contrib/upstream_compare.py`
and editing a record's fields in `masrl_kb/contrib/yaml_edit.py`; their public names are
re-exported here.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from masrl_kb.contrib.new_record import terminate_as_exit
from masrl_kb.contrib.outside_text import clean_text
from masrl_kb.contrib.upstream_compare import (
    FACT_FIELDS,
    KEPT,
    MALFORMED,
    NOT_APPLIED,
    RELEASES,
    UNKNOWN,
    Change,
    changes_of,
    finders,
    is_unknown,
    match_rows,
    record_data,
    sourced_fields,
)
from masrl_kb.contrib.upstream_release import (
    MAX_CSV_BYTES,
    MAX_LINE,
    UpstreamError,
    plain_name,
    read_release,
)
from masrl_kb.contrib.yaml_edit import edit_fields
from masrl_kb.kb.atomic import write_atomic
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.record_checks import validate_records
from masrl_kb.kb.records import RecordFile, RecordSet, read_records
from masrl_kb.kb.taxonomy import Taxonomy, load_taxonomy
from masrl_kb.kb.text import shorten, shorten_name
from masrl_kb.kb.yamlio import load_yaml_text, read_regular_file

__all__ = [  # what this module has always offered, wherever it now lives
    "FACT_FIELDS",
    "KEPT",
    "MAX_CSV_BYTES",
    "NOT_APPLIED",
    "UNKNOWN",
    "Change",
    "UpstreamError",
    "UpstreamReport",
    "compare_upstream",
    "edit_fields",
    "is_unknown",
    "plain_name",
    "read_release",
    "sourced_fields",
    "swap_files",
]


@dataclass
class UpstreamReport:
    changes: list[Change] = field(default_factory=list)
    new_upstream: list[str] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)  # files written
    apply: bool = False

    def lines(self) -> list[str]:
        out, kept = [], sum(c.status == KEPT for c in self.changes)
        for c in self.changes:
            note = f" ({c.status}: {c.why})" if c.status else ""
            out.append(
                f"{c.rel}:{c.line}: {c.field}: ours {_shown(c.ours)}, upstream "
                f"{_shown(c.theirs)} [{c.column}]{note}"
            )
        out += [f"new upstream: {n}" for n in self.new_upstream]
        if self.apply:
            out += [f"updated {rel}" for rel in self.applied]
        out.append(
            f"{len(self.changes)} difference(s), {len(self.new_upstream)} new upstream row(s)"
            + (f"; {kept} {KEPT}" if kept else "")
            + (f"; {len(self.applied)} file(s) updated" if self.apply else "")
        )
        return [clean_text(line, MAX_LINE) for line in out]


def _shown(value: object) -> str:
    return shorten(value.isoformat() if isinstance(value, dt.date) else value, 120)


def _record_values(rec: RecordFile, changes: list[Change]) -> dict[str, object]:
    values: dict[str, object] = {}
    for c in changes:
        if c.status:
            continue
        if c.field == "authors[0]":
            authors = list(record_data(rec)["authors"])
            authors[0] = c.theirs
            values["authors"] = authors
        else:
            values[c.field] = c.theirs
    return values


@dataclass
class _Edit:
    """One record file's new text, not yet written."""

    path: Path
    old: str
    new: str
    record: RecordFile  # the new text, as read back


def _edited(root: Path, rec: RecordFile, changes: list[Change]) -> _Edit | None:
    """The record's new text with the applicable changes, checked by re-reading it."""
    values = _record_values(rec, changes)
    if not values:
        return None
    path = root / rec.rel
    old_text = read_regular_file(path).decode("utf-8")
    new_text = edit_fields(old_text, values, {"extra_urls": "url"})
    loaded = load_yaml_text(new_text)
    expected = {k: v for k, v in record_data(rec).items() if k not in values}
    expected.update({k: v for k, v in values.items() if v is not None})
    if loaded.problems or dict(loaded.data) != expected:
        name = next(iter(values))
        raise UpstreamError(
            f"{rec.rel}:{rec.line(name)}: {name}: the release's value cannot be written "
            f"and read back unchanged: {shorten(values[name])}"
        )
    return _Edit(path, old_text, new_text, replace(rec, data=loaded.data, problems=loaded.problems))


def _new_problems(records: RecordSet, edits: list[_Edit], tax: Taxonomy) -> list[str]:
    """Rule violations the edits would add to the pool (what was broken before is not theirs)."""
    replaced = {e.record.rel: e.record for e in edits}

    def swap(recs: list[RecordFile]) -> list[RecordFile]:
        return [replaced.get(r.rel, r) for r in recs]

    after = replace(records, papers=swap(records.papers), exclusions=swap(records.exclusions))
    before = {(p.path, p.field, p.message) for p in validate_records(records, tax)}
    return [
        str(p) for p in validate_records(after, tax) if (p.path, p.field, p.message) not in before
    ]


def swap_files(edits: list[_Edit]) -> list[str]:
    """Write every edit, all or none: each file is replaced atomically, and any
    failure, interrupt or SIGTERM/SIGHUP puts back the files already replaced."""
    done: list[_Edit] = []
    try:
        with terminate_as_exit():
            for e in edits:
                write_atomic(e.path, e.new)
                done.append(e)
    except BaseException:
        for e in reversed(done):
            write_atomic(e.path, e.old)
        raise
    return [e.record.rel for e in done]


def _refuse(problems: list[str], what: str) -> None:
    if problems:
        raise UpstreamError(f"{len(problems)} {what}: nothing written", problems)


def _compared(files: tuple, records: RecordSet, tax: Taxonomy, report: UpstreamReport):
    """(record, its changes) for every row matched to a record (unmatched rows are new
    upstream), after refusing duplicate or conflicting rows."""
    problems: list[str] = []
    matched = []
    for path, release, find in zip(files, RELEASES, finders(records), strict=True):
        if path is not None:
            rows = read_release(path, release[1])
            matched += [
                (release, *m) for m in match_rows(rows, str(path), release[2], find, problems)
            ]
    _refuse(problems, "duplicate or conflicting row(s)")
    work: list[tuple[RecordFile, list[Change]]] = []
    for (kind, _, id_column, title, wanted), row, rec in matched:
        if rec is None:
            rid, name = shorten_name(row[id_column], 60), shorten_name(row[title])
            report.new_upstream.append(f"{kind} {rid}: {name}")
        else:
            work.append((rec, changes_of(rec, wanted(row, tax))))
    report.changes = [c for _, changes in work for c in changes]
    return work


def compare_upstream(
    papers_csv: str | os.PathLike[str],
    excluded_csv: str | os.PathLike[str] | None = None,
    root: str | os.PathLike[str] | None = None,
    apply: bool = False,
) -> UpstreamReport:
    """Every difference between a release and the records; ``apply`` writes them. Raises
    :class:`UpstreamError` (nothing written) for bad rows or values or a broken rule."""
    base = find_root(root)
    tax = load_taxonomy(base)
    records = read_records(base)
    report = UpstreamReport(apply=apply)
    work = _compared((papers_csv, excluded_csv), records, tax, report)
    _refuse(
        [
            f"{c.rel}:{c.line}: {c.field}: the release gives {_shown(c.theirs)}: {c.why}"
            for c in report.changes
            if c.status == NOT_APPLIED and c.why in MALFORMED
        ],
        "malformed value(s)",
    )
    edits = [e for rec, changes in work if (e := _edited(base, rec, changes)) is not None]
    _refuse(
        _new_problems(records, edits, tax) if edits else [], "problem(s) in the would-be records"
    )
    if apply:
        report.applied = swap_files(edits)
    return report

"""``masrl-kb screen decide``: a round's screening decisions become records.

The decisions file is an ASReview LAB export (CSV with an ``included`` column, or RIS with
``ASReview_relevant``/``_irrelevant`` notes) or a plain CSV ``id,decision[,reason,note,key,
stage,query_family]`` (CONTRIBUTING.md describes the columns). The round's lock is held throughout;
running the same file twice changes nothing.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from masrl_kb.contrib.arxiv_import import add_other_paper, add_paper
from masrl_kb.contrib.new_exclusion import check_choice, exclude_record
from masrl_kb.contrib.new_record import AlreadyRecorded, ArxivImportError
from masrl_kb.contrib.outside_text import clean_text
from masrl_kb.contrib.screen.entries import (
    Entry,
    arxiv_of,
    or_empty,
    parse_doi,
    parse_openreview,
    read_entries,
    title_id,
)
from masrl_kb.contrib.screen.import_files import Problems, csv_rows, read_text, ris_refs
from masrl_kb.contrib.screen.round_files import check_round_csv, round_yaml
from masrl_kb.contrib.screen.store import ScreeningError, replace_file, round_lock
from masrl_kb.kb.fields import KEY_PATTERN
from masrl_kb.kb.model.rounds_model import source_kind
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.protocol import load_protocol
from masrl_kb.kb.rounds import ROUND_FILE, Round, load_round, round_dir
from masrl_kb.kb.taxonomy import Taxonomy, load_taxonomy

MAX_DECISION_BYTES = 50 * 1024 * 1024
MAX_NOTE = 2000
_KEY = re.compile(KEY_PATTERN)
_ASREVIEW_LABELS = {
    "asreview_relevant": "include",
    "asreview_irrelevant": "exclude",
    "asreview_not_seen": None,
}
# ASReview's ``included`` cell: 1, 0, or empty while not labelled.
_INCLUDED = {"1": "include", "1.0": "include", "0": "exclude", "0.0": "exclude", "": None}
_ID_COLUMNS = ("id", "arxiv_id", "record_id", "doi", "url", "urls", "journal_name", "notes")


class DecisionFileError(ScreeningError):
    """The decisions file is malformed; one line per problem, ``file:line: field: msg``."""

    def __init__(self, problems: list[str]) -> None:
        # One terminal-safe line per problem, whatever text the file held.
        self.problems = [clean_text(p, 500) for p in problems]
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class Decision:
    """One screening decision read from a decisions file."""

    id: str  # the candidate id
    decision: str  # include or exclude
    reason: str | None
    line: int = field(compare=False)  # two lines deciding alike are the same decision
    note: str = ""
    key: str = ""
    stage: str = ""
    query_family: str = ""  # an exclusion's family, when neither title nor query names one


@dataclass(frozen=True)
class _Vocab:
    """What a decision may say: exclusion reason codes, stages, --reason, inclusion rules."""

    reasons: tuple[str, ...]
    stages: tuple[str, ...]
    default_reason: str | None
    rules: tuple[str, ...]  # inclusion rule ids (I1..I5): an inclusion's reason
    families: tuple[str, ...] = ()  # query_family ids


# ---------------------------------------------------------------- reading


def candidate_of(values: Iterable[object], wanted: set[str]) -> str | None:
    """The candidate id among cell values: an id as written, or an arXiv id, DOI or
    OpenReview id in an id or URL; the first that is a candidate wins."""
    found: list[str] = []
    for value in values:
        text = value.strip() if isinstance(value, str) else ""
        for part in [text, *re.findall(r"[^\s'\"\[\],]+", text)] if text else []:
            found += [part] if part.startswith(("doi:", "openreview:", "title:")) else []
            typed = [("", arxiv_of), ("doi:", parse_doi)]
            typed += [("openreview:", parse_openreview)] if "openreview" in part.lower() else []
            found += [prefix + got for prefix, parse in typed if (got := or_empty(parse, part))]
    return next((f for f in found if f in wanted), found[0] if found else None)


def read_decisions(path: Path, vocab: _Vocab, candidates: Iterable[str]) -> list[Decision]:
    """Decisions from an ASReview export (CSV with ``included``, or RIS) or a plain CSV;
    unlabelled entries are skipped, every problem raised at once (:class:`DecisionFileError`)."""
    problems = Problems(path.name, DecisionFileError)
    text = read_text(path, problems, MAX_DECISION_BYTES)
    suffix = path.suffix.lower()
    wanted = set(candidates)
    if suffix not in (".ris", ".csv"):
        problems.fail(1, "file", f"unknown extension {path.suffix!r}; allowed: .csv, .ris")
    items = (_ris_items if suffix == ".ris" else _csv_items)(text, problems, wanted)
    found = [d for d in (_checked(item, vocab, wanted, problems) for item in items) if d]
    return _unique(found, problems)


def _reason_problem(item: Decision, vocab: _Vocab) -> str | None:
    allowed = ", ".join(vocab.reasons)
    if item.decision == "exclude":
        if not item.reason:
            return (
                "an exclusion needs a reason code (a reason column or --reason); "
                f"allowed: {allowed}"
            )
        if item.reason not in vocab.reasons:
            return f"unknown code {item.reason!r}; allowed: {allowed}"
    elif item.reason and item.reason not in vocab.rules:
        rules = ", ".join(vocab.rules) or "none in protocol.yaml"
        return (
            "an inclusion's reason is the inclusion rule it meets; "
            f"{item.reason[:60]!r} is not one; allowed: {rules}"
        )
    return None


def _problem(item: Decision, vocab: _Vocab, wanted: set[str]) -> tuple[str, str] | None:
    """(field, message) of what is wrong with one decision, else None."""
    if item.id not in wanted:
        return "id", f"{item.id} is not a candidate of this round"
    reason = _reason_problem(item, vocab)
    if reason:
        return "reason", reason
    if item.stage and vocab.stages and item.stage not in vocab.stages:
        return "stage", f"unknown value {item.stage[:60]!r}; allowed: {', '.join(vocab.stages)}"
    if item.query_family and item.decision != "exclude":
        return "query_family", "only an exclusion names a query family"
    if item.query_family and item.query_family not in vocab.families:
        allowed = ", ".join(vocab.families)
        return "query_family", f"unknown value {item.query_family[:60]!r}; allowed: {allowed}"
    if item.key and item.decision != "include":
        return "key", "only an inclusion names a paper key"
    if item.key and not _KEY.match(item.key):
        return "key", f"{item.key[:60]!r} does not match {KEY_PATTERN}"
    if clean_text(item.note, MAX_NOTE) != " ".join(item.note.split()):
        return "note", f"holds control characters or is longer than {MAX_NOTE}"
    return None


def _checked(
    item: Decision, vocab: _Vocab, wanted: set[str], problems: Problems
) -> Decision | None:
    if item.decision == "exclude":
        item = replace(item, reason=item.reason or vocab.default_reason)
    problem = _problem(item, vocab, wanted)
    if problem:
        problems.add(item.line, *problem)
        return None
    return replace(item, reason=item.reason or None, note=" ".join(item.note.split()))


def _unique(found: list[Decision], problems: Problems) -> list[Decision]:
    seen: dict[str, Decision] = {}
    keys: dict[str, Decision] = {}
    for d in found:
        first = seen.setdefault(d.id, d)
        if first is not d and first != d:
            problems.add(d.line, "id", f"{d.id} decided differently on line {first.line}")
        other = keys.setdefault(d.key, d) if d.key else d
        if other is not d and other.id != d.id:
            problems.add(d.line, "key", f"{d.key} is also given on line {other.line}")
    problems.raise_any()
    return list(seen.values())


def _csv_items(text: str, problems: Problems, wanted) -> Iterator[Decision]:
    if text.lstrip().startswith("TY  -"):
        problems.add(1, "header", "this .csv file holds RIS; name it .ris")
        return
    kinds: list[str] = []

    def header_ok(header: list[str], line: int) -> bool:
        if "included" in header or {"id", "decision"} <= set(header):
            kinds.append("asreview" if "included" in header else "plain")
            return True
        problems.add(
            line,
            "header",
            "expected an ASReview export (an 'included' column) or the columns "
            "id,decision[,reason,note,key,stage,query_family]; "
            f"got {','.join(header)[:300] or 'nothing'}",
        )
        return False

    rows = csv_rows(text, problems, header_ok)
    for line, row in rows if not problems.lines else []:
        cid = candidate_of([row.get(c) for c in _ID_COLUMNS], wanted)
        if cid is None and row.get("title"):
            cid = title_id(row["title"]) if title_id(row["title"]) in wanted else None
        if cid is None:
            problems.add(
                line,
                "id",
                "no candidate id (arXiv id, doi:, openreview: or title:) "
                f"in columns {', '.join(_ID_COLUMNS)}",
            )
            continue
        decision = _csv_decision(kinds[0], row, line, problems)
        if decision is not None:
            values = (row.get(c, "") for c in ("note", "key", "stage", "query_family"))
            yield Decision(cid, decision, row.get("reason") or None, line, *values)


def _csv_decision(kind: str, row: dict, line: int, problems: Problems) -> str | None:
    if kind == "asreview":
        value = row.get("included", "")
        if value not in _INCLUDED:
            problems.add(line, "included", f"{value[:40]!r}; allowed: 1, 0 or empty")
        return _INCLUDED.get(value)  # None: not labelled yet
    decision = row.get("decision", "").lower()
    if decision not in ("include", "exclude"):
        given = row.get("decision", "")[:40]
        problems.add(line, "decision", f"{given!r}; allowed: include, exclude")
        return None
    return decision


def _ris_items(text: str, problems: Problems, wanted) -> Iterator[Decision]:
    for line, ref in ris_refs(text, problems):
        notes = [str(n).strip().lower() for n in ref.get("notes", []) or []]
        labels = [_ASREVIEW_LABELS[n] for n in notes if n in _ASREVIEW_LABELS]
        if not labels or labels[0] is None:
            continue
        cid = candidate_of(
            [ref.get("id"), ref.get("doi"), *(ref.get("urls") or []), ref.get("journal_name")],
            wanted,
        )
        if cid is None:
            problems.add(line, "id", "no candidate id in ID, DO, UR or JO")
            continue
        reason = next((n.split(":", 1)[1].strip() for n in notes if n.startswith("reason:")), None)
        yield Decision(cid, labels[0], reason, line)


# ---------------------------------------------------------------- writing


@dataclass
class DecideResult:
    round: Round
    written: list[Path]
    already: list[str]  # ids whose record existed before (a rerun, or added by hand)


def decide_round(
    rid: str,
    decisions_file: str | os.PathLike[str],
    root: str | os.PathLike[str] | None = None,
    stage: str = "abstract_screen",
    default_reason: str | None = None,
    today: dt.date | None = None,
) -> DecideResult:
    """Turn a round's decisions into paper and exclusion records; idempotent."""
    base = find_root(root)
    tax = load_taxonomy(base)
    protocol = load_protocol(base)
    check_choice(tax, protocol.stage_axis, stage, "--stage", ScreeningError)
    if default_reason is not None:
        check_choice(tax, protocol.reason_axis, default_reason, "--reason", ScreeningError)
    reasons, stages = tax[protocol.reason_axis].ids, tax[protocol.stage_axis].ids
    with round_lock(base, rid):
        rnd = load_round(base, rid)
        entries = read_entries(base, rid)
        check_round_csv(base, rid)
        path = Path(decisions_file)
        rules = tuple(r.id for r in protocol.inclusion_rules)
        # An exclusion may carry any value of its query_family axis (validate's rule), not
        # only the families screen run searches, so decide accepts what validate accepts.
        families = tax["query_family"].ids
        vocab = _Vocab(reasons, stages, default_reason, rules, families)
        decisions = read_decisions(path, vocab, entries)
        _check_against_round(rnd, decisions, path.name, base)
        result = DecideResult(rnd, [], [])
        # All or nothing: a decision that cannot be written (or Ctrl-C) removes the records
        # this run wrote, and round.yaml is written only once every record is.
        try:
            for d in decisions:
                _apply(d, entries[d.id], result, base, tax, protocol.reason_axis, stage, today)
            replace_file(round_dir(base, rid) / ROUND_FILE, round_yaml(rnd))
        except BaseException:
            for written in result.written:
                written.unlink(missing_ok=True)
            raise
    return result


def _check_against_round(rnd: Round, decisions: list[Decision], name: str, base: Path) -> None:
    problems = []
    for d in decisions:
        before = rnd.decided.get(d.id)
        if before and (before["decision"], before.get("reason")) != (d.decision, d.reason):
            problems.append(
                f"{name}:{d.line}: decision: {d.id} was already decided as "
                f"{before['decision']} ({before.get('record')}); edit that record by hand"
            )
        elif not before and d.key and (base / "papers" / f"{d.key}.yaml").exists():
            problems.append(f"{name}:{d.line}: key: papers/{d.key}.yaml already exists")
    if problems:
        raise DecisionFileError(problems)


def _apply(
    d: Decision,
    entry: Entry,
    result: DecideResult,
    base: Path,
    tax: Taxonomy,
    reason_axis: str,
    stage: str,
    today: dt.date | None,
) -> None:
    rnd = result.round
    if d.id in rnd.decided:
        result.already.append(d.id)
        return
    today = today or dt.date.today()
    try:
        if d.decision == "include":
            done = _include(d, entry, base, today, rnd.id)
        else:
            reason = d.reason or ""  # an exclusion's reason was checked when read
            label = tax[reason_axis].label_of(reason)
            done = exclude_record(
                entry.arxiv_id or entry.link,
                stage=d.stage or stage,
                reason=reason,
                root=base,
                source=source_kind(entry.source),  # the record names the kind of source
                # the row's family first: the curator read the paper, the terms did not
                query_family=d.query_family or (entry.families[0] if entry.families else None),
                note=d.note or f"Screened out in round {rnd.id}: {label.lower()}.",
                title=entry.title,
                identifier=entry.identifier,
                today=today,
                paper=entry.paper() if entry.arxiv_id else None,
            )
    except AlreadyRecorded as err:
        result.already.append(d.id)
        record = err.matches[0].split(":", 1)[1].strip().split(":")[0]
    except ArxivImportError as err:
        raise ScreeningError(f"{d.id}: {err}") from None
    else:
        result.written.append(done.path)
        record = done.path.relative_to(base).as_posix()
    rnd.decided[d.id] = {
        "decision": d.decision,
        "reason": d.reason,
        "record": record,
        "source": entry.source,
    }


# Written as TODO in an inclusion's draft: an RL method or framework must list evaluated_on,
# and a non-empty list needs evaluation_source; stubbed, the draft's first validate names
# both instead of one per cycle (``evaluated_on: []`` when it reports none, then remove
# evaluation_source).
EVALUATION_STUBS = ("evaluated_on", "evaluation_source")


def _include(d: Decision, entry: Entry, base: Path, today: dt.date, rid: str):
    key, notes = d.key or None, d.note or None
    if entry.arxiv_id:
        return add_paper(
            entry.arxiv_id,
            root=base,
            key=key,
            today=today,
            paper=entry.paper(),
            notes=notes,
            stubs=EVALUATION_STUBS,
        )
    return add_other_paper(
        entry.title,
        entry.authors,
        entry.submitted,
        entry.link,
        root=base,
        key=key,
        today=today,
        notes=notes,
        comment=f"screened in round {rid} from source {entry.source}",
        stubs=EVALUATION_STUBS,
    )

"""Screening rounds (``screening/<round-id>/round.yaml``): a window of first-publication
dates holding source batches and decisions, read here for the site and the query layer.
"""

from __future__ import annotations

import datetime as dt
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from masrl_kb.kb.model.base import line_at, validate_file
from masrl_kb.kb.model.rounds_model import ROUND_ID, RoundFile, whole
from masrl_kb.kb.paths import Root, find_root
from masrl_kb.kb.problem import Problem
from masrl_kb.kb.text import capped_list, shorten
from masrl_kb.kb.yamlio import load_yaml_file

SCREENING_DIR = "screening"
ROUND_FILE = "round.yaml"
# One source batch of a round: where its candidates came from and what became of them.
BATCH_COUNTS = ("identified", "duplicates_removed", "outside_window")
SOURCE_COUNTS = (*BATCH_COUNTS, "screened", "included", "excluded", "awaiting")


class RoundError(ValueError):
    """A round folder or its ``round.yaml`` is missing or malformed; ``found`` lists each
    problem (not ``problems``, which the command line words as invalid records)."""

    def __init__(self, message: str, found: list[Problem] | None = None) -> None:
        super().__init__(message)
        self.found = found or []


@dataclass
class Round:
    """One screening round as recorded in its ``round.yaml``."""

    id: str
    since: dt.date
    until: dt.date
    run_on: dt.date
    families: list[str]
    counts: dict[str, int]
    # duplicates are counted in counts["duplicates_removed"] and listed in the side file
    # duplicates.csv; this many rows of it (fewer when the list hit its size bound)
    duplicates_listed: int = 0
    per_family: dict[str, int] = field(default_factory=dict)  # entries each query returned
    capped: list[str] = field(default_factory=list)  # families that hit the result limit
    # candidate id -> {"decision": include|exclude, "reason": code|None, "record": path}
    decided: dict[str, dict] = field(default_factory=dict)
    # source batches as recorded: {name, query, file, imported_on, identified,
    # duplicates_removed, outside_window}; empty in rounds written before batches existed
    sources: list[dict] = field(default_factory=list)
    in_progress: bool = False  # the window had not ended when the round was last written
    # candidate id -> why it is not decided yet; a decided candidate's note is dropped
    waiting: dict[str, str] = field(default_factory=dict)

    @property
    def batches(self) -> list[dict]:
        """The source batches; a round written before batches existed is one arXiv batch."""
        if self.sources:
            return self.sources
        return [
            {
                "name": "arxiv",
                "query": ", ".join(self.families),
                "file": "",
                "imported_on": self.run_on,
                "identified": self.counts["retrieved"],
                "duplicates_removed": self.counts["duplicates_removed"],
                "outside_window": self.counts["outside_window"],
            }
        ]

    @property
    def covered(self) -> dt.date:
        """The last first-publication day the round's searches saw: the window's end, or
        for a round in progress the day of its latest batch."""
        if not self.in_progress:
            return self.until
        return min(self.until, max([self.run_on, *(b["imported_on"] for b in self.batches)]))

    @property
    def included(self) -> int:
        return sum(d["decision"] == "include" for d in self.decided.values())

    @property
    def excluded(self) -> int:
        return sum(d["decision"] == "exclude" for d in self.decided.values())

    @property
    def awaiting(self) -> int:
        return self.counts["to_screen"] - self.included - self.excluded

    def by_source(self) -> dict[str, dict[str, int]]:
        """Per source: identified, duplicates removed, outside the window, screened,
        included, excluded and awaiting (screened = the batches' new candidates)."""
        out: dict[str, dict[str, int]] = {}
        for b in self.batches:
            row = out.setdefault(b["name"], dict.fromkeys(SOURCE_COUNTS, 0))
            for k in BATCH_COUNTS:
                row[k] += b[k]
            row["screened"] += b["identified"] - b["duplicates_removed"] - b["outside_window"]
        only = next(iter(out)) if len(out) == 1 else "unknown"  # older rounds: one source
        for d in self.decided.values():
            row = out.setdefault(d.get("source", only), dict.fromkeys(SOURCE_COUNTS, 0))
            row["included" if d["decision"] == "include" else "excluded"] += 1
        for row in out.values():
            row["awaiting"] = row["screened"] - row["included"] - row["excluded"]
        return out

    def reasons(self) -> dict[str, int]:
        """Exclusions per reason code."""
        reasons = Counter(d["reason"] for d in self.decided.values() if d["decision"] == "exclude")
        return dict(sorted(reasons.items()))


def round_id(since: dt.date, until: dt.date) -> str:
    """The id of the round covering ``since``..``until`` (both inclusive)."""
    return f"{since.isoformat()}_{until.isoformat()}"


def _error(problems: list[Problem]) -> RoundError:
    problems = sorted(problems)
    return RoundError(str(problems[0]), problems)


def _problem(rel: str, line: int, name: str, message: str) -> RoundError:
    return _error([Problem(rel, line, name, message)])


def _refuse_link(path: Path, rel: str) -> None:
    """Screening files are written in place: a symbolic link would send writes elsewhere."""
    if path.is_symlink():
        raise _problem(rel, 1, "file", "a symbolic link; refused (screening files are real files)")


def screening_root(root: Root) -> Path:
    """``screening/`` of the data root; a symbolic link there is refused."""
    base = find_root(root) / SCREENING_DIR
    _refuse_link(base, f"{SCREENING_DIR}/")
    if base.exists() and not base.is_dir():
        raise _problem(f"{SCREENING_DIR}/", 1, "file", "not a folder")
    return base


def round_dir(root: Root, rid: str) -> Path:
    """The folder of round ``rid`` (the id is checked: it becomes a path; links refused)."""
    if not ROUND_ID.match(rid):
        raise RoundError(f"malformed round id {rid!r}: expected YYYY-MM-DD_YYYY-MM-DD")
    folder = screening_root(root) / rid
    _refuse_link(folder, f"{SCREENING_DIR}/{rid}/")
    return folder


def load_round(root: Root, rid: str) -> Round:
    """Read one round; :class:`RoundError` when it is missing or malformed (the rules:
    :class:`masrl_kb.kb.model.rounds_model.RoundFile`)."""
    folder = round_dir(root, rid)
    path = folder / ROUND_FILE
    rel = f"{SCREENING_DIR}/{rid}/{ROUND_FILE}"
    _refuse_link(path, rel)
    if not path.is_file():
        known = capped_list([r.id for r in load_rounds(root)])
        raise RoundError(f"no screening round {rid!r} (rounds: {known})")
    model, problems = validate_file(RoundFile, path, rel, {"folder": rid}, top="round")
    if model is None:
        raise _error([whole(p) for p in problems])
    return Round(
        id=model.round,
        since=model.window.since,
        until=model.window.until,
        run_on=model.run_on,
        families=list(model.families),
        counts=model.counts.model_dump(),
        duplicates_listed=model.duplicates.listed if model.duplicates else 0,
        per_family=dict(model.retrieved_per_family or {}),
        capped=list(model.capped or []),
        decided={k: v.model_dump(exclude_unset=True) for k, v in (model.decided or {}).items()},
        sources=[b.model_dump(exclude_none=True) for b in model.sources or []],
        in_progress=bool(model.in_progress),
        waiting=dict(model.waiting or {}),
    )


def load_rounds(root: Root = None) -> list[Round]:
    """Every round under ``screening/``, oldest window first."""
    base = screening_root(root)
    if not base.is_dir():
        return []
    rounds = [
        load_round(root, f.name)
        for f in sorted(base.iterdir())
        if ROUND_ID.match(f.name) and (f.is_symlink() or os.path.lexists(f / ROUND_FILE))
    ]
    return sorted(rounds, key=lambda r: (r.until, r.since))


MAX_DUPLICATES_READ = 16 * 1024 * 1024  # the side file's bound, as ``screen`` writes it
CANDIDATES_CSV = "candidates.csv"


def _side_csv(root: Root, rid: str, name: str, keys: tuple[str, ...]) -> list[dict[str, str]]:
    """The rows of a round's side file ``name``, as ``keys`` (missing cells empty); none
    when the file is absent. :class:`RoundError` for a link, an oversized or unreadable file."""
    import csv
    import io

    path = round_dir(root, rid) / name
    rel = f"{SCREENING_DIR}/{rid}/{name}"
    _refuse_link(path, rel)
    if not path.is_file():
        return []
    if path.stat().st_size > MAX_DUPLICATES_READ:
        raise _problem(rel, 1, "file", f"larger than {MAX_DUPLICATES_READ} bytes")
    try:
        rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    except (UnicodeDecodeError, csv.Error) as err:
        raise _problem(rel, 1, "file", f"not a readable CSV file ({str(err)[:80]})") from None
    return [{k: str(row.get(k) or "") for k in keys} for row in rows]


def round_duplicates(root: Root, rid: str) -> list[dict[str, str]]:
    """The duplicates a round lists in its ``duplicates.csv`` (``{id, duplicate_of, match,
    source}``, ``source`` empty in files written before batches were named)."""
    from masrl_kb.kb.model.rounds_model import DUPLICATES_CSV

    return _side_csv(root, rid, DUPLICATES_CSV, ("id", "duplicate_of", "match", "source"))


def round_candidates(root: Root, rid: str) -> list[dict[str, str]]:
    """A round's candidates as its ``candidates.csv`` lists them, best score first
    (``{id, title, submitted, source, duplicate_of}``), duplicates left out."""
    keys = ("id", "title", "submitted", "source", "duplicate_of")
    return [r for r in _side_csv(root, rid, CANDIDATES_CSV, keys) if not r["duplicate_of"]]


def awaiting_candidates(root: Root, rnd: Round) -> list[dict[str, str]]:
    """The round's candidates not decided yet, each with ``why`` from ``waiting`` (or "")."""
    return [
        dict(c, why=rnd.waiting.get(c["id"], ""))
        for c in round_candidates(root, rnd.id)
        if c["id"] not in rnd.decided
    ]


def _loaded_rounds(root: Root) -> tuple[Path, list[Round]]:
    """The data root and its rounds; none when a round does not load (the cross-file
    checks leave that to :func:`load_rounds`'s own report)."""
    base = find_root(root)
    try:
        return base, load_rounds(base)
    except RoundError:
        return base, []


def waiting_problems(root: Root = None) -> list[Problem]:
    """A ``waiting`` note on a candidate that is decided or is not one of the round's
    candidates: the note would describe nothing the rounds page shows."""
    base, rounds = _loaded_rounds(root)
    found = []
    for rnd in rounds:
        if not rnd.waiting:
            continue
        rel = f"{SCREENING_DIR}/{rnd.id}/{ROUND_FILE}"
        try:
            ids = {c["id"] for c in round_candidates(base, rnd.id)}
        except RoundError as err:
            found.extend(err.found or [Problem(rel, 1, "waiting", str(err))])
            continue
        lines = load_yaml_file(base / rel).data
        for cid in rnd.waiting:
            if cid in rnd.decided:
                decision = rnd.decided[cid]["decision"]
                why = f"{shorten(cid, 40)} is decided ({decision}); remove its note"
            elif cid not in ids:
                why = f"{shorten(cid, 40)} is not a candidate of this round (candidates.csv)"
            else:
                continue
            found.append(Problem(rel, line_at(lines, ("waiting", cid)), "waiting", why))
    return found


# Where each decision's record lives: an inclusion writes a paper, an exclusion an exclusion.
RECORD_FOLDER = {"include": "papers", "exclude": "exclusions"}


def _decided_problem(base: Path, rnd: Round, cid: str, entry: dict) -> str | None:
    record, decision = entry["record"], entry["decision"]
    folder = RECORD_FOLDER[decision]
    if not record.startswith(f"{folder}/"):
        return f"{decision} {shorten(cid, 40)} names {record}; an {decision} writes {folder}/"
    if not (base / record).is_file() or (base / record).is_symlink():
        return (
            f"{decision} {shorten(cid, 40)} names {record}, which does not exist; "
            f"write that record (screen decide writes it) or remove the entry from decided"
        )
    return None


def decided_record_problems(root: Root = None) -> list[Problem]:
    """A decision whose record is missing: the PRISMA flow would count a paper the pool
    does not hold. Rounds that do not load are reported by :func:`load_rounds`."""
    base, rounds = _loaded_rounds(root)
    found = []
    for rnd in rounds:
        rel = f"{SCREENING_DIR}/{rnd.id}/{ROUND_FILE}"
        lines = None
        for cid, entry in rnd.decided.items():
            message = _decided_problem(base, rnd, cid, entry)
            if message is None:
                continue
            lines = lines or load_yaml_file(base / rel).data
            line = line_at(lines, ("decided", cid, "record"))
            found.append(Problem(rel, line, "decided", message))
    return found


def source_kind_problems(root: Root = None) -> list[Problem]:
    """A batch (or a decision's batch) whose source kind is not an ``exclusion_source``
    id of taxonomy.yaml: the exclusion it writes would not validate, and the site could
    not name it. Rounds that do not load, and a broken taxonomy, are reported elsewhere."""
    from masrl_kb.kb.model.base import field_name
    from masrl_kb.kb.model.rounds_model import source_kind
    from masrl_kb.kb.taxonomy import TaxonomyError, load_taxonomy

    base = find_root(root)
    try:
        rounds, kinds = load_rounds(base), load_taxonomy(base)["exclusion_source"].ids
    except (RoundError, TaxonomyError):
        return []
    found = []
    for rnd in rounds:
        rel = f"{SCREENING_DIR}/{rnd.id}/{ROUND_FILE}"
        named: list[tuple[tuple[str | int, ...], str]] = [
            (("sources", i, "name"), b["name"]) for i, b in enumerate(rnd.sources)
        ]
        named += [
            (("decided", c, "source"), d["source"])
            for c, d in rnd.decided.items()
            if d.get("source")
        ]
        lines = None
        for at, name in named:
            if source_kind(name) in kinds:
                continue
            lines = lines or load_yaml_file(base / rel).data
            message = (
                f"unknown source kind {source_kind(name)[:60]!r}; allowed: {capped_list(kinds)}"
            )
            found.append(Problem(rel, line_at(lines, at), field_name(at), message))
    return found

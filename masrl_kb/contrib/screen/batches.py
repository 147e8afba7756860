"""Living-review screening rounds: ``masrl-kb screen run`` (arXiv, per query family) and
``screen import`` (an exported list), each adding a source batch to a window's round.

Each batch drops what the knowledge base already holds and what falls outside the window;
then the round's candidates are ranked again together.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from masrl_kb.contrib.new_exclusion import check_choice
from masrl_kb.contrib.outside_text import clean_text
from masrl_kb.contrib.screen.dedup import Known, add_round, known_records, mark_duplicates
from masrl_kb.contrib.screen.entries import Entry, query_families, read_entries
from masrl_kb.contrib.screen.import_files import EARLIEST as EARLIEST_IMPORT
from masrl_kb.contrib.screen.import_files import read_candidates, shown_name
from masrl_kb.contrib.screen.ranking import ranked
from masrl_kb.contrib.screen.round_files import (
    check_round_csv,
    old_duplicate_rows,
    read_duplicates,
    round_files,
)
from masrl_kb.contrib.screen.store import ScreeningError, round_lock, write_round_folder
from masrl_kb.contrib.sources.arxiv import EARLIEST, Paging, family_query, search_family
from masrl_kb.kb.model.base import validate_bytes
from masrl_kb.kb.model.rounds_model import (
    SOURCE_NAME,
    STRATEGY,
    RoundFile,
    reach_problem,
    source_kind,
)
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.protocol import Protocol, load_protocol
from masrl_kb.kb.records import RecordSet, read_records
from masrl_kb.kb.rounds import (
    ROUND_FILE,
    SCREENING_DIR,
    Round,
    RoundError,
    load_round,
    load_rounds,
    round_dir,
    round_id,
)
from masrl_kb.kb.taxonomy import load_taxonomy

MAX_QUERY = 2000


@dataclass
class RunResult:
    round: Round
    folder: Path
    candidates: list[Entry]
    duplicates: list[Entry]  # removed by this batch
    warnings: list[str] = field(default_factory=list)  # the readers' own, capped and cleaned

    @property
    def batch(self) -> dict[str, Any]:
        return self.round.batches[-1]


def check_window(
    since: dt.date, until: dt.date, today: dt.date, earliest: dt.date, in_progress: bool = False
) -> None:
    """Refuse a window that is reversed, too early, or not over (unless ``in_progress``:
    then it must not be over, and must have begun)."""
    if until < since:
        raise ScreeningError(f"--until {until} is before --since {since}")
    if in_progress and until < today:
        raise ScreeningError(f"--in-progress: the window ended on {until}; drop --in-progress")
    if in_progress and since > today:
        raise ScreeningError(f"--in-progress: the window begins on {since}, after today")
    if until > today and not in_progress:
        raise ScreeningError(
            f"--until {until} is after today ({today}): the window is not over "
            "(--in-progress screens it as a round in progress)"
        )
    if since < earliest:
        raise ScreeningError(f"--since {since} is before {earliest}")


def _round_folder(base: Path, rid: str) -> Path:
    try:
        return round_dir(base, rid)
    except RoundError as err:
        raise ScreeningError(str(err)) from None


# ---------------------------------------------------------------- one batch


def _screen_batch(
    entries: list[Entry], known: Known, since: dt.date, until: dt.date, threshold: float
) -> tuple[list[Entry], list[Entry], int]:
    """(new candidates, duplicates, number outside the window) of one batch: duplicates
    first (a pooled paper's new version keeps its first date), the window, then look-alikes
    within the batch."""
    mark_duplicates(entries, known, threshold)
    fresh = [e for e in entries if not e.duplicate_of]
    in_window = [e for e in fresh if since <= e.submitted <= until]
    mark_duplicates(in_window, Known(), threshold, within="this batch")
    candidates = [e for e in in_window if not e.duplicate_of]
    duplicates = [e for e in entries if e.duplicate_of]
    return candidates, duplicates, len(fresh) - len(in_window)


def _with_batch(rnd: Round, batch: dict[str, Any], to_screen: int) -> Round:
    """The round with one more source batch, its counts summed over the batches."""
    batches = [*(rnd.batches if rnd.sources or rnd.counts else []), batch]
    counts = {
        "retrieved": sum(b["identified"] for b in batches),
        "outside_window": sum(b["outside_window"] for b in batches),
        "duplicates_removed": sum(b["duplicates_removed"] for b in batches),
        "to_screen": to_screen,
    }
    return replace(rnd, counts=counts, sources=batches)


def check_source(source: str, base: Path) -> None:
    """A batch's source name: ``kind`` or ``kind:which`` (the kind an exclusion_source id)."""
    if not re.match(SOURCE_NAME, source):
        raise ScreeningError(
            f"--source: unknown value {source[:80]!r}; expected an exclusion_source id, "
            "optionally followed by ':' and which one (e.g. github:owner/list, "
            "openreview:ICLR.cc/2026, snowball:2605.02801)"
        )
    kind = source_kind(source)
    check_choice(load_taxonomy(base), "exclusion_source", kind, "--source", ScreeningError)


def check_strategy(strategy: str) -> None:
    """A strategy label: letters, digits, ``-`` or ``_`` (or none)."""
    if strategy and not re.match(STRATEGY, strategy):
        raise ScreeningError(
            f"--strategy {strategy[:60]!r}: expected up to 40 letters, digits, - or _"
        )


def _reach(since: dt.date, until: dt.date, reached: dt.date | None) -> dict[str, dt.date]:
    if reached is None or reached == until:
        return {}
    if problem := reach_problem(since, until, reached):
        raise ScreeningError(f"--reached {problem}")
    return {"reached": reached}


def _batch(name: str, query: str, file: str, today: dt.date, entries: int) -> dict[str, Any]:
    return {"name": name, "query": query, "file": file, "imported_on": today, "identified": entries}


def _check_round_file(rid: str, text: str) -> None:
    """The round file about to be written, held to the rules ``validate`` applies to it
    (:class:`RoundFile`: one strategy per source, counts that add up, reaches inside the
    window), so a batch that would break one is refused before anything is written."""
    rel = f"{SCREENING_DIR}/{rid}/{ROUND_FILE}"
    _, problems = validate_bytes(RoundFile, text.encode("utf-8"), rel, {"folder": rid}, top="round")
    if problems:
        raise ScreeningError(f"{problems[0]}; nothing written")


def _add_batch(
    base: Path,
    rnd: Round,
    batch: dict[str, Any],
    entries: list[Entry],
    known: Known,
    protocol: Protocol,
    records: RecordSet,
    old: list[Entry] | None = None,
) -> RunResult:
    """Screen one batch's entries into ``rnd`` and write the round folder (``records``: the
    root's, read once for the duplicates and the ranking; ``old``: the candidates of its
    earlier batches, when the folder exists)."""
    candidates, duplicates, outside = _screen_batch(
        entries, known, rnd.since, rnd.until, protocol.title_similarity
    )
    merged = ranked((old or []) + candidates, records, protocol.family_weight)
    batch |= {"duplicates_removed": len(duplicates), "outside_window": outside}
    rnd = _with_batch(rnd, batch, len(merged))
    folder = round_dir(base, rnd.id)
    kept = old_duplicate_rows(base, rnd.id) if old is not None else []
    listed = read_duplicates(base, rnd.id) if old is not None else []
    axis = load_taxonomy(base)["exclusion_source"]
    labels = {v: axis.label_of(v) for v in axis.ids}
    rnd, files = round_files(rnd, merged, duplicates, labels, kept, listed)
    _check_round_file(rnd.id, files[ROUND_FILE])
    write_round_folder(folder, files, replace=old is not None)
    return RunResult(rnd, folder, merged, duplicates)


# ---------------------------------------------------------------- screen run


def _arxiv_entries(
    protocol: Protocol, since: dt.date, until: dt.date, paging: Paging, endpoint: str | None
) -> tuple[list[Entry], dict[str, int], list[str]]:
    """Unique entries by arXiv id (families merged), the number each family returned,
    and the families whose results reached ``paging.max_per_family``."""
    found: dict[str, Entry] = {}
    per_family: dict[str, int] = {}
    capped: list[str] = []
    for n, family in enumerate(protocol.families):
        if n:
            time.sleep(paging.delay_seconds)
        papers, full = search_family(family, since, until, paging, endpoint)
        per_family[family.id] = len({p.arxiv_id for p in papers})
        if full:
            capped.append(family.id)
        for paper in papers:
            kept = found.setdefault(paper.arxiv_id, Entry.from_paper(paper))
            if family.id not in kept.families:
                kept.families.append(family.id)
    return [found[k] for k in sorted(found)], per_family, capped


def run_round(
    since: dt.date,
    until: dt.date | None = None,
    root: str | os.PathLike[str] | None = None,
    paging: Paging | None = None,
    endpoint: str | None = None,
    today: dt.date | None = None,
    strategy: str = "",
) -> RunResult:
    """Search arXiv, deduplicate, rank and write one round; nothing is written on failure."""
    base = find_root(root)
    check_strategy(strategy)
    today = today or dt.date.today()
    until = until or today
    check_window(since, until, today, EARLIEST)
    protocol = load_protocol(base)
    rid = round_id(since, until)
    folder = _round_folder(base, rid)
    exists = ScreeningError(f"round {rid} already exists in {SCREENING_DIR}/{rid}")
    if folder.exists():
        raise exists
    entries, per_family, capped = _arxiv_entries(
        protocol, since, until, paging or Paging(), endpoint
    )
    families = [f.id for f in protocol.families]
    query = "\n".join(family_query(f, since, until) for f in protocol.families)
    rnd = Round(rid, since, until, today, families, {}, per_family=per_family, capped=capped)
    with round_lock(base, rid):
        if folder.exists():
            raise exists
        records = read_records(base)
        known = known_records(base, load_rounds(base), records)
        batch = _batch("arxiv", query, "", today, len(entries))
        batch |= {"strategy": strategy} if strategy else {}
        return _add_batch(base, rnd, batch, entries, known, protocol, records)


# ---------------------------------------------------------------- screen import


def import_round(
    path: str | os.PathLike[str],
    source: str,
    since: dt.date,
    until: dt.date,
    query: str = "",
    root: str | os.PathLike[str] | None = None,
    today: dt.date | None = None,
    empty_ok: bool = False,
    reached: dt.date | None = None,
    strategy: str = "",
    in_progress: bool = False,
) -> RunResult:
    """Add a batch read from an exported list to the window's round (made if new); a
    candidate matching no query family takes the first one ``query`` matches. ``reached``:
    the last day the source's list reached, when it stops short of ``until``;
    ``in_progress``: the window has not ended (round.yaml says so until a batch is added
    after its end)."""
    base = find_root(root)
    today = today or dt.date.today()
    check_window(since, until, today, EARLIEST_IMPORT, in_progress)
    check_source(source, base)
    check_strategy(strategy)
    query = clean_text(query, MAX_QUERY)
    protocol = load_protocol(base)
    path = Path(path)
    notes: list[str] = []
    entries = read_candidates(path, source, today, empty_ok, notes)
    name = shown_name(path.name)  # stored in round.yaml and printed: no control character
    searched = query_families(query, protocol.families)[:1]
    for entry in entries:
        found = query_families(f"{entry.title} {entry.abstract}", protocol.families)
        entry.families = found or list(searched)
    rid = round_id(since, until)
    folder = _round_folder(base, rid)
    batch = _batch(source, query, name, today, len(entries))
    batch |= _reach(since, until, reached) | ({"strategy": strategy} if strategy else {})
    with round_lock(base, rid):
        existing = folder.exists()
        rnd = load_round(base, rid) if existing else Round(rid, since, until, today, [], {})
        rnd = replace(rnd, in_progress=in_progress)
        if existing and any((b["name"], b["file"]) == (source, name) for b in rnd.batches):
            raise ScreeningError(
                f"round {rid} already has a batch from {name} (source {source}); nothing written"
            )
        records = read_records(base)
        known = known_records(base, [r for r in load_rounds(base) if r.id != rid], records)
        old = None
        if existing:
            old = list(read_entries(base, rid).values())
            check_round_csv(base, rid)
            add_round(known, base, rid)
        result = _add_batch(base, rnd, batch, entries, known, protocol, records, old)
    return replace(result, warnings=notes)

"""Screening rounds: what ``screening/<round-id>/round.yaml`` says about each round.

A round is a window of first-publication dates holding one or more source
batches: ``masrl-kb screen run`` writes the arXiv batch, ``screen import``
adds a batch from a list exported elsewhere, and ``screen decide`` adds the
decisions (:mod:`masrl_kb.contrib.screening`); the site and the query layer
read them here, so they need nothing from ``contrib``.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from masrl_kb.kb.fields import ARXIV_ID_PATTERN
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.validate import Problem
from masrl_kb.kb.yamlio import load_yaml_file

SCREENING_DIR = "screening"
ROUND_FILE = "round.yaml"
ROUND_ID = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}_[0-9]{4}-[0-9]{2}-[0-9]{2}$")
COUNTS = ("retrieved", "outside_window", "duplicates_removed", "to_screen")
DECISIONS = ("include", "exclude")
# One source batch of a round: where its candidates came from and what became of them.
BATCH_TEXT = ("name", "query", "file")
BATCH_COUNTS = ("identified", "duplicates_removed", "outside_window")
SOURCE_COUNTS = (*BATCH_COUNTS, "screened", "included", "excluded", "awaiting")
MAX_COUNT = 1_000_000  # no real round comes near; a bigger number is a typo or tampering


class RoundError(ValueError):
    """A round folder or its ``round.yaml`` is missing or malformed."""


@dataclass
class Round:
    """One screening round as recorded in its ``round.yaml``."""

    id: str
    since: dt.date
    until: dt.date
    run_on: dt.date
    families: list[str]
    counts: dict[str, int]
    duplicates: list[dict] = field(default_factory=list)
    per_family: dict[str, int] = field(default_factory=dict)  # entries each query returned
    capped: list[str] = field(default_factory=list)  # families that hit the result limit
    # candidate id -> {"decision": include|exclude, "reason": code|None, "record": path}
    decided: dict[str, dict] = field(default_factory=dict)
    # source batches as recorded: {name, query, file, imported_on, identified,
    # duplicates_removed, outside_window}; empty in rounds written before batches existed
    sources: list[dict] = field(default_factory=list)

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
    def included(self) -> int:
        return sum(1 for d in self.decided.values() if d["decision"] == "include")

    @property
    def excluded(self) -> int:
        return sum(1 for d in self.decided.values() if d["decision"] == "exclude")

    @property
    def awaiting(self) -> int:
        return self.counts["to_screen"] - self.included - self.excluded

    def decided_source(self, decided: dict) -> str:
        """The source batch a decided candidate came from (older rounds: their one source)."""
        if "source" in decided:
            return decided["source"]
        names = {b["name"] for b in self.batches}
        return names.pop() if len(names) == 1 else "unknown"

    def by_source(self) -> dict[str, dict[str, int]]:
        """Per source: identified, duplicates removed, outside the window, screened,
        included, excluded and awaiting (screened = the batches' new candidates)."""
        out: dict[str, dict[str, int]] = {}
        for b in self.batches:
            row = out.setdefault(b["name"], dict.fromkeys(SOURCE_COUNTS, 0))
            for k in BATCH_COUNTS:
                row[k] += b[k]
            row["screened"] += b["identified"] - b["duplicates_removed"] - b["outside_window"]
        for d in self.decided.values():
            row = out.setdefault(self.decided_source(d), dict.fromkeys(SOURCE_COUNTS, 0))
            row["included" if d["decision"] == "include" else "excluded"] += 1
        for row in out.values():
            row["awaiting"] = row["screened"] - row["included"] - row["excluded"]
        return out

    def reasons(self) -> dict[str, int]:
        """Exclusions per reason code."""
        out: dict[str, int] = {}
        for d in self.decided.values():
            if d["decision"] == "exclude":
                out[d["reason"]] = out.get(d["reason"], 0) + 1
        return dict(sorted(out.items()))


def round_id(since: dt.date, until: dt.date) -> str:
    """The id of the round covering ``since``..``until`` (both inclusive)."""
    return f"{since.isoformat()}_{until.isoformat()}"


def _problem(rel: str, line: int, name: str, message: str) -> RoundError:
    return RoundError(str(Problem(rel, line, name, message)))


RECORD_PATH = re.compile(r"^(?:papers|exclusions)/[A-Za-z0-9][A-Za-z0-9_-]*\.yaml$")
ARXIV_ID = re.compile(ARXIV_ID_PATTERN)
# A screening candidate's id: a bare arXiv id (as rounds always had), a DOI, an
# OpenReview forum id, or a hash of the normalised title when the source gives none.
DOI_PATTERN = r"10\.[0-9]{4,9}/[\x21-\x7e]{1,200}"
OPENREVIEW_PATTERN = r"[A-Za-z0-9_-]{4,40}"
CANDIDATE_ID = re.compile(
    rf"^(?:{ARXIV_ID_PATTERN[1:-1]}|doi:{DOI_PATTERN}|openreview:{OPENREVIEW_PATTERN}"
    r"|title:[0-9a-f]{16})$"
)


SOURCE_ID = re.compile(r"^[a-z][a-z0-9_]{0,60}$")


def is_candidate_id(value: object) -> bool:
    return isinstance(value, str) and bool(CANDIDATE_ID.match(value))


def _decided_ok(key: object, value: object) -> bool:
    if not (is_candidate_id(key) and isinstance(value, dict)):
        return False
    reason, source = value.get("reason"), value.get("source", "arxiv")
    return (
        value.get("decision") in DECISIONS
        and isinstance(source, str)
        and bool(SOURCE_ID.match(source))
        and (reason is None or isinstance(reason, str))
        and isinstance(value.get("record"), str)
        and bool(RECORD_PATH.match(value["record"]))
    )


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _count_ok(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT


def _check_counts(data: dict, keys, rel: str, name: str, line: int) -> None:
    """Each count a whole number in 0..MAX_COUNT; the first that is not names its field."""
    for key in keys:
        value = data[key]
        if not _count_ok(value):
            shown = value if isinstance(value, int) and abs(value) < 10**12 else "a huge number"
            at = getattr(data, "line_of", lambda _: line)(key) or line
            raise _problem(rel, at, f"{name}.{key}", f"{shown} is outside 0..{MAX_COUNT}")


def _batch_ok(batch: object) -> bool:
    return (
        isinstance(batch, dict)
        and set(batch) == {*BATCH_TEXT, "imported_on", *BATCH_COUNTS}
        and all(isinstance(batch[k], str) and len(batch[k]) <= 20_000 for k in BATCH_TEXT)
        and bool(SOURCE_ID.match(batch["name"]))
        and isinstance(batch["imported_on"], dt.date)
        and all(_count_ok(batch[k]) for k in BATCH_COUNTS)
    )


def _sources(data: dict, rel: str, line) -> list[dict]:
    sources = data.get("sources") or []
    if not isinstance(sources, list) or not all(_batch_ok(b) for b in sources):
        raise _problem(
            rel,
            line("sources"),
            "sources",
            "expected a list of {name, query, file, imported_on, identified, "
            "duplicates_removed, outside_window}",
        )
    return [dict(b) for b in sources]


def parse_round(data: object, rel: str, folder: str | None = None) -> Round:
    """A :class:`Round` from loaded YAML; errors name the file, line and field.

    ``round.yaml`` arrives in pull requests: every value the site shows is checked
    (the id must be the folder's name, records must be paths under papers/ or
    exclusions/).
    """
    if not isinstance(data, dict):
        raise _problem(rel, 1, "round", "expected a mapping")
    for name in ("round", "window", "run_on", "families", "counts"):
        if name not in data:
            raise _problem(rel, 1, name, "missing required field")
    window, counts = data["window"], data["counts"]
    line = getattr(data, "line_of", lambda _: 1)
    rid = data["round"]
    if not isinstance(rid, str) or not ROUND_ID.match(rid) or (folder and rid != folder):
        raise _problem(
            rel, line("round"), "round", "expected the folder's name, YYYY-MM-DD_YYYY-MM-DD"
        )
    if not isinstance(window, dict) or not all(
        isinstance(window.get(k), dt.date) for k in ("since", "until")
    ):
        raise _problem(rel, line("window"), "window", "expected since: and until: dates")
    if not isinstance(data["run_on"], dt.date):
        raise _problem(rel, line("run_on"), "run_on", "expected a date YYYY-MM-DD")
    if not _strings(data["families"]) or not _strings(data.get("capped") or []):
        raise _problem(rel, line("families"), "families", "expected a list of family ids")
    if not isinstance(counts, dict) or not all(isinstance(counts.get(k), int) for k in COUNTS):
        raise _problem(
            rel,
            line("counts"),
            "counts",
            f"expected counts {', '.join(COUNTS)}, each from 0 to {MAX_COUNT}",
        )
    _check_counts(counts, COUNTS, rel, "counts", line("counts"))
    per_family = data.get("retrieved_per_family") or {}
    if not isinstance(per_family, dict) or not all(isinstance(v, int) for v in per_family.values()):
        raise _problem(
            rel, line("retrieved_per_family"), "retrieved_per_family", "expected family: count"
        )
    _check_counts(per_family, per_family, rel, "retrieved_per_family", line("retrieved_per_family"))
    duplicates = data.get("duplicates") or []
    if not isinstance(duplicates, list) or not all(
        isinstance(d, dict) and all(isinstance(v, str) for v in d.values()) for d in duplicates
    ):
        raise _problem(rel, line("duplicates"), "duplicates", "expected {id, duplicate_of, match}")
    decided = data.get("decided") or {}
    if not isinstance(decided, dict) or not all(_decided_ok(k, v) for k, v in decided.items()):
        raise _problem(
            rel,
            line("decided"),
            "decided",
            "expected candidate id (arXiv id, doi:..., openreview:... or title:...): "
            "{decision: include|exclude, reason, record: papers/... or exclusions/...}",
        )
    return Round(
        id=rid,
        since=window["since"],
        until=window["until"],
        run_on=data["run_on"],
        families=list(data["families"]),
        counts={k: int(counts[k]) for k in COUNTS},
        duplicates=[dict(d) for d in duplicates],
        per_family={str(k): int(v) for k, v in per_family.items()},
        capped=list(data.get("capped") or []),
        decided={str(k): dict(v) for k, v in decided.items()},
        sources=_sources(data, rel, line),
    )


def _refuse_link(path: Path, rel: str) -> None:
    """Screening files are written in place: a symbolic link would send writes elsewhere."""
    if path.is_symlink():
        raise _problem(rel, 1, "file", "a symbolic link; refused (screening files are real files)")


def screening_root(root: str | os.PathLike[str] | None) -> Path:
    """``screening/`` of the data root; a symbolic link there is refused."""
    base = find_root(root) / SCREENING_DIR
    _refuse_link(base, f"{SCREENING_DIR}/")
    if base.exists() and not base.is_dir():
        raise _problem(f"{SCREENING_DIR}/", 1, "file", "not a folder")
    return base


def round_dir(root: str | os.PathLike[str] | None, rid: str) -> Path:
    """The folder of round ``rid`` (the id is checked: it becomes a path; links refused)."""
    if not ROUND_ID.match(rid):
        raise RoundError(f"malformed round id {rid!r}: expected YYYY-MM-DD_YYYY-MM-DD")
    folder = screening_root(root) / rid
    _refuse_link(folder, f"{SCREENING_DIR}/{rid}/")
    return folder


def load_round(root: str | os.PathLike[str] | None, rid: str) -> Round:
    """Read one round; :class:`RoundError` when it is missing or malformed."""
    folder = round_dir(root, rid)
    path = folder / ROUND_FILE
    rel = f"{SCREENING_DIR}/{rid}/{ROUND_FILE}"
    _refuse_link(path, rel)
    if not path.is_file():
        known = ", ".join(r.id for r in load_rounds(root)) or "none"
        raise RoundError(f"no screening round {rid!r} (rounds: {known})")
    loaded = load_yaml_file(path)
    if loaded.problems:
        p = loaded.problems[0]
        raise _problem(rel, p.line, p.field, p.message)
    return parse_round(loaded.data, rel, folder=rid)


def load_rounds(root: str | os.PathLike[str] | None = None) -> list[Round]:
    """Every round under ``screening/``, oldest window first."""
    base = screening_root(root)
    if not base.is_dir():
        return []
    rounds = []
    for folder in sorted(base.iterdir()):
        if ROUND_ID.match(folder.name) and (
            folder.is_symlink() or os.path.lexists(folder / ROUND_FILE)
        ):
            rounds.append(load_round(root, folder.name))
    return sorted(rounds, key=lambda r: (r.until, r.since))

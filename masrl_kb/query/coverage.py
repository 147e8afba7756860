"""How far the screening rounds reached, and how much they are likely to have missed.

Both are computed from the round files, never typed in:

- a batch *reaches* the last first-publication day its source's list covered (``reached``
  in ``round.yaml``, the window's end when not given; the day before the window when it
  covered none of it); a round reaches the earliest day that every source reached, the
  batches of one search strategy counting as one source (:func:`round_reach`);
- the pool *covers* papers up to the last day of an unbroken run of rounds from the
  survey's cut-off on: a round that stops short of its window's end, or a window that
  does not start the day after the last one, ends the run;
- a round searched by two independent strategies (``strategy`` on its batches) gets a
  Lincoln-Petersen estimate (Chapman's form) of the in-scope papers there are: ``n1``
  found by the first, ``n2`` by the second, ``m`` by both; in scope means included,
  whether this round included it or it duplicates a paper record of this window (one no
  other round included, or, for the survey's own papers, a window before its cut-off).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from masrl_kb.kb.paths import find_root
from masrl_kb.kb.protocol import protocol_baseline
from masrl_kb.kb.rounds import Round, load_rounds, round_duplicates
from masrl_kb.query.pool import PathLike

_IN_ROUND = re.compile(r"^screening/(?P<rid>[^/]+)/[^ ]+ \((?P<cid>[^)]+)\)$")
_PAPER = re.compile(r"^papers/[^/]+\.yaml$")
REACH_COLUMNS = ["round", "source", "strategy", "since", "until", "reached", "identified"]
RECALL_COLUMNS = [
    "round",
    "strategy_1",
    "strategy_2",
    "found_1",
    "found_2",
    "found_both",
    "found_either",
    "estimate",
    "missed",
    "awaiting",
]


def batch_reach(rnd: Round, batch: dict) -> dt.date:
    """The last day a batch's source reached (its window's end unless it says otherwise)."""
    reached = batch.get("reached")
    return reached if isinstance(reached, dt.date) else rnd.until


def round_reach(rnd: Round) -> dt.date:
    """The last day every source of the round reached: a strategy's batches together
    reach the latest day any of them reached (two digests of one strategy, one read to the
    6th and one to the 31st, reach the 31st), a batch naming no strategy is a source of
    its own, and the round reaches the earliest of these (for a round in progress, no
    later than its latest batch's day)."""
    groups: dict[str, dt.date] = {}
    for i, batch in enumerate(rnd.batches):
        group = str(batch.get("strategy") or f"batch {i}")
        groups[group] = max(groups.get(group, dt.date.min), batch_reach(rnd, batch))
    return min([rnd.covered, *groups.values()])


def covered_until(rounds: Iterable[Round], start: dt.date, decided: bool = False) -> dt.date:
    """The last day of the unbroken run of rounds from ``start`` (the cut-off) on that
    every source searched reached; with ``decided``, a round with candidates still
    awaiting a decision also ends the run, the day before its window (what it found is
    not yet in the pool or the exclusion log, so the pool cannot be said to cover it)."""
    covered = start
    for rnd in sorted(rounds, key=lambda r: (r.since, r.until)):
        if rnd.until <= covered:
            continue  # before the run (the catch-up of earlier papers) or inside it
        if rnd.since > covered + dt.timedelta(days=1):
            break  # a window no round searched
        if decided and rnd.awaiting > 0:
            return max(covered, rnd.since - dt.timedelta(days=1))
        reach = round_reach(rnd)
        covered = max(covered, reach)
        if reach < rnd.until:
            break  # the round's sources stopped short: nothing after is covered
    return covered


def batch_reaches(root: PathLike = None) -> pd.DataFrame:
    """One row per batch of every round: its source, strategy, window and reach."""
    rows = [
        {
            "round": rnd.id,
            "source": b["name"],
            "strategy": b.get("strategy"),
            "since": rnd.since,
            "until": rnd.until,
            "reached": batch_reach(rnd, b),
            "identified": b["identified"],
        }
        for rnd in load_rounds(find_root(root))
        for b in rnd.batches
    ]
    return pd.DataFrame(rows, columns=REACH_COLUMNS)


def _strategies(rnd: Round) -> dict[str, str]:
    """Batch source name -> its strategy, for batches that name one."""
    out: dict[str, str] = {}
    for b in rnd.batches:
        if b.get("strategy"):
            out.setdefault(b["name"], b["strategy"])
    return out


def _paper_of(label: str, rounds: dict[str, Round]) -> str | None:
    """The paper record a candidate or duplicate stands for, or None (excluded, awaiting)."""
    if _PAPER.match(label):
        return label
    found = _IN_ROUND.match(label)
    if found and (rnd := rounds.get(found["rid"])):
        d = rnd.decided.get(found["cid"])
        if d and d["decision"] == "include":
            return str(d["record"])
    return None


@dataclass(frozen=True)
class Captures:
    """The in-scope papers each strategy of a round found."""

    found: dict[str, set[str]]
    awaiting: int


def captures(
    rnd: Round,
    rounds: dict[str, Round],
    duplicates: list[dict[str, str]],
    baseline: dt.date | None = None,
    homes: dict[str, str] | None = None,
) -> Captures:
    """Which in-scope papers each strategy of ``rnd`` found: its decided candidates and
    the ``duplicates`` its batches removed (its ``duplicates.csv``) that stand for a paper
    of this round's window (:func:`_of_window`). ``homes`` is :func:`_home_rounds` of
    ``rounds``, passed in by a caller that asks for every round."""
    strategy_of = _strategies(rnd)
    homes = _home_rounds(rounds) if homes is None else homes
    found: dict[str, set[str]] = {s: set() for s in strategy_of.values()}
    for d in rnd.decided.values():
        strategy = strategy_of.get(str(d.get("source", "")))
        if strategy and d["decision"] == "include":
            found[strategy].add(str(d["record"]))
    for dup in duplicates:
        strategy = strategy_of.get(str(dup.get("source", "")))
        paper = _paper_of(str(dup.get("duplicate_of", "")), rounds) if strategy else None
        if strategy and paper and _of_window(paper, rnd, homes, baseline):
            found[strategy].add(paper)
    return Captures(found, rnd.awaiting)


def _home_rounds(rounds: dict[str, Round]) -> dict[str, str]:
    """Paper record -> the round that included it."""
    return {
        str(d["record"]): rid
        for rid, rnd in rounds.items()
        for d in rnd.decided.values()
        if d["decision"] == "include"
    }


def _of_window(paper: str, rnd: Round, homes: dict[str, str], baseline: dt.date | None) -> bool:
    """Whether a duplicate's paper belongs to ``rnd``'s population. A look-alike title can
    match a paper of another window (a new arXiv id for an old work), and counting it
    would credit this window's strategies with a paper its estimate is not about: a paper
    belongs to the round that included it, and one no round included (the survey's pool,
    all posted before the cut-off) to rounds that start before the ``baseline``."""
    home = homes.get(paper)
    if home is not None:
        return home == rnd.id
    return baseline is None or rnd.since < baseline


def lincoln_petersen(n1: int, n2: int, both: int) -> float:
    """Chapman's estimate of a population two independent samples of it saw."""
    return (n1 + 1) * (n2 + 1) / (both + 1) - 1


def recall_estimates(root: PathLike = None) -> pd.DataFrame:
    """One row per round searched by two strategies: what each found, and the estimate of
    how many in-scope papers the window holds and how many neither found."""
    base = find_root(root)
    return recall_table(base, load_rounds(base))


def recall_table(base: Path, rounds: list[Round]) -> pd.DataFrame:
    """:func:`recall_estimates` of the rounds of ``base`` already loaded (a site build
    loads them once)."""
    rows = []
    by_id = {r.id: r for r in rounds}
    baseline, homes = protocol_baseline(base), _home_rounds(by_id)
    for rnd in by_id.values():
        got = captures(rnd, by_id, round_duplicates(base, rnd.id), baseline, homes)
        if len(got.found) < 2:
            continue
        (s1, a), (s2, b) = sorted(got.found.items())[:2]
        n1, n2, m = len(a), len(b), len(a & b)
        # a strategy that found nothing in scope says nothing of what the other missed
        estimate = lincoln_petersen(n1, n2, m) if n1 and n2 else math.nan
        row = dict(zip(RECALL_COLUMNS, [rnd.id, s1, s2, n1, n2, m, len(a | b)], strict=False))
        rows.append(
            row
            | {
                "estimate": round(estimate, 1),
                "missed": round(max(0.0, estimate - len(a | b)), 1) if n1 and n2 else math.nan,
                "awaiting": got.awaiting,
            }
        )
    return pd.DataFrame(rows, columns=RECALL_COLUMNS)

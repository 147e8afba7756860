"""``masrl-kb screen rank``: order a round's candidates by what was decided before.

A classifier (TF-IDF over the title, logistic regression, both scikit-learn) is trained on
the pool (every paper record: included) and the exclusion log (every exclusion: excluded),
the way ASReview ranks with the labels it has. Only titles are used, on both sides: the
records hold summaries and notes in the curators' own words, which name the decision
("no RL of its own") and would let the model learn the wording rather than the topic, and
the title is the one text every candidate and every record carries as published.

``simulate()`` replays the existing decisions: every label hidden but one included and one
excluded record (the prior knowledge ASReview starts from), the model ranks the rest, the
best-ranked record is revealed, the model retrains, until all are revealed. It reports the
share of the included records found after 10, 25 and 50% were screened, and the work saved
over random order at 95% recall (WSS@95), averaged over seeds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from masrl_kb.contrib.screen.entries import CANDIDATES_CSV, read_entries
from masrl_kb.contrib.screen.round_files import candidates_csv, old_duplicate_rows
from masrl_kb.contrib.screen.store import ScreeningError, replace_file, round_lock
from masrl_kb.kb.fields import PLACEHOLDER
from masrl_kb.kb.records import read_records
from masrl_kb.kb.rounds import load_round, round_dir

if TYPE_CHECKING:
    from collections.abc import Sequence

    from masrl_kb.contrib.screen.entries import Entry

SCREENED_SHARES = (0.10, 0.25, 0.50)
MIN_PER_CLASS = 2  # a classifier needs both labels; fewer gives no ranking worth the name


@dataclass(frozen=True)
class Labelled:
    """Titles with their past decision (1 included, 0 excluded), records in file order."""

    titles: list[str]
    labels: list[int]


@dataclass(frozen=True)
class Simulation:
    """What replaying the decisions in the model's order found, averaged over ``runs``."""

    records: int
    included: int
    runs: int
    recall_at: dict[float, float]  # share screened -> share of included found
    wss95: float


def past_decisions(root: Path) -> Labelled:
    """Every paper record's title (1) and every exclusion's title (0)."""
    found = read_records(root)
    titles: list[str] = []
    labels: list[int] = []
    for label, records in ((1, found.papers), (0, found.exclusions)):
        for rec in records:
            data = rec.data if isinstance(rec.data, dict) else {}
            title = data.get("title")
            if isinstance(title, str) and title.strip() and title != PLACEHOLDER:
                titles.append(title)
                labels.append(label)
    return Labelled(titles, labels)


def _check_classes(labels: Sequence[int]) -> None:
    ones = sum(labels)
    if min(ones, len(labels) - ones) < MIN_PER_CLASS:
        raise ScreeningError(
            f"ranking needs at least {MIN_PER_CLASS} included and {MIN_PER_CLASS} excluded "
            f"records to learn from; the pool has {ones} and {len(labels) - ones}"
        )


def relevance(train: Labelled, titles: Sequence[str]) -> list[float]:
    """The model's probability that each title would be included, fit on ``train``."""
    _check_classes(train.labels)
    return _fit_once(train, list(titles)) if titles else []


def rank_round(rid: str, root: Path) -> list[Entry]:
    """Score a round's candidates by :func:`relevance`, best first, and rewrite its
    ``candidates.csv`` in that order (the ``score`` column then holds the probability)."""
    with round_lock(root, rid):
        load_round(root, rid)  # a malformed or missing round is refused before any work
        entries = list(read_entries(root, rid).values())
        if not entries:
            raise ScreeningError(f"round {rid} has no candidates to rank")
        scores = relevance(past_decisions(root), [e.title for e in entries])
        for entry, score in zip(entries, scores, strict=True):
            entry.score = round(score, 4)
        ranked = sorted(entries, key=lambda e: (-(e.score or 0.0), e.id))
        folder = round_dir(root, rid)
        kept = old_duplicate_rows(root, rid)
        replace_file(folder / CANDIDATES_CSV, candidates_csv(ranked, kept))
    return ranked


def _order(data: Labelled, rng: random.Random) -> list[int]:
    """The order one simulated reviewer reveals the records in (indices into ``data``)."""
    ones = [i for i, y in enumerate(data.labels) if y == 1]
    zeros = [i for i, y in enumerate(data.labels) if y == 0]
    seen = [rng.choice(ones), rng.choice(zeros)]
    rest = [i for i in range(len(data.labels)) if i not in seen]
    while rest:  # ``seen`` holds both labels from the start, so every fit has two classes
        train = Labelled([data.titles[i] for i in seen], [data.labels[i] for i in seen])
        scores = _fit_once(train, [data.titles[i] for i in rest])
        best = rest[max(range(len(rest)), key=lambda j: (scores[j], -rest[j]))]
        seen.append(best)
        rest.remove(best)
    return seen


def _fit_once(train: Labelled, titles: list[str]) -> list[float]:
    """Fit the model on ``train`` and score ``titles`` (no class-size floor: the replay
    starts from one record of each label)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True, ngram_range=(1, 2))
    # balanced: the log and the pool differ in size, and the rarer label must still count
    model = LogisticRegression(class_weight="balanced", max_iter=1000)
    model.fit(vectorizer.fit_transform(train.titles), train.labels)
    return [float(p) for p in model.predict_proba(vectorizer.transform(titles))[:, 1]]


def _recall_curve(order: list[int], labels: list[int]) -> list[float]:
    """Share of included records found after each record revealed."""
    total, found, curve = sum(labels), 0, []
    for i in order:
        found += labels[i]
        curve.append(found / total)
    return curve


def simulate(data: Labelled, runs: int = 5, seed: int = 0) -> Simulation:
    """Replay ``data``'s decisions ``runs`` times (seeds ``seed``...) in the model's order."""
    _check_classes(data.labels)
    n = len(data.labels)
    recall_at = dict.fromkeys(SCREENED_SHARES, 0.0)
    wss = 0.0
    for run in range(runs):
        curve = _recall_curve(_order(data, random.Random(seed + run)), data.labels)
        for share in SCREENED_SHARES:
            recall_at[share] += curve[max(0, round(share * n) - 1)] / runs
        needed = next(i + 1 for i, r in enumerate(curve) if r >= 0.95)
        wss += ((n - needed) / n - 0.05) / runs
    return Simulation(n, sum(data.labels), runs, recall_at, wss)


def simulation_lines(sim: Simulation) -> list[str]:
    """The simulation as the command prints it."""
    lines = [
        f"replayed {sim.records} past decisions ({sim.included} included), "
        f"{sim.runs} run(s), titles only"
    ]
    for share, recall in sim.recall_at.items():
        lines.append(f"recall after {share:.0%} screened: {recall:.1%}")
    lines.append(f"WSS@95 (work saved over random order at 95% recall): {sim.wss95:.1%}")
    return lines

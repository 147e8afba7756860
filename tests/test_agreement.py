"""Agreement between readers, checked against figures worked out by hand in the test."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest
import yaml

from masrl_kb.kb.readings import READING_AXES, ReadingsError, load_readers
from masrl_kb.kb.taxonomy import load_taxonomy
from masrl_kb.query.agreement import agreement, disagreements, paper_readings
from masrl_kb.query.frames import load_papers
from tests.conftest import REPO, run_cli

FIRST, SECOND = "survey-2026-05-03", "spotcheck-2026-05-03"


def _codes(reader: str) -> dict[str, dict]:
    data = yaml.safe_load((REPO / "readings" / f"{reader}.yaml").read_text(encoding="utf-8"))
    return {r["key"]: r for r in data["readings"]}


def _by_hand(x: list[str], y: list[str]) -> tuple[float, float, float]:
    """Percent agreement, Cohen's kappa and Krippendorff's alpha (nominal, no gaps)."""
    n = len(x)
    p_o = sum(a == b for a, b in zip(x, y, strict=True)) / n
    fx, fy = Counter(x), Counter(y)
    p_e = sum(fx[c] * fy[c] for c in set(x) | set(y)) / n**2
    kappa = (p_o - p_e) / (1 - p_e) if p_e < 1 else math.nan
    # Krippendorff: every unit adds the ordered pairs (a, b) and (b, a) to the coincidences.
    pairs = 2 * n
    totals = Counter(x) + Counter(y)
    observed = sum(2 for a, b in zip(x, y, strict=True) if a != b) / pairs
    expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k) / (
        pairs * (pairs - 1)
    )
    alpha = 1 - observed / expected if expected else math.nan
    return p_o, kappa, alpha


@pytest.fixture(scope="module")
def table():
    return agreement(load_papers())


def _coded_by_both() -> list[str]:
    """The axes both spot-check readers coded (the survey's released tags)."""
    first, second = _codes(FIRST), _codes(SECOND)
    coded = {a for r in first.values() for a in r} & {a for r in second.values() for a in r}
    return [a for a in READING_AXES if a in coded and a != "credit_strict"]


@pytest.mark.parametrize("axis", _coded_by_both())
def test_spotcheck_figures_match_a_hand_computation(table, axis: str) -> None:
    first, second = _codes(FIRST), _codes(SECOND)
    keys = sorted(set(first) & set(second))
    x = [str(first[k][axis]) for k in keys]
    y = [str(second[k][axis]) for k in keys]
    p_o, kappa, alpha = _by_hand(x, y)
    row = table[(table["readers"] == f"{SECOND} / {FIRST}") & (table["axis"] == axis)]
    assert len(row) == 1
    row = row.iloc[0]
    assert row["n"] == len(keys)
    assert row["agreement"] == pytest.approx(p_o)
    assert row["kappa"] == pytest.approx(kappa, nan_ok=True)
    assert row["alpha"] == pytest.approx(alpha, nan_ok=True)


def test_strict_credit_is_compared_with_the_records(table) -> None:
    second = _codes(SECOND)
    papers = load_papers()
    x = [str(bool(papers.at[k, "credit_strict"])) for k in sorted(second)]
    y = [str(second[k]["credit_strict"]) for k in sorted(second)]
    p_o, kappa, _ = _by_hand(x, y)
    row = table[(table["readers"] == f"kb / {SECOND}") & (table["axis"] == "credit_strict")]
    assert row.iloc[0]["agreement"] == pytest.approx(p_o)
    assert row.iloc[0]["kappa"] == pytest.approx(kappa, nan_ok=True)


def test_every_disagreement_is_listed() -> None:
    first, second = _codes(FIRST), _codes(SECOND)
    expected = sorted(
        (axis, k)
        for k in set(first) & set(second)
        for axis in READING_AXES
        if axis in first[k] and axis in second[k] and first[k][axis] != second[k][axis]
    )
    differ = disagreements(load_papers())
    pair = differ[differ["readers"] == f"{SECOND} / {FIRST}"]
    assert sorted(zip(pair["axis"], pair["key"], strict=True)) == expected


def test_cli_json_has_the_documented_keys(capsys) -> None:
    assert run_cli("agreement", "--json") == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows, "the spot-check gives at least one pair"
    for row in rows:
        assert {"readers", "axis", "n", "agreement", "kappa", "alpha"} <= set(row)
        assert len(row["readers"]) == 2
        assert 0 <= row["agreement"] <= 1


def test_a_paper_shows_every_reading() -> None:
    key = sorted(_codes(SECOND))[0]
    frame = paper_readings(key)
    assert {FIRST, SECOND, "kb"} <= set(frame.index)


BAD_READINGS = {
    "unknown value": (
        "    credit_unit: msg\n",
        "readings[0].credit_unit: unknown value 'msg'; allowed: token",
    ),
    "unknown paper": ("  - key: no-such-paper\n", "no pooled paper 'no-such-paper'"),
    "python tag": ("    topology: !!python/object/apply:os.system [ls]\n", "tag"),
}


def _plant_reader(root: Path, body: str, header: str = "") -> Path:
    """readings/r1.yaml with the required header fields, ``header`` lines after them, and
    one reading of the root's first paper whose fields are ``body``."""
    key = sorted(load_papers(root).index)[0]
    folder = root / "readings"
    folder.mkdir()
    path = folder / "r1.yaml"
    path.write_text(
        "reader: r1\nname: R\ndate: 2026-11-30\nsource: https://example.org\nmethod: m\n"
        f"{header}readings:\n  - key: {key}\n{body}",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("case", list(BAD_READINGS))
def test_bad_readings_name_file_line_and_field(mini_root: Path, case: str) -> None:
    line, fragment = BAD_READINGS[case]
    keys = set(load_papers(mini_root).index)  # before the bad file: loading checks readings
    _plant_reader(mini_root, line)
    with pytest.raises(ReadingsError) as err:
        load_readers(keys, mini_root)
    assert str(err.value).startswith("readings/r1.yaml:")
    assert fragment in str(err.value)


def test_validate_reports_a_bad_reading(mini_root: Path) -> None:
    from masrl_kb.kb.record_checks import validate

    _plant_reader(mini_root, "    topology: ring\n")
    found = [str(p) for p in validate(mini_root).problems]
    assert found == [
        "readings/r1.yaml:8: readings[0].topology: unknown value 'ring'; allowed: "
        + ", ".join(load_taxonomy(mini_root)["topology"].ids)
    ]


def test_a_reading_that_is_a_link_is_not_followed(mini_root: Path, tmp_path: Path) -> None:
    from masrl_kb.kb.record_checks import validate

    secret = tmp_path / "secret.yaml"
    secret.write_text("reader: secret\n# a secret line\n", encoding="utf-8")
    (mini_root / "readings").mkdir()
    (mini_root / "readings" / "r1.yaml").symlink_to(secret)
    found = [str(p) for p in validate(mini_root).problems]
    assert found == [
        "readings/r1.yaml:1: file: is a symbolic link (links are not followed: commit the "
        "file itself), not a regular file"
    ]


def test_compare_with_must_name_another_reader(mini_root: Path) -> None:
    from masrl_kb.kb.record_checks import validate

    path = _plant_reader(mini_root, "    topology: NA\n", header="compare_with: r2\n")
    found = [str(p) for p in validate(mini_root).problems]
    assert found == ["readings/r1.yaml:6: compare_with: no other reader 'r2'; allowed: kb"]
    path.write_text(
        path.read_text(encoding="utf-8").replace("compare_with: r2", "compare_with: kb"),
        encoding="utf-8",
    )
    assert not validate(mini_root).problems


def test_declared_pairs_and_leaving_out_papers() -> None:
    from masrl_kb.query.agreement import (
        codebook_examples,
        declared_pairs,
        reader_list,
        readings,
        without_papers,
    )

    papers = load_papers()
    readers = reader_list()
    pairs = declared_pairs(readers)
    assert pairs, "the blind readings name the readings they are measured against"
    assert all(len(p) == 2 for p in pairs)
    table = readings(papers)
    declared = agreement(table=table, pairs=pairs)
    assert {frozenset(r.split(" / ")) for r in declared["readers"]} == pairs
    cited = codebook_examples()
    assert "tracer-2026" in cited and cited & set(papers.index)
    left = without_papers(table, cited)
    assert not set(left["key"]) & cited
    full = agreement(table=table, pairs=pairs).set_index(["readers", "axis"])["n"]
    fewer = agreement(table=left, pairs=pairs).set_index(["readers", "axis"])["n"]
    assert (fewer <= full.loc[fewer.index]).all() and (fewer < full.loc[fewer.index]).any()


def test_cli_declared_and_not_cited(capsys) -> None:
    from masrl_kb.query.agreement import codebook_examples, declared_pairs, reader_list

    assert run_cli("agreement", "--json", "--declared", "--not-cited") == 0
    rows = json.loads(capsys.readouterr().out)
    pairs = declared_pairs(reader_list())
    assert rows and {frozenset(r["readers"]) for r in rows} <= pairs
    cited = codebook_examples()
    assert not {d["key"] for r in rows for d in r["disagreements"]} & cited
    assert run_cli("agreement", "--json") == 0
    every = json.loads(capsys.readouterr().out)
    assert len(every) > len(rows)


def test_cli_declared_reads_each_reader_file_once(capsys, monkeypatch) -> None:
    from masrl_kb.kb import readings

    load_papers()  # the pool kept: its validation reads the readers too, on its own
    real, read = readings.validate_file, []
    monkeypatch.setattr(
        readings,
        "validate_file",
        lambda model, path, *a: read.append(path) or real(model, path, *a),
    )
    assert run_cli("agreement", "--json", "--declared") == 0
    assert json.loads(capsys.readouterr().out)
    assert sorted(read) == sorted((REPO / "readings").glob("*.yaml"))


def test_a_codebook_that_is_a_link_or_missing_cites_no_paper(tmp_path: Path) -> None:
    from masrl_kb.query.agreement import CODEBOOK, codebook_examples

    root = tmp_path / "kb"
    (root / "docs").mkdir(parents=True)
    assert codebook_examples(root) == set()  # no codebook
    outside = tmp_path / "outside.md"
    outside.write_text("**Example** (`tracer-2026`): a secret\n", encoding="utf-8")
    (root / CODEBOOK).symlink_to(outside)
    assert codebook_examples(root) == set()  # a link is not followed
    (root / CODEBOOK).unlink()
    (root / CODEBOOK).write_text("**Example** (`tracer-2026`): read\n", encoding="utf-8")
    assert codebook_examples(root) == {"tracer-2026"}

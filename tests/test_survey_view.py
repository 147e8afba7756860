"""The survey's view reading: the survey's papers keep, in the survey's view, the codings
its claims were checked against while the records are recoded; and the snapshot that
writes such a reading (``masrl-kb agreement --snapshot``)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import yaml

from tests.conftest import run_cli
from tests.screening_stub import copy_kb

KEY = "matpo"  # a survey paper whose O3 the recoding may change


def _recode(kb: Path, key: str, decision: str, learned: bool) -> None:
    path = kb / "papers" / f"{key}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["decisions"] = [d for d in data["decisions"] if d["id"] != decision]
    entry = {"id": decision, "learned": learned, "why": "Recoded by the test on purpose."}
    if learned:
        entry |= {"mechanism": "implicit"}
        entry |= {"evidence": {"source": "paper", "where": "S3", "url": data["url"]}}
    data["decisions"].append(entry)
    data["decisions"].sort(key=lambda d: d["id"])
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def test_the_survey_view_keeps_the_view_readings_codings(tmp_path: Path) -> None:
    from masrl_kb.query.frames import load_pool
    from masrl_kb.query.views import survey_view

    kb = copy_kb(tmp_path / "kb")
    before = survey_view(*load_pool(kb), root=kb)[0].at[KEY, "O3"]
    _recode(kb, KEY, "O3", learned=True)
    today = load_pool(kb)[0].at[KEY, "O3"]
    then = survey_view(*load_pool(kb), root=kb)[0].at[KEY, "O3"]
    assert today == "learned" and then == before != "learned"
    assert run_cli("--root", str(kb), "claims", "--check") == 0


def test_two_survey_view_readers_fail_validate(tmp_path: Path, capsys) -> None:
    kb = copy_kb(tmp_path / "kb")
    (view,) = (kb / "readings").iterdir()
    (kb / "readings" / "another-view.yaml").write_text(
        view.read_text(encoding="utf-8").replace(f"reader: {view.stem}", "reader: another-view"),
        encoding="utf-8",
    )
    assert run_cli("--root", str(kb), "validate") == 2
    out = capsys.readouterr().out
    assert re.search(r"readings/\S+\.yaml:1: view: view: survey is given by 2 readers", out)


def test_without_a_view_reader_the_survey_view_is_the_records(tmp_path: Path) -> None:
    from masrl_kb.query.frames import load_pool
    from masrl_kb.query.views import survey_view

    kb = copy_kb(tmp_path / "kb")
    for path in (kb / "readings").iterdir():
        path.unlink()
    _recode(kb, KEY, "O3", learned=True)
    assert survey_view(*load_pool(kb), root=kb)[0].at[KEY, "O3"] == "learned"


def test_snapshot_writes_a_reader_the_agreement_reads(tmp_path: Path, capsys) -> None:
    kb = copy_kb(tmp_path / "kb")
    assert run_cli("--root", str(kb), "agreement", "--snapshot", "first-reading",
                   "--keys", f"{KEY},c3") == 0  # fmt: skip
    data = yaml.safe_load((kb / "readings" / "first-reading.yaml").read_text(encoding="utf-8"))
    assert [r["key"] for r in data["readings"]] == ["c3", KEY]
    capsys.readouterr()
    assert run_cli("--root", str(kb), "agreement", "--json") == 0
    import json

    rows = json.loads(capsys.readouterr().out)
    o3 = [r for r in rows if r["readers"] == ["kb", "first-reading"] and r["axis"] == "O3"]
    assert o3 and o3[0]["n"] == 2 and o3[0]["agreement"] == 1.0


def test_snapshot_refuses_to_replace_and_bad_names(tmp_path: Path, capsys) -> None:
    kb = copy_kb(tmp_path / "kb")
    args = ("--root", str(kb), "agreement", "--snapshot")
    assert run_cli(*args, "survey-view-2026-05-04") == 2
    assert "already exists" in capsys.readouterr().err
    assert run_cli(*args, "Bad/Name") == 2
    assert "expected lower-case" in capsys.readouterr().err
    assert run_cli(*args, "x-reader", "--keys", "no-such-paper") == 2
    assert "no pooled paper" in capsys.readouterr().err
    assert not (kb / "readings" / "x-reader.yaml").exists()


def test_a_reading_of_a_paper_added_since_leaves_the_survey_view_working(tmp_path: Path) -> None:
    """A readings/ file may name papers the survey's dated pool does not hold (a snapshot of
    the papers added since): claims --check, which works in that pool, still passes."""
    from masrl_kb.query.agreement import readings
    from masrl_kb.query.frames import load_pool, pool_as_of
    from masrl_kb.query.views import survey_baseline

    kb = copy_kb(tmp_path / "kb", survey_only=False)
    papers = load_pool(kb)[0]
    later = papers[papers["added"] > papers["added"].min()].index[0]
    (kb / "readings" / "later-reader.yaml").write_text(
        yaml.safe_dump(
            {
                "reader": "later-reader",
                "name": "A test reader",
                "date": dt.date(2026, 12, 1),
                "source": "tests",
                "method": "Made by the test.",
                "readings": [{"key": str(later), "category": "benchmark"}],
            }
        ),
        encoding="utf-8",
    )
    assert run_cli("--root", str(kb), "claims", "--check") == 0
    day = survey_baseline(kb)
    dated = pool_as_of(*load_pool(kb), day)[0]
    assert later not in dated.index
    assert "later-reader" not in set(readings(dated, kb)["reader"])
    assert "later-reader" in set(readings(papers, kb)["reader"])

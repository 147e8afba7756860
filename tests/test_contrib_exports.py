"""``masrl-kb export bibtex|csv|json|markdown`` on the real records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import bibtexparser
import pandas as pd
import pytest

import masrl_kb
from masrl_kb.contrib.export.bibtex import protect_title, unprotect_title
from masrl_kb.contrib.export.csv_io import (
    CsvImportError,
    canonical_record,
    records_from_csv,
    records_from_json,
)
from masrl_kb.contrib.export.markdown import (
    END_MARKER,
    START_MARKER,
    escape_markdown,
    github_anchor,
)
from masrl_kb.kb.records import read_records
from masrl_kb.kb.synthetic import dump_record
from tests.conftest import run_cli as run

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def records() -> dict[str, dict]:
    """The paper records as their YAML files hold them, by key."""
    return {r.data["key"]: canonical_record(r.data) for r in read_records(REPO).papers}


def _export(tmp_path: Path, fmt: str, *extra: str) -> str:
    out = tmp_path / f"export.{fmt}"
    assert run("--root", str(REPO), "export", fmt, "-o", str(out), *extra) == 0
    return out.read_text(encoding="utf-8")


# ---------------------------------------------------------------- BibTeX


def test_bibtex_round_trip(tmp_path: Path, records: dict[str, dict]) -> None:
    library = bibtexparser.parse_string(_export(tmp_path, "bibtex"))
    assert library.failed_blocks == []
    assert len(library.entries) == len(records) == len(list((REPO / "papers").glob("*.yaml")))
    by_key = {r["citation"]["bibtex_key"]: r for r in records.values()}
    assert {e.key for e in library.entries} == set(by_key)
    for entry in library.entries:
        record = by_key[entry.key]
        citation = record["citation"]
        fields = {f.key: f.value for f in entry.fields}
        assert entry.entry_type == citation["entry_type"]
        assert unprotect_title(fields["title"]) == record["title"]
        authors = [a.strip("{}") for a in fields["author"].split(" and ")]
        expected = record["authors"] + (["others"] if record.get("authors_truncated") else [])
        assert authors == expected
        assert fields["year"] == str(record["year"])
        assert fields["url"] == record["url"]
        for name in ("journal", "booktitle", "volume", "number", "pages"):
            assert fields.get(name) == citation.get(name), (entry.key, name)
        if "arxiv_id" in record:
            assert (fields["eprint"], fields["archivePrefix"]) == (record["arxiv_id"], "arXiv")
        else:
            assert "eprint" not in fields and "archivePrefix" not in fields
        if citation["entry_type"] == "misc":
            assert fields["howpublished"] == f"\\url{{{record['url']}}}"
            assert fields["note"] == record["venue"]


def test_bibtex_where_selects_one_cell(tmp_path: Path) -> None:
    where = 'credit_unit == "message" and credit_mechanism == "estimator"'
    library = bibtexparser.parse_string(_export(tmp_path, "bibtex", "--where", where))
    expected = masrl_kb.select(where)["bibtex_key"]
    assert sorted(e.key for e in library.entries) == sorted(expected)
    # a cell of the live pool: some papers, not all (a count would break on the next record)
    assert 0 < len(library.entries) < len(masrl_kb.load_pool()[0])


def test_bad_where_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("--root", str(REPO), "export", "bibtex", "--where", "credit_unit ==") == 2
    assert capsys.readouterr().err.startswith("masrl-kb: --where 'credit_unit ==': ")


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        (
            "MARFT: Multi-Agent Reinforcement Fine-Tuning",
            "{MARFT}: {Multi-Agent} Reinforcement {Fine-Tuning}",
        ),
        (
            "Training Multi-Agent Systems with M-GRPO",
            "Training {Multi-Agent} Systems with {M-GRPO}",
        ),
        ("LLM Collaboration With GRPO", "{LLM} Collaboration With {GRPO}"),
        ("DeepSeek-R1 and Kimi K2.5", "{DeepSeek-R1} and Kimi {K2.5}"),
        ("Building a C compiler", "Building a {C} compiler"),
        ("Agents (LLMs) & Tools", "Agents ({LLMs}) \\& Tools"),
        ("Proximal Policy Optimization Algorithms", "Proximal Policy Optimization Algorithms"),
    ],
)
def test_protect_title(title: str, expected: str) -> None:
    assert protect_title(title) == expected
    assert unprotect_title(expected) == title


# ---------------------------------------------------------------- CSV and JSON


def test_csv_round_trip(tmp_path: Path, records: dict[str, dict]) -> None:
    back = records_from_csv(_export(tmp_path, "csv"))
    assert len(back) == len(records)
    assert {r["key"]: r for r in back} == records
    # "NA" is a tag value, not a missing one.
    assert any(r["reward_type"] == "NA" for r in back)


def test_json_round_trip(tmp_path: Path, records: dict[str, dict]) -> None:
    back = records_from_json(_export(tmp_path, "json"))
    assert {r["key"]: r for r in back} == records


def test_csv_import_rebuilds_an_identical_knowledge_base(tmp_path: Path) -> None:
    back = records_from_csv(_export(tmp_path, "csv"))
    root = tmp_path / "rebuilt"
    (root / "papers").mkdir(parents=True)
    for data_file in REPO.glob("*.yaml"):  # taxonomy, benchmarks, claims...
        shutil.copy(data_file, root / data_file.name)
    for record in back:
        (root / "papers" / f"{record['key']}.yaml").write_text(dump_record(record))
    pd.testing.assert_frame_equal(masrl_kb.load_papers(root), masrl_kb.load_papers(REPO))


def test_csv_import_refuses_an_edited_derived_column(tmp_path: Path) -> None:
    rows = json.loads(_export(tmp_path, "json"))
    row = next(r for r in rows if r["key"] == "puppeteer")
    assert row["O2"] == "learned"
    row["O2"] = "absent"
    with pytest.raises(CsvImportError, match="O2 is 'absent' but the record fields give"):
        records_from_json(json.dumps(rows))


def test_csv_import_refuses_unknown_columns(tmp_path: Path) -> None:
    rows = json.loads(_export(tmp_path, "json"))
    rows[0]["colour"] = "blue"
    with pytest.raises(CsvImportError, match="unknown column"):
        records_from_json(json.dumps(rows))


# ---------------------------------------------------------------- Markdown


def test_awesome_md_is_current() -> None:
    assert run("--root", str(REPO), "export", "markdown", "--check") == 0


def _kb_copy(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    root.mkdir()
    for data_file in REPO.glob("*.yaml"):  # taxonomy, benchmarks, claims...
        shutil.copy(data_file, root / data_file.name)
    shutil.copytree(REPO / "papers", root / "papers")
    shutil.copy(REPO / "AWESOME.md", root / "AWESOME.md")
    return root


def test_awesome_check_fails_when_a_record_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _kb_copy(tmp_path)
    record = root / "papers" / "puppeteer.yaml"
    record.write_text(
        record.read_text().replace(
            "title: Multi-Agent Collaboration via Evolving Orchestration",
            "title: Multi-Agent Collaboration via *Evolving* Orchestration_v2",
        )
    )
    assert run("--root", str(root), "export", "markdown", "--check") == 1
    assert "AWESOME.md is stale" in capsys.readouterr().err
    before, _, after = (REPO / "AWESOME.md").read_text().partition(START_MARKER)
    assert run("--root", str(root), "export", "markdown") == 0
    text = (root / "AWESOME.md").read_text()
    assert text.startswith(before)  # only the block is rewritten
    assert text.endswith(after.split(END_MARKER, 1)[1])
    assert "Multi-Agent Collaboration via \\*Evolving\\* Orchestration\\_v2" in text
    assert run("--root", str(root), "export", "markdown", "--check") == 0


def test_awesome_block_layout(tmp_path: Path) -> None:
    text = (REPO / "AWESOME.md").read_text()
    block = text[text.index(START_MARKER) : text.index(END_MARKER)]
    tax = masrl_kb.load_taxonomy(REPO)
    papers = masrl_kb.load_papers(REPO)
    headings = [line[3:] for line in block.splitlines() if line.startswith("## ")]
    used = [c for c in tax["category"].ids if (papers["category"] == c).any()]
    assert headings == [tax["category"].label_of(c) for c in used]  # taxonomy order
    for label in headings:
        assert f"(#{github_anchor(label)})" in block
    entry = next(line for line in block.splitlines() if "via Evolving Orchestration" in line)
    assert entry.startswith(
        "- **[Multi-Agent Collaboration via Evolving Orchestration]"
        "(https://arxiv.org/abs/2505.19591)** — Dang et al., 2025, *NeurIPS 2025*"
    )
    badges = block.splitlines()[block.splitlines().index(entry) + 1]
    assert "`R7 Orchestration`" in badges and "`credit: Orchestrator (strict)`" in badges
    learned = [
        f"{d} {tax['decision'].label_of(d)}"
        for d in tax["decision"].ids
        if papers.loc["puppeteer", d] == "learned"
    ]
    assert f"`learns: {', '.join(learned)}`" in badges


def test_awesome_where_and_missing_markers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "cell.md"
    target.write_text(f"# One cell\n\n{START_MARKER}\n{END_MARKER}\n")
    where = 'topology == "swarm"'
    argv = ["--root", str(REPO), "export", "markdown", "--file", str(target), "--where", where]
    assert run(*argv) == 0
    text = target.read_text()
    swarm = masrl_kb.select(where)
    assert text.count("\n- **[") == len(swarm) > 0
    assert f"matching `{where}`" in text
    bare = tmp_path / "bare.md"
    bare.write_text("# No markers\n")
    argv = ["--root", str(REPO), "export", "markdown", "--file", str(bare)]
    assert run(*argv) == 1
    assert "no <!-- masrl-kb:awesome:start -->" in capsys.readouterr().err
    assert bare.read_text() == "# No markers\n"


def test_escape_markdown() -> None:
    assert escape_markdown("a*b_c [d] <e> |f| `g` $h$") == (
        "a\\*b\\_c \\[d\\] \\<e\\> \\|f\\| \\`g\\` \\$h\\$"
    )

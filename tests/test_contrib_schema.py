"""The committed JSON Schemas: current, complete, and agreeing with the validator."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from masrl_kb.kb.editor_schema import SCHEMA_DIR, SCHEMA_FILES, schema_comment, to_json_compatible
from masrl_kb.kb.fields import EXCLUSION_FIELDS, PAPER_FIELDS
from masrl_kb.kb.records import read_records
from masrl_kb.kb.taxonomy import load_taxonomy
from masrl_kb.kb.yamlio import load_yaml_text
from tests.conftest import run_cli as run

REPO = Path(__file__).resolve().parent.parent


def _validator(kind: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((REPO / SCHEMA_DIR / SCHEMA_FILES[kind]).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def test_committed_schemas_are_current(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("--root", str(REPO), "schema", "--check") == 0, capsys.readouterr().err


def test_stale_schema_is_detected_and_rewritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(REPO / "taxonomy.yaml", tmp_path / "taxonomy.yaml")
    shutil.copytree(REPO / SCHEMA_DIR, tmp_path / SCHEMA_DIR)
    assert run("--root", str(tmp_path), "schema", "--check") == 0
    taxonomy = tmp_path / "taxonomy.yaml"
    taxonomy.write_text(
        taxonomy.read_text().replace(
            "      - id: debate\n        label: Debate\n        definition: Argumentation",
            "      - id: games\n        label: Games\n        definition: Playing games.\n"
            "      - id: debate\n        label: Debate\n        definition: Argumentation",
        )
    )
    assert run("--root", str(tmp_path), "schema", "--check") == 1
    assert "schema/paper.schema.json is stale" in capsys.readouterr().err
    assert run("--root", str(tmp_path), "schema") == 0
    schema = json.loads((tmp_path / SCHEMA_DIR / "paper.schema.json").read_text())
    assert "games" in schema["properties"]["scenario"]["enum"]
    assert run("--root", str(tmp_path), "schema", "--check") == 0


def test_schema_follows_the_field_lists_and_taxonomy() -> None:
    tax = load_taxonomy(REPO)
    for kind, fields in (("paper", PAPER_FIELDS), ("exclusion", EXCLUSION_FIELDS)):
        schema = _validator(kind).schema
        assert list(schema["properties"]) == sorted(f.name for f in fields)
        assert sorted(schema["required"]) == sorted(f.name for f in fields if f.required)
        assert schema["additionalProperties"] is False
        for f in fields:
            if f.kind == "axis":
                assert schema["properties"][f.name]["enum"] == list(tax[f.axis].ids)
    paper = _validator("paper").schema["properties"]
    assert paper["decisions"]["items"]["properties"]["id"]["enum"] == list(tax["decision"].ids)
    assert paper["citation"]["properties"]["entry_type"]["enum"] == list(tax["entry_type"].ids)


def test_every_record_validates_against_its_schema() -> None:
    records = read_records(REPO)
    on_disk = {kind: len(list((REPO / kind).glob("*.yaml"))) for kind in ("papers", "exclusions")}
    assert (len(records.papers), len(records.exclusions)) == (
        on_disk["papers"],
        on_disk["exclusions"],
    )
    assert records.papers and records.exclusions
    for kind, recs in (("paper", records.papers), ("exclusion", records.exclusions)):
        validator = _validator(kind)
        for rec in recs:
            errors = [e.message for e in validator.iter_errors(to_json_compatible(rec.data))]
            assert errors == [], rec.rel


def test_every_record_names_its_schema_first() -> None:
    for folder, kind in (("papers", "paper"), ("exclusions", "exclusion")):
        for path in sorted((REPO / folder).glob("*.yaml")):
            first = path.read_text().splitlines()[0]
            assert first == schema_comment(kind), path
            target = (path.parent / first.split("$schema=", 1)[1]).resolve()
            assert target.is_file(), path


def _puppeteer() -> dict:
    text = (REPO / "papers" / "puppeteer.yaml").read_text()
    return to_json_compatible(load_yaml_text(text).data)


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda r: r.update(topology="ring"), "'ring' is not one of"),
        (lambda r: r.update(summary="TODO"), "should not be valid"),
        (lambda r: r.update(year="2025"), "'2025' is not of type 'integer'"),
        (lambda r: r.update(added="4 May 2026"), "is not a 'date'"),
        (lambda r: r.update(arxiv_id="2505.19591v2"), "does not match"),
        (lambda r: r.update(colour="blue"), "Additional properties are not allowed"),
        (lambda r: r.pop("citation"), "'citation' is a required property"),
        (lambda r: r["decisions"][0].update(id="O99"), "'O99' is not one of"),
        (lambda r: r["citation"].update(entry_type="book"), "'book' is not one of"),
        (lambda r: r.update(url="ftp://example.org/x"), "does not match"),
    ],
)
def test_a_bad_record_fails(change, fragment: str) -> None:
    record = copy.deepcopy(_puppeteer())
    assert list(_validator("paper").iter_errors(record)) == []
    change(record)
    messages = [e.message for e in _validator("paper").iter_errors(record)]
    assert any(fragment in m for m in messages), messages

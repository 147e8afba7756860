"""The record-model machinery (kb/model/base.py): messages, lines and partial records."""

from __future__ import annotations

from masrl_kb.kb.fields import PAPER_FIELDS
from masrl_kb.kb.model.base import context, validate_mapping
from masrl_kb.kb.model.paper import Paper
from masrl_kb.kb.model.taxonomy_model import Taxonomy
from masrl_kb.kb.taxonomy import load_taxonomy
from masrl_kb.kb.yamlio import load_yaml_text
from tests.conftest import GOOD_PAPER, REPO, allowed

CTX = context(load_taxonomy(REPO))


def check(text: str) -> list[str]:
    data = load_yaml_text(text).data
    return [str(p) for p in validate_mapping(Paper, data, "p.yaml", CTX)[1]]


def test_an_optional_field_given_empty_is_refused_not_taken_as_absent() -> None:
    text = GOOD_PAPER.replace("credit_strict: false", "credit_strict: false\ncredit_evidence:")
    assert check(text) == [
        "p.yaml:19: credit_evidence: expected a mapping of field: value, got an empty value"
    ]


def test_nested_problems_name_their_place_and_line() -> None:
    text = GOOD_PAPER.replace("    why: A fixed rule", "    whyy: x\n    why: A fixed rule")
    assert check(text) == [
        "p.yaml:22: decisions[0].whyy: unknown field 'whyy' (did you mean 'why'?); "
        "allowed fields: id, learned, why, mechanism, evidence"
    ]


def test_a_placeholder_anywhere_is_unfinished_with_the_field_doc() -> None:
    text = GOOD_PAPER.replace("  entry_type: article", "  entry_type: TODO")
    doc = next(f for f in PAPER_FIELDS if f.name == "citation").sub[1].doc
    assert check(text) == [
        f"p.yaml:27: citation.entry_type: unfinished: replace the TODO placeholder ({doc})"
    ]


def test_partial_validation_still_runs_the_rules_on_what_is_well_formed() -> None:
    text = GOOD_PAPER.replace("credit_strict: false", "credit_strict: true\nnotes: ''")
    data = load_yaml_text(text).data
    assert check(text)[0] == "p.yaml:19: notes: must not be empty"
    record, problems = validate_mapping(Paper, data, "p.yaml", CTX, partial=True)
    assert record is None
    assert [str(p) for p in problems] == [
        "p.yaml:19: notes: must not be empty",
        "p.yaml:18: credit_evidence: credit_strict: true needs credit_evidence: "
        "{source, where, url}",
        "p.yaml:18: credit_mechanism: credit_strict: true needs credit_mechanism; "
        f"allowed: {allowed('credit_mechanism')}",
    ]


def test_a_valid_record_comes_back_typed() -> None:
    record, problems = validate_mapping(
        Paper, load_yaml_text(GOOD_PAPER).data, "p.yaml", CTX, partial=True
    )
    assert problems == [] and record is not None
    assert record.decisions[0].id == "O2" and record.artifacts.links() == {
        "code": "https://example.org/code"
    }


def test_unknown_keys_inside_a_mapping_of_models_name_that_model_s_fields() -> None:
    text = (REPO / "taxonomy.yaml").read_text(encoding="utf-8")
    values = "[{id: a, label: A, definition: D}]"
    axis = f"  label:\n    label: L\n    descripton: red\n    values: {values}"
    text = text.replace("\naxes:\n", f"\naxes:\n{axis}\n", 1)
    line = text.splitlines().index("    descripton: red") + 1
    problems = [str(p) for p in validate_mapping(Taxonomy, load_yaml_text(text).data, "t.yaml")[1]]
    assert problems == [
        f"t.yaml:{line}: axes.label.descripton: unknown field 'descripton' "
        "(did you mean 'description'?); allowed fields: label, description, values"
    ]

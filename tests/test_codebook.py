"""docs/codebook.md: unique rule ids, a worked example per rule, each naming a pooled record."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from masrl_kb.site.about import site_links

REPO = Path(__file__).resolve().parent.parent
CODEBOOK = REPO / "docs" / "codebook.md"

RULE_HEADING = re.compile(r"^### (C-[A-Z0-9]+-\d+) · ", re.MULTILINE)
# A worked example opens with **Example** and the record key in backticks.
EXAMPLE = re.compile(r"\*\*Example\*\*\s+\(`([^`]+)`\)")
# Rule ids cited anywhere in the text, e.g. "(C-O3-2)".
CITED = re.compile(r"\bC-[A-Z0-9]+-\d+\b")


def _rules(text: str) -> dict[str, str]:
    """Rule id -> the text of its section (up to the next heading)."""
    parts = re.split(r"^#{2,3} ", text, flags=re.MULTILINE)
    rules: dict[str, str] = {}
    for part in parts:
        match = re.match(r"(C-[A-Z0-9]+-\d+) · ", part)
        if match:
            rules[match.group(1)] = part
    return rules


def test_rule_ids_are_unique() -> None:
    ids = RULE_HEADING.findall(CODEBOOK.read_text(encoding="utf-8"))
    assert len(ids) >= 30
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_every_rule_has_a_worked_example() -> None:
    rules = _rules(CODEBOOK.read_text(encoding="utf-8"))
    assert set(rules) == set(RULE_HEADING.findall(CODEBOOK.read_text(encoding="utf-8")))
    missing = [rule for rule, body in rules.items() if not EXAMPLE.search(body)]
    assert not missing, missing


def test_every_example_names_a_pooled_record() -> None:
    keys = set(EXAMPLE.findall(CODEBOOK.read_text(encoding="utf-8")))
    assert keys
    missing = sorted(key for key in keys if not (REPO / "papers" / f"{key}.yaml").is_file())
    assert not missing, missing


def test_every_cited_rule_exists() -> None:
    text = CODEBOOK.read_text(encoding="utf-8")
    defined = set(RULE_HEADING.findall(text))
    cited = set(CITED.findall(text)) | set(CITED.findall((REPO / "CONTRIBUTING.md").read_text()))
    assert cited - defined == set()


def test_codebook_is_in_the_nav_and_linked_from_contributing() -> None:
    assert "codebook.md" in (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    contributing = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "](docs/codebook.md)" in contributing


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see the [codebook](docs/codebook.md).", "see the [codebook](../codebook.md)."),
        ("[rule](docs/codebook.md#c-o3-2)", "[rule](../codebook.md#c-o3-2)"),
        # Only links into docs/: other links, and look-alikes, are left as written.
        ("[a](https://x.org/docs/codebook.md)", "[a](https://x.org/docs/codebook.md)"),
        ("[a](docs/../../etc/passwd)", "[a](docs/../../etc/passwd)"),
        ("`docs/codebook.md`", "`docs/codebook.md`"),
    ],
)
def test_contribute_page_links_into_docs(text: str, expected: str) -> None:
    assert site_links(text) == expected

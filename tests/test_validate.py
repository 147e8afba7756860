"""Each validation rule, shown failing on a small bad fixture with its exact message."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from masrl_kb.kb.record_checks import validate
from tests.conftest import GOOD_EXCLUSION, GOOD_PAPER, allowed

NEXT_YEAR = dt.date.today().year + 1


def _write(root: Path, rel: str, content: str | bytes) -> None:
    path = root / rel
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


def problems(root: Path) -> list[str]:
    return [str(p) for p in validate(root).problems]


def test_good_fixtures_validate(mini_root: Path) -> None:
    _write(mini_root, "papers/bad.yaml", GOOD_PAPER)
    _write(mini_root, "exclusions/E900.yaml", GOOD_EXCLUSION)
    report = validate(mini_root)
    assert report.ok, report.problems
    assert report.summary() == "ok: 4 papers and 3 exclusions are valid"


def test_the_real_records_validate() -> None:
    report = validate()
    assert report.ok, "\n".join(str(p) for p in report.problems)


SINGLE_RULE_CASES = {
    "malformed yaml": (
        GOOD_PAPER.replace("title: A Deliberately Broken Record", "title: [unclosed"),
        "papers/bad.yaml:3: yaml: malformed YAML: while parsing a flow sequence "
        "did not find expected ',' or ']'",
    ),
    "key given twice": (
        GOOD_PAPER + "year: 2024\n",
        "papers/bad.yaml:36: year: key given twice (first on line 5)",
    ),
    "missing field": (
        GOOD_PAPER.replace("venue: arXiv\n", ""),
        "papers/bad.yaml:1: venue: missing required field "
        "(Where it appeared (arXiv, NeurIPS 2025, Tech Blog...).)",
    ),
    "value outside taxonomy": (
        GOOD_PAPER.replace("topology: centralized", "topology: ring"),
        f"papers/bad.yaml:14: topology: unknown value 'ring'; allowed: {allowed('topology')}",
    ),
    "unquoted yes read as boolean": (
        GOOD_PAPER.replace('is_rl: "yes"', "is_rl: yes"),
        "papers/bad.yaml:11: is_rl: got boolean true: YAML reads unquoted "
        "yes/no/on/off/true/false as booleans; put the word in quotes; "
        f"allowed: {allowed('is_rl')}",
    ),
    "wrong type": (
        GOOD_PAPER.replace("year: 2025", 'year: "2025"'),
        "papers/bad.yaml:5: year: expected a whole number, got '2025'",
    ),
    "bool expected": (
        GOOD_PAPER.replace("credit_strict: false", 'credit_strict: "no"'),
        "papers/bad.yaml:18: credit_strict: expected true or false, got 'no'",
    ),
    "malformed arxiv id": (
        GOOD_PAPER.replace('arxiv_id: "2501.00001"', 'arxiv_id: "2501.1v2"'),
        "papers/bad.yaml:7: arxiv_id: malformed arXiv id '2501.1v2': expected YYMM.NNNNN "
        "(e.g. 2508.04652), no version",
    ),
    "unquoted arxiv id": (
        GOOD_PAPER.replace('arxiv_id: "2501.00001"', "arxiv_id: 2501.00010"),
        "papers/bad.yaml:7: arxiv_id: got number 2501.0001: quote arXiv ids (e.g. "
        "'2508.04652'); unquoted they are read as numbers and lose trailing zeros",
    ),
    "year too early": (
        GOOD_PAPER.replace("year: 2025", "year: 1949"),
        f"papers/bad.yaml:5: year: year 1949 is outside 1950..{NEXT_YEAR}",
    ),
    "year too late": (
        GOOD_PAPER.replace("year: 2025", f"year: {NEXT_YEAR + 1}"),
        f"papers/bad.yaml:5: year: year {NEXT_YEAR + 1} is outside 1950..{NEXT_YEAR}",
    ),
    "url not http": (
        GOOD_PAPER.replace("url: https://arxiv.org/abs/2501.00001", "url: javascript:alert(1)"),
        "papers/bad.yaml:8: url: 'javascript:alert(1)' is not an http(s) URL",
    ),
    "extra url not http": (
        GOOD_PAPER.replace("affiliation:", "extra_urls:\n  - ftp://example.org/x\naffiliation:"),
        "papers/bad.yaml:9: extra_urls: item 1: 'ftp://example.org/x' is not an http(s) URL",
    ),
    "decision listed twice": (
        GOOD_PAPER.replace(
            "added:", "  - id: O2\n    learned: false\n    why: Again a fixed rule.\nadded:"
        ),
        "papers/bad.yaml:23: decisions[1].id: decision 'O2' given twice (first on line 20)",
    ),
    "decision outside taxonomy": (
        GOOD_PAPER.replace("  - id: O2", "  - id: O99"),
        f"papers/bad.yaml:20: decisions[0].id: unknown value 'O99'; allowed: {allowed('decision')}",
    ),
    "empty summary": (
        GOOD_PAPER.replace("summary: A record used by the tests.", 'summary: "  "'),
        "papers/bad.yaml:24: summary: must not be empty",
    ),
    "summary left blank": (
        GOOD_PAPER.replace("summary: A record used by the tests.", "summary:"),
        "papers/bad.yaml:24: summary: must not be empty",
    ),
    "placeholder left": (
        GOOD_PAPER.replace("summary: A record used by the tests.", "summary: TODO"),
        "papers/bad.yaml:24: summary: unfinished: replace the TODO placeholder "
        "(One or two sentences in the curators' own words.)",
    ),
    "citation field outside taxonomy": (
        GOOD_PAPER.replace("entry_type: article", "entry_type: blogpost"),
        "papers/bad.yaml:27: citation.entry_type: unknown value 'blogpost'; "
        f"allowed: {allowed('entry_type')}",
    ),
    "strict credit without a unit": (
        GOOD_PAPER.replace("credit_unit: agent", "credit_unit: NA").replace(
            "credit_strict: false",
            "credit_strict: true\ncredit_mechanism: shaping\n"
            "credit_evidence: {source: paper, where: S3, url: 'https://e.org'}",
        ),
        "papers/bad.yaml:18: credit_strict: true needs a credit unit, but credit_unit is NA",
    ),
    "not a mapping": (
        "- just\n- a list\n",
        "papers/bad.yaml:1: record: expected a mapping of field: value, got a list",
    ),
    "empty file": (
        "",
        "papers/bad.yaml:1: record: expected a mapping of field: value, got an empty value",
    ),
    "unsafe tag": (
        GOOD_PAPER.replace("venue: arXiv", "venue: !!python/object/apply:os.system [ls]"),
        "papers/bad.yaml:6: venue: malformed YAML: tag "
        "'tag:yaml.org,2002:python/object/apply:os.system' is not allowed (safe loading only)",
    ),
    "not utf-8": (
        GOOD_PAPER.replace("Nowhere", "Universit\xe9").encode("latin-1"),
        "papers/bad.yaml:9: file: not valid UTF-8 (byte 0xe9): save the file as UTF-8",
    ),
    "binary": (
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        "papers/bad.yaml:1: file: binary content (NUL byte): records must be UTF-8 text",
    ),
}


@pytest.mark.parametrize("case", sorted(SINGLE_RULE_CASES))
def test_single_rule(mini_root: Path, case: str) -> None:
    content, expected = SINGLE_RULE_CASES[case]
    _write(mini_root, "papers/bad.yaml", content)
    assert problems(mini_root) == [expected]


def test_unknown_field_suggests_the_close_name(mini_root: Path) -> None:
    _write(mini_root, "papers/bad.yaml", GOOD_PAPER.replace("title:", "titel:"))
    found = problems(mini_root)
    assert found[0].startswith("papers/bad.yaml:1: title: missing required field"), found
    assert found[1].startswith(
        "papers/bad.yaml:2: titel: unknown field 'titel' (did you mean 'title'?); "
        "allowed fields: key, title, authors,"
    ), found
    assert len(found) == 2


def test_key_must_equal_file_name(mini_root: Path) -> None:
    _write(mini_root, "papers/other.yaml", GOOD_PAPER)
    assert problems(mini_root) == [
        "papers/other.yaml:1: key: key 'bad' differs from the file name 'other'"
    ]


def test_duplicates_across_papers(mini_root: Path) -> None:
    _write(mini_root, "papers/bad.yaml", GOOD_PAPER)
    twin = GOOD_PAPER.replace("key: bad", "key: twin").replace(
        "title: A Deliberately Broken Record", "title: 'a deliberately-broken RECORD!'"
    )
    _write(mini_root, "papers/twin.yaml", twin)
    assert problems(mini_root) == [
        "papers/twin.yaml:2: title: duplicate title: same as papers/bad.yaml:2",
        "papers/twin.yaml:7: arxiv_id: duplicate arXiv id: same as papers/bad.yaml:7",
        "papers/twin.yaml:8: url: duplicate URL: same as papers/bad.yaml:8",
    ]


def test_duplicate_key_across_files(mini_root: Path) -> None:
    _write(mini_root, "papers/bad.yaml", GOOD_PAPER)
    _write(mini_root, "papers/copy.yaml", GOOD_PAPER)
    found = problems(mini_root)
    assert "papers/copy.yaml:1: key: duplicate key: same as papers/bad.yaml:1" in found
    assert "papers/copy.yaml:1: key: key 'bad' differs from the file name 'copy'" in found


def test_paper_both_pooled_and_excluded(mini_root: Path) -> None:
    _write(mini_root, "papers/bad.yaml", GOOD_PAPER)
    excluded = GOOD_EXCLUSION.replace("2502.00002", "2501.00001")
    _write(mini_root, "exclusions/E900.yaml", excluded)
    assert problems(mini_root) == [
        "exclusions/E900.yaml:3: identifier: pooled and excluded at once: "
        "same arXiv id as papers/bad.yaml:7",
        "exclusions/E900.yaml:4: url: pooled and excluded at once: same URL as papers/bad.yaml:8",
    ]


def test_exclusion_rules(mini_root: Path) -> None:
    bad = GOOD_EXCLUSION.replace("stage: abstract_screen", "stage: vibes").replace(
        "screened: 2026-04-26", 'screened: "last week"'
    )
    _write(mini_root, "exclusions/E900.yaml", bad)
    assert problems(mini_root) == [
        "exclusions/E900.yaml:7: screened: expected a date written YYYY-MM-DD without quotes, "
        "got 'last week'",
        "exclusions/E900.yaml:8: stage: unknown value 'vibes'; "
        f"allowed: {allowed('exclusion_stage')}",
    ]


def test_stray_file_in_record_folder(mini_root: Path) -> None:
    _write(mini_root, "papers/bad.yml", GOOD_PAPER)
    assert problems(mini_root) == ["papers/bad.yml:1: file: record files must end in .yaml"]


def test_every_problem_is_reported_in_one_run(mini_root: Path) -> None:
    _write(mini_root, "papers/bad.yaml", GOOD_PAPER.replace("topology: centralized", "topology: x"))
    _write(
        mini_root,
        "exclusions/E900.yaml",
        GOOD_EXCLUSION.replace("reason: out_of_scope", "reason: y"),
    )
    report = validate(mini_root)
    assert [p.path for p in report.problems] == ["exclusions/E900.yaml", "papers/bad.yaml"]
    assert report.summary() == "2 problem(s) in 2 file(s)"


# ---------------------------------------------------------------- hardening (issue 8)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('title: "A\\nB"', "papers/bad.yaml:2: title: a line break (U+000A) at character 2"),
        ('title: "A \\e[31m"', "papers/bad.yaml:2: title: a control character (U+001B)"),
        (
            "year: 0x7E9",
            "papers/bad.yaml:5: year: write the number in plain decimal digits, got '0x7E9'",
        ),
        ("year: 03751", "papers/bad.yaml:5: year: write the number in plain decimal digits"),
        ("added: 0001-01-01", "papers/bad.yaml:23: added: date 0001-01-01 is outside 1950-01-01.."),
        ("added: 9999-12-31", "papers/bad.yaml:23: added: date 9999-12-31 is outside 1950-01-01.."),
    ],
)
def test_hardened_text_year_and_date_rules(mini_root: Path, line: str, expected: str) -> None:
    field = line.split(":")[0]
    original = next(x for x in GOOD_PAPER.splitlines() if x.startswith(f"{field}:"))
    _write(mini_root, "papers/bad.yaml", GOOD_PAPER.replace(original, line))
    found = problems(mini_root)
    assert len(found) == 1 and found[0].startswith(expected), found


def test_summary_may_span_lines_but_not_hold_controls(mini_root: Path) -> None:
    summary = "summary: A record used by the tests."
    _write(
        mini_root,
        "papers/bad.yaml",
        GOOD_PAPER.replace(summary, 'summary: "One line here.\\nTwo more."'),
    )
    assert problems(mini_root) == []
    _write(
        mini_root,
        "papers/bad.yaml",
        GOOD_PAPER.replace(summary, 'summary: "One line here.\\rTwo more."'),
    )
    assert problems(mini_root)[0].startswith("papers/bad.yaml:24: summary: a line break other")


def test_look_alike_title_is_a_duplicate(mini_root: Path) -> None:
    title = next(iter((mini_root / "papers").glob("*.yaml"))).read_text().split("title: ")[1]
    title = title.splitlines()[0].strip("'\"")
    fake = title.replace("a", "\u0430", 1).replace("e", "\u0435", 1)  # Cyrillic a, e
    assert fake != title
    _write(mini_root, "papers/bad.yaml", GOOD_PAPER.replace("A Deliberately Broken Record", fake))
    found = problems(mini_root)
    assert len(found) == 1 and "title: duplicate title: same as papers/" in found[0], found


def test_long_values_are_echoed_cut(mini_root: Path) -> None:
    _write(
        mini_root,
        "papers/bad.yaml",
        GOOD_PAPER.replace("topology: centralized", "topology: " + "x" * 5000),
    )
    (found,) = problems(mini_root)
    assert len(found) < 400 and "xxx..." in found


def test_a_missing_papers_folder_is_an_error(mini_root: Path) -> None:
    for path in (mini_root / "papers").iterdir():
        path.unlink()
    (mini_root / "papers").rmdir()
    report = validate(mini_root)
    assert not report.ok
    assert str(report.problems[0]).startswith("papers/:1: folder: folder missing")


def test_a_symlinked_record_is_not_followed(mini_root: Path) -> None:
    (mini_root / "papers" / "bad.yaml").symlink_to("/etc/passwd")
    (found,) = problems(mini_root)
    assert found == (
        "papers/bad.yaml:1: file: is a symbolic link (links are not followed: "
        "commit the file itself), not a regular file"
    )


def test_a_broken_taxonomy_is_reported_not_raised(mini_root: Path) -> None:
    path = mini_root / "taxonomy.yaml"
    text = path.read_text().replace("family: R1\n", "family: R1x\n", 1)
    path.unlink()
    path.write_text(text)
    (found,) = problems(mini_root)
    assert found.startswith("taxonomy.yaml:")
    assert ": axes.reward_type.values[0].family: unknown reward family 'R1x'; allowed: R1," in found

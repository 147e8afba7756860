"""Field edits of ``import-upstream --apply`` (masrl_kb/contrib/yaml_edit.py): only the
edited fields' lines change, in every real record; comments beside and inside an edited
field stay; a value YAML 1.1 would read as another type is written so it reads back as text;
hostile texts (an alias into another field, a comment between list items) are edited or
left for the read-back check, never mangled silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from masrl_kb.contrib.upstream import edit_fields
from masrl_kb.kb.paths import CLONE
from masrl_kb.kb.yamlio import load_yaml_text

RECORDS = sorted((CLONE / "papers").glob("*.yaml")) + sorted((CLONE / "exclusions").glob("*.yaml"))


def _lines_outside(text: str, names: set[str]) -> list[str]:
    """The lines of ``text`` outside the top-level fields ``names``."""
    kept, inside = [], False
    for line in text.splitlines():
        if line and line[0] not in " #-":
            inside = line.split(":", 1)[0] in names
        elif line.startswith("#"):
            inside = False
        if not inside:
            kept.append(line)
    return kept


def test_an_edit_changes_no_other_line_of_any_real_record() -> None:
    # A whole-file round trip (ruamel's or PyYAML's) would re-fold or re-indent most of them.
    assert len(RECORDS) > 100
    for path in RECORDS:
        text = path.read_text(encoding="utf-8")
        data = load_yaml_text(text).data
        values: dict[str, object] = {"title": "A Title Given Upstream, Long Enough " * 3}
        if "authors" in data:
            values["authors"] = ["Upstream, Ann", *data["authors"][1:]]
        new = edit_fields(text, values, {})
        loaded = load_yaml_text(new)
        assert not loaded.problems, path.name
        assert dict(loaded.data) == {**data, **values}, path.name
        assert _lines_outside(new, set(values)) == _lines_outside(text, set(values)), path.name


RECORD = """\
# yaml-language-server: $schema=../schema/paper.schema.json
key: k
venue: arXiv  # the preprint; the camera-ready is not out
authors:
- Doe, Jane  # corresponding
# the second author joined for the revision
- Roe, Rick
decisions:
  - id: O1
    learned: true
year: 2026
"""


def test_comments_beside_and_inside_an_edited_field_stay() -> None:
    new = edit_fields(RECORD, {"venue": "ICLR 2027", "authors": ["Doe, J.", "Roe, Rick"]}, {})
    assert new.splitlines() == [
        "# yaml-language-server: $schema=../schema/paper.schema.json",
        "key: k",
        "venue: ICLR 2027 # the preprint; the camera-ready is not out",
        "authors:",
        "- Doe, J.    # corresponding",  # the comment keeps its column when it can
        "# the second author joined for the revision",
        "- Roe, Rick",
        "decisions:",
        "  - id: O1",
        "    learned: true",
        "year: 2026",
    ]


def test_an_indented_list_keeps_its_indentation() -> None:
    decisions = [{"id": "O1", "learned": True}, {"id": "O2", "learned": False}]
    new = edit_fields(RECORD, {"decisions": decisions}, {})
    assert "\n".join(new.splitlines()[7:12]) == (
        "decisions:\n  - id: O1\n    learned: true\n  - id: O2\n    learned: false"
    )


def test_a_removed_field_takes_its_comments_and_a_new_one_goes_after_its_anchor() -> None:
    new = edit_fields(RECORD, {"authors": None, "url": "https://a.example/x"}, {"url": "venue"})
    assert "Doe" not in new and "second author" not in new
    assert new.splitlines()[2:4] == [
        "venue: arXiv  # the preprint; the camera-ready is not out",
        "url: https://a.example/x",
    ]


@pytest.mark.parametrize(
    "value", ["yes", "No", "on", "OFF", "y", "0777", "0x1F", "1:20", "1_000", "~", "null", ".inf"]
)
def test_a_value_yaml_1_1_reads_as_another_type_reads_back_as_text(value: str) -> None:
    # ruamel's own YAML 1.2 would write ``venue: yes``, which the loader reads as true.
    new = edit_fields(RECORD, {"venue": value}, {})
    assert load_yaml_text(new).data["venue"] == value


def test_an_alias_into_another_field_is_edited_without_its_comments() -> None:
    text = "key: k\nvenue: &v arXiv\nnotes: *v  # same as the venue\n"
    new = edit_fields(text, {"notes": "Their notes"}, {})
    assert new == "key: k\nvenue: &v arXiv\nnotes: Their notes\n"


def test_an_edit_dropping_an_anchor_is_left_for_the_read_back_to_refuse() -> None:
    text = "key: k\nvenue: &v arXiv\nnotes: *v\n"
    loaded = load_yaml_text(edit_fields(text, {"venue": "ICLR"}, {}))
    assert loaded.problems and "undefined alias" in loaded.problems[0].message


def test_a_hostile_value_is_written_as_plain_text(tmp_path: Path) -> None:
    hostile = "!!python/object/apply:os.system ['touch pwned']"
    new = edit_fields(RECORD, {"venue": hostile}, {})
    assert load_yaml_text(new).data["venue"] == hostile and not (tmp_path / "pwned").exists()

"""taxonomy.yaml is checked like a record, and a broken one stops every entry point cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from masrl_kb.kb.fields import required_axes
from masrl_kb.kb.synthetic import write_synthetic_root
from masrl_kb.kb.taxonomy import TaxonomyError, load_taxonomy
from masrl_kb.query.frames import InvalidRecordsError, load_papers
from tests.conftest import run_cli


def _break(root: Path, old: str, new: str) -> None:
    path = root / "taxonomy.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_synthetic_root(tmp_path / "kb", papers=2)


def test_the_real_taxonomy_passes(root: Path) -> None:
    tax = load_taxonomy(root)
    assert set(required_axes()) <= set(tax.axes)


@pytest.mark.parametrize("axis", ["topology", "decision_status"])
def test_an_axis_the_records_use_is_required(root: Path, axis: str) -> None:
    """A record field's axis (topology) or a derived column's (decision_status) must be
    defined: the loader hands the taxonomy model the axes the record models use."""
    path = root / "taxonomy.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    del data["axes"][axis]
    path.unlink()  # a new file: the loader's cache keys on modification time and size
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    with pytest.raises(TaxonomyError) as err:
        load_taxonomy(root)
    assert [str(p) for p in err.value.problems] == [
        f"taxonomy.yaml:2: axes.{axis}: missing required axis (records or tables use it)"
    ]


def test_problems_read_path_line_field_message(root: Path) -> None:
    _break(root, "id: planner_executor_critic", "id: centralized")
    with pytest.raises(TaxonomyError) as err:
        load_taxonomy(root)
    (problem,) = err.value.problems
    line = (root / "taxonomy.yaml").read_text().splitlines()
    assert "id: centralized" in line[problem.line - 1]
    assert str(problem).startswith(f"taxonomy.yaml:{problem.line}: axes.topology.values[1].id: ")


def test_a_broken_taxonomy_stops_the_api_with_its_message(root: Path) -> None:
    _break(root, "id: planner_executor_critic", "id: centralized")
    with pytest.raises(InvalidRecordsError) as err:
        load_papers(root)
    assert "axes.topology.values[1].id: id 'centralized' given twice" in str(err.value)


@pytest.mark.parametrize("command", ["validate", "stats", "build"])
def test_commands_refuse_a_broken_taxonomy(
    root: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _break(root, "family: R1\n", "family: R99\n")
    assert run_cli("--root", str(root), command) != 0
    out = capsys.readouterr()
    text = out.out + out.err
    assert "Traceback" not in text
    assert "axes.reward_type.values[0].family: unknown reward family 'R99'" in text
    assert not (root / "site").exists()


def test_a_missing_taxonomy_is_one_problem(root: Path) -> None:
    (root / "taxonomy.yaml").unlink()
    with pytest.raises(TaxonomyError, match=r"taxonomy.yaml:1: file: does not exist"):
        load_taxonomy(root)


def test_an_unknown_value_key_lists_the_keys_a_value_may_have(root: Path) -> None:
    _break(root, "      - id: rl_method\n", "      - id: rl_method\n        colour: red\n")
    with pytest.raises(TaxonomyError) as err:
        load_taxonomy(root)
    (problem,) = err.value.problems
    assert problem.field == "axes.category.values[0].colour"
    assert problem.message.startswith("unknown field 'colour'; allowed fields: id, label, def")


def test_only_reward_types_name_a_family(root: Path) -> None:
    _break(root, "        label: RL method\n", "        label: RL method\n        family: R1\n")
    with pytest.raises(TaxonomyError) as err:
        load_taxonomy(root)
    (problem,) = err.value.problems
    assert str(problem).endswith(
        "axes.category.values[0].family: unknown key; only reward_type values have family"
    )


def test_one_model_per_content_whatever_the_root_or_the_file_times(tmp_path: Path) -> None:
    """Roots holding the same taxonomy.yaml share one checked model; an edit that keeps the
    file's size and modification time is still read (the cache keys on the bytes)."""
    import os

    first = write_synthetic_root(tmp_path / "a", papers=1)
    second = write_synthetic_root(tmp_path / "b", papers=1)
    assert load_taxonomy(first) is load_taxonomy(second)
    path = second / "taxonomy.yaml"
    before = os.stat(path)
    text = path.read_text(encoding="utf-8")
    label = load_taxonomy(second)["topology"].label_of("centralized")
    path.write_text(text.replace(label, label.swapcase(), 1), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_size == before.st_size
    assert load_taxonomy(second)["topology"].label_of("centralized") == label.swapcase()
    assert load_taxonomy(first)["topology"].label_of("centralized") == label

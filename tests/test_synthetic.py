"""Synthetic pools stay put when the taxonomy grows: tests and benchmarks built on them
do not change when a value is added to an axis."""

from __future__ import annotations

from types import SimpleNamespace

from masrl_kb.kb.synthetic import synthetic_exclusion, synthetic_paper
from masrl_kb.kb.taxonomy import load_taxonomy
from tests.conftest import REPO


class _Grown(dict):
    """The repository's taxonomy with one more value on one axis (only ``ids`` is read)."""

    def __init__(self, axis: str, value: str) -> None:
        tax = load_taxonomy(REPO)
        super().__init__({name: SimpleNamespace(ids=list(tax[name].ids)) for name in tax.axes})
        self[axis].ids.append(value)


def test_a_new_value_changes_only_its_axis_and_only_where_it_wins() -> None:
    tax = load_taxonomy(REPO)
    grown = _Grown("topology", "ring-of-99")
    before = [synthetic_paper(i, tax) for i in range(300)]
    after = [synthetic_paper(i, grown) for i in range(300)]  # type: ignore[arg-type]
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert changed, "the new value is never picked"
    assert len(changed) < 300 // 3  # it takes over about 1/(n+1) of the records
    for i in changed:
        assert after[i]["topology"] == "ring-of-99"
        assert {k: v for k, v in after[i].items() if k != "topology"} == {
            k: v for k, v in before[i].items() if k != "topology"
        }


def test_a_new_decision_leaves_the_others_as_they_were() -> None:
    tax = load_taxonomy(REPO)
    grown = _Grown("decision", "O99")
    for i in range(100):
        old = synthetic_paper(i, tax)["decisions"]
        new = [d for d in synthetic_paper(i, grown)["decisions"] if d["id"] != "O99"]  # type: ignore[arg-type]
        assert new == old


def test_exclusions_are_stable_too() -> None:
    tax = load_taxonomy(REPO)
    grown = _Grown("exclusion_reason", "reason-99")
    same = sum(synthetic_exclusion(i, tax) == synthetic_exclusion(i, grown) for i in range(200))  # type: ignore[arg-type]
    assert 100 < same < 200

"""CONTRIBUTING.md's two recipes, applied to a scratch copy of the repository.

"Add an optional paper field" is the model, the taxonomy (a closed list) and the paper
page's template, then ``masrl-kb schema``; "add a vocabulary value" is taxonomy.yaml
alone, then the generated files. Each test copies the package and the data to a temporary
folder, makes exactly the recipe's edits, runs the commands the recipe names, and checks
that validation, the queries, the exports and the paper page all take the change, and
that no other file had to change.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

# What a scratch copy needs: the package and every data file it reads.
COPIED = (
    "masrl_kb",
    "papers",
    "exclusions",
    "readings",
    "screening",
    "schema",
    "taxonomy.yaml",
    "sources.yaml",
    "benchmarks.yaml",
    "protocol.yaml",
    "claims.yaml",
    "mkdocs.yml",
    "AWESOME.md",
)
RECIPES = REPO / "CONTRIBUTING.md"


def scratch_copy(target: Path) -> Path:
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target / name)
    return target


def digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def changed(before: dict[str, str], root: Path) -> set[str]:
    after = digests(root)
    return {name for name in before.keys() | after.keys() if before.get(name) != after.get(name)}


def run(root: Path, *argv: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
    """``masrl-kb ARGV`` (or a Python snippet) with the scratch copy's package and data."""
    env = {**os.environ, "PYTHONPATH": str(root), "MASRL_KB_ROOT": str(root)}
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "masrl_kb.cli"]
    return subprocess.run(
        [*command, *argv], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )


def edit(path: Path, anchor: str, text: str, after: bool = True) -> None:
    """Insert ``text`` after (or before) the one place ``anchor`` occurs."""
    content = path.read_text(encoding="utf-8")
    assert content.count(anchor) == 1, f"{path.name}: the recipe's anchor {anchor!r} moved"
    new = anchor + text if after else text + anchor
    path.write_text(content.replace(anchor, new), encoding="utf-8")


def recipe(title: str) -> str:
    """The text of one recipe section of CONTRIBUTING.md."""
    text = RECIPES.read_text(encoding="utf-8")
    found = re.search(rf"^### {re.escape(title)}\n(.*?)(?=^##)", text, re.S | re.M)
    assert found, f"CONTRIBUTING.md has no section '### {title}'"
    return found.group(1)


# The checks run inside the scratch copy, after the recipe: validation, queries, exports
# and the paper page. Prints one JSON line.
PROBE = """
import json, sys
import masrl_kb
from masrl_kb.contrib.export import tables
from masrl_kb.contrib.export.csv_io import records_from_csv
from masrl_kb.site.context import load_context
from masrl_kb.site.paper_pages import paper_page

axis, value, key = sys.argv[1:4]
papers = masrl_kb.load_papers()
column = papers[axis]
counts = masrl_kb.value_counts(axis, papers=papers)
table = masrl_kb.crosstab(axis, "credit_unit", papers=papers)
chosen = masrl_kb.select(f"{axis} == {json.dumps(value)}", papers=papers)
rows = records_from_csv(tables.records_csv(tables.papers_records(papers)))
page = paper_page(load_context(), key).render()
print(json.dumps({
    "package": masrl_kb.__file__,
    "categories": [str(c) for c in column.cat.categories],
    "count": int(counts[value]),
    "row": int(table.loc[value].sum()),
    "selected": list(chosen.index),
    "csv": [r.get(axis) for r in rows if r["key"] == key],
    "page": page,
}))
"""


def probe(root: Path, axis: str, value: str, key: str) -> dict:
    done = run(root, axis, value, key, code=PROBE)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(found["package"]).resolve().is_relative_to(root.resolve())
    return found


def first_paper(root: Path) -> Path:
    return sorted((root / "papers").glob("*.yaml"))[0]


def test_an_optional_field_is_the_model_the_taxonomy_and_the_template(tmp_path: Path) -> None:
    text = recipe("Add an optional paper field")
    for step in ("masrl_kb/kb/model/paper.py", "taxonomy.yaml", "paper.md", "masrl-kb schema"):
        assert step in text, step
    root = scratch_copy(tmp_path / "kb")
    before = digests(root)
    # 1. the model: one line in Paper
    edit(
        root / "masrl_kb/kb/model/paper.py",
        '    verified: Annotated[str, Axis("verified")] = doc('
        '"How far the metadata was checked.")\n',
        '    venue_status: Maybe[Annotated[str, Axis("venue_status")]] = opt(\n'
        '        "Whether the venue has published the work."\n'
        "    )\n",
    )
    # 2. the taxonomy: a closed list is an axis
    edit(
        root / "taxonomy.yaml",
        "axes:\n",
        "  venue_status:\n"
        "    label: Venue status\n"
        "    description: Whether the venue has published the work.\n"
        "    values:\n"
        "      - id: preprint\n"
        "        label: Preprint\n"
        "        definition: Only a preprint is public.\n"
        "      - id: published\n"
        "        label: Published\n"
        "        definition: The venue has published it.\n\n",
    )
    # 3. the template: the paper page shows it
    edit(
        root / "masrl_kb/site/templates/paper.md",
        '<tr><th scope="row">Metadata verified</th>',
        '{% if row.venue_status is string %}<tr><th scope="row">Venue status</th><td>'
        '{{ ctx.tax["venue_status"].label_of(row.venue_status) }}</td></tr>{% endif %}\n',
        after=False,
    )
    # 4. the generated schema
    assert run(root, "schema").returncode == 0
    edited = changed(before, root)
    assert edited == {
        "masrl_kb/kb/model/paper.py",
        "taxonomy.yaml",
        "masrl_kb/site/templates/paper.md",
        "schema/paper.schema.json",
    }
    schema = json.loads((root / "schema/paper.schema.json").read_text())
    assert schema["properties"]["venue_status"]["enum"] == ["preprint", "published"]

    # Using it: a record sets it; everything else follows from the three edits.
    record = first_paper(root)
    key = record.stem
    original = record.read_text(encoding="utf-8")
    record.write_text(original + "venue_status: preprnt\n", encoding="utf-8")
    bad = run(root, "validate")
    assert bad.returncode == 2
    assert re.search(
        rf"papers/{key}.yaml:\d+: venue_status: unknown value 'preprnt'; "
        "allowed: preprint, published",
        bad.stdout + bad.stderr,
    ), bad.stdout + bad.stderr
    record.write_text(original + "venue_status: published\n", encoding="utf-8")
    good = run(root, "validate")
    assert good.returncode == 0, good.stdout + good.stderr
    assert run(root, "schema", "--check").returncode == 0
    found = probe(root, "venue_status", "published", key)
    assert found["categories"] == ["preprint", "published"]
    assert found["count"] == found["row"] == 1 and found["selected"] == [key]
    assert found["csv"] == ["published"]
    assert '<th scope="row">Venue status</th><td>Published</td>' in found["page"]


def test_a_vocabulary_value_is_taxonomy_yaml_alone(tmp_path: Path) -> None:
    text = recipe("Add a vocabulary value")
    assert "taxonomy.yaml" in text and "masrl-kb schema" in text
    root = scratch_copy(tmp_path / "kb")
    before = digests(root)
    # The edit: a ninth reward family and a reward type in it, in taxonomy.yaml.
    edit(
        root / "taxonomy.yaml",
        "      - id: NA\n        label: None\n"
        "        definition: The work has no reward design of its own.\n",
        "      - id: R99\n        label: Scratch family\n"
        "        definition: A family added by the recipe test.\n",
        after=False,
    )
    tax = (root / "taxonomy.yaml").read_text(encoding="utf-8")
    values = tax.index("    values:\n", tax.index("  reward_type:\n")) + len("    values:\n")
    added = (
        "      - id: scratch_reward\n"
        "        label: Scratch reward\n"
        "        definition: A reward type added by the recipe test.\n"
        "        family: R99\n"
    )
    (root / "taxonomy.yaml").write_text(tax[:values] + added + tax[values:], encoding="utf-8")
    # The generated files the recipe names.
    assert run(root, "schema").returncode == 0
    assert run(root, "export", "markdown").returncode == 0
    assert changed(before, root) == {"taxonomy.yaml", "schema/paper.schema.json", "AWESOME.md"}
    assert "R99" in (root / "AWESOME.md").read_text(encoding="utf-8")

    record = first_paper(root)
    key = record.stem
    content = record.read_text(encoding="utf-8")
    content = re.sub(r"(?m)^reward_type: .*$", "reward_type: scratch_reward", content, count=1)
    record.write_text(content, encoding="utf-8")
    done = run(root, "validate")
    assert done.returncode == 0, done.stdout + done.stderr
    assert run(root, "schema", "--check").returncode == 0
    found = probe(root, "reward_family", "R99", key)
    assert "R99" in found["categories"] and found["categories"][-1] == "NA"
    assert found["count"] == found["row"] == 1 and found["selected"] == [key]
    assert "Scratch family" in found["page"]


@pytest.mark.parametrize("title", ["Add an optional paper field", "Add a vocabulary value"])
def test_architecture_points_at_the_recipes(title: str) -> None:
    assert title in " ".join((REPO / "ARCHITECTURE.md").read_text(encoding="utf-8").split())

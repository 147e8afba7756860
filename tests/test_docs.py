"""The README's pandas example runs, and the documented example record validates."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from masrl_kb.kb.record_checks import validate

REPO = Path(__file__).resolve().parent.parent


def _fenced(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


def test_readme_opens_with_the_two_commands() -> None:
    readme = (REPO / "README.md").read_text()
    blocks = _fenced(readme, "sh")
    assert "masrl-kb build" in blocks[0] and "pip install -e ." in blocks[0]
    assert "pytest" in blocks[1] and '".[dev]"' in blocks[1]
    first_heading = readme.index("\n## ")
    assert readme.index(blocks[1]) < first_heading


def test_readme_pandas_example_runs() -> None:
    section = (REPO / "README.md").read_text().split("## Query with pandas", 1)[1]
    code = _fenced(section, "python")[0]
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - our own README
    assert len(namespace["papers"]) > 0
    assert (namespace["cell"]["topology"] == "swarm").all()


def test_documented_example_record_validates(tmp_path: Path) -> None:
    text = (REPO / "docs" / "record-format.md").read_text()
    record = _fenced(text, "yaml")[0]
    (tmp_path / "papers").mkdir()
    shutil.copy(REPO / "taxonomy.yaml", tmp_path / "taxonomy.yaml")
    (tmp_path / "papers" / "example-mas2026.yaml").write_text(record)
    # The example names a pooled benchmark; a one-record root has to hold it too.
    shutil.copy(REPO / "papers" / "gaia2023.yaml", tmp_path / "papers" / "gaia2023.yaml")
    report = validate(tmp_path)
    assert report.ok, report.problems
    assert report.papers == 2

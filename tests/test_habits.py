"""The suite's habits: CI runs every test and mypy; a plain local run leaves slow ones out."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

from tests.conftest import REPO


def test_ci_runs_every_test_and_mypy() -> None:
    blocks = re.findall(r"```sh\n(.*?)```", (REPO / "README.md").read_text(), flags=re.DOTALL)
    assert blocks[1].rstrip().endswith("python -m pytest --all")  # what .ci/run runs
    run = (REPO / ".ci" / "run").read_text()
    assert re.search(r"^\.venv/bin/mypy \|\| status=1$", run, re.M)
    assert run.rstrip().endswith('exit "${status}"')
    workflow = (REPO / ".github" / "workflows" / "ci.yml").read_text()
    assert re.search(r"run: python -m pytest --all$", workflow, re.M)
    assert re.search(r"run: mypy$", workflow, re.M)


def test_the_slow_marker_is_registered_and_left_out_by_default() -> None:
    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]
    assert "--strict-markers" in options["ini_options"]["addopts"]
    assert any(m.startswith("slow:") for m in options["ini_options"]["markers"])

    def collected(*args: str) -> str:
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--co"]
        done = subprocess.run(
            [*command, *args, "tests/test_wheel.py"], cwd=REPO, capture_output=True, text=True
        )
        return done.stdout.strip().splitlines()[-1]

    left_out = re.fullmatch(r"no tests collected \((\d+) deselected\) in .*", collected())
    assert left_out, "a plain run collects none of the wheel tests"
    assert re.fullmatch(rf"{left_out[1]} tests collected in .*", collected("--all"))

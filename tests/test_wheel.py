"""A wheel that works: built, installed in a fresh venv and run outside the clone.

The smoke test needs the package index (the fresh venv installs the declared
dependencies, nothing else), as CI has; it takes about a minute.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from email.parser import Parser
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from tests.conftest import REPO

# Builds a wheel and installs it in a fresh venv: about a minute, only with --all.
pytestmark = pytest.mark.slow

EXAMPLE = REPO / "traces" / "examples" / "debate.json"


def _clean_env() -> dict[str, str]:
    """The environment without anything pointing back at this clone."""
    drop = {"MASRL_KB_ROOT", "PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}
    return {k: v for k, v in os.environ.items() if k not in drop}


@cache
def _built(outdir: str) -> Path:
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", outdir, str(REPO)],
        check=True,
        capture_output=True,
        env=_clean_env(),
    )
    (wheel,) = Path(outdir).glob("masrl_kb-*.whl")
    return wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _built(str(tmp_path_factory.mktemp("dist")))


def _metadata(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return Parser().parsestr(archive.read(name).decode("utf-8"))


def _third_party_imports() -> set[str]:
    """Top-level modules the package imports that are neither stdlib nor its own."""
    found = set()
    for path in (REPO / "masrl_kb").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m != "masrl_kb"}


def test_build_requirements_support_the_spdx_licence() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["project"]["license"] == "CC0-1.0"
    assert "setuptools>=77" in config["build-system"]["requires"]
    assert (
        (REPO / "LICENSE")
        .read_text(encoding="utf-8")
        .startswith("Creative Commons Legal Code\n\nCC0 1.0 Universal")
    )


def test_every_imported_distribution_is_declared(wheel: Path) -> None:
    def norm(name: str) -> str:  # PEP 503: minify-html and minify_html are one project
        return re.sub(r"[-_.]+", "-", name).lower()

    declared = {
        norm(req.split(";")[0].split(">")[0].split("=")[0].strip())
        for req in _metadata(wheel).get_all("Requires-Dist")
        if "extra ==" not in req
    }
    providers = packages_distributions()
    for module in sorted(_third_party_imports()):
        names = {norm(d) for d in providers.get(module, [module])}
        assert names & declared, f"{module} is imported but no distribution of it is declared"


def test_wheel_carries_its_data(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        schema = archive.read("masrl_kb/traces/data/trace.schema.json")
        licence = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    assert schema == (REPO / "traces" / "trace.schema.json").read_bytes()
    assert {"masrl_kb/traces/data/trace_page.md", "masrl_kb/traces/data/timeline.html"} <= names
    assert licence
    templates = REPO / "masrl_kb" / "site" / "templates"
    for path in templates.rglob("*") if templates.is_dir() else ():
        if path.is_file() and "__pycache__" not in path.parts:
            assert path.relative_to(REPO).as_posix() in names
    metadata = _metadata(wheel)
    assert metadata["License-Expression"] == "CC0-1.0"
    assert metadata.get_all("Project-URL") and metadata.get_all("Classifier")


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, env=_clean_env(), capture_output=True, text=True, check=False
    )


def test_installed_wheel_runs_outside_the_clone(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)]
    installed = _run(pip, tmp_path)
    assert installed.returncode == 0, installed.stderr[-2000:]
    kb = str(venv / "bin" / "masrl-kb")
    outside = tmp_path / "elsewhere"
    outside.mkdir()

    helped = _run([kb, "--help"], outside)
    assert helped.returncode == 0 and "validate" in helped.stdout
    validated = _run([kb, "--root", str(REPO), "validate"], outside)
    assert validated.returncode == 0, validated.stderr
    assert validated.stdout.startswith("ok: ")
    traced = _run([kb, "trace", "validate", str(EXAMPLE)], outside)
    assert traced.returncode == 0, traced.stderr
    assert traced.stdout.startswith(f"{EXAMPLE}: ok (")
    schemas = _run([kb, "--root", str(REPO), "schema", "--check"], outside)
    assert schemas.returncode == 0, schemas.stderr

    lost = _run([kb, "validate"], outside)  # no clone here and no --root
    assert lost.returncode == 2
    assert lost.stderr.count("\n") == 1 and "taxonomy.yaml" in lost.stderr

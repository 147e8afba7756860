"""Each command imports only what it uses (issue 14): checked in a fresh interpreter."""

from __future__ import annotations

import functools
import json
import subprocess
import sys

import pytest

from tests.conftest import REPO

HEAVY = ("pandas", "numpy", "requests", "jsonschema", "bibtexparser", "mkdocs", "pydantic")
EXAMPLE = REPO / "traces" / "examples" / "debate.json"

# Runs one command in-process, then reports which heavy modules it left loaded.
PROBE = """
import json, sys
from masrl_kb.cli.main import main
try:
    code = main(sys.argv[1:])
except SystemExit as exit:
    code = exit.code
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print("\\n" + json.dumps({{"code": code, "heavy": heavy}}))
"""


def _loaded(argv: list[str]) -> tuple[int, set[str]]:
    code, heavy = _probe(tuple(argv))
    return code, set(heavy)


@functools.cache
def _probe(argv: tuple[str, ...]) -> tuple[int, frozenset[str]]:
    """One fresh interpreter per command line a session (two tests probe ``stats``)."""
    script = PROBE.format(heavy=HEAVY)
    result = subprocess.run(
        [sys.executable, "-c", script, *argv], capture_output=True, text=True, check=False
    )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    return report["code"], frozenset(report["heavy"])


@pytest.mark.parametrize(
    ("argv", "allowed"),
    [
        (["--help"], set()),
        (["trace", "--help"], set()),
        (["validate"], {"pydantic"}),
        (["--root", str(REPO), "validate"], {"pydantic"}),
        (["trace", "validate", str(EXAMPLE)], {"jsonschema"}),
        (["stats"], {"pandas", "numpy", "pydantic"}),
    ],
    ids=["help", "trace-help", "validate", "validate-root", "trace-validate", "stats"],
)
def test_command_imports_only_what_it_uses(argv: list[str], allowed: set[str]) -> None:
    code, loaded = _loaded(argv)
    assert code == 0
    assert loaded <= allowed, f"{argv} imported {sorted(loaded - allowed)}"


def test_the_probe_sees_heavy_imports() -> None:
    """The check above can fail: a command that does need pandas is seen loading it."""
    code, loaded = _loaded(["stats"])
    assert code == 0 and "pandas" in loaded

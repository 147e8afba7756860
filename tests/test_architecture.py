"""ARCHITECTURE.md cannot rot: every module path and function it names exists.

The page names modules as ``masrl_kb/...`` paths and functions as backquoted
``name()`` (or ``Owner.name()``); each must be in the package as it is when the
tests run, so renaming or removing one without updating the page fails here.
"""

from __future__ import annotations

import ast
import re
from functools import cache

from masrl_kb.kb.paths import find_root

ROOT = find_root()
PAGE = ROOT / "ARCHITECTURE.md"
PACKAGE = ROOT / "masrl_kb"
# A package path in the text: masrl_kb/kb/model/, masrl_kb/kb/cache.py ...
MODULE_PATH = re.compile(r"masrl_kb(?:/[A-Za-z0-9_.]+)*/?")
# A backquoted call with no arguments: `load_papers()`, `Page.show()`.
CALL = re.compile(r"`((?:[A-Za-z_][A-Za-z0-9_]*\.)*([A-Za-z_][A-Za-z0-9_]*))\(\)`")


@cache
def defined_names() -> frozenset[str]:
    """Every function, method and class defined anywhere in the package."""
    names = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
    return frozenset(names)


def test_every_module_path_named_exists() -> None:
    paths = set(MODULE_PATH.findall(PAGE.read_text(encoding="utf-8")))
    assert len(paths) > 20, "the page should name the package's modules"
    missing = sorted(p for p in paths if not (ROOT / p.rstrip("/.")).exists())
    assert missing == [], f"ARCHITECTURE.md names modules that do not exist: {missing}"


def test_every_function_named_exists() -> None:
    calls = CALL.findall(PAGE.read_text(encoding="utf-8"))
    assert len(calls) > 30, "the page should name the functions of the walks"
    missing = sorted({full for full, name in calls if name not in defined_names()})
    assert missing == [], f"ARCHITECTURE.md names functions that do not exist: {missing}"


def test_the_checker_catches_a_stale_name() -> None:
    """The patterns find what the page writes, so a renamed function would be caught."""
    text = "see `masrl_kb/kb/nothing_here.py` and `Page.show()`, `no_such_function_xyz()`"
    assert MODULE_PATH.findall(text) == ["masrl_kb/kb/nothing_here.py"]
    assert not (ROOT / "masrl_kb/kb/nothing_here.py").exists()
    assert CALL.findall(text) == [
        ("Page.show", "show"),
        ("no_such_function_xyz", "no_such_function_xyz"),
    ]
    assert "no_such_function_xyz" not in defined_names()
    assert "load_papers" in defined_names()


def test_readme_and_contributing_link_the_page() -> None:
    for name in ("README.md", "CONTRIBUTING.md"):
        assert "ARCHITECTURE.md" in (ROOT / name).read_text(encoding="utf-8"), name

"""ARCHITECTURE.md cannot rot: every module path and function it names exists.

The page names modules as ``masrl_kb/...`` paths and functions as backquoted
``name()`` (or ``Owner.name()``); each must be in the package as it is when the
tests run, so renaming or removing one without updating the page fails here.
"""

from __future__ import annotations

import ast
import graphlib
import re
from functools import cache

import pytest

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


# ---------------------------------------------------------------- import directions

# A row of the folder table: | `masrl_kb/kb/` | job | may import |
TABLE_ROW = re.compile(r"^\| `(masrl_kb/[a-z_/]+/)` \|.*\| (.+?) \|$", re.M)
BACKQUOTED = re.compile(r"`([a-z_/]+)`")


def module_name(path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, object]:
    """Every module of the package by dotted name, with its path."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _type_only(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:`` (bare or as ``typing.TYPE_CHECKING``)."""
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def imported(source: str, name: str, is_package: bool, known) -> set[str]:
    """The package modules ``source`` (module ``name``) imports anywhere, inside functions
    too, except under ``if TYPE_CHECKING:``; ``from pkg import sub`` names ``pkg.sub``
    when that is a module of ``known``."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if _type_only(child):
                for other in child.orelse:  # the else branch runs
                    visit_one(other)
            else:
                visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".") if is_package else name.split(".")[:-1]
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
        else:
            visit(node)

    visit(ast.parse(source))
    return {m for m in found if m == "masrl_kb" or m.startswith("masrl_kb.")}


@cache
def import_graph() -> dict[str, frozenset[str]]:
    known = modules()
    return {
        name: frozenset(imported(path.read_text(), name, path.name == "__init__.py", known))
        for name, path in known.items()
    }


def folder_rules() -> dict[str, tuple[str, ...] | None]:
    """ARCHITECTURE.md's folder table: folder (dotted) -> the dotted prefixes it may import
    besides itself (None: anything)."""
    rules: dict[str, tuple[str, ...] | None] = {}
    for folder, may in TABLE_ROW.findall(PAGE.read_text(encoding="utf-8")):
        dotted = folder.rstrip("/").replace("/", ".")
        if may.strip().startswith("everything"):
            rules[dotted] = None
        else:
            names = BACKQUOTED.findall(may)
            rules[dotted] = tuple("masrl_kb." + n.rstrip("/").replace("/", ".") for n in names)
    return rules


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def folder_of(module: str, rules) -> str | None:
    """The table's row for ``module``: its deepest folder named there."""
    owners = [folder for folder in rules if _within(module, folder)]
    return max(owners, key=len, default=None)


def direction_breaks(graph, rules) -> list[str]:
    """Every import the folder table does not allow, as ``importer -> imported``. The
    package root (which imports no subpackage, see below) may be imported by anyone."""
    breaks = []
    for module, targets in sorted(graph.items()):
        folder = folder_of(module, rules)
        allowed = rules.get(folder) if folder else None
        if folder is None or allowed is None:
            continue
        for target in sorted(targets):
            ok = target == "masrl_kb" or _within(target, folder)
            if not (ok or any(_within(target, prefix) for prefix in allowed)):
                breaks.append(f"{module} -> {target}")
    return breaks


def test_the_folder_table_covers_every_subpackage() -> None:
    rules = folder_rules()
    assert {"masrl_kb.kb", "masrl_kb.kb.model", "masrl_kb.cli", "masrl_kb.traces"} <= set(rules)
    assert rules["masrl_kb.cli"] is None  # "everything"
    assert rules["masrl_kb.query"] == ("masrl_kb.kb",)
    loose = [m for m in modules() if m != "masrl_kb" and folder_of(m, rules) is None]
    assert loose == [], f"modules in no folder of ARCHITECTURE.md's table: {loose}"


def test_imports_follow_the_folder_table() -> None:
    breaks = direction_breaks(import_graph(), folder_rules())
    assert breaks == [], f"imports ARCHITECTURE.md's folder table does not allow: {breaks}"


def test_the_package_root_imports_no_subpackage() -> None:
    """``masrl_kb/__init__.py`` re-exports lazily, so every folder may import it."""
    assert import_graph()["masrl_kb"] == frozenset()


def test_no_import_cycles() -> None:
    graph = import_graph()
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        raise AssertionError(f"import cycle: {' -> '.join(error.args[1])}") from None
    assert set(order) >= set(modules())


def test_the_import_checks_can_fail() -> None:
    """Imports inside functions count, type-only ones do not, relative ones resolve; a
    disallowed import and a cycle are both found."""
    known = {"masrl_kb.kb.a", "masrl_kb.kb.b", "masrl_kb.query.q", "masrl_kb.query"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from masrl_kb.query import q\n"
        "def f():\n    from masrl_kb.query.q import thing\n"
        "from . import b\n"
        "import json\n"
    )
    found = imported(source, "masrl_kb.kb.a", False, known)
    assert found == {"masrl_kb.query.q", "masrl_kb.kb.b"}
    assert imported("from masrl_kb.query import q\n", "masrl_kb.kb.a", False, known) == {
        "masrl_kb.query.q"
    }
    assert imported(source.replace("def f():\n    ", ""), "masrl_kb.kb.a", False, known) == found
    rules = {"masrl_kb.kb": ("masrl_kb.kb",), "masrl_kb.query": ("masrl_kb.kb",)}
    graph = {"masrl_kb.kb.a": found, "masrl_kb.kb.b": set(), "masrl_kb.query.q": set()}
    assert direction_breaks(graph, rules) == ["masrl_kb.kb.a -> masrl_kb.query.q"]
    cyclic = {"a": {"b"}, "b": {"a"}}
    with pytest.raises(graphlib.CycleError):
        list(graphlib.TopologicalSorter(cyclic).static_order())


def test_every_module_name_is_distinct() -> None:
    """A module's file name says which module it is: no two share one (``__init__`` and
    ``__main__`` aside), so a traceback or a grep names one file."""
    seen: dict[str, list[str]] = {}
    for name, path in modules().items():
        if path.stem not in ("__init__", "__main__"):
            seen.setdefault(path.stem, []).append(name)
    assert {stem: names for stem, names in seen.items() if len(names) > 1} == {}

"""A citable release: ``masrl-kb release VERSION`` stamps ``CITATION.cff`` (only its
``version`` and ``date-released`` lines), the package's version (``pyproject.toml``'s
``[project] version`` and ``masrl_kb/__init__.py``'s ``__version__``, when the data root
holds them, as the clone does) and writes ``.zenodo.json``, which Zenodo reads to mint
the tagged release's DOI; its counts are computed from the records.

Every file is read with the project's safe loaders and every stamp is checked by reading
the stamped text back: a file the tool cannot stamp exactly (a quoted key, flow style, a
key given twice) is refused, not left half-changed. Line ends are kept as they are, and
nothing is written unless every file can be.
"""

from __future__ import annotations

import ast
import datetime as dt
import json
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from masrl_kb.kb.atomic import write_atomic
from masrl_kb.kb.paths import find_root
from masrl_kb.kb.text import shorten
from masrl_kb.kb.yamlio import LineDict, UnsafeFileError, decode_yaml_bytes, read_regular_file

CITATION = "CITATION.cff"
ZENODO = ".zenodo.json"
PYPROJECT = "pyproject.toml"
PACKAGE_INIT = "masrl_kb/__init__.py"
VERSION = re.compile(r"(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})")
MAX_CITATION_BYTES = 64 * 1024
MAX_SOURCE_BYTES = 1 << 20
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # events only, as fast as libyaml
# One stampable line: the key at the start, a plain or quoted value, nothing after it.
_STAMPABLE = r"^({key}[ \t]*{sep}[ \t]*)([\"']?)([^\"'\s#]+)(\2[ \t]*)$"


class ReleaseError(ValueError):
    """A bad version or date, or a file that cannot be stamped."""


def parse_version(text: str) -> tuple[int, ...]:
    """``MAJOR.MINOR.PATCH`` as numbers (the whole text; no sign, space or line end);
    :class:`ReleaseError` otherwise."""
    match = VERSION.fullmatch(text) if isinstance(text, str) else None
    if not match:
        shown = shorten(repr(text))
        raise ReleaseError(f"version {shown}: expected MAJOR.MINOR.PATCH, e.g. 0.2.0")
    return tuple(int(g) for g in match.groups())


# ---------------------------------------------------------------- reading


def _read(root: Path, rel: str, limit: int) -> bytes:
    try:
        return read_regular_file(root / rel, limit)
    except UnsafeFileError as err:
        raise ReleaseError(f"{rel}: {err}") from None


def _decode(raw: bytes, rel: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise ReleaseError(f"{rel}:{line}: not valid UTF-8 (byte {err.start})") from None


def _where(data: LineDict, key: str) -> str:
    return f"{CITATION}:{data.line_of(key)}: {key}"


def _check_field(data: LineDict, key: str, ok: Callable[[Any], bool], expected: str) -> None:
    if key in data and not ok(data[key]):
        raise ReleaseError(f"{_where(data, key)}: expected {expected}")


def _is_text(value: object) -> bool:
    return isinstance(value, str)


def _is_author(value: object) -> bool:
    if not isinstance(value, dict):
        return False
    names = [value.get(k) for k in ("name", "family-names", "given-names") if k in value]
    return bool(names) and all(isinstance(n, str) and n.strip() for n in names)


def _is_reference(value: object) -> bool:
    return isinstance(value, dict) and isinstance(value.get("url", ""), str)


def _list_of(ok: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, list) and all(ok(v) for v in value)


def check_citation(data: object) -> LineDict:
    """The citation mapping with every field the release reads shaped as it reads it;
    :class:`ReleaseError` naming the line and field otherwise."""
    if not isinstance(data, LineDict):
        raise ReleaseError(f"{CITATION}:1: expected a mapping of CFF keys (cff-version: ...)")
    for key in ("version", "date-released", "authors"):
        if key not in data:
            raise ReleaseError(f"{CITATION}:{data.line}: {key}: missing (a top-level {key}: line)")
    version = data["version"]
    if not isinstance(version, str) or not VERSION.fullmatch(version):
        raise ReleaseError(f"{_where(data, 'version')}: expected MAJOR.MINOR.PATCH, e.g. 0.1.0")
    released = data["date-released"]
    if not isinstance(released, dt.date) or isinstance(released, dt.datetime):
        raise ReleaseError(f"{_where(data, 'date-released')}: expected a date YYYY-MM-DD")
    _check_field(data, "title", _is_text, "text")
    _check_field(data, "abstract", _is_text, "text")
    authors = "a non-empty list of persons or entities, each with name: or family-names:"
    _check_field(data, "authors", lambda v: bool(v) and _list_of(_is_author)(v), authors)
    _check_field(data, "keywords", _list_of(_is_text), "a list of text keywords")
    references = "a list of references, each a mapping (its url: text)"
    _check_field(data, "references", _list_of(_is_reference), references)
    return data


def read_citation(root: Path) -> tuple[str, LineDict]:
    """The citation file's text and its checked mapping (a regular file, bounded, UTF-8,
    safe YAML without repeated keys, anchors or aliases)."""
    raw = _read(root, CITATION, MAX_CITATION_BYTES)
    text = _decode(raw, CITATION)
    loaded = decode_yaml_bytes(raw)
    if loaded.problems:
        first = loaded.problems[0]
        raise ReleaseError(f"{CITATION}:{first.line}: {first.field}: {first.message}")
    _refuse_aliases(text)
    return text, check_citation(loaded.data)


def _refuse_aliases(text: str) -> None:
    """Refuse anchors and aliases: a citation file needs none, and a nest of them (an
    alias bomb) expands without bound once compared or written out."""
    for event in yaml.parse(text, Loader=SafeLoader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            line = event.start_mark.line + 1 if event.start_mark else 1
            raise ReleaseError(
                f"{CITATION}:{line}: yaml: anchors and aliases (& and *) are not supported"
            )


# ---------------------------------------------------------------- stamping


def _stamp_line(text: str, rel: str, key: str, sep: str, value: str, line: int | None) -> str:
    """``text`` with the one line setting ``key`` given ``value``; that line must be
    ``line`` (1-based, as the file's parser found the key) when given."""
    pattern = re.compile(_STAMPABLE.format(key=re.escape(key), sep=re.escape(sep)))
    lines = text.splitlines(keepends=True)
    found = [i for i, body in enumerate(lines) if pattern.match(body.rstrip("\r\n"))]
    if len(found) != 1 or (line is not None and found[0] != line - 1):
        where = f"{rel}:{line}" if line else rel
        form = f"{key}: VALUE" if sep == ":" else f'{key} {sep} "VALUE"'
        raise ReleaseError(
            f"{where}: {key}: cannot stamp exactly; write it once as a plain line "
            f"`{form}` at the start of a line (no quotes around the key, "
            "no flow style, no comment after it)"
        )
    i = found[0]
    body = lines[i].rstrip("\r\n")
    ending = lines[i][len(body) :]
    match = pattern.match(body)
    if match is None:  # pragma: no cover - found above
        raise ReleaseError(f"{rel}: {key}: cannot stamp exactly")
    lines[i] = f"{match.group(1)}{match.group(2)}{value}{match.group(4)}{ending}"
    return "".join(lines)


def stamped_citation(text: str, version: str, date: dt.date, cff: LineDict) -> str:
    """The citation text with its version and release date replaced, nothing else
    (checked by reading it back: :class:`ReleaseError` when anything else moved)."""
    new = _stamp_line(text, CITATION, "version", ":", version, cff.line_of("version"))
    new = _stamp_line(
        new, CITATION, "date-released", ":", date.isoformat(), cff.line_of("date-released")
    )
    again = decode_yaml_bytes(new.encode("utf-8"))
    expected = {**cff, "version": version, "date-released": date}
    if again.problems or again.data != expected:
        raise ReleaseError(f"{CITATION}: cannot stamp exactly; the file reads differently after")
    return new


@dataclass(frozen=True)
class Stamp:
    """One file whose version is stamped: its path, current version and new text."""

    rel: str
    current: str
    text: str


def _pyproject_stamp(root: Path, version: str) -> Stamp | None:
    """``pyproject.toml`` with ``[project] version`` set; None without the file or with a
    dynamic version (then ``__version__`` is the one to stamp)."""
    if not os.path.lexists(root / PYPROJECT):
        return None
    text = _decode(_read(root, PYPROJECT, MAX_SOURCE_BYTES), PYPROJECT)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ReleaseError(f"{PYPROJECT}: not TOML ({shorten(str(err))})") from None
    project = data.get("project")
    if not isinstance(project, dict) or "version" not in project:
        return None
    current = project["version"]
    if not isinstance(current, str) or not VERSION.fullmatch(current):
        raise ReleaseError(f"{PYPROJECT}: [project] version: expected MAJOR.MINOR.PATCH")
    lines = text.splitlines(keepends=True)
    header = next((i for i, s in enumerate(lines) if s.rstrip() == "[project]"), None)
    if header is None:
        raise ReleaseError(f"{PYPROJECT}: cannot stamp exactly; no [project] header line")
    # The [project] table alone (to the next table header) holds the line to stamp.
    end = next((i for i in range(header + 1, len(lines)) if lines[i].startswith("[")), len(lines))
    table = "".join(lines[header + 1 : end])
    stamped_table = _stamp_line(table, PYPROJECT, "version", "=", version, None)
    new = "".join(lines[: header + 1]) + stamped_table + "".join(lines[end:])
    if tomllib.loads(new) != {**data, "project": {**project, "version": version}}:
        raise ReleaseError(f"{PYPROJECT}: cannot stamp exactly; the file reads differently after")
    return Stamp(PYPROJECT, current, new)


def _init_stamp(root: Path, version: str) -> Stamp | None:
    """``masrl_kb/__init__.py`` with ``__version__`` set; None without the file."""
    if not os.path.lexists(root / PACKAGE_INIT):
        return None
    text = _decode(_read(root, PACKAGE_INIT, MAX_SOURCE_BYTES), PACKAGE_INIT)
    try:
        found = _version_assignment(ast.parse(text))
    except SyntaxError:
        raise ReleaseError(f"{PACKAGE_INIT}: not Python") from None
    if found is None:
        raise ReleaseError(f'{PACKAGE_INIT}: no __version__ = "MAJOR.MINOR.PATCH" line')
    current, line = found
    new = _stamp_line(text, PACKAGE_INIT, "__version__", "=", version, line)
    if _version_assignment(ast.parse(new)) != (version, line):
        raise ReleaseError(f"{PACKAGE_INIT}: cannot stamp exactly; it reads differently after")
    return Stamp(PACKAGE_INIT, current, new)


def _version_assignment(module: ast.Module) -> tuple[str, int] | None:
    """The value and line of the module's one ``__version__ = "..."``; None when none or
    several, or not a plain string."""
    found = [
        node
        for node in module.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets)
    ]
    if len(found) != 1:
        return None
    value = found[0].value
    if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        return None
    return value.value, found[0].lineno


# ---------------------------------------------------------------- metadata


def zenodo_metadata(cff: dict, version: str, date: dt.date, counts: dict[str, object]) -> dict:
    """Zenodo's deposit metadata for this release, from the checked citation file and the
    pool."""
    creators = [{"name": a.get("name") or _person(a)} for a in cff.get("authors", [])]
    description = (
        f"{cff.get('abstract', '').strip()} Version {version}: {counts['papers']} pooled papers "
        f"and {counts['exclusions']} exclusion records; the pool covers papers up to "
        f"{counts['coverage']}."
    )
    related = [
        {"relation": "isSupplementTo", "identifier": ref_url, "scheme": "url"}
        for ref_url in (r.get("url") for r in cff.get("references", []))
        if isinstance(ref_url, str)
    ]
    return {
        "title": cff.get("title", ""),
        "upload_type": "dataset",
        "description": description,
        "creators": creators,
        "version": version,
        "publication_date": date.isoformat(),
        "license": "cc-zero",
        "keywords": list(cff.get("keywords", [])),
        "related_identifiers": related,
    }


def _person(author: dict) -> str:
    return ", ".join(p for p in (author.get("family-names"), author.get("given-names")) if p)


def pool_counts(root: Path) -> dict[str, object]:
    """Papers, exclusions and the coverage date, as the release describes them."""
    from masrl_kb.query.pool import load_pool
    from masrl_kb.query.views import pool_coverage

    papers, exclusions = load_pool(root)
    return {"papers": len(papers), "exclusions": len(exclusions), "coverage": pool_coverage(root)}


# ---------------------------------------------------------------- the release


def _check_date(date: dt.date, current: dt.date, today: dt.date) -> None:
    if date > today:
        raise ReleaseError(f"release date {date}: after today ({today}); a release is dated")
    if date < current:
        raise ReleaseError(
            f"release date {date}: before the current release's date-released {current} "
            f"({CITATION})"
        )


def _write_all(files: dict[Path, str]) -> None:
    """Write every file or, when one write fails, put back the ones already written."""
    done: list[tuple[Path, bytes | None]] = []
    try:
        for path, content in files.items():
            old = path.read_bytes() if path.is_file() else None
            write_atomic(path, content.encode("utf-8"))  # bytes: line ends kept as they are
            done.append((path, old))
    except BaseException:
        for path, old in reversed(done):
            if old is None:
                path.unlink(missing_ok=True)
            else:
                write_atomic(path, old)
        raise


def release(
    version: str,
    date: dt.date,
    root: str | os.PathLike[str] | None = None,
    today: dt.date | None = None,
) -> list[Path]:
    """Stamp CITATION.cff and the package version and write .zenodo.json; the version
    must not go backwards, the date must lie between the current release's and today."""
    base = find_root(root)
    new = parse_version(version)
    text, cff = read_citation(base)
    _check_date(date, cff["date-released"], today or dt.date.today())
    stamps = [Stamp(CITATION, cff["version"], stamped_citation(text, version, date, cff))]
    stamps += [s for s in (_pyproject_stamp(base, version), _init_stamp(base, version)) if s]
    for stamp in stamps:
        if parse_version(stamp.current) > new:
            raise ReleaseError(f"version {version} is older than {stamp.rel}'s {stamp.current}")
    target = base / ZENODO
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise ReleaseError(f"{ZENODO}: expected a regular file (not a link) in {base}")
    meta = zenodo_metadata(cff, version, date, pool_counts(base))
    files = {base / s.rel: s.text for s in stamps}
    files[target] = json.dumps(meta, indent=2, ensure_ascii=False, default=str) + "\n"
    _write_all(files)
    return list(files)

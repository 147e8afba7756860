"""Safe YAML loading that keeps line numbers and catches repeated keys.

PyYAML silently keeps the last of two equal mapping keys; a record with a key
given twice would lose data without a word, so the loader reports them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

try:  # the C loader is several times faster; fall back when libyaml is absent
    _BaseLoader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _BaseLoader = yaml.SafeLoader


class LineDict(dict):
    """A mapping that remembers the line of itself and of each key (1-based)."""

    line: int = 0
    key_lines: dict

    def line_of(self, key: Any) -> int:
        """Line of ``key`` if present, else the mapping's own line."""
        return self.key_lines.get(key, self.line)


@dataclass
class YamlProblem:
    """A problem found while reading a YAML file."""

    line: int
    field: str
    message: str


@dataclass
class LoadedYaml:
    """The parsed document plus what went wrong on the way."""

    data: Any
    problems: list[YamlProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


class _LineLoader(_BaseLoader):
    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[YamlProblem] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> LineDict:
        self.flatten_mapping(node)
        mapping = LineDict()
        mapping.line = node.start_mark.line + 1
        mapping.key_lines = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            try:
                seen = key in mapping.key_lines
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    None, None, "found an unhashable mapping key", key_node.start_mark
                ) from None
            if seen:
                first = mapping.key_lines[key]
                self.duplicates.append(
                    YamlProblem(line, str(key), f"key given twice (first on line {first})")
                )
            mapping[key] = self.construct_object(value_node, deep=deep)
            mapping.key_lines[key] = line
        return mapping

    def construct_yaml_map(self, node: yaml.MappingNode):  # type: ignore[override]
        data = LineDict()
        data.line = node.start_mark.line + 1
        data.key_lines = {}
        yield data
        built = self.construct_mapping(node)
        data.update(built)
        data.key_lines = built.key_lines


_LineLoader.add_constructor("tag:yaml.org,2002:map", _LineLoader.construct_yaml_map)


def _decode(raw: bytes) -> tuple[str | None, YamlProblem | None]:
    if b"\x00" in raw:
        return None, YamlProblem(1, "file", "binary content (NUL byte): records must be UTF-8 text")
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        return None, YamlProblem(
            line, "file", f"not valid UTF-8 (byte 0x{raw[err.start]:02x}): save the file as UTF-8"
        )


def load_yaml_text(text: str) -> LoadedYaml:
    """Parse one YAML document, collecting syntax errors and repeated keys."""
    loader = _LineLoader(text)
    try:
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark else 1
        what = " ".join(x for x in (err.context, err.problem) if x)
        return LoadedYaml(None, [YamlProblem(line, "yaml", f"malformed YAML: {what}")])
    except yaml.YAMLError as err:
        return LoadedYaml(None, [YamlProblem(1, "yaml", f"malformed YAML: {err}")])
    finally:
        loader.dispose()
    return LoadedYaml(data, list(loader.duplicates))


def load_yaml_file(path: str | os.PathLike[str]) -> LoadedYaml:
    """Read and parse a YAML file; never raises on bad content."""
    text, problem = _decode(Path(path).read_bytes())
    if problem is not None:
        return LoadedYaml(None, [problem])
    return load_yaml_text(text)

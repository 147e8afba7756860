"""Reading record files from ``papers/`` and ``exclusions/``."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from masrl_kb.paths import find_root
from masrl_kb.yamlio import LineDict, YamlProblem, load_yaml_file

PAPERS_DIR = "papers"
EXCLUSIONS_DIR = "exclusions"
RECORD_SUFFIX = ".yaml"


@dataclass
class RecordFile:
    """One record file: its parsed mapping and any read problems."""

    kind: str  # "paper" or "exclusion"
    rel: str  # path relative to the data root, with forward slashes
    data: object
    problems: list[YamlProblem] = field(default_factory=list)

    @property
    def stem(self) -> str:
        return Path(self.rel).stem

    def line(self, name: str) -> int:
        """Line of a top-level field, 1 when unknown."""
        if isinstance(self.data, LineDict):
            return self.data.line_of(name) or 1
        return 1


@dataclass
class RecordSet:
    """Every record file under a data root."""

    root: Path
    papers: list[RecordFile]
    exclusions: list[RecordFile]
    stray: list[str]  # files in the record folders that are not *.yaml


def _read_dir(root: Path, folder: str, kind: str) -> tuple[list[RecordFile], list[str]]:
    base = root / folder
    if not base.is_dir():
        return [], []
    records, stray = [], []
    for path in sorted(base.iterdir()):
        rel = f"{folder}/{path.name}"
        if path.name.startswith(".") or path.is_dir():
            continue
        if path.suffix != RECORD_SUFFIX:
            stray.append(rel)
            continue
        loaded = load_yaml_file(path)
        records.append(RecordFile(kind, rel, loaded.data, loaded.problems))
    return records, stray


def read_records(root: str | os.PathLike[str] | None = None) -> RecordSet:
    """Parse every record file (no validation beyond YAML itself)."""
    base = find_root(root)
    papers, stray_p = _read_dir(base, PAPERS_DIR, "paper")
    exclusions, stray_e = _read_dir(base, EXCLUSIONS_DIR, "exclusion")
    return RecordSet(base, papers, exclusions, stray_p + stray_e)

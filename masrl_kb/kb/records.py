"""Reading record files from ``papers/`` and ``exclusions/``."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from masrl_kb.kb.paths import find_root
from masrl_kb.kb.yamlio import LineDict, YamlProblem, load_yaml_file

PAPERS_DIR = "papers"
EXCLUSIONS_DIR = "exclusions"
RECORD_SUFFIX = ".yaml"
# Parsing is CPU-bound Python work; below this many files a process pool costs
# more than it saves.
PARALLEL_THRESHOLD = 2000


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

    @property
    def id_field(self) -> str:
        """The field that names the record and must equal the file name."""
        return "key" if self.kind == "paper" else "id"

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


def _parse_all(paths: list[Path]) -> list:
    workers = min(os.cpu_count() or 1, 8)
    if len(paths) < PARALLEL_THRESHOLD or workers < 2:
        return [load_yaml_file(p) for p in paths]
    chunk = max(1, len(paths) // (workers * 4))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(load_yaml_file, paths, chunksize=chunk))


def _read_dir(root: Path, folder: str, kind: str) -> tuple[list[RecordFile], list[str]]:
    base = root / folder
    if not base.is_dir():
        return [], []
    paths, stray = [], []
    for path in sorted(base.iterdir()):
        if path.name.startswith(".") or path.is_dir():
            continue
        if path.suffix != RECORD_SUFFIX:
            stray.append(f"{folder}/{path.name}")
            continue
        paths.append(path)
    records = [
        RecordFile(kind, f"{folder}/{path.name}", loaded.data, loaded.problems)
        for path, loaded in zip(paths, _parse_all(paths), strict=True)
    ]
    return records, stray


def read_records(root: str | os.PathLike[str] | None = None) -> RecordSet:
    """Parse every record file (no validation beyond YAML itself)."""
    base = find_root(root)
    papers, stray_p = _read_dir(base, PAPERS_DIR, "paper")
    exclusions, stray_e = _read_dir(base, EXCLUSIONS_DIR, "exclusion")
    return RecordSet(base, papers, exclusions, stray_p + stray_e)

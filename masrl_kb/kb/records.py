"""Reading record files from ``papers/`` and ``exclusions/``, defensively
(:func:`masrl_kb.kb.yamlio.read_regular_file`): a link, FIFO, device or oversized
file becomes a problem on that file, never a followed link, a hang or a memory error.
"""

from __future__ import annotations

import os
import stat
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from masrl_kb.kb.paths import Root, find_root
from masrl_kb.kb.yamlio import (
    LineDict,
    LoadedYaml,
    UnsafeFileError,
    YamlProblem,
    decode_yaml_bytes,
    parse_yaml_bytes,
    read_regular_file,
)

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
        return (self.data.line_of(name) or 1) if isinstance(self.data, LineDict) else 1


@dataclass
class RecordSet:
    """Every record file under a data root."""

    root: Path
    papers: list[RecordFile]
    exclusions: list[RecordFile]
    stray: list[str]  # files in the record folders that are not *.yaml
    # (folder, message): a record folder that is missing or not a folder.
    folder_problems: list[tuple[str, str]] = field(default_factory=list)


def _parse_all(raws: list[bytes]) -> list[LoadedYaml]:
    workers = min(os.cpu_count() or 1, 8)
    if len(raws) < PARALLEL_THRESHOLD or workers < 2:
        return [decode_yaml_bytes(r) for r in raws]
    chunk = max(1, len(raws) // (workers * 4))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(parse_yaml_bytes, raws, chunksize=chunk))


def _folder_problem(base: Path, folder: str, required: bool) -> str | None:
    try:
        mode = os.lstat(base).st_mode
    except FileNotFoundError:
        if required:
            return f"folder missing: the records live in {folder}/ under the data root ({base})"
        return None
    if stat.S_ISLNK(mode) or not stat.S_ISDIR(mode):
        return f"{folder}/ must be a folder (symbolic links are not followed)"
    return None


def _record_paths(base: Path, folder: str) -> tuple[list[Path], list[str]]:
    paths, stray = [], []
    with os.scandir(base) as entries:
        names = sorted((e.name, e.is_dir(follow_symlinks=False)) for e in entries)
    for name, is_dir in names:
        if name.startswith(".") or is_dir:
            continue
        if not name.endswith(RECORD_SUFFIX):
            stray.append(f"{folder}/{name}")
            continue
        paths.append(base / name)
    return paths, stray


def _load_files(paths: list[Path]) -> list[LoadedYaml]:
    """Each file parsed; one that cannot be read safely is a problem on that file."""
    read: list[bytes | LoadedYaml] = []
    for path in paths:
        try:
            read.append(read_regular_file(path))
        except UnsafeFileError as err:
            read.append(LoadedYaml(None, [YamlProblem(1, "file", str(err))]))
    parsed = iter(_parse_all([r for r in read if isinstance(r, bytes)]))
    return [next(parsed) if isinstance(r, bytes) else r for r in read]


def _read_dir(
    root: Path, folder: str, kind: str, required: bool
) -> tuple[list[RecordFile], list[str], str | None]:
    base = root / folder
    problem = _folder_problem(base, folder, required)
    if problem or not base.is_dir():
        return [], [], problem
    paths, stray = _record_paths(base, folder)
    records = [
        RecordFile(kind, f"{folder}/{path.name}", loaded.data, loaded.problems)
        for path, loaded in zip(paths, _load_files(paths), strict=True)
    ]
    return records, stray, None


def read_records(root: Root = None) -> RecordSet:
    """Parse every record file (no validation beyond YAML itself); ``papers/`` must exist
    (an empty pool is an empty folder), ``exclusions/`` may be absent."""
    base = find_root(root)
    papers, stray_p, missing_p = _read_dir(base, PAPERS_DIR, "paper", True)
    exclusions, stray_e, missing_e = _read_dir(base, EXCLUSIONS_DIR, "exclusion", False)
    folder_problems = [
        (name, message)
        for name, message in ((PAPERS_DIR, missing_p), (EXCLUSIONS_DIR, missing_e))
        if message
    ]
    return RecordSet(base, papers, exclusions, stray_p + stray_e, folder_problems)

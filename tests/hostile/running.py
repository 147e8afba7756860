"""What the hostile-input runners share: one command-line run with its output captured,
environment variables set for that run alone, a deadline no handler can swallow, the
checks every outcome gets, and the loop that counts a group's outcomes."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from masrl_kb.cli.common import EXIT_BUG

# What must never reach a terminal: C0 controls but the newline, DEL and C1.
CONTROL = frozenset(
    {chr(c) for c in range(0x20) if c != 0x0A} | {chr(c) for c in range(0x7F, 0xA0)}
)
BIDI = frozenset("\u202d\u202e\u2066\u2067\u2068\u2069")

Case = TypeVar("Case")
Outcome = TypeVar("Outcome")


@dataclass
class Run:
    """One command-line run: exit code (None when it crashed), output, time taken."""

    code: int | None
    out: str
    err: str
    seconds: float
    crash: str = ""  # the traceback of an exception that escaped ``main``
    hung: bool = False  # stopped by :func:`deadline`

    @property
    def text(self) -> str:
        return self.out + self.err


def _put(values: Mapping[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@contextlib.contextmanager
def environ(values: Mapping[str, str | None]) -> Iterator[None]:
    """``values`` set in ``os.environ`` for the block (None: unset), then put back."""
    saved = {name: os.environ.get(name) for name in values}
    _put(values)
    try:
        yield
    finally:
        _put(saved)


def run_cli(argv: list[str], env: Mapping[str, str] | None = None) -> Run:
    """Run ``masrl-kb argv`` in-process; an exit through SystemExit counts as its code."""
    from masrl_kb.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code: int | None = None
    crash, hung = "", False
    start = time.monotonic()
    try:
        with environ(env or {}), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    except BaseException as exc:  # noqa: BLE001 - a crash is what the corpus measures
        crash, hung = traceback.format_exc(), isinstance(exc, TimeUp)
    return Run(code, out.getvalue(), err.getvalue(), time.monotonic() - start, crash, hung)


class TimeUp(BaseException):
    """Raised by :func:`deadline`. A BaseException, so that the command line's
    catch-all (``except Exception``: exit 70) cannot report a hang as an error."""


@contextlib.contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Raise :class:`TimeUp` in the block once ``seconds`` have passed."""

    def ring(signum, frame):  # noqa: ARG001
        raise TimeUp

    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@dataclass
class Judged:
    """How a command-line case ended: ``rejected`` (cleanly), ``unclear``, ``accepted``
    or ``crashed``; its output and what was wrong with it."""

    kind: str
    output: str
    reasons: list[str] = field(default_factory=list)
    seconds: float = 0.0


def files(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` (a link as its target), the per-user cache aside."""
    found = {}
    for path in sorted(root.rglob("*")):
        if ".cache" in path.parts:
            continue
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[rel] = os.readlink(path).encode()
        elif path.is_file():
            found[rel] = path.read_bytes()
    return found


def common_reasons(run: Run, within: float, control: frozenset[str] = CONTROL) -> list[str]:
    """What is wrong with any outcome: too slow, a traceback, a bug, controls shown."""
    reasons = []
    if run.seconds > within:
        reasons.append(f"took {run.seconds:.1f} s")
    if "Traceback" in run.text:
        reasons.append("traceback")
    if run.code == EXIT_BUG:
        reasons.append(f"exit {EXIT_BUG}: an unexpected error, not a refusal")
    if control & set(run.text):
        reasons.append("control characters reached the terminal")
    return reasons


def one_error_line(err: str, message: str) -> str | None:
    """None when ``err`` is exactly one line and holds ``message``; else what is wrong."""
    errors = [line for line in err.splitlines() if line.strip()]
    if len(errors) == 1 and message in errors[0]:
        return None
    return f"expected one error line holding {message!r}: {errors[:3]}"


def in_scratch(run: Callable[[Case, Path], Outcome], case: Case) -> Outcome:
    """``run(case, folder)`` in a fresh temporary folder, removed after."""
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        return run(case, Path(tmp))


def tally(
    cases: Iterable[Case],
    run: Callable[[Case, Path], Outcome],
    verdict: Callable[[Case, Outcome], tuple[str, tuple[str, str, str] | None]],
    bad: list,
) -> dict[str, int]:
    """Counts by kind for tests/hostile/run_corpus.py: each case is run in a scratch
    folder and judged by ``verdict`` (its kind, and a failure row or None); failures
    are appended to ``bad``."""
    counts: dict[str, int] = {}
    for case in cases:
        kind, failure = verdict(case, in_scratch(run, case))
        counts[kind] = counts.get(kind, 0) + 1
        if failure is not None:
            bad.append(failure)
    return counts

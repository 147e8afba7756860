"""What every command module shares: the exit codes, the one-line error printer, the
sub-command helper and the argparse date type. It imports no command module, so the
command modules and :mod:`masrl_kb.cli.main` (which registers them) both import it."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Callable

# 1 only for a check that found something: a --check flag, check-links' broken links,
# `add`/`exclude` finding the paper already recorded, `diff` on an invalid working tree.
EXIT_FAILED = 1
# 2 for everything the user or their setup can fix, every network failure included (no
# connection, the deadline, an error status, a size cap, an unreadable answer).
EXIT_USER_ERROR = 2
EXIT_BUG = 70  # EX_SOFTWARE from sysexits.h
EXIT_INTERRUPTED = 130
MAX_MESSAGE = 400  # characters of one error line; hostile input can make messages huge
PROG = "masrl-kb"


class UsageError(Exception):
    """A problem with what the user asked for; the message says what and where."""


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one line (with the usage folded in), exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        usage = " ".join(self.format_usage().split())
        self.exit(EXIT_USER_ERROR, f"{self.prog}: error: {message} ({usage})\n")


def err(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)


def command(
    sub: argparse._SubParsersAction, name: str, func: Callable, about: str
) -> argparse.ArgumentParser:
    """The sub-command ``name`` running ``func``, whose docstring (if any) describes it."""
    p = sub.add_parser(name, help=about, description=func.__doc__)
    p.set_defaults(func=func)
    return p


def iso_date(text: str) -> dt.date:
    """An argparse type: a YYYY-MM-DD date."""
    from masrl_kb.kb.rules import iso_day

    try:
        return iso_day(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date YYYY-MM-DD") from None

"""``python -m masrl_kb.traces trace ...``: the trace commands without the main CLI."""

from __future__ import annotations

import argparse
import sys

from masrl_kb.traces.command import register


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen trace command."""
    parser = argparse.ArgumentParser(prog="python -m masrl_kb.traces")
    register(parser.add_subparsers(dest="command", metavar="COMMAND", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())

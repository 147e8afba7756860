"""The command line: one module per command group (main, contrib, trace)."""

from masrl_kb.cli.main import build_parser, main

__all__ = ["build_parser", "main"]

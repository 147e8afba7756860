"""``masrl-kb trace``: defined in :mod:`masrl_kb.traces.command`, runnable on its own."""

from masrl_kb.traces.command import register

__all__ = ["register"]

"""The ``masrl-kb trace`` sub-commands, defined in :mod:`masrl_kb.traces.command`.

They live with the traces package so ``python -m masrl_kb.traces`` runs them without
importing the rest of the command line.
"""

from masrl_kb.traces.command import register

__all__ = ["register"]

"""``python -m masrl_kb.cli``: the same entry point as ``masrl-kb``."""

import sys

from masrl_kb.cli.main import main

sys.exit(main())

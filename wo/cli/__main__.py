"""``python -m wo.cli``: the ``wo`` command."""
import sys

from . import main

sys.exit(main())

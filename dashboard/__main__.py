"""`python -m dashboard` runs the same command line as `agentao-memory-dashboard`."""

import sys

from .cli import main

sys.exit(main())

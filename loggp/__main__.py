"""`python -m loggp` is the `loggp` command."""

import sys

from loggp.cli import main

sys.exit(main())

"""`python -m loggp` is the `loggp` command."""

import sys

from loggp.cli.main import main

sys.exit(main())

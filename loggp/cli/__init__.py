"""The `loggp` command: one module per verb (README.md).

Ctrl-C before `main` runs (while Python imports the verbs, the report's matplotlib among
them, for most of a second) or after it has returned is one line too, never a traceback:
imported first by both entry points, this package sets the hook Python reports an
uncaught exception with.  The process still ends by SIGINT, as a shell expects.
"""

from __future__ import annotations

import sys
from types import TracebackType

_report_uncaught = sys.excepthook


def _interrupted_quietly(
    kind: type[BaseException], value: BaseException, tb: TracebackType | None
) -> None:
    if issubclass(kind, KeyboardInterrupt):
        print("loggp: interrupted", file=sys.stderr)
        return
    _report_uncaught(kind, value, tb)


sys.excepthook = _interrupted_quietly

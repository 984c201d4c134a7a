"""pytest plugin (pyproject's addopts): Ctrl-C reaches the programs the tests start.

A shell starts a background job (`make test &` in a script, nohup) with SIGINT
ignored, and children inherit that: a loggp the tests then interrupt, as a user's Ctrl-C
does, would not hear it.  A handled signal is reset to the default in a child, so
handling it here gives every program the tests start the SIGINT a terminal gives.
"""

from __future__ import annotations

import signal

import pytest


def pytest_configure(config: pytest.Config) -> None:
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)

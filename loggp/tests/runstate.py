"""pytest plugin (pyproject's addopts): a test session never takes the user's run lock.

`loggp run` holds the machine's run lock in $LOGGP_RUN_DIR (or /run/loggp); a test that
starts a run beside the user's own would be refused, or would refuse the user's.  The
session gets a state directory of its own, inherited by every program the tests start
(tests/conftest.py's base_env keeps it), and removed at the end.  The testbed's tests set
their own state directory where root keeps it (tests/netns_util.py).
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

_ENV = "LOGGP_RUN_DIR"
_KEY = pytest.StashKey[tuple[str, "str | None"]]()


def pytest_configure(config: pytest.Config) -> None:
    state = tempfile.mkdtemp(prefix="loggp-test-state-")
    config.stash[_KEY] = (state, os.environ.get(_ENV))
    os.environ[_ENV] = state


def pytest_unconfigure(config: pytest.Config) -> None:
    state, before = config.stash.get(_KEY, (None, None))
    if state is None:
        return
    shutil.rmtree(state, ignore_errors=True)
    if before is None:
        os.environ.pop(_ENV, None)
    else:
        os.environ[_ENV] = before


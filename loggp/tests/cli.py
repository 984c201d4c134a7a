"""Running the loggp command as a user does, for the tests (loggp/tests and tests/)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path


def loggp(
    *args: str,
    env_extra: dict[str, str] | None = None,
    unset: Sequence[str] = (),
    cwd: Path | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess:
    """`python -m loggp ARGS` in cwd, with the environment plus env_extra and without the
    variables in unset; never raises on status."""
    env = dict(os.environ)
    env.update(env_extra or {})
    for name in unset:
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "loggp", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )

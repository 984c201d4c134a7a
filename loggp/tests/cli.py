"""Running the loggp command as a user does, for the tests."""

from __future__ import annotations

import os
import subprocess
import sys


def loggp(
    *args: str, env_extra: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """`python -m loggp ARGS` with the environment plus env_extra; never raises on status."""
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "loggp", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )

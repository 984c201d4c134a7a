"""Running the loggp command as a user does, for the tests (loggp/tests and tests/)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


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


BUSY_HOST = "busy with other work (above"


def judged_ok(point: Mapping[str, Any] | Any) -> bool:
    """A point (a results row, or a StoredPoint) the runner stored ok, or degraded only by
    the other work on the host (loggp/results/judge.py judges every point by it): on a busy
    host a test's workload shares its cores, and what the runner tests check is the rest of
    the judgement."""
    get = point.get if isinstance(point, Mapping) else lambda k: getattr(point, k, None)
    if get("status") == "ok":
        return True
    reason = get("degraded_reason") or ""
    return get("status") == "degraded" and reason.startswith("host CPU ") and BUSY_HOST in reason

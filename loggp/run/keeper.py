"""The keeper: every process the runner starts runs beneath one, so that nothing outlives it.

    python -m loggp.run.keeper --parent PID [--grace S] [--record DIR] -- ARGV...

The keeper is a child subreaper (prctl PR_SET_CHILD_SUBREAPER): any process of ARGV's tree
whose parent exits (a rank whose mpirun died, orted detaching, a wrapper script's background
child, a process that made a session of its own) is re-parented to the keeper rather than
to init, so the keeper's descendants are the whole tree.  It ends that tree (loggp/run/
proctree.py) when

- ARGV exits: whatever it left behind is killed, then the keeper exits with ARGV's status
  (dying by the same signal if ARGV was killed by one);
- it gets SIGTERM (the runner ending a point that timed out or was interrupted), or SIGINT
  or SIGHUP: ARGV gets SIGTERM and up to --grace seconds (default 0), then the tree is killed;
- the runner dies, however (prctl PR_SET_PDEATHSIG delivers that SIGTERM).  PDEATHSIG fires
  when the thread that forked the keeper exits: the runner starts keepers from its main
  thread, which lives as long as the runner.

With --record DIR the keeper writes its own identity and ARGV's to DIR while they run
(proctree.record), so a command that finds the runner and the keeper dead (both SIGKILLed)
can still end what they left (proctree.end_recorded).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import select
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType

from loggp.run.proctree import Identity, end_tree, forget, record

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
# Signals Python ignores for itself; a child must start with them at their defaults.
_RESTORED = (signal.SIGPIPE, signal.SIGXFSZ)
_STOPPING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class _Stop(Exception):
    """SIGTERM: from the runner, or the runner's death."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop


def _on_stop(handler: Callable[[int, FrameType | None], None] | signal.Handlers) -> None:
    for sig in _STOPPING:
        signal.signal(sig, handler)


def _prctl(option: int, arg: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, arg, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl({option}): {os.strerror(err)}")


def _wait(pid: int, timeout: float) -> int | None:
    """pid's wait status if it exits within timeout seconds (reaped), else None."""
    fd = os.pidfd_open(pid)
    try:
        if select.select([fd], [], [], timeout)[0]:
            return os.waitpid(pid, 0)[1]
        return None
    finally:
        os.close(fd)


def _exit_like(status: int) -> None:
    """Exits as a process with this wait status did: same code, or killed by same signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the child's core is the one
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    sys.exit(os.waitstatus_to_exitcode(status))


def keep(parent: int, argv: list[str], grace: float, records: Path | None) -> None:
    _on_stop(_stop)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    me = Identity.of(os.getpid())
    child: int | None = None
    status: int | None = None
    try:
        if os.getppid() != parent:
            raise _Stop  # the runner died before PDEATHSIG was armed
        if records is not None and me is not None:
            record(records, me)
        try:
            child = os.posix_spawnp(argv[0], argv, dict(os.environ), setsigdef=_RESTORED)
        except OSError as e:
            print(f"loggp: cannot run {argv[0]}: {e.strerror}", file=sys.stderr)
            status = 127 << 8
            raise _Stop from None
        ident = Identity.of(child)
        if records is not None and ident is not None:
            record(records, ident)
        while status is None:
            pid, st = os.waitpid(-1, 0)  # adopted orphans are reaped here too
            if pid == child:
                status = st
    except _Stop:
        _on_stop(signal.SIG_IGN)
        if child is not None and status is None and grace > 0:
            try:
                os.kill(child, signal.SIGTERM)
            except ProcessLookupError:
                pass
            status = _wait(child, grace)
    _on_stop(signal.SIG_IGN)
    end_tree(os.getpid(), root=False)
    while True:  # every member of the tree ends as a child of ours: reap them all
        try:
            pid, st = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == child and status is None:
            status = st
    if records is not None:
        for pid in (os.getpid(), child):
            if pid is not None:
                forget(records, pid)
    _exit_like(status if status is not None else signal.SIGTERM)  # as if killed by SIGTERM


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m loggp.run.keeper", description=__doc__)
    p.add_argument("--parent", type=int, required=True, help="the runner's pid")
    p.add_argument("--grace", type=float, default=0.0, help="seconds between SIGTERM and SIGKILL")
    p.add_argument("--record", type=Path, help="directory of the run's process records")
    p.add_argument("argv", nargs="+", help="the command to keep")
    args = p.parse_args()
    keep(args.parent, args.argv, args.grace, args.record)


if __name__ == "__main__":
    main()

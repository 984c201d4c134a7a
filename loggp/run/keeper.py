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
can still end what they left (proctree.end_recorded).  A record it cannot write (a full
disk) is said on stderr and kept in memory: the keeper still ends its tree.

With --stdout FILE and --stderr FILE ARGV's output goes through pipes into TailFiles
(loggp/run/capture.py): at most MAX_STREAM_BYTES of each is kept, the last ones, and a full
disk loses output but never stops the keeper.  With --cgroup DIR (repeated: each) the keeper
moves itself into that cgroup (loggp/run/cgroup.py) before it starts ARGV, so that nothing ARGV
starts can leave the group, even by killing the keeper.  ARGV runs in a process group of its own: a
`kill -9 0` of ARGV's does not reach the keeper.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import select
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType

from loggp.run.capture import CHUNK, TailFile
from loggp.run.proctree import Identity, end_tree, forget, record

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
# Signals Python ignores for itself; a child must start with them at their defaults.
_RESTORED = (signal.SIGPIPE, signal.SIGXFSZ)
_STOPPING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_MAX_WAIT_S = 86_400.0  # select() refuses larger timeouts; loggp's durations stop at a day
_DRAIN_S = 5.0  # what the copies of ARGV's output may take once its tree has ended


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
        if select.select([fd], [], [], min(max(timeout, 0.0), _MAX_WAIT_S))[0]:
            return os.waitpid(pid, 0)[1]
        return None
    finally:
        os.close(fd)


def _say(msg: str) -> None:
    """One line on the keeper's stderr; nothing if that cannot be written (a full disk)."""
    try:
        print(f"loggp: keeper: {msg}", file=sys.stderr, flush=True)
    except OSError:
        pass


def _record(records: Path | None, ident: Identity | None) -> None:
    if records is None or ident is None:
        return
    try:
        record(records, ident)
    except OSError as e:
        _say(f"cannot record pid {ident.pid} in {records}: {e.strerror} (kept in memory)")


def _join_cgroup(cgroup: Path) -> None:
    try:
        (cgroup / "cgroup.procs").write_text("0\n")
    except OSError as e:
        _say(f"cannot join {cgroup}: {e.strerror} (the keeper alone keeps the tree)")


class _Copy:
    """A pipe for one of ARGV's streams, drained by a thread into a TailFile."""

    def __init__(self, path: Path) -> None:
        self.file = TailFile(path)
        self.read, self.write = os.pipe()
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        while data := os.read(self.read, CHUNK):
            self.file.write(data)

    def close(self) -> None:
        """After ARGV's tree has ended: the rest of the pipe, then the file joined."""
        self.thread.join(_DRAIN_S)
        self.file.close()


def _exit_like(status: int) -> None:
    """Exits as a process with this wait status did: same code, or killed by same signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the child's core is the one
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    sys.exit(os.waitstatus_to_exitcode(status))


def keep(
    parent: int,
    argv: list[str],
    grace: float,
    records: Path | None,
    *,
    outputs: tuple[Path, Path] | None = None,
    cgroups: list[Path] | None = None,
) -> None:
    _on_stop(_stop)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    me = Identity.of(os.getpid())
    child: int | None = None
    status: int | None = None
    copies: list[_Copy] = []
    try:
        try:
            if os.getppid() != parent:
                raise _Stop  # the runner died before PDEATHSIG was armed
            for group in cgroups or []:
                _join_cgroup(group)
            _record(records, me)
            actions = []
            if outputs is not None:
                copies = [_Copy(path) for path in outputs]
                actions = [
                    (os.POSIX_SPAWN_DUP2, c.write, fd) for c, fd in zip(copies, (1, 2), strict=True)
                ]
            try:
                child = os.posix_spawnp(
                    argv[0], argv, dict(os.environ), file_actions=actions, setpgroup=0,
                    setsigdef=_RESTORED,
                )  # fmt: skip
            except OSError as e:
                msg = f"loggp: cannot run {argv[0]}: {e.strerror}\n"
                if copies:
                    copies[1].file.write(msg.encode())
                else:
                    _say(msg.removeprefix("loggp: ").strip())
                status = 127 << 8
                raise _Stop from None
            finally:
                for c in copies:
                    os.close(c.write)
            _record(records, Identity.of(child))
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
        except OSError as e:  # the output files cannot be made: a full disk
            _say(f"{e.filename or ''}{': ' if e.filename else ''}{e.strerror}")
    finally:  # whatever failed above, the tree ends
        _on_stop(signal.SIG_IGN)
        end_tree(os.getpid(), root=False)
        while True:  # every member of the tree ends as a child of ours: reap them all
            try:
                pid, st = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            if pid == child and status is None:
                status = st
        for c in copies:
            c.close()
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
    p.add_argument("--stdout", type=Path, help="ARGV's stdout, its tail kept (capture.py)")
    p.add_argument("--stderr", type=Path, help="ARGV's stderr, its tail kept (capture.py)")
    p.add_argument(
        "--cgroup", type=Path, action="append", help="a cgroup to run in (cgroup.py); repeated"
    )
    p.add_argument("argv", nargs="+", help="the command to keep")
    args = p.parse_args()
    outputs = (args.stdout, args.stderr) if args.stdout and args.stderr else None
    keep(args.parent, args.argv, args.grace, args.record, outputs=outputs, cgroups=args.cgroup)


if __name__ == "__main__":
    main()

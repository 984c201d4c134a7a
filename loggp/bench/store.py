"""The striped file store as the I/O benchmarks stand it up: its servers, a FUSE mount of
it, and the environment that puts both beneath the shim (pfs, prefetch and collio share
these, so each benchmark's store is set up the same way)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from loggp.plan.knobs import KnobSet
from loggp.run.shim import process_env

PROVIDER = "tcp;ofi_rxm"
# A request's time limit (ms): on 2 busy cores a request can wait long behind the ranks.
REQUEST_TIMEOUT_MS = 30000


def environment(build: Path, knobs: dict[str, str]) -> dict[str, str]:
    """This process's environment without LOGGP_/FI_ variables, then the shim's beneath
    knobs (none: the bare stack) on PROVIDER; mpirun may run as root."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LOGGP_", "FI_"))}
    base["OMPI_ALLOW_RUN_AS_ROOT"] = base["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    env = process_env(KnobSet.parse(knobs) if knobs else None, base=base, build=build)
    env["LOGGP_PROVIDER"] = PROVIDER
    return env


class Store:
    """n loggp-pfs-servers on a fresh instance directory under root, beneath env."""

    def __init__(self, build: Path, root: Path, n: int, env: dict[str, str], tool: str) -> None:
        self.dir = root / f"inst-{n}-{len(list(root.iterdir()))}"
        self.procs = []
        for i in range(n):
            argv = [str(build / "services" / "pfs" / "loggp-pfs-server"), "--instance",
                    str(self.dir), "--index", str(i), "--servers", str(n)]  # fmt: skip
            proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True)  # fmt: skip
            self.procs.append(proc)
            assert proc.stdout is not None
            if not proc.stdout.readline().startswith("loggp-pfs-server: ready"):
                self.stop()
                sys.exit(f"{tool}: server {i} of {n} did not start")

    def stop(self) -> None:
        for proc in self.procs:
            proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            proc.wait(30)


class Mount:
    """loggp-pfs mount --direct-io of a store at a fresh directory mnt, beneath env."""

    def __init__(self, build: Path, store: Store, mnt: Path, env: dict[str, str],
                 tool: str) -> None:  # fmt: skip
        mnt.mkdir()
        self.mnt = mnt
        argv = [str(build / "services" / "pfs" / "loggp-pfs"), "-i", str(store.dir), "-t",
                str(REQUEST_TIMEOUT_MS), "mount", "--direct-io", str(mnt)]  # fmt: skip
        self.proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)  # fmt: skip
        assert self.proc.stdout is not None
        if not self.proc.stdout.readline().startswith("loggp-pfs: mounted"):
            self.proc.kill()
            self.proc.wait()
            sys.exit(f"{tool}: the mount of {store.dir} did not start (/dev/fuse, fuse3?)")
        # its later lines are read, so that a full pipe never stops it
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()

    def unmount(self) -> None:
        """fusermount3 -u; if the mount process has not ended a minute later, it is
        killed and the mount detached lazily."""
        subprocess.run(["fusermount3", "-u", str(self.mnt)], check=False, timeout=60)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            subprocess.run(["fusermount3", "-uz", str(self.mnt)], check=False, timeout=60)

"""The prefetcher (services/prefetch/) safe inside any program: each test is a case that
once went wrong.

- Exit: md5sum and dd of a hinted file over the store back-end, 30 times each, exit 0 with
  the file's digest (the store client's progress thread once called libfabric after
  libfabric's own fini).
- Threads: 4 threads read()ing one shared descriptor get the file's bytes exactly once.
- A descriptor closed behind the library's back (syscall(SYS_close)) and its number given to
  another file: that file's bytes, whether the new open went through the library or not.
- vfork: Python's subprocess.run (vfork, then close_range and dup2 in the child) leaves the
  parent's prefetching on.
- The advice manager stopped (SIGSTOP) or killed (-9): open and close return within its
  timeout, one line on stderr, right bytes.
- The store's own variable LOGGP_PFS_INSTANCE beneath the shim is not refused.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import test_prefetch
from conftest import base_env, run
from test_pfs import Instance, Lines, Mount, fuse_ok, pfs_bin  # noqa: F401 (fuse_ok: a fixture)
from test_prefetch import TIMEOUT, KiB, MiB, Prefetch, entry

pytestmark = pytest.mark.integration

manager = test_prefetch.manager  # the fixture, shared

MANAGER_TIMEOUT = 1.0  # PF_MANAGER_TIMEOUT_MS (services/prefetch/pf_manager.h)
SIZE = 8 * MiB


@pytest.fixture(scope="module")
def pf(tmp_path_factory: pytest.TempPathFactory) -> Prefetch:
    return Prefetch(tmp_path_factory.mktemp("prefetch-safety"))


class Store:
    """Two servers, their direct-I/O mount, a pattern file and a words file on it."""

    def __init__(self, pf: Prefetch) -> None:
        self.pf = pf
        self.inst = Instance(pf.root / "store", 2, base_env())
        self.mount: Mount | None = None
        self.mount = Mount(self.inst, pf.root / "store" / "mnt", True, base_env())
        self.pattern = self.mount.mnt / "f.dat"
        self.words = self.mount.mnt / "w.dat"
        pf.read(base_env(), "make", str(self.pattern), str(SIZE))
        pf.read(base_env(), "words", str(self.words), str(SIZE))
        hints = [entry(p, MiB, 4, 2, [(0, 0)]) for p in (self.pattern, self.words)]
        self.config = pf.config("store.json", hints)

    def env(self, config: Path | None = None) -> dict[str, str]:
        """Beneath the library with the store back-end (config: the two files' hints)."""
        assert self.mount is not None
        return self.pf.env(
            config or self.config, pfs_instance=str(self.inst.dir), pfs_mount=str(self.mount.mnt)
        )

    def close(self) -> None:
        if self.mount is not None:
            self.mount.unmount()
        self.inst.kill_all()


@pytest.fixture(scope="module")
def store(pf: Prefetch, request: pytest.FixtureRequest) -> Iterator[Store]:
    request.getfixturevalue("fuse_ok")  # skips where FUSE is missing
    s = Store(pf)
    try:
        yield s
    finally:
        s.close()


def test_md5sum_and_dd_over_the_store_exit_cleanly_30_times(store: Store) -> None:
    want = hashlib.md5(store.pattern.read_bytes()).hexdigest()
    for i in range(30):
        env = store.env()
        md5 = run(["md5sum", str(store.pattern)], env, timeout=TIMEOUT)
        assert md5.returncode == 0, (i, md5.returncode, md5.stderr)
        assert md5.stdout.split()[0] == want, (i, md5.stdout)
        assert store.pf.stats(env)["hinted_opens"] == 1
        env = store.env()
        dd = run(["dd", f"if={store.pattern}", "of=/dev/null", "bs=256k"], env, timeout=TIMEOUT)
        assert dd.returncode == 0, (i, dd.returncode, dd.stderr)
        st = store.pf.stats(env)
        assert st["served"] > 0 and st["store_reads"] > 0, st


def test_threads_sharing_a_descriptor_get_the_file_exactly_once(store: Store) -> None:
    env = store.env()
    res = store.pf.read(env, "shared", str(store.words), "4", str(64 * KiB))
    assert res["ok"] and res["bytes"] == SIZE and res["overlaps"] == 0, res
    st = store.pf.stats(env)
    assert st["served"] > 0, st  # through the store back-end's cache, not the mount


def test_a_number_reused_behind_the_librarys_back_reads_its_own_file(store: Store) -> None:
    env = store.env()
    res = store.pf.read(env, "reuse", str(store.pattern), str(store.words))
    assert res == {"ok": True, "first": 1, "by_open": 1, "by_syscall": 1}, res
    st = store.pf.stats(env)
    # the pattern file, the words file at its number, the pattern file again
    assert st["hinted_opens"] == 3 and st["served"] >= 3, st


@pytest.fixture(scope="module")
def local(pf: Prefetch) -> tuple[Path, Path]:
    """A file on local disk and a configuration hinting it."""
    (pf.root / "local").mkdir()
    path = pf.root / "local" / "f.dat"
    pf.read(base_env(), "make", str(path), str(SIZE))
    return path, pf.config("local.json", [entry(path, 256 * KiB, 4, 2, [(0, 0)])])


VFORK = """
import os, subprocess, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(16):
    if i == 8:  # vfork, then close_range and dup2 in the child (without the library)
        subprocess.run(["true"], check=True, capture_output=True, env={})
    assert len(os.pread(fd, 4096, i * 65536)) == 4096
os.close(fd)
"""


def test_vfork_children_leave_the_parents_prefetching_on(
    pf: Prefetch, local: tuple[Path, Path]
) -> None:
    path, config = local
    env = pf.env(config, advisor="inline")
    proc = run([sys.executable, "-c", VFORK, str(path)], env, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    st = pf.stats(env)
    assert st["hinted_opens"] == 1 and st["requests"] == 16, st


# Reads the file with read() in 4 KiB pieces; after the first, with "wait" given, says
# "ready" and waits for "go" on stdin; then prints the file's sha256.
READER = """
import hashlib, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
h = hashlib.sha256(os.read(fd, 4096))
if sys.argv[2] == "wait":
    print("ready", flush=True)
    assert sys.stdin.readline().strip() == "go"
while piece := os.read(fd, 4096):
    h.update(piece)
os.close(fd)
print("sha256", h.hexdigest(), flush=True)
"""


def start_reader(env: dict[str, str], path: Path, wait: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", READER, str(path), wait],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def finish_reader(proc: subprocess.Popen[str], lines: Lines, path: Path) -> str:
    """The reader's stderr, once it printed the file's digest and exited 0."""
    want = hashlib.sha256(path.read_bytes()).hexdigest()
    try:
        assert lines.wait_for("sha256", TIMEOUT) == f"sha256 {want}"
        assert proc.wait(timeout=TIMEOUT) == 0
        assert proc.stderr is not None
        return proc.stderr.read()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def read_after(env: dict[str, str], path: Path, act: Callable[[], None]) -> str:
    """The reader's stderr: act() once it has opened the file and read from it, then the
    rest of its reads and its close."""
    proc = start_reader(env, path, "wait")
    lines = Lines(proc)
    assert lines.wait_for("ready", TIMEOUT) == "ready"
    act()
    assert proc.stdin is not None
    proc.stdin.write("go\n")
    proc.stdin.flush()
    return finish_reader(proc, lines, path)


def one_line(err: str, *parts: str) -> None:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("loggp-prefetch: "), err
    for part in parts:
        assert part in lines[0], lines[0]


def test_a_stopped_manager_does_not_hold_up_open(
    pf: Prefetch, local: tuple[Path, Path], manager
) -> None:
    mgr, sock = manager
    path, config = local
    os.kill(mgr.pid, signal.SIGSTOP)
    env = pf.env(config, manager=str(sock))
    proc = start_reader(env, path, "nowait")
    err = finish_reader(proc, Lines(proc), path)
    one_line(err, f"advice manager at {sock} did not answer the open", "within 1000 ms")
    os.kill(mgr.pid, signal.SIGCONT)


def test_a_manager_stopped_after_the_open_does_not_hold_up_close(
    pf: Prefetch, local: tuple[Path, Path], manager
) -> None:
    mgr, sock = manager
    path, config = local
    env = pf.env(config, manager=str(sock))
    # 2047 reads fill the socket; the close finds no room within the timeout
    err = read_after(env, path, lambda: os.kill(mgr.pid, signal.SIGSTOP))
    one_line(err, f"advice manager at {sock} took no message within 1000 ms")
    st = pf.stats(env)
    assert st["mode"] == "manager" and st["dropped"] > 0, st
    os.kill(mgr.pid, signal.SIGCONT)


def test_a_killed_manager_is_noticed_in_one_line(
    pf: Prefetch, local: tuple[Path, Path], manager
) -> None:
    mgr, sock = manager
    path, config = local
    env = pf.env(config, manager=str(sock))

    def kill() -> None:
        os.killpg(mgr.pid, signal.SIGKILL)
        mgr.wait()

    err = read_after(env, path, kill)
    one_line(err, f"advice manager at {sock} is gone", "read without advice from now on")


def test_the_shim_accepts_the_stores_own_variable(tmp_path: Path, shim) -> None:
    # no server runs: the store's own one line, not the shim's refusal of the variable
    env = shim(latency="10us").env | {"LOGGP_PFS_INSTANCE": str(tmp_path)}
    proc = run([str(pfs_bin("loggp-pfs")), "-t", "1000", "ls", "/"], env, timeout=TIMEOUT)
    assert proc.returncode != 0 and "unknown variable" not in proc.stderr, proc.stderr
    assert "pfs server 0: no address in" in proc.stderr, proc.stderr

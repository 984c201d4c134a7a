"""The file store as a POSIX file system a user can live on (services/pfs/README.md).

- A full disk never wedges the store: on a small tmpfs filled by a write, a new client
  connects, rename, truncate, rmdir and rm work, the space comes back and writes work
  again, with no server restarted (the namespace ran on its reserve and took it back).
- O_APPEND from 2 and 4 clients at once, through the library and through mounts: every
  record is in the file exactly once.
- Through a mount beneath non-zero knobs: a source tarball with symbolic and hard links
  extracts and re-archives byte for byte as on local disk; make rebuilds after a change
  and a touch; a script made executable runs; a second uid is refused and allowed by the
  mode bits; df shows the servers' capacity; user.* attributes round-trip; links, FIFOs,
  device nodes, times (utimensat with explicit times and UTIME_OMIT), fallocate and a
  path longer than PATH_MAX behave as on a local file system.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import NONZERO_KNOBS, ShimEnv, base_env, json_line, run
from test_pfs import Instance, Mount, check, cli, fuse_ok, one_line

pytestmark = pytest.mark.integration

__all__ = ["fuse_ok"]  # a fixture this module's tests use

NOBODY = 65534


# --- a full disk -----------------------------------------------------------------


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 40 MiB tmpfs of the test's own, unmounted after it."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root")
    fs = tmp_path / "small"
    fs.mkdir()
    mounted = run(["mount", "-t", "tmpfs", "-o", "size=40m", "tmpfs", str(fs)], base_env(), 30)
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield fs
    finally:
        run(["umount", "-l", str(fs)], base_env(), 30)


def server_stats(inst: Instance) -> list[dict[str, int]]:
    proc = cli(inst, "stats")
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_a_full_disk_never_wedges_the_store(small_fs: Path, tmp_path: Path) -> None:
    inst = Instance(small_fs, 2, base_env())
    try:
        pids = [p.pid for p in inst.procs.values()]
        keep = tmp_path / "keep"
        keep.write_bytes(os.urandom(200_000))
        for args in (["mkdir", "/d"], ["mkdir", "/empty"], ["put", str(keep), "/d/keep"],
                     ["put", str(keep), "/half"]):  # fmt: skip
            assert cli(inst, *args).returncode == 0, args
        big = tmp_path / "big"
        big.write_bytes(os.urandom(48 << 20))
        one_line(cli(inst, "put", str(big), "/big", "65536", "-1"), 1, "No space left on device")
        # The disk is full: a new client connects, names move and go.
        assert cli(inst, "ls", "/").stdout.split() == ["big", "d/", "empty/", "half"]
        for args in (["mv", "/d/keep", "/d/kept"], ["truncate", "/half", "1000"],
                     ["rmdir", "/empty"], ["rm", "/big"]):  # fmt: skip
            proc = cli(inst, *args)
            assert proc.returncode == 0, (args, proc.stderr)
        stats = server_stats(inst)
        assert stats[0]["reserve_used"] >= 1, stats  # the namespace ran on its reserve
        assert sum(s["used_bytes"] for s in stats) == 200_000 + 1000, stats
        # Writes work again, and the reserve is held again, without a restart.
        assert cli(inst, "put", str(keep), "/again").returncode == 0
        for name in ("/again", "/d/kept"):
            back = tmp_path / "back"
            assert cli(inst, "get", name, str(back)).returncode == 0
            assert back.read_bytes() == keep.read_bytes(), name
        reserve = inst.dir / "server-0" / "meta.db.reserve"
        assert reserve.stat().st_blocks * 512 >= 4 << 20
        assert [p.pid for p in inst.procs.values()] == pids
        assert all(p.poll() is None for p in inst.procs.values())
    finally:
        inst.kill_all()


# --- appends ---------------------------------------------------------------------


@pytest.mark.parametrize("clients", [2, 4])
def test_appends_of_library_clients_lose_nothing(tmp_path: Path, shim, clients: int) -> None:
    shimmed: ShimEnv = shim(**NONZERO_KNOBS)
    inst = Instance(tmp_path, 3, shimmed.env)
    try:
        # 24-byte records over 4 KiB units: some straddle two servers.
        proc = check(inst, "append", "-c", str(clients), "-n", "150", "-S", "4096", "-C", "-1")
        res = json_line(proc.stdout)
        assert proc.returncode == 0 and res["ok"], proc.stdout + proc.stderr
        inst.stop()
    finally:
        inst.kill_all()
    assert sum(int(str(inst.stats[i]["appends"])) for i in range(3)) == clients * 150


@pytest.mark.parametrize("mounts", [2, 4])
def test_appends_through_mounts_lose_nothing(
    fuse_ok: None, tmp_path: Path, shim, mounts: int
) -> None:
    shimmed: ShimEnv = shim(**NONZERO_KNOBS)
    inst = Instance(tmp_path, 3, shimmed.env)
    ms: list[Mount] = []
    try:
        assert cli(inst, "setstripe", "/", "4096", "-1").returncode == 0
        ms = [Mount(inst, tmp_path / f"mnt{k}", False, shimmed.env) for k in range(mounts)]
        (ms[0].mnt / "log").touch()
        start = threading.Barrier(mounts)
        errors: list[BaseException] = []

        def append(k: int) -> None:
            fd = os.open(ms[k].mnt / "log", os.O_WRONLY | os.O_APPEND)
            try:
                start.wait(timeout=30)
                for i in range(50):
                    line = f"mount {k} line {i:04d}\n".encode()
                    assert os.write(fd, line) == len(line)
            except BaseException as e:  # handed to the test's thread
                errors.append(e)
            finally:
                os.close(fd)

        threads = [threading.Thread(target=append, args=(k,)) for k in range(mounts)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not any(t.is_alive() for t in threads), "an appender did not finish in 120 s"
        assert not errors, errors
        lines = (ms[-1].mnt / "log").read_text().splitlines()
        want = [f"mount {k} line {i:04d}" for k in range(mounts) for i in range(50)]
        assert sorted(lines) == want
        for k in range(mounts):  # each mount's lines in the order it wrote them
            assert [x for x in lines if x.startswith(f"mount {k} ")] == want[k * 50 : k * 50 + 50]
    finally:
        for m in ms:
            m.unmount()
        inst.kill_all()


# --- living on the mount ---------------------------------------------------------


@pytest.fixture
def mnt(fuse_ok: None, tmp_path: Path, shim) -> Iterator[Path]:
    """A 3-server instance beneath non-zero knobs, mounted with --allow-other at a
    directory other users can reach (pytest's own are 0700)."""
    shimmed: ShimEnv = shim(**NONZERO_KNOBS)
    inst = Instance(tmp_path, 3, shimmed.env)
    top = Path(tempfile.mkdtemp(prefix="pfs-posix-"))
    try:
        top.chmod(0o755)
        m = Mount(inst, top / "mnt", False, shimmed.env, "--allow-other")
        try:
            yield m.mnt
        finally:
            m.unmount()
    finally:
        inst.kill_all()
        shutil.rmtree(top, ignore_errors=True)


def sh(
    *argv: str, cwd: Path | None = None, uid: int | None = None
) -> subprocess.CompletedProcess[str]:
    """argv in cwd, as uid (and its group, no others) when given."""
    if uid is not None:
        argv = ("setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv)
    return run(list(argv), base_env(), timeout=120, cwd=cwd)


def make_tree(root: Path) -> None:
    """A small source package: files, an executable, relative, directory and dangling
    symbolic links, a hard link, an empty directory, a long name."""
    (root / "src").mkdir(parents=True)
    (root / "include").mkdir()
    (root / "empty").mkdir()
    (root / "README").write_text("a package\n" * 50)
    (root / "configure").write_text("#!/bin/sh\necho configured\n")
    (root / "configure").chmod(0o755)
    (root / "src" / "a.c").write_bytes(os.urandom(70_000))
    (root / "src" / "b.c").write_text("int b;\n")
    (root / "include" / "x.h").write_text("#define X 1\n")
    os.symlink("x.h", root / "include" / "y.h")
    os.symlink("src", root / "lib")
    os.symlink("../nowhere", root / "include" / "dangling")
    os.link(root / "src" / "a.c", root / "src" / "a_copy.c")
    (root / ("n" * 200)).write_text("long name\n")
    for i, p in enumerate(sorted(root.rglob("*"))):
        os.utime(p, ns=(1_600_000_000_000_000_000 + i, 1_600_000_000_123_456_789 + i),
                 follow_symlinks=False)  # fmt: skip


def test_a_source_tarball_extracts_and_rearchives_as_on_local_disk(
    mnt: Path, tmp_path: Path
) -> None:
    make_tree(tmp_path / "src" / "pkg-1.0")
    tarball = tmp_path / "pkg.tar.gz"
    assert sh("tar", "-czf", str(tarball), "-C", str(tmp_path / "src"), "pkg-1.0").returncode == 0
    archives = []
    for dest in (tmp_path / "local", mnt / "build"):
        dest.mkdir()
        proc = sh("tar", "-xzpf", str(tarball), "-C", str(dest))
        assert proc.returncode == 0, proc.stderr
        out = tmp_path / f"{dest.name}.tar"
        proc = sh("tar", "--sort=name", "-cf", str(out), "-C", str(dest), "pkg-1.0")
        assert proc.returncode == 0, proc.stderr
        archives.append(out.read_bytes())
    assert archives[0] == archives[1]
    pkg = mnt / "build" / "pkg-1.0"
    assert os.readlink(pkg / "include" / "y.h") == "x.h"
    assert (pkg / "lib" / "b.c").read_text() == "int b;\n"
    a, copy = os.stat(pkg / "src" / "a.c"), os.stat(pkg / "src" / "a_copy.c")
    assert (a.st_ino, a.st_nlink) == (copy.st_ino, 2)
    assert sh(str(pkg / "configure")).stdout == "configured\n"


def test_make_rebuilds_after_a_change_and_a_touch(mnt: Path) -> None:
    proj = mnt / "proj"
    proj.mkdir()
    (proj / "in.txt").write_text("v1")
    (proj / "Makefile").write_text("out.txt: in.txt\n\tcp in.txt out.txt\n")
    assert "cp in.txt out.txt" in sh("make", cwd=proj).stdout
    assert "is up to date" in sh("make", cwd=proj).stdout
    (proj / "in.txt").write_text("v2")
    assert "cp in.txt out.txt" in sh("make", cwd=proj).stdout
    assert (proj / "out.txt").read_text() == "v2"
    assert "is up to date" in sh("make", cwd=proj).stdout
    assert sh("touch", "in.txt", cwd=proj).returncode == 0
    assert "cp in.txt out.txt" in sh("make", cwd=proj).stdout


def test_a_script_made_executable_runs(mnt: Path) -> None:
    script = mnt / "hello.sh"
    script.write_text("#!/bin/sh\necho hello from the store\n")
    with pytest.raises(PermissionError):
        sh(str(script))
    script.chmod(0o755)
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert sh(str(script)).stdout == "hello from the store\n"


def test_a_second_uid_is_refused_or_allowed_by_the_mode_bits(mnt: Path) -> None:
    secret = mnt / "secret"
    secret.write_text("s3cret\n")
    secret.chmod(0o600)
    refused = sh("cat", str(secret), uid=NOBODY)
    assert refused.returncode != 0 and "Permission denied" in refused.stderr
    secret.chmod(0o644)
    assert sh("cat", str(secret), uid=NOBODY).stdout == "s3cret\n"
    shared = mnt / "shared"
    shared.mkdir(mode=0o755)
    assert sh("touch", str(shared / "mine"), uid=NOBODY).returncode != 0
    shared.chmod(0o1777)
    assert sh("touch", str(shared / "mine"), uid=NOBODY).returncode == 0
    st = os.stat(shared / "mine")
    assert (st.st_uid, st.st_gid) == (NOBODY, NOBODY)
    # Only root gives files away; a chown clears set-user-ID.
    assert sh("chown", "0", str(shared / "mine"), uid=NOBODY).returncode != 0
    os.chmod(shared / "mine", 0o4755)
    os.chown(shared / "mine", 0, 0)
    st = os.stat(shared / "mine")
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o755)


def test_df_shows_the_servers_capacity(mnt: Path, tmp_path: Path) -> None:
    fs, local = os.statvfs(mnt), os.statvfs(tmp_path)
    # Three servers on this one disk: three times its blocks and inodes.
    assert abs(fs.f_blocks * fs.f_frsize - 3 * local.f_blocks * local.f_frsize) < 3 * 4096
    assert fs.f_files == 3 * local.f_files and 0 < fs.f_bavail <= fs.f_blocks
    df = sh("df", "-P", str(mnt)).stdout.splitlines()
    assert int(df[1].split()[1]) > 0, df


def test_user_xattrs_round_trip(mnt: Path) -> None:
    f = mnt / "x"
    f.write_bytes(b"")
    os.setxattr(f, "user.color", b"blue")
    value = os.urandom(65536)
    os.setxattr(f, "user.blob", value)
    assert os.getxattr(f, "user.color") == b"blue" and os.getxattr(f, "user.blob") == value
    assert sorted(os.listxattr(f)) == ["user.blob", "user.color"]
    with pytest.raises(FileExistsError):
        os.setxattr(f, "user.color", b"red", os.XATTR_CREATE)
    os.removexattr(f, "user.color")
    with pytest.raises(OSError) as gone:
        os.getxattr(f, "user.color")
    assert gone.value.errno == errno.ENODATA
    with pytest.raises(OSError) as other:
        os.setxattr(f, "trusted.x", b"1")
    assert other.value.errno == errno.EOPNOTSUPP
    assert "user.blob" in sh("getfattr", "-d", str(f)).stdout


def test_links_fifos_devices_times_fallocate_and_long_paths(mnt: Path) -> None:
    os.symlink("target.txt", mnt / "ln")
    assert os.readlink(mnt / "ln") == "target.txt" and stat.S_ISLNK(os.lstat(mnt / "ln").st_mode)
    assert not (mnt / "ln").exists()  # dangling
    (mnt / "ln").write_text("through the link")  # O_CREAT follows it
    assert (mnt / "target.txt").read_text() == "through the link"
    os.link(mnt / "target.txt", mnt / "hard")
    os.unlink(mnt / "target.txt")
    st = os.stat(mnt / "hard")
    assert st.st_nlink == 1 and (mnt / "hard").read_text() == "through the link"
    os.mkfifo(mnt / "fifo")
    assert stat.S_ISFIFO(os.stat(mnt / "fifo").st_mode)
    os.mknod(mnt / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    assert os.stat(mnt / "null").st_rdev == os.makedev(1, 3)
    # Times: explicit, UTIME_OMIT (touch -m), a write, a chmod.
    f = mnt / "hard"
    os.utime(f, ns=(1_000_000_000_123_456_789, 1_100_000_000_987_654_321))
    st = os.stat(f)
    assert (st.st_atime_ns, st.st_mtime_ns) == (
        1_000_000_000_123_456_789,
        1_100_000_000_987_654_321,
    )
    assert sh("touch", "-m", "-d", "@1200000000", str(f)).returncode == 0
    st = os.stat(f)
    assert (st.st_atime_ns, st.st_mtime_ns) == (1_000_000_000_123_456_789, 1_200_000_000 * 10**9)
    before = os.stat(f).st_ctime_ns
    with open(f, "a") as out:
        out.write("!")
    st = os.stat(f)
    assert st.st_mtime_ns > 1_200_000_000 * 10**9 and st.st_ctime_ns >= before
    ctime = st.st_ctime_ns
    os.chmod(f, 0o600)
    assert os.stat(f).st_ctime_ns >= ctime
    # posix_fallocate grows the file with zeros.
    fd = os.open(mnt / "alloc", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.posix_fallocate(fd, 0, 3 << 20)
        assert os.fstat(fd).st_size == 3 << 20 and os.pread(fd, 4096, (3 << 20) - 4096) == bytes(
            4096
        )
    finally:
        os.close(fd)
    # A path longer than PATH_MAX from the root, each call's own path short.
    fd = os.open(mnt, os.O_RDONLY)
    try:
        for _ in range(20):
            name = "d" * 250
            os.mkdir(name, dir_fd=fd)
            fd2 = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = fd2
        leaf = os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(leaf, b"deep")
        os.close(leaf)
        assert len(str(mnt)) + 20 * 251 + 5 > 4096
        leaf = os.open("leaf", os.O_RDONLY, dir_fd=fd)
        assert os.read(leaf, 10) == b"deep"
        os.close(leaf)
    finally:
        os.close(fd)


CONFORM = Path(__file__).resolve().parents[1] / "services" / "pfs" / "tests" / "posix_conform.py"


def conform(where: Path) -> dict[str, object]:
    proc = run([sys.executable, str(CONFORM), str(where), "--json"], base_env(), timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_posix_conformance_over_the_mount_as_on_local_disk(mnt: Path) -> None:
    """posix_conform.py (pjdfstest's areas) holds on the mount as on this machine's disk."""
    if os.geteuid() != 0:
        pytest.skip("posix_conform.py checks owners and a second user: it needs root")
    local = Path(tempfile.mkdtemp(prefix="pfs-conform-"))
    try:
        local.chmod(0o755)
        disk = conform(local)
    finally:
        shutil.rmtree(local, ignore_errors=True)
    store = conform(mnt)
    # What the host's kernel refuses on its own disk (say, a sysctl) it refuses on the mount
    # too: the two agree check for check.
    assert store["failed"] == disk["failed"], (store, disk)
    assert store["passed"] == disk["passed"] > 100

"""services/collio: the cached two-phase collective I/O library beneath unmodified MPI-IO
programs (collio_check, services/collio/tests).

Every view constructor with odd sizes, cache off and on, written through collio is
byte-identical to the image MPI_Unpack computes and to Open MPI's romio321 output; hints come
from MPI_Info and from the JSON file and get_info reports them; files without e10_* hints are
Open MPI's alone; bad hints, a full cache and a full global target are one-line errors and
MPI_ERR_IO; idle sync threads use no CPU.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from conftest import BUILD, MPI_OWN_TRANSPORT, assert_refused, base_env, mpirun_cmd, run

from loggp.bench.store import Mount, Store, environment

pytestmark = pytest.mark.integration

LIB = BUILD / "services" / "collio" / "libloggp-collio.so"
CHECK = BUILD / "services" / "collio" / "tests" / "collio_check"
STATUS = BUILD / "services" / "collio" / "tests" / "collio_status"
H5 = BUILD / "services" / "collio" / "tests" / "collio_h5"
DEFERRED = BUILD / "services" / "collio" / "tests" / "collio_deferred"
VIEWS = (
    "contiguous vector hvector indexed hindexed indexed_block hindexed_block struct "
    "subarray_c subarray_f darray darray3d resized"
).split()
NP = 3
# Small rounds (many of them), two aggregators, domains on 8-byte stripes.
SMALL = "cb_nodes=2,cb_buffer_size=16,striping_unit=8"


def collio(
    mpirun: str,
    args: Sequence[str],
    preload: bool = True,
    env_extra: dict[str, str] | None = None,
    mca: Sequence[str] = (),
    prog: Path = CHECK,
    np: int = NP,
) -> subprocess.CompletedProcess[str]:
    """prog (collio_check) on np ranks over MPI's own transports, collio preloaded."""
    for path in (LIB, prog):
        if not path.is_file():
            pytest.fail(f"not built: {path} (cmake --build {BUILD})")
    env = base_env() | (env_extra or {})
    opts = [*MPI_OWN_TRANSPORT, *mca]
    if preload:
        opts += ["-x", f"LD_PRELOAD={LIB}"]
    opts += [a for var in sorted(env_extra or {}) for a in ("-x", var)]
    return run(mpirun_cmd(mpirun, np, [str(prog), *args], opts, env), env, timeout=60)


def ok(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def romio(mpirun_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every view written by Open MPI's romio321 (collio not loaded), at the pointer and at
    explicit offsets: DIR/all.VIEW and DIR/at.VIEW."""
    out = tmp_path_factory.mktemp("romio")
    for method in ("all", "at"):
        ok(
            collio(
                mpirun_bin,
                ["-v", "all", "-m", method, "-f", str(out / method), "-H", "cb_nodes=2", "-e"],
                preload=False,
                mca=["--mca", "io", "romio321"],
            )
        )
    yield out


@pytest.mark.parametrize(
    ("hints", "method"),
    [
        ("e10_cache=disable", "all"),
        ("e10_cache=enable,e10_cache_flush_flag=flush_immediate,e10_cache_threads=2", "at"),
        ("e10_cache=enable,e10_cache_flush_flag=flush_onclose", "all"),
        ("e10_cache=coherent,cb_nodes=1", "at"),
    ],
)
def test_views_are_byte_identical_to_the_image_and_romio(
    mpirun_bin: str, romio: Path, tmp_path: Path, hints: str, method: str
) -> None:
    # -e checks the image after close (so flush_onclose must have waited for the sync), -r
    # reads every rank's data back through the same view with read_all/read_at_all.  Hints
    # given later win (cb_nodes=1 after SMALL's 2).
    stats = tmp_path / "stats"
    args = ["-v", "all", "-m", method, "-f", str(tmp_path / "c"), "-e", "-r"]
    args += ["-H", f"{SMALL},{hints},e10_cache_path={tmp_path}"]
    if "coherent" in hints:  # read back before the close, while extents may be unsynced
        args.append("-R")
    ok(collio(mpirun_bin, args, env_extra={"LOGGP_COLLIO_STATS": str(stats)}))
    for view in VIEWS:
        mine, theirs = tmp_path / f"c.{view}", romio / f"{method}.{view}"
        assert mine.read_bytes() == theirs.read_bytes(), view
    ops = [json.loads(line) for line in stats.read_text().splitlines()]
    writes = [o for o in ops if o["op"].startswith("write")]
    assert len(writes) == 2 * len(VIEWS), ops
    assert sum(o["bytes"] for o in writes) == len(VIEWS) * NP * 41 * 3
    assert all(o["all2all"] > 0 and o["waitall"] > 0 for o in writes), writes
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("job-")], "cache left"


@pytest.mark.parametrize("cache", ["disable", "enable"])
def test_one_rank_files_skip_the_exchange(mpirun_bin: str, tmp_path: Path, cache: str) -> None:
    # A file of one rank (file per process) has nothing to exchange: every view written in
    # place (no all2all, no waitall), byte-identical to the image, and read back.
    stats = tmp_path / "stats"
    hints = f"e10_cache={cache},e10_cache_path={tmp_path}"
    args = ["-v", "all", "-f", str(tmp_path / "c"), "-e", "-r", "-H", hints]
    ok(collio(mpirun_bin, args, env_extra={"LOGGP_COLLIO_STATS": str(stats)}, np=1))
    ops = [json.loads(line) for line in stats.read_text().splitlines()]
    moved = [o for o in ops if o["op"].startswith(("write", "read"))]
    assert len(moved) == 2 * 2 * len(VIEWS), ops
    assert sum(o["bytes"] for o in moved) == 2 * len(VIEWS) * 41 * 3
    assert all(o["all2all"] == 0 and o["waitall"] == 0 for o in moved), moved


def test_json_hints_with_info_null_and_get_info(mpirun_bin: str, tmp_path: Path) -> None:
    conf = tmp_path / "hints.json"
    conf.write_text(
        json.dumps(
            {
                "Directory": [{"Path": str(tmp_path), "Hints": {"e10_cache": "enable"}}],
                "File": [{"Path": str(tmp_path / "f"), "Hints": {"cb_nodes": 2}}],
            }
        )
    )
    stats = tmp_path / "stats"
    args = ["-v", "darray3d", "-f", str(tmp_path / "f"), "-e", "-I"]
    env = {"LOGGP_COLLIO_HINTS": str(conf), "LOGGP_COLLIO_STATS": str(stats)}
    proc = collio(mpirun_bin, args, env_extra=env)
    ok(proc)
    info = dict(kv.split("=", 1) for kv in proc.stdout.split("\n")[0].split()[1:])
    assert info["e10_cache"] == "enable" and info["cb_nodes"] == "2", info
    assert info["cb_buffer_size"] == str(16 << 20) and info["e10_cache_threads"] == "1", info
    assert stats.is_file()


# ompio's write data sieving reads a span, fills the data in and writes the span back with no
# lock on local file systems (fs/ufs sets OMPIO_LOCK_NEVER there), so two processes' spans
# that overlap can write stale bytes over each other's data: without collio loaded at all,
# `collio_check -v subarray_c -H cb_nodes=2 -e` failed 4 of 40 runs on the loaded 2-core host
# ("byte 567 is 238, the image has 119"), 0 of 40 with this parameter off or with romio321.
OMPIO_NO_WRITE_SIEVING = ["--mca", "fbtl_posix_write_datasieving", "0"]


def test_unhinted_files_pass_to_open_mpi(mpirun_bin: str, tmp_path: Path) -> None:
    # Open MPI's default ompio writes the file (collio leaves it alone: no breakdown line),
    # without its racy data sieving (above), so the image must be exact.
    stats = tmp_path / "stats"
    args = ["-v", "subarray_c", "-f", str(tmp_path / "f"), "-H", "cb_nodes=2", "-e", "-r"]
    env = {"LOGGP_COLLIO_STATS": str(stats)}
    ok(collio(mpirun_bin, args, env_extra=env, mca=OMPIO_NO_WRITE_SIEVING))
    assert not stats.exists()


def test_bad_hint_is_one_line(mpirun_bin: str, tmp_path: Path) -> None:
    args = ["-v", "contiguous", "-f", str(tmp_path / "f"), "-H", "e10_cache=maybe"]
    proc = collio(mpirun_bin, args)
    assert proc.returncode != 0
    # one line for the whole job, not one per rank
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("collio: ")]
    assert lines == ["collio: hint e10_cache=maybe: expected enable, coherent or disable"]


def test_idle_sync_threads_use_no_cpu(mpirun_bin: str, tmp_path: Path) -> None:
    hints = f"e10_cache=enable,e10_cache_threads=4,e10_cache_path={tmp_path}"
    args = ["-v", "vector", "-f", str(tmp_path / "f"), "-H", hints, "-s", "400"]
    proc = collio(mpirun_bin, args)
    ok(proc)
    idle = [float(ln.split()[2]) for ln in proc.stdout.splitlines() if ln.startswith("idle_cpu")]
    assert len(idle) == NP and max(idle) < 0.01, idle


@pytest.fixture
def tiny_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs (root only)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a tmpfs")
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    cmd = ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)]
    mounted = subprocess.run(cmd, capture_output=True, text=True)
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.strip()}")
    yield mnt
    subprocess.run(["umount", str(mnt)], check=True)


@pytest.mark.needs_root
@pytest.mark.parametrize(
    ("full", "flush", "line"),
    [
        ("cache", "flush_immediate", "collio_check: collective write failed: MPI_ERR_IO"),
        ("global", "flush_onclose", "collio_check: close failed: MPI_ERR_IO"),
    ],
)
def test_full_cache_or_global_target_is_mpi_err_io(
    mpirun_bin: str, tmp_path: Path, tiny_tmpfs: Path, full: str, flush: str, line: str
) -> None:
    # A full cache fails the write that fills it; a full global file system fails the sync
    # threads, which the close (flush_onclose: nothing synced before) reports.
    cache, target = (tiny_tmpfs, tmp_path) if full == "cache" else (tmp_path, tiny_tmpfs)
    hints = f"e10_cache=enable,e10_cache_flush_flag={flush},e10_cache_path={cache}"
    args = ["-v", "contiguous", "-n", "20000", "-f", str(target / "f"), "-H", hints]
    proc = collio(mpirun_bin, args)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert line in proc.stderr and "No space left on device" in proc.stderr, proc.stderr


def test_deferred_close_completes_by_the_next_open_and_finalize(
    mpirun_bin: str, romio: Path, tmp_path: Path
) -> None:
    # No -e: with a deferred close the image is only complete once the next open (the
    # next view's file) or MPI_Finalize has waited for the sync.
    hints = f"{SMALL},e10_cache=enable,e10_cache_flush_flag=flush_onclose,e10_deferred_close=enable"
    args = ["-v", "all", "-f", str(tmp_path / "c"), "-H", f"{hints},e10_cache_path={tmp_path}"]
    ok(collio(mpirun_bin, args))
    for view in VIEWS:
        assert (tmp_path / f"c.{view}").read_bytes() == (romio / f"all.{view}").read_bytes(), view


@pytest.mark.needs_root
@pytest.mark.parametrize(
    ("point", "first"),
    [
        ("open", {"open_other"}),
        ("close", {"write_other", "close_other"}),
        ("finalize", {"finalize"}),
    ],
)
def test_deferred_close_failure_is_mpi_err_io_on_every_rank(
    mpirun_bin: str, tmp_path: Path, tiny_tmpfs: Path, point: str, first: set[str]
) -> None:
    # 2 ranks write 2 x 48 KiB to a 64 KiB file system with the cache on: the writes and the
    # deferred close succeed, the sync threads fail after it.  The next open or close of the
    # same ranks (or a collective call on another of their files before it), or MPI_Finalize,
    # is MPI_ERR_IO on both ranks alike, and the program, which checks, exits 1.
    hints = f"e10_cache=enable,e10_deferred_close=enable,e10_cache_path={tmp_path}"
    args = ["-f", str(tiny_tmpfs / "f"), "-o", str(tmp_path / "other"), "-b", str(48 << 10)]
    # mpirun must not kill a rank still logging its MPI_Finalize when another exited 1 (so
    # mpirun itself exits 0: each rank logs its exit code)
    keep = ["--mca", "orte_abort_on_non_zero_status", "0"]
    proc = collio(mpirun_bin, [*args, "-p", point, "-H", hints], mca=keep, prog=DEFERRED, np=2)
    out = proc.stdout + proc.stderr
    steps: dict[str, list[tuple[str, str]]] = {"0": [], "1": []}
    for rank in steps:
        for line in (tmp_path / f"other.steps.{rank}").read_text().splitlines():
            _, _, step, result = line.split()
            steps[rank].append((step, result))
        assert steps[rank].pop() == ("exit", "1"), (steps, out)
    assert steps["0"] == steps["1"], steps
    failed = [(step, result) for step, result in steps["0"] if result != "MPI_SUCCESS"]
    assert failed and failed[0][0] in first, steps
    assert all(result == "MPI_ERR_IO" for _, result in failed), steps
    assert "No space left on device" in proc.stderr, proc.stderr


@pytest.mark.parametrize("metadata", ["independent", "collective"])
@pytest.mark.parametrize("cache", ["disable", "enable", "coherent"])
def test_parallel_hdf5_write_and_read(
    mpirun_bin: str, tmp_path: Path, cache: str, metadata: str
) -> None:
    # Through the HDF5 C library (H5FD_MPIO_COLLECTIVE datasets): HDF5 checks each call's
    # MPI_Get_elements_x against what it asked for, in its own derived types.
    if not H5.is_file():
        pytest.skip(f"not built: {H5} (libhdf5-openmpi-dev missing at configure time)")
    stats = tmp_path / "stats"
    hints = f"e10_cache={cache},cb_nodes=2,cb_buffer_size=64,e10_cache_path={tmp_path}"
    args = ["-f", str(tmp_path / "f.h5"), "-H", hints]
    if metadata == "collective":
        args.append("-M")
    proc = collio(mpirun_bin, args, env_extra={"LOGGP_COLLIO_STATS": str(stats)}, prog=H5, np=2)
    assert proc.returncode == 0 and "h5 ok" in proc.stdout, proc.stdout + proc.stderr
    ops = [json.loads(line)["op"] for line in stats.read_text().splitlines()]
    assert "write_at_all" in ops and "read_at_all" in ops, ops


def test_status_counts_as_open_mpi_does(mpirun_bin: str, tmp_path: Path) -> None:
    # MPI_Get_count and MPI_Get_elements_x after every call collio serves, in named,
    # contiguous, struct and vector buffer types: the same through collio (cache off and
    # coherent) as through Open MPI's own ompio and romio321.
    def lines(name: str, hints: str = "", preload: bool = True, mca: Sequence[str] = ()):
        args = ["-f", str(tmp_path / name), *(["-H", hints] if hints else [])]
        proc = collio(mpirun_bin, args, preload=preload, mca=mca, prog=STATUS, np=2)
        ok(proc)
        return sorted(proc.stdout.splitlines())

    plain = lines("ompio", preload=False)
    assert len(plain) == 2 * 4 * 6, plain
    assert "rank 1 write_all contiguous4096 count=2 elements=8192 bytes=8192" in plain
    assert "rank 0 read_at_all struct_int_double count=3 elements=6 bytes=36" in plain
    # romio321 leaves the status of a count of 0 as it was (ompio sets 0 bytes)
    romio = lines("romio", preload=False, mca=["--mca", "io", "romio321"])
    assert [ln for ln in romio if " zero " not in ln] == [ln for ln in plain if " zero " not in ln]
    # The program reads back what it wrote: with the cache, only coherent mode promises a
    # read the data written before it (enable reads may precede the sync: README.md).
    for cache in ("disable", "coherent"):
        assert lines(cache, f"e10_cache={cache},e10_cache_path={tmp_path}") == plain, cache


WORKLOADS = {
    "coll_perf": ["-b", "12", "-n", "2", "-c", "20"],
    "flashio": ["-B", "1", "-z", "4", "-n", "2"],
    "iorlike": ["-t", "4K", "-b", "16K", "-s", "2", "-n", "2", "-V"],
}


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_workloads_report_perceived_bandwidth_and_the_breakdown(
    mpirun_bin: str, tmp_path: Path, name: str
) -> None:
    hints = f"e10_cache=enable,cb_nodes=2,e10_deferred_close=enable,e10_cache_path={tmp_path}"
    args = [*WORKLOADS[name], "-f", str(tmp_path / "out"), "-H", hints]
    opts = [*MPI_OWN_TRANSPORT, "-x", f"LD_PRELOAD={LIB}"]
    env = base_env()
    argv = [str(BUILD / "workloads" / name / name), *args]
    proc = run(mpirun_cmd(mpirun_bin, NP, argv, opts, env), env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["valid"], res
    m = res["metrics"]
    phases = "all2all shuffle waitall write_phase post_write sync not_hidden_sync".split()
    assert all(m[f"{ph}_s"] >= 0 for ph in phases) and m["all2all_s"] > 0, m
    assert m["perceived_MBps"] > 0 and m["perceived_MBps"] < m["write_MBps"], m


def test_a_workload_whose_deferred_close_fails_exits_with_a_line(
    mpirun_bin: str, tmp_path: Path, tiny_tmpfs: Path
) -> None:
    # One file of 2 x 64 KiB on a 64 KiB file system, the cache on with a deferred close:
    # every write and the close succeed into the cache, and the failure comes only from
    # the drain after the last file (workloads/common/wl_mpiio.c), which the workload
    # must not take for success.
    hints = f"e10_cache=enable,e10_deferred_close=enable,e10_cache_path={tmp_path}"
    args = ["-t", "64K", "-b", "64K", "-s", "1", "-f", str(tiny_tmpfs / "f"), "-H", hints]
    proc = collio(mpirun_bin, args, prog=BUILD / "workloads" / "iorlike" / "iorlike", np=2)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "a deferred close failed" in proc.stderr, proc.stderr
    assert '"valid"' not in proc.stdout, proc.stdout


def test_workloads_refuse_a_missing_path_and_a_bad_hint(mpirun_bin: str) -> None:
    # the three share the parsing (workloads/common/wl_mpiio.c): one of them is enough
    env = base_env()
    prog = str(BUILD / "workloads" / "iorlike" / "iorlike")
    for args, msg in (([], "-f PATH is required"), (["-f", "x", "-H", "cb_nodes"], "bad hint")):
        proc = run(mpirun_cmd(mpirun_bin, 2, [prog, *args], MPI_OWN_TRANSPORT, env), env, 60)
        assert_refused(proc, "iorlike", msg)


def test_views_and_hdf5_on_the_file_store_mount(
    mpirun_bin: str, romio: Path, tmp_path: Path
) -> None:
    # The global files on the parallel file store (4 servers, its FUSE mount, --direct-io):
    # every view with the cache on, byte-identical to romio321's local files, and HDF5.
    if not Path("/dev/fuse").exists() or not shutil.which("fusermount3"):
        pytest.skip("FUSE is not available (/dev/fuse, fusermount3 from fuse3)")
    if not H5.is_file():
        pytest.skip(f"not built: {H5} (libhdf5-openmpi-dev missing at configure time)")
    env = environment(BUILD, {})
    store = Store(BUILD, tmp_path, 4, env, "test_collio")
    try:
        mount = Mount(BUILD, store, tmp_path / "mnt", env, "test_collio")
        try:
            hints = f"{SMALL},e10_cache=enable,e10_cache_path={tmp_path}"
            ok(collio(mpirun_bin, ["-v", "all", "-f", str(mount.mnt / "v"), "-e", "-H", hints]))
            for view in VIEWS:
                mine = (mount.mnt / f"v.{view}").read_bytes()
                assert mine == (romio / f"all.{view}").read_bytes(), view
            opts = [*MPI_OWN_TRANSPORT, "-x", f"LD_PRELOAD={LIB}"]
            argv = [str(H5), "-f", str(mount.mnt / "f.h5"), "-H", hints]
            proc = run(mpirun_cmd(mpirun_bin, NP, argv, opts, env), env, timeout=60)
            assert proc.returncode == 0 and "h5 ok" in proc.stdout, proc.stdout + proc.stderr
        finally:
            mount.unmount()
    finally:
        store.stop()

"""The Mercury-style prefetcher (services/prefetch/) beneath real reads.

- Byte-exact reads with and without the interposer: random offsets and sizes by 15
  threads, each opening the file its own way and reading with every wrapped call; fio
  writes and verifies through it; a file it creates keeps its mode.
- The window: page-cache residency (cachestat or mincore) never above CacheSize blocks while a
  strided reader with backward seeks runs; a two-entry, two-range configuration fetches
  exactly each range's blocks; files without hints are never tracked; the application's
  own posix_fadvise stops the prefetcher for that file.
- The store back-end beneath the store's direct-I/O mount: reads served from the
  client-side cache, byte-exact; its cache within CacheSize blocks by its counters; the
  servers serve fewer reads than without it.
- rootio: its pattern (increasing offsets, backward seeks, no byte twice) written as a fio
  iolog and replayed with the same reads; every mode reads right bytes, mercury beneath
  the prefetcher; bad options are one line.
- The advice manager: descriptors handed over a Unix socket, its advisors' counters; an
  unreachable manager, a missing or malformed configuration: one line on stderr, and
  the reads are still right.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from conftest import BUILD, base_env, json_line, run
from test_pfs import Instance, Lines, Mount, cli, fuse_ok  # noqa: F401 (fuse_ok: a fixture)

pytestmark = pytest.mark.integration

PREFETCH = BUILD / "services" / "prefetch"
TIMEOUT = 60.0
MiB = 1 << 20
KiB = 1 << 10


def prefetch_bin(name: str) -> Path:
    path = PREFETCH / name
    if not path.is_file():
        pytest.fail(f"not built: {path} (cmake --build {BUILD})")
    return path


def drop_cache(path: Path) -> None:
    """This file's pages out of the page cache (never the machine's)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def entry(path: Path, bs: int, cache: int, ra: int, willneed: list[tuple[int, int]]) -> dict:
    return {
        "Path": str(path),
        "BlockSize": bs,
        "CacheSize": cache,
        "ReadAheadSize": ra,
        "WillNeed": [{"Offset": o, "Length": n} for o, n in willneed],
    }


class Prefetch:
    """pf_read beneath (or without) libloggp-prefetch.so, with its counters."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.n = 0

    def env(self, config: Path | None, **settings: str) -> dict[str, str]:
        env = base_env()
        if config is not None:
            self.n += 1
            env["LD_PRELOAD"] = str(prefetch_bin("libloggp-prefetch.so"))
            env["LOGGP_PREFETCH_CONFIG"] = str(config)
            env["LOGGP_PREFETCH_STATS"] = str(self.root / f"stats-{self.n}.jsonl")
        env.update({f"LOGGP_PREFETCH_{k.upper()}": v for k, v in settings.items()})
        return env

    def config(self, name: str, files: list[dict], dirs: list[dict] | None = None) -> Path:
        path = self.root / name
        path.write_text(json.dumps({"File": files, "Directory": dirs or []}))
        return path

    def run(self, env: Mapping[str, str], *args: str) -> subprocess.CompletedProcess[str]:
        argv = [str(prefetch_bin("tests/pf_read")), *args]
        return run(argv, env, timeout=TIMEOUT, cwd=self.root)

    def read(self, env: Mapping[str, str], *args: str) -> dict[str, object]:
        proc = self.run(env, *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return json_line(proc.stdout)

    def stats(self, env: Mapping[str, str]) -> dict:
        lines = Path(env["LOGGP_PREFETCH_STATS"]).read_text().splitlines()
        assert len(lines) == 1, lines
        return json.loads(lines[0])


@pytest.fixture(scope="module")
def pf(tmp_path_factory: pytest.TempPathFactory) -> Prefetch:
    return Prefetch(tmp_path_factory.mktemp("prefetch"))


@pytest.fixture(scope="module")
def data(pf: Prefetch) -> Path:
    """8 MiB of the pattern pf_read checks, in a directory of its own."""
    (pf.root / "data").mkdir()
    path = pf.root / "data" / "f.dat"
    pf.read(base_env(), "make", str(path), str(8 * MiB))
    return path


@pytest.fixture(scope="module")
def whole(pf: Prefetch, data: Path) -> Path:
    """The seed's hints scaled down: WillNeed over the whole file."""
    return pf.config("whole.json", [entry(data, 256 * KiB, 4, 2, [(0, 0)])])


def test_reads_are_byte_exact_every_way_with_and_without_the_interposer(
    pf: Prefetch, data: Path, whole: Path
) -> None:
    args = ("pattern", str(data), "5", "15", "150")
    plain = pf.read(base_env(), *args)
    env = pf.env(whole)
    hinted = pf.read(env, *args)
    assert plain["ok"] and hinted["ok"], (plain, hinted)
    assert hinted["digest"] == plain["digest"] and hinted["bytes"] == plain["bytes"]
    st = pf.stats(env)
    # one open file description per thread, each with its own advisor
    assert st["mode"] == "thread" and st["hinted_opens"] == 15 and st["files"] == 15, st
    assert st["requests"] > 0 and st["fetched"] > 0 and st["released"] > 0, st
    assert st["oversized"] > 0 and st["window_max"] <= 4, st


def test_window_stays_within_cache_size_blocks(pf: Prefetch, data: Path, whole: Path) -> None:
    drop_cache(data)
    env = pf.env(whole, advisor="inline")
    res = pf.read(env, "window", str(data), str(64 * KiB), str(96 * KiB))
    # CacheSize blocks, plus the pages of one request (the reader's own read).
    bound = (4 * 256 * KiB + 64 * KiB) // 4096
    assert res["ok"] and res["max_resident_pages"] <= bound, res
    st = pf.stats(env)
    assert st["window_max"] == 4 and st["released"] > 0 and st["fetched"] > 4, st
    # the reader's mapping of the file is seen and reported, not prefetched
    assert st["not_prefetched"] == {"mmap": 1, "copy_file_range": 0, "sendfile": 0}, st


def test_two_entries_each_range_and_only_matching_paths(pf: Prefetch) -> None:
    (pf.root / "two").mkdir()
    (pf.root / "other").mkdir()
    a, b, c = pf.root / "two" / "a.dat", pf.root / "dir" / "b.dat", pf.root / "other" / "a.dat"
    (pf.root / "dir").mkdir()
    for path in (a, b, c):
        pf.read(base_env(), "make", str(path), str(2 * MiB))
        drop_cache(path)
    config = pf.config(
        "two.json",
        [entry(a, 64 * KiB, 8, 2, [(0, 256 * KiB), (MiB, 160 * KiB)])],
        [entry(pf.root / "dir", 128 * KiB, 4, 1, [(0, 0)])],
    )
    env = pf.env(config, advisor="inline")
    got = pf.read(env, "touch", str(a), "4096:4096", f"{MiB + 4096}:4096")["resident"]
    # 64 KiB per character: blocks 0-2 of the first range, 16-17 and half of 18 (the
    # second range ends 32 KiB into it); nothing between or after.
    assert got == "222" + "0" * 13 + "221" + "0" * 13, got
    assert pf.stats(env)["hinted_opens"] == 1
    env = pf.env(config, advisor="inline")
    got = pf.read(env, "touch", str(b), "0:4096")["resident"]
    assert got == "2222" + "0" * 28, got  # the directory entry's 2 blocks of 128 KiB
    env = pf.env(config, advisor="inline")
    pf.read(env, "touch", str(c), "0:4096")
    assert pf.stats(env)["hinted_opens"] == 0  # same name, another directory


def test_the_applications_own_advice_stops_prefetching(pf: Prefetch, data: Path) -> None:
    config = pf.config("adv.json", [entry(data, 64 * KiB, 8, 2, [(0, 0)])])
    drop_cache(data)
    env = pf.env(config, advisor="inline")
    got = pf.read(env, "touch", str(data), "advise", "0:4096", f"{MiB}:4096")
    st = pf.stats(env)
    assert got["ok"] and st["app_advice"] == 1 and st["fetched"] == 0, st


def test_fio_writes_and_verifies_through_it_and_created_files_keep_their_mode(
    pf: Prefetch,
) -> None:
    d = pf.root / "fio"
    d.mkdir()
    config = pf.config("fio.json", [], [entry(d, 128 * KiB, 4, 2, [(0, 0)])])
    env = pf.env(config)
    argv = [
        "fio",
        "--name=v",
        f"--directory={d}",
        "--size=4M",
        "--bs=64k",
        "--rw=write",
        "--ioengine=psync",
        "--verify=crc32c",
        "--do_verify=1",
        "--output-format=json",
        # a thread (not a process), so that this process counts; fio's DONTNEED at
        # open (--invalidate) leaves the prefetcher on (its SEQUENTIAL would turn it
        # to adaptive read-ahead, not measured here)
        "--thread",
        "--fadvise_hint=0",
    ]
    proc = run(argv, env, timeout=TIMEOUT, cwd=d)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout[proc.stdout.index("{") :])["jobs"][0]["error"] == 0
    st = pf.stats(env)
    assert st["hinted_opens"] >= 1 and st["requests"] >= 64, st
    made = d / "made.dat"
    pf.read(pf.env(config), "make", str(made), "4096")
    assert made.stat().st_mode & 0o777 == 0o640 & ~current_umask()


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (None, "cannot read: No such file or directory; prefetching is off"),
        ('{"File": [', "(accepted: JSON); prefetching is off"),
        ('{"File": [{"Path": "/x", "CacheSize": -2}]}', "CacheSize: -2 is not a non-negative"),
    ],
)
def test_a_bad_configuration_is_one_line_and_reads_go_on(
    pf: Prefetch, data: Path, text: str | None, says: str
) -> None:
    config = pf.root / "bad.json"
    config.unlink(missing_ok=True)
    if text is not None:
        config.write_text(text)
    proc = pf.run(pf.env(config), "pattern", str(data), "1", "3", "20")
    assert proc.returncode == 0 and json_line(proc.stdout)["ok"], proc.stdout + proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("loggp-prefetch: ") and says in lines[0]


@pytest.fixture
def manager(pf: Prefetch) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    sock = pf.root / "manager.sock"
    proc = subprocess.Popen(
        [str(prefetch_bin("loggp-prefetch-manager")), "--socket", str(sock)],
        env=base_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert Lines(proc).wait_for("loggp-prefetch-manager: ready", TIMEOUT), proc.stderr
        yield proc, sock
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_the_manager_advises_over_its_socket(pf: Prefetch, data: Path, whole: Path, manager):
    proc, sock = manager
    env = pf.env(whole, manager=str(sock))
    res = pf.read(env, "pattern", str(data), "9", "4", "100")
    assert res["ok"], res
    assert pf.stats(env)["mode"] == "manager" and pf.stats(env)["fetched"] == 0
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=TIMEOUT)
    st = json.loads(err.strip().splitlines()[-1])
    assert proc.returncode == 0 and st["files"] == 4 and st["fetched"] > 0, err
    assert st["window_max"] <= 4 and st["errors"] == 0, st


def test_an_unreachable_manager_is_one_line_and_advice_stays_in_the_process(
    pf: Prefetch, data: Path, whole: Path
) -> None:
    env = pf.env(whole, manager=str(pf.root / "nobody.sock"))
    proc = pf.run(env, "pattern", str(data), "2", "2", "50")
    assert proc.returncode == 0 and json_line(proc.stdout)["ok"], proc.stdout + proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "nobody.sock: cannot connect" in lines[0], proc.stderr
    assert "advising in the process instead" in lines[0]
    st = pf.stats(env)
    assert st["mode"] == "thread" and st["fetched"] > 0, st


def server_reads(inst: Instance) -> int:
    proc = cli(inst, "stats")
    assert proc.returncode == 0, proc.stderr
    return sum(json.loads(line)["reads"] for line in proc.stdout.splitlines())


@pytest.mark.usefixtures("fuse_ok")
def test_the_store_back_end_serves_reads_from_its_cache(pf: Prefetch) -> None:
    inst = Instance(pf.root / "store", 2, base_env())
    mount = None
    try:
        mount = Mount(inst, pf.root / "store" / "mnt", True, base_env())
        path = mount.mnt / "f.dat"
        pf.read(base_env(), "make", str(path), str(4 * MiB))
        config = pf.config("store.json", [entry(path, MiB, 3, 1, [(0, 0)])])
        store = {"pfs_instance": str(inst.dir), "pfs_mount": str(mount.mnt)}
        strided = ("window", str(path), str(64 * KiB), str(96 * KiB))

        before = server_reads(inst)
        plain = pf.read(base_env(), *strided)
        middle = server_reads(inst)
        env = pf.env(config, **store)
        hinted = pf.read(env, *strided)
        after = server_reads(inst)
        n = plain["reads"]
        assert plain["ok"] and hinted["ok"] and hinted["reads"] == n == 43
        st = pf.stats(env)
        assert st["served"] > 0 and st["served"] + st["missed"] == n, st
        assert st["cache_max"] <= 3 and st["store_reads"] == st["fetched"], st
        # 43 reads of 64 KiB without it; with it, blocks of 1 MiB (one stripe unit each)
        assert after - middle < (middle - before) / 2, (before, middle, after)

        args = ("pattern", str(path), "4", "4", "30")
        env = pf.env(config, **store)
        assert pf.read(env, *args)["digest"] == pf.read(base_env(), *args)["digest"]
        assert pf.stats(env)["served"] > 0
    finally:
        if mount is not None:
            mount.unmount()
        inst.kill_all()


def rootio(*args: str) -> subprocess.CompletedProcess[str]:
    prog = BUILD / "workloads" / "rootio" / "rootio"
    if not prog.is_file():
        pytest.fail(f"not built: {prog} (cmake --build {BUILD})")
    return run([str(prog), *args], base_env(), timeout=TIMEOUT)


def test_rootio_pattern_replay_and_modes(pf: Prefetch) -> None:
    d = pf.root / "rootio"
    d.mkdir()
    trace = d / "t.log"
    assert rootio("-d", str(d), "-s", "8M", "-r", "64K", "-G", str(trace)).returncode == 0
    lines = trace.read_text().splitlines()
    assert lines[0] == "fio version 2 iolog" and lines[-1].endswith(" close")
    reads = [(int(w[2]), int(w[3])) for w in (ln.split() for ln in lines) if w[1] == "read"]
    back = sum(1 for a, b in zip(reads, reads[1:], strict=False) if b[0] < a[0])
    assert back > 0 and len(reads) > 40
    seen = sorted(reads)
    assert all(a[0] + a[1] <= b[0] for a, b in zip(seen, seen[1:], strict=False))  # disjoint
    results = {}
    for mode in ("off", "willneed", "mercury"):
        proc = rootio("-d", str(d), "-s", "8M", "-r", "64K", "-m", mode, "-b", "256K")
        res = json_line(proc.stdout)
        assert proc.returncode == 0 and res["valid"], proc.stderr
        results[mode] = res["metrics"]
    assert {m["reads"] for m in results.values()} == {len(reads)}
    assert {m["backward"] for m in results.values()} == {back}
    proc = rootio("-t", str(trace))
    replay = json_line(proc.stdout)
    assert replay["valid"] and replay["metrics"]["reads"] == len(reads), proc.stderr
    assert replay["metrics"]["backward"] == back


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["-d", "x", "-m", "fast"], "bad value 'fast' for -m: expected off, willneed or mercury"),
        (["-d", "x", "-n", "0"], "bad value '0' for -n: expected an integer from 1 to 64"),
        (["-d", "x", "-i", "/inst"], "-i INSTANCE and -M MOUNT go together"),
        (["-s", "1M"], "-d DIR is required"),
    ],
)
def test_rootio_bad_options_are_one_line(args: list[str], says: str) -> None:
    proc = rootio(*args)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and says in proc.stderr

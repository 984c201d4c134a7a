"""prefetch benchmark: readers over the parallel file store with no prefetcher, with
Mercury's whole-block hints and with adaptive read-ahead, beneath the shim.

    loggp bench prefetch --build build

Two store servers (1 MiB stripes over both) and their FUSE mount in direct-I/O mode, all
beneath ΔL of 0, 100 and 500 µs.  Readers: sequential (64 KiB reads), dense strided
(256 KiB every 512 KiB) and sparse strided (64 KiB every 3 MiB) over a 96 MiB file
(pf_read strided, which checks every byte), and rootio (a ROOT-like reader: 250 KB reads on
average, gaps as long, a backward seek in 16 reads, `--compute` ns per byte read between
reads) over a 64 MiB file.  Modes: none (no library); hinted (libloggp-prefetch.so, store
back-end, WillNeed over the file in 4 MiB blocks, CacheSize 8, ReadAheadSize 4: the seed's
settings); adaptive (the same library and budget, "Adaptive": true).  For each: run time,
the reads the servers served (their counters before and after) and the bytes the library
fetched; median of `--repeats` rounds.  The overlap bound for rootio: prefetching can at
best hide I/O behind compute, so the gain is at most min(compute, I/O) / (compute + I/O),
with I/O the time of the same reads without compute or library.  Writes
docs/benchmarks-prefetch.json and replaces its own section of docs/benchmarks.md.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from loggp.bench.doc import machine, parser, publish
from loggp.bench.store import PROVIDER, Mount, Store, environment
from loggp.results.protocol import result_line

NAME = "prefetch"
SUMMARY = "readers over the file store: none, whole-block hints, adaptive read-ahead"
TOOL = "prefetch_bench"
BEGIN = "<!-- prefetch:begin (written by loggp bench prefetch) -->"
END = "<!-- prefetch:end -->"
MODES = ("none", "hinted", "adaptive")
KNOBS: tuple[tuple[str, dict[str, str]], ...] = (
    ("ΔL 0", {"latency": "0us"}),
    ("ΔL 100 µs", {"latency": "100us"}),
    ("ΔL 500 µs", {"latency": "500us"}),
)
KiB, MiB = 1 << 10, 1 << 20
FILE_SIZE = 96 * MiB
STRIDED = {  # reader: (request, stride)
    "sequential": (64 * KiB, 64 * KiB),
    "dense strided": (256 * KiB, 512 * KiB),
    "sparse strided": (64 * KiB, 3 * MiB),
}
ROOTIO_SIZE = "64M"
BLOCK, CACHE, AHEAD = 4 * MiB, 8, 4


def server_reads(build: Path, inst: Path, env: dict[str, str]) -> int:
    argv = [str(build / "services" / "pfs" / "loggp-pfs"), "-i", str(inst), "-t", "30000", "stats"]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    if out.returncode:
        sys.exit(f"{TOOL}: loggp-pfs stats failed: {out.stderr.strip()}")
    return sum(json.loads(line)["reads"] for line in out.stdout.splitlines())


def hints(path: Path, is_dir: bool, adaptive: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"Path": str(path), "BlockSize": BLOCK, "CacheSize": CACHE}
    if adaptive:
        entry["Adaptive"] = True
    else:
        entry |= {"ReadAheadSize": AHEAD, "WillNeed": [{"Offset": 0, "Length": 0}]}
    return {"File": [] if is_dir else [entry], "Directory": [entry] if is_dir else []}


def beneath(build: Path, env: dict[str, str], root: Path, mode: str, target: Path,
            is_dir: bool, store: Store, mount: Mount) -> dict[str, str]:  # fmt: skip
    """env for a run in mode; its stats file is LOGGP_PREFETCH_STATS."""
    if mode == "none":
        return dict(env)
    config = root / f"{mode}-{'dir' if is_dir else 'file'}.json"
    config.write_text(json.dumps(hints(target, is_dir, mode == "adaptive")))
    stats = root / "stats.jsonl"
    stats.unlink(missing_ok=True)
    return env | {
        "LD_PRELOAD": str(build / "services" / "prefetch" / "libloggp-prefetch.so"),
        "LOGGP_PREFETCH_CONFIG": str(config),
        "LOGGP_PREFETCH_PFS_INSTANCE": str(store.dir),
        "LOGGP_PREFETCH_PFS_MOUNT": str(mount.mnt),
        "LOGGP_PREFETCH_STATS": str(stats),
    }


def fetched(env: dict[str, str]) -> int:
    """Bytes the library asked the servers for, over every process of the run."""
    path = env.get("LOGGP_PREFETCH_STATS")
    if not path or not Path(path).exists():
        return 0
    return sum(json.loads(line)["store_bytes"] for line in Path(path).read_text().splitlines())


def checked(proc: subprocess.CompletedProcess[str], what: str) -> None:
    if proc.returncode:
        sys.exit(f"{TOOL}: {what} failed:\n{proc.stderr[-2000:]}")


def run_reader(build: Path, env: dict[str, str], reader: str, mnt: Path,
               compute: float) -> dict[str, float]:  # fmt: skip
    """The run's time (and rootio's time computing)."""
    if reader == "rootio":
        argv = [str(build / "workloads" / "rootio" / "rootio"), "-d", str(mnt), "-s",
                ROOTIO_SIZE, "-c", str(compute), "-m", "off"]  # fmt: skip
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
        res = result_line(proc.stdout)
        checked(proc, "rootio")
        if res is None or not res["valid"]:
            sys.exit(f"{TOOL}: rootio: no valid result:\n{proc.stdout[-2000:]}")
        return {k: float(res["metrics"][k]) for k in ("time_s", "compute_s")}
    req, stride = STRIDED[reader]
    argv = [str(build / "services" / "prefetch" / "tests" / "pf_read"), "strided",
            str(mnt / "f.dat"), str(req), str(stride)]  # fmt: skip
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
    checked(proc, f"pf_read strided {req} {stride}")
    return {"time_s": float(json.loads(proc.stdout.strip().splitlines()[-1])["seconds"])}


def setting(build: Path, root: Path, label: str, knobs: dict[str, str], repeats: int,
            compute: float) -> list[dict[str, Any]]:  # fmt: skip
    env = environment(build, knobs)
    plain = environment(build, {})
    store = Store(build, root, 2, env, TOOL)
    mount = None
    runs: dict[tuple[str, str], list[dict[str, float]]] = {}
    io_only = []
    try:
        mount = Mount(build, store, root / f"mnt-{len(list(root.iterdir()))}", env, TOOL)
        pf_read = build / "services" / "prefetch" / "tests" / "pf_read"
        made = subprocess.run([str(pf_read), "make", str(mount.mnt / "f.dat"), str(FILE_SIZE)],
                              env=plain, capture_output=True, text=True, timeout=900)  # fmt: skip
        checked(made, "pf_read make")
        rootio_dir = mount.mnt / "rootio"
        rootio_dir.mkdir()
        for _ in range(repeats):
            for reader in (*STRIDED, "rootio"):
                where = rootio_dir if reader == "rootio" else mount.mnt / "f.dat"
                for mode in MODES:
                    run_env = beneath(build, env, root, mode, where, reader == "rootio", store,
                                      mount)  # fmt: skip
                    before = server_reads(build, store.dir, plain)
                    res = run_reader(build, run_env, reader, rootio_dir if reader == "rootio"
                                     else mount.mnt, compute)  # fmt: skip
                    runs.setdefault((reader, mode), []).append({
                        **res,
                        "server_reads": server_reads(build, store.dir, plain) - before,
                        "fetched_mib": fetched(run_env) / MiB,
                    })  # fmt: skip
            io_only.append(run_reader(build, env, "rootio", rootio_dir, 0.0)["time_s"])
    finally:
        try:
            if mount is not None:
                mount.unmount()
        finally:
            store.stop()
    rows = []
    for (reader, mode), rs in runs.items():
        med = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
        rows.append({"knobs": label, "reader": reader, "mode": mode, **med})
        print(f"{TOOL}: {label} {reader} {mode}: {med['time_s']:.3f} s, "
              f"{med['server_reads']:.0f} server reads", flush=True)  # fmt: skip
    rows.append({"knobs": label, "reader": "rootio", "mode": "io only",
                 "time_s": statistics.median(io_only)})  # fmt: skip
    return rows


def by_key(rows: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(r["knobs"], r["reader"], r["mode"]): r for r in rows}


def verdict(rows: list[dict[str, Any]]) -> list[str]:
    """What the table says, from its own numbers."""
    k = by_key(rows)
    knobs = list(dict.fromkeys(r["knobs"] for r in rows))

    def bound(kn: str) -> float:
        compute, io = k[(kn, "rootio", "none")]["compute_s"], k[(kn, "rootio", "io only")]["time_s"]
        return min(compute, io) / (compute + io) if compute + io > 0 else 0.0

    def gain(kn: str, mode: str) -> float:
        return 1 - k[(kn, "rootio", mode)]["time_s"] / k[(kn, "rootio", "none")]["time_s"]

    def ratios(reader: str, mode: str) -> str:
        return ", ".join(
            f"{k[(kn, reader, mode)]['time_s'] / k[(kn, reader, 'none')]['time_s']:.2f}×"
            for kn in knobs
        )

    return [
        f"Run time against none, at {', '.join(knobs)}: sparse strided adaptive "
        f"{ratios('sparse strided', 'adaptive')} (hinted {ratios('sparse strided', 'hinted')}); "
        f"dense strided adaptive {ratios('dense strided', 'adaptive')} (hinted "
        f"{ratios('dense strided', 'hinted')}); sequential adaptive "
        f"{ratios('sequential', 'adaptive')}; rootio adaptive {ratios('rootio', 'adaptive')} "
        f"(hinted {ratios('rootio', 'hinted')}).",
        "rootio's gain in run time (1 − time / none) against the overlap bound: "
        + ", ".join(
            f"{kn}: adaptive {gain(kn, 'adaptive'):+.0%}, hinted {gain(kn, 'hinted'):+.0%}, "
            f"bound {bound(kn):.0%}"
            for kn in knobs
        )
        + ".  rootio's gaps are as long as its reads: no pattern adaptive read-ahead "
        "predicts (its server reads are those of none), so its differences from none are "
        "the host's noise.",
    ]


def markdown(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    out = [
        BEGIN,
        "## Prefetching over the file store: none, whole-block hints, adaptive read-ahead",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, Linux {m['kernel']}, libfabric "
        f"{m['libfabric']}, run {m['date']} (load average {m['loadavg_1min']:.2f} at the start, "
        f"{doc['loadavg_end']:.2f} at the end: **taken under load**, other work shared the 2 "
        "cores; rerun on a quiet host for exact figures).",
        f"Provider {PROVIDER}; 2 servers (1 MiB stripes over both) and their FUSE mount "
        "(direct I/O) on this machine, beneath the knobs.  pf_read reads a "
        f"{FILE_SIZE // MiB} MiB file: sequential 64 KiB reads, dense strided 256 KiB every "
        "512 KiB, sparse strided 64 KiB every 3 MiB; rootio a "
        f"{ROOTIO_SIZE}iB file (250 KB reads, equal gaps, a backward seek in 16 reads) with "
        f"{doc['compute_ns_per_byte']} ns of compute per byte read; median of "
        f"{doc['repeats']} rounds.  none: no library; hinted: WillNeed over the file, "
        f"{BLOCK // MiB} MiB blocks, CacheSize {CACHE}, ReadAheadSize {AHEAD}; adaptive: the "
        'same budget, `"Adaptive": true` (services/prefetch/README.md).  Server reads: '
        "requests the 2 servers served; fetched: bytes the library asked them for (not "
        "known for rootio, whose instances end with _exit).  Bound "
        "(rootio): min(compute, I/O) / (compute + I/O), I/O the run time of its reads "
        "without compute or library.",
        "",
        "| knobs | reader | mode | time s | vs none | server reads | fetched MiB |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    k = by_key(doc["rows"])
    for r in doc["rows"]:
        if r["mode"] == "io only":
            continue
        base = k[(r["knobs"], r["reader"], "none")]
        # rootio's instances end with _exit, before the library writes its counters
        mib = "—" if r["reader"] == "rootio" and r["mode"] != "none" else f"{r['fetched_mib']:.1f}"
        out.append(
            f"| {r['knobs']} | {r['reader']} | {r['mode']} | {r['time_s']:.3f} | "
            f"{r['time_s'] / base['time_s']:.2f}× | {r['server_reads']:.0f} | {mib} |"
        )
    out += ["", *verdict(doc["rows"]), END, ""]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    ap = parser(NAME, __doc__.splitlines()[0], "benchmarks-prefetch.json")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--compute", type=float, default=5.0, help="rootio: ns of compute per byte")
    args = ap.parse_args(argv)
    build = args.build.resolve()
    for prog in ("workloads/rootio/rootio", "services/pfs/loggp-pfs-server",
                 "services/prefetch/libloggp-prefetch.so",
                 "services/prefetch/tests/pf_read"):  # fmt: skip
        if not (build / prog).is_file():
            sys.exit(f"{TOOL}: {build / prog} not built (cmake --build {build})")
    doc: dict[str, Any] = {"tool": TOOL, "machine": machine(), "repeats": args.repeats,
                           "compute_ns_per_byte": args.compute, "rows": []}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="loggp-prefetch-bench-", dir=Path.cwd()) as tmp:
        for label, knobs in KNOBS:
            doc["rows"] += setting(build, Path(tmp), label, knobs, args.repeats, args.compute)
    doc["loadavg_end"] = os.getloadavg()[0]
    publish(TOOL, doc, args, markdown(doc), BEGIN, END)
    return 0

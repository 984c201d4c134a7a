"""docs/benchmarks.md is shared by the benchmark programs of `loggp bench`: each owns one
section between its own begin and end markers and replaces only that section.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def parser(name: str, description: str, json_name: str) -> argparse.ArgumentParser:
    """The options every benchmark takes: --build, --out (its JSON document in docs/) and
    --markdown (the page its section goes to)."""
    ap = argparse.ArgumentParser(prog=f"loggp bench {name}", description=description)
    ap.add_argument("--build", type=Path, default=Path("build"), help="CMake build directory")
    ap.add_argument("--out", type=Path, default=Path("docs") / json_name)
    ap.add_argument("--markdown", type=Path, default=Path("docs/benchmarks.md"))
    return ap


def publish(tool: str, doc: dict[str, Any], args: argparse.Namespace, section: str,
            begin: str, end: str) -> None:  # fmt: skip
    """Writes the JSON document to args.out and the section into args.markdown."""
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    write_section(args.markdown, section, begin, end)
    print(f"{tool}: wrote {args.out} and {args.markdown}")


def write_section(path: Path, section: str, begin: str, end: str) -> None:
    """Replaces the text from the begin marker through the end marker of path with section
    (which carries both markers itself), or appends section when the markers are absent;
    a missing file starts as '# Benchmarks'."""
    text = path.read_text() if path.exists() else "# Benchmarks\n\n"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1].lstrip("\n")
        text = head + section + ("\n" + tail if tail else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


def _version(argv: list[str], prefix: str = "") -> str:
    """First line of a tool's version output (the part after prefix), or 'unknown'."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    for line in out.splitlines():
        if line.startswith(prefix):
            return line[len(prefix) :].strip() or "unknown"
    return "unknown"


class LoggpRunError(Exception):
    """A `loggp` command a benchmark ran failed; one line."""


def run_loggp(build: Path, *args: str) -> float:
    """`loggp ARGS` with build's programs, its output dropped; its wall time in seconds.
    LoggpRunError with its last line of stderr when it fails."""
    env = dict(os.environ, LOGGP_BUILD=str(build.resolve()))
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "loggp", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if proc.returncode:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise LoggpRunError(f"loggp {args[0]} exited {proc.returncode}: {last}")
    return time.monotonic() - t0


def machine_line(m: dict[str, Any]) -> str:
    """The section's first line: the machine() a benchmark ran on, and its load at start."""
    return (
        f"Machine: {m['cpu']}, {m['cores']} cores, Linux {m['kernel']}, libfabric "
        f"{m['libfabric']}, run {m['date']} (load average {m['loadavg_1min']:.2f} at start)."
    )


def machine() -> dict[str, Any]:
    """The facts a benchmark states about the machine it ran on."""
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "kernel": platform.release(),
        "libfabric": _version(["fi_info", "--version"], "libfabric:"),
        "dpdk": _version(["pkg-config", "--modversion", "libdpdk"]),
        # Other work on a 2-core host skews every number; recorded so it shows.
        "loadavg_1min": os.getloadavg()[0],
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }

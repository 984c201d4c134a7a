"""A tiny prefetch suite through `loggp run` and its report: the overlap bound of rootio with
the prefetcher against rootio without, from the real store, mount and prefetcher."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BUILD, base_env
from test_pfs import fuse_ok  # noqa: F401 (a fixture)

from loggp.analysis.html import fmt
from loggp.results.reader import read_points
from loggp.results.store import STORE_FILE

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# workloads/suites/prefetch.yaml's off-1 and mercury-1, on an 8 MiB file with 1 MiB blocks, at
# the baseline alone (a swept knob doubles the time; the unit tests cover the settings).
SUITE = r"""
version: 1
name: prefetch-tiny
repeats: 1
timeout: 60s
launcher: {kind: mpirun}
emulator: {shim: fabric, provider: tcp;ofi_rxm}
services:
  - {name: pfs2, program: services/pfs/loggp-pfs-server, count: 2,
     mkdir: ['${point_dir}/pfs2'], ready: 'ready .* metrics=(?P<metrics>\S+)',
     metrics: '${metrics}',
     args: [--instance, '${point_dir}/pfs2', --index, '${index}', --servers, '${count}',
            --metrics, '${host}']}
  - {name: mnt, program: services/pfs/loggp-pfs, mkdir: ['${point_dir}/mnt'],
     args: [-i, '${point_dir}/pfs2', mount, --direct-io, '${point_dir}/mnt'],
     ready: 'loggp-pfs: mounted'}
workloads:
  - {kind: process, ranks: 1, program: workloads/rootio/rootio, services: [pfs2, mnt],
     name: off-1, args: [-d, '${point_dir}/mnt', -s, 8M, -c, '5', -m, 'off']}
  - {kind: process, ranks: 1, program: workloads/rootio/rootio, services: [pfs2, mnt],
     name: mercury-1,
     args: [-d, '${point_dir}/mnt', -s, 8M, -c, '5', -m, mercury, -b, 1M,
            -i, '${point_dir}/pfs2', -M, '${point_dir}/mnt']}
"""


@pytest.mark.usefixtures("fuse_ok")
def test_a_prefetch_suite_reports_its_overlap_bound(mpirun_bin: str, tmp_path: Path) -> None:
    exp = tmp_path / "prefetch-tiny.yaml"
    exp.write_text(SUITE)
    out = tmp_path / "run"
    env = base_env()
    env["LOGGP_BUILD"] = str(BUILD)
    cmd = [sys.executable, "-m", "loggp", "run", str(exp), "--out", str(out)]
    cmd += ["--no-prometheus", "--wait-lock", "300"]  # another engineer's run may hold it
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, check=False)
    assert res.returncode == 0, res.stdout + res.stderr

    points = {p.point_id: p for p in read_points(out / STORE_FILE)[1]}
    assert len(points) == 2 and all(p.measured for p in points.values()), points
    table = (out / "report" / "index.html").read_text().split('<table class="overlap">')[1]
    table = table.split("</table>")[0]
    off = points["off-1/baseline/r0"].result["metrics"]
    pf = points["mercury-1/baseline/r0"].result["metrics"]
    assert off["reads"] == pf["reads"] > 0  # the same reads, with and without prefetching
    row = table.split("<th>mercury-1</th><td>off-1</td><td>baseline</td>")[1]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.split("</tr>")[0])
    io_off, io, bound, gain = (c.split(" <")[0] for c in cells[:4])
    assert (io_off, io) == (fmt(off["io_s"]), fmt(pf["io_s"])), cells
    assert bound == fmt((off["io_s"] - pf["io_s"]) / off["io_s"]), cells
    assert gain == fmt(1 - pf["time_s"] / off["time_s"]), cells

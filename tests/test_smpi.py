"""`emulator: {shim: smpi}` end to end: `loggp run` of the smpicc builds in SimGrid's SMPI on
the platform loggp generates (docs/simulator.md), its results stored and reported; and
`loggp bench sim-speed` (loggp/bench/sim_speed.py) at small rank counts.

The stack is a calibration file of the test's (o_s 2 µs, o_r 3 µs, L 10 µs, G 0.5 ns/B), so
every simulated time is known; a simulated time does not depend on the host's load except
through the computation SMPI measures, which the 8-byte ping-pong's points leave out.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import BUILD, base_env

from loggp.results.reader import StoredPoint, read_points
from loggp.results.store import STORE_FILE
from loggp.tests.cli import judged_ok, loggp

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SMPI_PINGPONG = BUILD / "smpi" / "workloads" / "pingpong" / "pingpong"
CALIBRATION = {
    "tool": "loggp-calibrate",
    "version": 1,
    "provider": "tcp;ofi_rxm",
    "results": {
        "half_rtt_us": {"median": 15.0},
        "o_s_us": {"median": 2.0},
        "o_r_us": {"median": 3.0},
        "g_us": {"median": 3.0},
        "L_us": {"median": 10.0},
        "G_ns_per_B": {"value": 0.5},
    },
    # What a run's measurement beside the tool adds (loggp/run/trips.py): a message of
    # tcp;ofi_rxm above 16 KiB crosses three times (measured here).
    "trips": [[0, 1], [16385, 3]],
}
RENDEZVOUS_TRIPS = 3
DELTA_L_US = 100
DELTA_O_US = 1000  # far above the noise of a 64 KiB round's measured compute


class SimRun:
    def __init__(self, out: Path, wall_s: float) -> None:
        self.out = out
        self.wall_s = wall_s
        self.points = {p.point_id: p for p in read_points(out / STORE_FILE)[1]}

    def platform(self, p: StoredPoint) -> dict[str, float]:
        return json.loads((self.out / "points" / str(p.seq) / "platform.json").read_text())

    def half_rtt_us(self, point_id: str) -> float:
        return float(self.points[point_id].result["metrics"]["half_rtt_median_us"])


HEAD = (
    "version: 1\nrepeats: 1\ntimeout: 120s\nlauncher: {kind: local}\n"
    "emulator: {shim: smpi, calibration: calibration.json}\n"
)


def simulate(tmp: Path, name: str, body: str) -> SimRun:
    """`loggp run` of the experiment HEAD + body named name, on the test's stack."""
    if not SMPI_PINGPONG.is_file():
        pytest.skip(f"{SMPI_PINGPONG} not built (cmake -DLOGGP_SMPI=ON needs libsimgrid-dev)")
    (tmp / "calibration.json").write_text(json.dumps(CALIBRATION))
    exp = tmp / f"{name}.yaml"
    exp.write_text(f"name: {name}\n" + HEAD + body)
    out = tmp / "run"
    env = {**base_env(), "LOGGP_BUILD": str(BUILD), "LOGGP_RUN_DIR": str(tmp / "lock")}
    t0 = time.monotonic()
    res = loggp("run", str(exp), "--out", str(out), "--no-prometheus", env_extra=env, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    return SimRun(out, time.monotonic() - t0)


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> SimRun:
    return simulate(
        tmp_path_factory.mktemp("smpi"),
        "sim",
        f"sweep: {{knobs: {{latency: [{DELTA_L_US}us], overhead: [{DELTA_O_US}us]}}}}\n"
        "workloads:\n"
        # The 8-byte ping-pong's own compute between calls (about 1 µs a burst on one VM, under
        # the 1 µs SMPI ignores on another) is not simulated: its times are the platform's.
        "  - {name: pp, program: workloads/pingpong/pingpong, ranks: 2, "
        "args: [-n, '200', '--cfg=smpi/simulate-computation:no']}\n"
        "  - {name: pp64k, program: workloads/pingpong/pingpong, ranks: 2, "
        "args: [-n, '20', -s, 64K]}\n"
        "  - {name: pp256k, program: workloads/pingpong/pingpong, ranks: 2, "
        "args: [-n, '20', -s, 256K, '--cfg=smpi/simulate-computation:no']}\n"
        "  - {name: stencil64, program: workloads/stencil/stencil, ranks: 64, "
        "args: [-i, '10']}\n",
    )


def test_half_round_trip_is_the_platforms_o_plus_L(sim: SimRun) -> None:
    base = sim.points["pp/baseline/r0"]
    assert judged_ok(base), base.degraded_reason
    cfg = sim.platform(base)
    # two links a route: L = 2 · each link's latency
    configured_us = (cfg["smpi_os_s"] + 2 * cfg["link_latency_s"] + cfg["smpi_or_s"]) * 1e6
    assert configured_us == pytest.approx(15.0)
    assert sim.half_rtt_us("pp/baseline/r0") == pytest.approx(configured_us, rel=0.01)


def test_added_latency_adds_to_every_half_round_trip(sim: SimRun) -> None:
    added = sim.half_rtt_us(f"pp/latency={DELTA_L_US}us/r0") - sim.half_rtt_us("pp/baseline/r0")
    assert added == pytest.approx(DELTA_L_US, rel=0.01)


def test_a_message_above_the_rendezvous_limit_pays_each_of_its_trips(sim: SimRun) -> None:
    # 8 bytes make one trip, 256 KiB the stack's three: ΔL three times a half round trip.
    assert sim.platform(sim.points["pp256k/baseline/r0"])["lat_factor"] == "0:1;16385:3"
    for name, trips in (("pp", 1), ("pp256k", RENDEZVOUS_TRIPS)):
        added = sim.half_rtt_us(f"{name}/latency={DELTA_L_US}us/r0") - sim.half_rtt_us(
            f"{name}/baseline/r0"
        )
        assert added == pytest.approx(trips * DELTA_L_US, rel=0.01), name


def test_overhead_is_charged_on_large_messages_too(sim: SimRun) -> None:
    # SMPI's rendezvous from 64 KiB on would charge no o: every message is sent eagerly.
    # o_s and o_r each: 2 Δo a half round trip.  A 64 KiB round's real compute (filling
    # and checking the bytes), which SMPI measures, varies with the host's load: 5 %.
    for name, rel in (("pp", 0.01), ("pp64k", 0.05)):
        added = sim.half_rtt_us(f"{name}/overhead={DELTA_O_US}us/r0") - sim.half_rtt_us(
            f"{name}/baseline/r0"
        )
        assert added == pytest.approx(2 * DELTA_O_US, rel=rel), name


def test_64_ranks_are_stored_simulated_and_reported(sim: SimRun) -> None:
    assert len(sim.points) == 12
    for p in sim.points.values():
        assert p.backend == "smpi", p.point_id
        assert judged_ok(p), (p.point_id, p.status, p.degraded_reason, p.stderr_tail)
        assert p.result["ranks"] in (2, 64)
        assert (sim.out / "points" / str(p.seq) / "platform.xml").is_file()
    assert sim.points["stencil64/baseline/r0"].result["ranks"] == 64
    # ΔL reaches every rank's messages: the 64-rank stencil's halo exchanges slow down
    stencil = [sim.points[f"stencil64/{k}/r0"].value for k in ("baseline", "latency=100us")]
    assert stencil[1] > stencil[0]
    run = json.loads((sim.out / "run.json").read_text())
    assert run["state"] == "complete"
    assert run["provenance"]["smpi"]["stack"]["L_us"] == 10.0
    assert (sim.out / "calibration.json").is_file()
    assert (sim.out / "report" / "index.html").is_file()
    assert sim.wall_s < 240  # minutes at most, on a busy 2-core host


def test_ranks_in_two_racks_pay_the_levels_they_leave(tmp_path: Path) -> None:
    """The experiment's network simulated: two ranks on nodes in different racks pay the
    node level's 1 µs and the rack level's latency on top of the stack's 15 µs half round
    trip, the file's 50 µs at the baseline, a swept 200 µs at its point."""
    run = simulate(
        tmp_path,
        "racks",
        "network: {nodes: 2, levels: [{name: node, latency: 1us}, "
        "{name: rack, size: 1, latency: 50us}]}\n"
        "sweep: {knobs: {network.rack.latency: [200us]}}\n"
        "workloads:\n"
        "  - {name: pp, program: workloads/pingpong/pingpong, ranks: 2, "
        "args: [-n, '100', '--cfg=smpi/simulate-computation:no']}\n",
    )
    assert run.half_rtt_us("pp/baseline/r0") == pytest.approx(15 + 1 + 50, rel=0.01)
    swept = run.half_rtt_us("pp/network.rack.latency=200us/r0")
    assert swept == pytest.approx(15 + 1 + 200, rel=0.01)


def test_sim_speed_benchmark_reports_smpis_own_timing(tmp_path: Path) -> None:
    stencil = BUILD / "smpi" / "workloads" / "stencil" / "stencil"
    if not stencil.is_file():
        pytest.skip(f"{stencil} not built (cmake -DLOGGP_SMPI=ON needs libsimgrid-dev)")
    (tmp_path / "calibration.json").write_text(json.dumps(CALIBRATION))
    out, page = tmp_path / "speed.json", tmp_path / "benchmarks.md"
    res = loggp(
        "bench", "sim-speed", "--build", str(BUILD), "--ranks", "8,4", "--iterations", "10",
        "--calibration", "calibration.json", "--out", str(out), "--markdown", str(page),
        cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    doc = json.loads(out.read_text())
    assert doc["stack"]["L_us"] == CALIBRATION["results"]["L_us"]["median"]
    assert [r["ranks"] for r in doc["runs"]] == [8, 4]
    for r in doc["runs"]:
        # the whole program holds the stencil's timed loop; the simulation is part of the run
        assert 0 < r["stencil_time_s"] <= r["simulated_s"]
        assert 0 <= r["compute_s"] <= r["simulation_wall_s"] <= r["smpirun_wall_s"]
        assert r["sim_s_per_wall_s"] == pytest.approx(r["simulated_s"] / r["smpirun_wall_s"])
    section = page.read_text()
    assert section.count("sim-speed:begin") == 1 and "| 8 |" in section and "| 4 |" in section


def test_validate_sim_simulates_every_rank_count_on_one_measured_stack(tmp_path: Path) -> None:
    """With `calibration: measure` the first simulated run measures the stack (its trips by
    size among it) and every later rank count is simulated on that file."""
    if not SMPI_PINGPONG.is_file():
        pytest.skip(f"{SMPI_PINGPONG} not built (cmake -DLOGGP_SMPI=ON needs libsimgrid-dev)")
    exp = tmp_path / "val.yaml"
    exp.write_text(
        "version: 1\nname: val\nrepeats: 1\ntimeout: 60s\nlauncher: {kind: local}\n"
        "emulator: {shim: smpi, provider: tcp;ofi_rxm}\n"
        "sweep: {knobs: {latency: [100us]}}\n"
        "workloads:\n  - {name: pp, program: workloads/pingpong/pingpong, args: [-n, '20']}\n"
    )
    out = tmp_path / "val"
    env = {**base_env(), "LOGGP_BUILD": str(BUILD), "LOGGP_RUN_DIR": str(tmp_path / "lock")}
    res = loggp("validate-sim", str(exp), "--out", str(out), env_extra=env, timeout=400)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    first, second = (out / f"ranks-{n}" / "simulated" for n in (2, 4))
    stored = json.loads((first / "calibration.json").read_text())
    assert stored["trips"][0] == [0, 1]  # a small message crosses once
    assert json.loads((second / "calibration.json").read_text()) == stored
    smpi = [json.loads((d / "run.json").read_text())["provenance"]["smpi"] for d in (first, second)]
    assert smpi[0]["calibration"] == "measure"
    assert smpi[1]["calibration"] == str((first / "calibration.json").resolve())

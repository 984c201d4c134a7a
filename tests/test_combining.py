"""Flat-combining global structures (services/combining/) across 2 processes.

- Counts, not times: 100 % pushes with local combining carry >= 100 operations per
  message to the master, exactly 1 without combining; a 50/50 stack mix carries more
  than the combining buffer per message (pushes and pops matched in the process).
- Small recorded histories of the stack and queue in every mode, and of the set and map,
  are linearizable (the search checker of services/combining/lincheck.hpp, run by
  rank 0); the final cells of the set and map equal the serial model's.
- The shim counts at least the messages the runtime reports for the same run.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import BUILD, MPI_OWN_TRANSPORT, base_env, mpirun_cmd, run, workload_result

pytestmark = pytest.mark.integration

NAME = "loggp-combining"
BUFFER = 1024


@pytest.fixture(scope="module")
def combining_bin() -> Path:
    path = BUILD / "services" / "combining" / NAME
    if not path.is_file():
        pytest.fail(f"not built: {path} (cmake --build {BUILD})")
    return path


def combining(
    mpirun: str, prog: Path, args: list[str], env: dict[str, str] | None = None, np: int = 2
) -> subprocess.CompletedProcess[str]:
    env = env if env is not None else base_env()
    env["LOGGP_PROVIDER"] = "tcp;ofi_rxm"
    argv = mpirun_cmd(mpirun, np, [str(prog), *args], MPI_OWN_TRANSPORT, env)
    return run(argv, env, timeout=120)


def result(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = workload_result(proc.stdout)
    assert res["valid"] is True, proc.stderr
    return res


def test_local_combining_sends_hundreds_of_pushes_per_message_beneath_the_shim(
    mpirun_bin: str, combining_bin: Path, shim: Any
) -> None:
    sh = shim(overhead="0us", latency="0us")
    res = result(combining(mpirun_bin, combining_bin, ["-s", "stack", "-m", "local", "-n",
                                                         "20000"], sh.env))  # fmt: skip
    m = res["metrics"]
    assert m["ops"] == 40000 and m["pushes"] == 40000, m
    assert m["ops_per_msg"] >= 100, m
    assert m["ops_per_msg"] <= BUFFER, m
    assert sh.provider_msgs("tcp") >= res["msgs"]["total"] > 0, (sh.stats(), res["msgs"])


@pytest.mark.parametrize("mode", ["none", "centralized"])
def test_without_local_combining_every_push_is_its_own_message(
    mpirun_bin: str, combining_bin: Path, mode: str
) -> None:
    res = result(combining(mpirun_bin, combining_bin, ["-s", "stack", "-m", mode, "-n", "500",
                                                         "-w", "64"]))  # fmt: skip
    m = res["metrics"]
    assert m["master_requests"] == m["ops"] == 1000, m
    assert m["ops_per_msg"] == 1, m
    assert (m["master_combined"] > 0) == (mode == "centralized"), m


def test_matched_stack_mix_carries_more_than_the_buffer_per_message(
    mpirun_bin: str, combining_bin: Path
) -> None:
    res = result(combining(mpirun_bin, combining_bin, ["-s", "stack", "-m", "local", "-n",
                                                         "20000", "-p", "50"]))  # fmt: skip
    m = res["metrics"]
    assert m["ops_per_msg"] > BUFFER, m
    assert m["matched"] > 0 and m["pushes"] + m["pops"] + m["pops_empty"] == m["ops"], m


@pytest.mark.parametrize(
    ("structure", "mode"),
    [("stack", "none"), ("stack", "centralized"), ("stack", "local"), ("stack", "full"),
     ("queue", "none"), ("queue", "full")],
)  # fmt: skip
def test_recorded_histories_of_stack_and_queue_are_linearizable(
    mpirun_bin: str, combining_bin: Path, structure: str, mode: str
) -> None:
    # 4 workers per process: at most 8 operations pending at once bounds the checker's
    # search (with 8 workers a history that a busy host stretched out could exceed its
    # 2,000,000 states); 24 operations each still interleave across the processes.
    res = result(combining(mpirun_bin, combining_bin, ["-s", structure, "-m", mode, "-n", "24",
                                                         "-w", "4", "-p", "50", "-H"]))  # fmt: skip
    assert res["metrics"]["linearizable"] == 1, res


@pytest.mark.parametrize(("structure", "mode"), [("set", "none"), ("map", "local")])
def test_set_and_map_match_the_serial_model_and_are_linearizable_per_key(
    mpirun_bin: str, combining_bin: Path, structure: str, mode: str
) -> None:
    res = result(combining(mpirun_bin, combining_bin, ["-s", structure, "-m", mode, "-n", "40",
                                                         "-w", "8", "-p", "50", "-k", "4",
                                                         "-H"]))  # fmt: skip
    m = res["metrics"]
    assert m["linearizable"] == 1 and m["found"] > 0, m
    assert (m["combined"] > 0) == (mode == "local"), m


def test_a_mode_the_hash_has_not_is_refused(mpirun_bin: str, combining_bin: Path) -> None:
    proc = combining(mpirun_bin, combining_bin, ["-s", "set", "-m", "full"], np=1)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{NAME}: bad value 'full' for -m with -s set: expected none or local" in proc.stderr
    assert '"loggp_result"' not in proc.stdout


def test_bfs_variants_pass_validation_on_the_written_and_reread_edge_file(
    mpirun_bin: str, combining_bin: Path, tmp_path: Path
) -> None:
    """The combined-queue search writes its graph; the uncombined and the
    direction-optimizing ones read it back: same roots, same traversed edges."""
    edges = tmp_path / "edges.bin"
    common = ["-s", "bfs", "-G", "8", "-r", "4", "-w", "64"]
    runs = [result(combining(mpirun_bin, combining_bin, [*common, "-m", "full", "-o",
                                                         str(edges)]))]  # fmt: skip
    assert edges.stat().st_size == 12 * 16 * 256
    for mode in ("none", "tuned"):
        runs.append(result(combining(mpirun_bin, combining_bin, [*common, "-m", mode, "-f",
                                                                   str(edges)])))  # fmt: skip
    for key in ("roots", "root_sum", "edges_traversed"):
        assert len({r["metrics"][key] for r in runs}) == 1, [r["metrics"] for r in runs]
    assert runs[0]["metrics"]["roots"] == 4 and runs[0]["metrics"]["harmonic_mean_teps"] > 0
    assert runs[2]["metrics"]["bottom_up_levels"] > 0, runs[2]["metrics"]
    # The file's scale is its own: without -G it is read as written, a -G that disagrees
    # is refused rather than padded with vertices no edge names.
    alone = result(combining(mpirun_bin, combining_bin, ["-s", "bfs", "-r", "4", "-w", "64",
                                                         "-f", str(edges)]))  # fmt: skip
    assert (alone["params"]["scale"], alone["params"]["vertices"]) == (8, 256), alone["params"]
    bad = combining(mpirun_bin, combining_bin, ["-s", "bfs", "-G", "9", "-f", str(edges)])
    assert bad.returncode != 0 and '"loggp_result"' not in bad.stdout
    assert f"-G 9 disagrees with edge file {edges}" in bad.stderr, bad.stderr


@pytest.mark.parametrize("mode", ["local", "tuned"])
def test_cc_counts_the_components_union_find_counts(
    mpirun_bin: str, combining_bin: Path, mode: str
) -> None:
    res = result(combining(mpirun_bin, combining_bin, ["-s", "cc", "-m", mode, "-G", "9",
                                                         "-w", "64"]))  # fmt: skip
    m = res["metrics"]
    assert m["components"] == m["union_find_components"] > 1, m
    assert (m["set_inserts"] > 0) == (mode == "local"), m

"""The Slurm launcher's pieces that need no cluster: the batch script of `loggp run
--slurm`, the allocation a point records, the records read back."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from loggp.plan.experiment import Experiment
from loggp.run import slurm

pytestmark = pytest.mark.unit


def _exp(shim: str = "fabric", **launcher: object) -> Experiment:
    return Experiment.model_validate(
        {
            "version": 1,
            "name": "sw",
            "launcher": {"kind": "slurm", **launcher},
            "emulator": {"shim": shim},
            "workloads": [{"name": "t", "program": "/bin/true"}],
        }
    )


def test_the_batch_script_is_an_array_of_the_points_on_whole_nodes(tmp_path: Path) -> None:
    script = slurm.batch_script(_exp(nodes=2, sbatch_args=["--time=5"]), tmp_path, [0, 3, 4], 90)
    lines = script.read_text().splitlines()
    directives = [ln.removeprefix("#SBATCH ") for ln in lines if ln.startswith("#SBATCH ")]
    assert directives == [
        "--job-name=loggp-sw", "--array=0,3,4", "--nodes=2", "--exclusive",
        f"--output={tmp_path.resolve()}/slurm/%A_%a.out", "--time=5",
    ]  # fmt: skip
    task = shlex.split(lines[-1].removeprefix("exec "))
    assert task[task.index("--out") + 1] == str(tmp_path.resolve())
    assert "--slurm-task" in task and task[task.index("--wait-lock") + 1] == "90"
    shared = slurm.batch_script(_exp(share_nodes=True), tmp_path, [0], 90).read_text()
    assert "#SBATCH --nodes=1\n" in shared and "--exclusive" not in shared
    # one wire for all the nodes: its points take turns
    wire = slurm.batch_script(_exp("wire", inventory="inv.yml"), tmp_path, [0, 1], 90)
    assert "#SBATCH --array=0,1%1\n" in wire.read_text()


def test_a_point_records_its_job_and_node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "SLURM_JOB_ID": "12", "SLURM_ARRAY_JOB_ID": "10", "SLURM_ARRAY_TASK_ID": "1",
        "SLURM_JOB_PARTITION": "p", "SLURM_JOB_NODELIST": "n1", "SLURM_JOB_NUM_NODES": "1",
    }.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    point = tmp_path / "points" / "1"
    point.mkdir(parents=True)
    slurm.record_point(point)
    plan = [{"seq": 0, "point_id": "a"}, {"seq": 1, "point_id": "b"}]
    got = slurm.point_records(tmp_path, plan)
    assert list(got) == ["b"]  # point a never ran
    assert got["b"] | {"node": "x"} == {
        "job_id": "12", "array_job_id": "10", "array_task_id": "1", "partition": "p",
        "nodes": "n1", "num_nodes": "1", "node": "x",
    }  # fmt: skip
    (point / slurm.POINT_FILE).write_text("{")
    assert slurm.point_records(tmp_path, plan) == {}

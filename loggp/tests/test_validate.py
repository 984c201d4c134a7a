"""`loggp validate-sim`: its rank counts (--ranks), the runs it plans at each, and the
comparison it prints and writes, one section per rank count, from stored runs of known
slowdowns (loggp/analysis/tests/rundata.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from loggp.analysis.crossval import AGREE_REL, EMULATED, SIMULATED, compare_section, section_dir
from loggp.analysis.tests.rundata import write_validation_runs
from loggp.cli.main import build_parser
from loggp.cli.options import rank_counts
from loggp.cli.validate import VALIDATION_FILE, print_sections, variants, write_validation
from loggp.plan.experiment import load_experiment
from loggp.tests.cli import loggp

pytestmark = pytest.mark.unit

EXPERIMENT = """\
version: 1
name: val
emulator: {shim: smpi, calibration: calibration.json}
sweep: {knobs: {latency: [10us, 100us]}}
workloads:
  - {name: pp, program: workloads/pingpong/pingpong, ranks: 16}
  - {name: st, program: workloads/stencil/stencil, ranks: 64}
"""


def test_ranks_default_to_what_this_machine_emulates() -> None:
    args = build_parser().parse_args(["validate-sim", "x.yaml"])
    assert args.ranks == (2, 4)
    assert rank_counts("8,2") == (8, 2)  # the order given is the order run


@pytest.mark.parametrize(
    "given, says",
    [("2,x", "not a whole number: 'x'"), ("2,0", "at least 1"), ("4,4", "4 ranks given twice")],
)
def test_bad_ranks_are_one_line(tmp_path: Path, given: str, says: str) -> None:
    res = loggp("validate-sim", str(tmp_path / "x.yaml"), "--ranks", given)
    assert res.returncode == 2
    assert len(res.stderr.strip().splitlines()) == 1
    assert says in res.stderr


def test_every_rank_count_plans_both_runs(tmp_path: Path) -> None:
    path = tmp_path / "val.yaml"
    path.write_text(EXPERIMENT)
    exp, text, source = load_experiment(path)
    runs = variants(exp, text, source, (2, 4))
    assert [(v.ranks, v.kind) for v in runs] == [
        (2, EMULATED), (2, SIMULATED), (4, EMULATED), (4, SIMULATED),
    ]  # fmt: skip
    for v in runs:
        assert {w.ranks for w in v.exp.workloads} == {v.ranks}
        assert v.exp.emulator.shim == ("smpi" if v.kind == SIMULATED else "fabric")
        # only the simulated run reads a calibration
        assert (v.exp.emulator.calibration is None) == (v.kind == EMULATED)
        assert v.run_dir(tmp_path) == section_dir(tmp_path, v.ranks) / v.kind
    assert len({v.exp.name for v in runs}) == len(runs)  # four runs, four names


# Emulated slowdown of the workload at each ΔL, per rank count.
EMULATED_SLOWDOWN = {2: {10: 1.5, 100: 4.0}, 4: {10: 2.0, 100: 6.0}}


def test_one_section_per_rank_count_printed_and_written(tmp_path: Path) -> None:
    # at 2 ranks both points agree; at 4, ΔL = 100 us is simulated far outside
    off = {2: {10: 0.0, 100: AGREE_REL / 2}, 4: {10: 0.0, 100: 3 * AGREE_REL}}
    for n in (2, 4):
        write_validation_runs(tmp_path, n, EMULATED_SLOWDOWN[n], off[n])
    sections = [compare_section(tmp_path, n) for n in (2, 4)]

    out = io.StringIO()
    print_sections("val", sections, Console(file=out, width=200))
    printed = out.getvalue()
    assert printed.index("at 2 ranks") < printed.index("at 4 ranks")
    assert "2 of 2 points agree at 2 ranks" in printed
    assert "1 of 2 points agree at 4 ranks" in printed

    path = write_validation(tmp_path, sections)
    assert path == tmp_path / VALIDATION_FILE
    doc = json.loads(path.read_text())
    assert [s["ranks"] for s in doc["sections"]] == [2, 4]
    for s in doc["sections"]:
        n = s["ranks"]
        assert s["compared"] == len(EMULATED_SLOWDOWN[n])
        for p in s["points"]:
            assert p["emulated"] == pytest.approx(EMULATED_SLOWDOWN[n][p["x"]])
            assert p["rel_diff"] == pytest.approx(off[n][p["x"]])
            assert p["emulated_low"] < p["emulated"] < p["emulated_high"]
            assert p["agrees"] == (abs(off[n][p["x"]]) <= AGREE_REL)
        assert s["agree"] == sum(p["agrees"] for p in s["points"])

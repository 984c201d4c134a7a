"""loggp bench validation's section from validate-sim directories of known slowdowns
(loggp/analysis/tests/rundata.py): per rank count the points that agree, per point both
slowdowns and the verdict, as validate-sim's own comparison gives them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loggp.analysis.crossval import AGREE_REL
from loggp.analysis.tests.rundata import write_validation_runs
from loggp.bench.validation import SECTION_BEGIN, SECTION_END, main

pytestmark = pytest.mark.unit

SLOWDOWN = {10: 1.5, 50: 3.0, 100: 4.0}
OFF = {2: {10: 0.0, 50: AGREE_REL / 2, 100: 0.0}, 4: {10: 0.0, 50: 3 * AGREE_REL, 100: -0.5}}


def test_the_section_counts_and_lists_every_point_per_rank_count(tmp_path: Path) -> None:
    for n in OFF:
        write_validation_runs(tmp_path, n, SLOWDOWN, OFF[n])
    out, md = tmp_path / "v.json", tmp_path / "b.md"
    md.write_text("# Benchmarks\n\nkept\n")
    argv = ["--run", str(tmp_path), "--ranks", "2,4", "--out", str(out), "--markdown", str(md)]
    assert main(argv) == 0
    doc = json.loads(out.read_text())
    assert [(s["ranks"], s["agree"], s["compared"]) for s in doc["sections"]] == [
        (2, 3, 3),
        (4, 1, 3),
    ]
    text = md.read_text()
    assert text.startswith("# Benchmarks\n\nkept\n") and text.count(SECTION_BEGIN) == 1
    body = text.split(SECTION_BEGIN)[1].split(SECTION_END)[0]
    assert "2 ranks: 3 of 3 agree; 4 ranks: 1 of 3 agree" in body
    rows = [line for line in body.splitlines() if line.startswith("| latency |")]
    assert len(rows) == 6 and sum(row.endswith("| no |") for row in rows) == 2, rows
    assert "+45 %" in body and "-50 %" in body  # the two far off at 4 ranks


def test_a_rank_count_without_runs_is_one_line(tmp_path: Path, capsys) -> None:
    write_validation_runs(tmp_path, 2, SLOWDOWN, OFF[2])
    argv = ["--run", str(tmp_path), "--ranks", "2,4", "--out", str(tmp_path / "v.json")]
    assert main([*argv, "--markdown", str(tmp_path / "b.md")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"loggp-bench-validation: {tmp_path / 'ranks-4'}: no runs at 4 ranks"
    assert not (tmp_path / "v.json").exists()

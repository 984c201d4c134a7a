"""Hostile input: experiment files, result lines, providers, the wire's control socket and
Ctrl-C, each answered with one line naming what is wrong and what is accepted, never a
traceback, a hang or a point stored as ok that is not (docs/reliability.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loggp.tests.cli import loggp

WORKLOAD = "workloads:\n  - {name: w, kind: process, ranks: 1, program: /bin/true}\n"


def one_line_error(res, *parts: str) -> str:
    """The command failed with one line on stderr that holds every part, and no
    traceback."""
    assert res.returncode != 0, res.stdout
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("loggp: "), res.stderr
    for part in parts:
        assert part in lines[0], res.stderr
    return lines[0]


# --- experiment files -------------------------------------------------------------------


@pytest.mark.unit
def test_non_utf8_experiment_names_file_line_and_offset(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"version: 1\nname: t\n# caf\xe9 au lait\n" + WORKLOAD.encode())
    line = one_line_error(loggp("show", str(path), timeout=30), f"{path}:3:", "byte 0xe9")
    assert "offset 24" in line and "UTF-8" in line


@pytest.mark.unit
def test_alias_bomb_is_capped(tmp_path: Path) -> None:
    """Nine levels of nine aliases: 9^9 strings if expanded; refused at the cap."""
    rows = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    rows += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    path = tmp_path / "bomb.yaml"
    path.write_text("version: 1\nname: t\n" + "\n".join(rows) + "\n" + WORKLOAD)
    one_line_error(loggp("show", str(path), timeout=30), str(path), "10000", "alias")


@pytest.mark.unit
def test_recursive_alias_and_deep_nesting_are_refused(tmp_path: Path) -> None:
    rec = tmp_path / "rec.yaml"
    rec.write_text("version: 1\nname: t\na: &a [1, *a]\n" + WORKLOAD)
    one_line_error(loggp("show", str(rec), timeout=30), f"{rec}:3:", "alias")
    deep = tmp_path / "deep.yaml"
    deep.write_text("version: 1\nname: t\na: " + "[" * 1000 + "]" * 1000 + "\n" + WORKLOAD)
    one_line_error(loggp("show", str(deep), timeout=30), f"{deep}", "nested")


@pytest.mark.unit
def test_endless_file_is_refused(tmp_path: Path) -> None:
    one_line_error(loggp("show", "/dev/zero", timeout=30), "/dev/zero", "MiB")


@pytest.mark.unit
def test_huge_grid_is_refused_before_expanding(tmp_path: Path) -> None:
    values = ", ".join(f"{i}ns" for i in range(10_000))
    path = tmp_path / "grid.yaml"
    path.write_text(
        "version: 1\nname: t\nsweep:\n  mode: grid\n  knobs:\n"
        f"    latency: [{values}]\n    gap: [{values}]\n" + WORKLOAD
    )
    res = loggp("show", str(path), timeout=30)
    one_line_error(res, "100000000 points", "10000 × 10000", "cap of 100000")
    assert res.stdout == ""


@pytest.mark.unit
def test_huge_grid_of_ranges_makes_no_run_directory(tmp_path: Path) -> None:
    path = tmp_path / "grid.yaml"
    steps = "{from: 1us, to: 1ms, steps: 1000}"
    path.write_text(
        f"version: 1\nname: t\noutput: {tmp_path}\nsweep:\n  mode: grid\n  knobs:\n"
        f"    latency: {steps}\n    gap: {steps}\n" + WORKLOAD
    )
    res = loggp("run", str(path), "--out", str(tmp_path / "run"), timeout=30)
    one_line_error(res, "1000000 points", "cap of 100000")
    assert not (tmp_path / "run").exists()

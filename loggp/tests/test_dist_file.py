"""The delay distribution named by the experiment file (emulator.latency_dist,
emulator.latency_corr, seed; docs/experiments.md): checked at load with the shim's words
and the file's line, handed to every shimmed process of a point, refused beside the same
LOGGP_* variables in the environment, and recorded in run.json's provenance."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from loggp.cli.testbed import dist_argv
from loggp.errors import KnobError
from loggp.plan.dist import DIST_ENV
from loggp.plan.experiment import ExperimentError, parse_experiment
from loggp.plan.knobs import KnobSet
from loggp.run.launch import point_launch, preflight
from loggp.run.provenance import delay_distribution
from loggp.run.wirerun import WireSession, wire_dist

pytestmark = pytest.mark.unit

SPEC_FORMS = (
    "expected constant, uniform:TIME, normal:TIME, pareto:TIME, paretonormal:TIME or "
    "empirical:FILE, TIME as <number>{ns|us|ms|s}, e.g. 10us or 2.5ms"
)


def _text(emulator: str, head: str = "", program: str = "prog") -> str:
    return (
        f"version: 1\nname: t\n{head}emulator: {{{emulator}}}\n"
        f"workloads: [{{name: a, program: {program}, ranks: 2}}]\n"
    )


def _exp(tmp_path: Path, emulator: str, head: str = ""):
    prog = tmp_path / "prog"
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o755)
    return parse_experiment(_text(emulator, head, str(prog)), "t.yaml")


def test_the_keys_become_the_shims_settings(tmp_path: Path) -> None:
    exp = _exp(tmp_path, "latency_dist: normal:20us, latency_corr: 0.25", "seed: 7\n")
    assert exp.dist_env(tmp_path) == {
        "LOGGP_LATENCY_DIST": "normal:20us",
        "LOGGP_LATENCY_CORR": "0.25",
        "LOGGP_SEED": "7",
    }
    # a whole number is a correlation as written; the seed defaults to the file's default
    exp = _exp(tmp_path, "latency_dist: 'pareto:1ms', latency_corr: 1")
    assert exp.dist_env(None)["LOGGP_LATENCY_CORR"] == "1"
    assert exp.dist_env(None)["LOGGP_SEED"] == "1"
    assert _exp(tmp_path, "shim: fabric").dist_env(tmp_path) == {}


def test_an_empirical_path_is_taken_from_the_files_directory(tmp_path: Path) -> None:
    exp = _exp(tmp_path, "latency_dist: empirical:delays.txt")
    dist = exp.dist_env(tmp_path / "sub")["LOGGP_LATENCY_DIST"]
    assert dist == f"empirical:{tmp_path / 'sub' / 'delays.txt'}"
    exp = _exp(tmp_path, "latency_dist: empirical:/abs/delays.txt")
    assert exp.dist_env(tmp_path)["LOGGP_LATENCY_DIST"] == "empirical:/abs/delays.txt"


@pytest.mark.parametrize(
    ("emulator", "message"),
    [
        (
            "latency_dist: 'gauss:20us'",
            f"t.yaml:3: key 'emulator.latency_dist': bad value 'gauss:20us' for "
            f"LOGGP_LATENCY_DIST: {SPEC_FORMS}",
        ),
        (
            "latency_dist: 'normal:20us', latency_corr: 1.5",
            "t.yaml:3: key 'emulator.latency_corr': bad value '1.5' for LOGGP_LATENCY_CORR: "
            "expected a number from 0 to 1, e.g. 0.25",
        ),
        (
            "latency_corr: 0.5",
            "t.yaml:3: key 'emulator': latency_corr: bad value '0.5' for LOGGP_LATENCY_CORR: "
            "expected it with a LOGGP_LATENCY_DIST other than constant (it correlates drawn "
            "delays) (set emulator.latency_dist)",
        ),
        (
            "latency_dist: 'normal:20us', latency_corr: true",
            "t.yaml:3: key 'emulator.latency_corr': Input should be a valid string",
        ),
        (
            "shim: none, latency_dist: 'normal:20us'",
            "t.yaml:3: key 'emulator': latency_dist: shim none draws no delays: name a "
            "distribution with shim: fabric or wire",
        ),
    ],
    ids=["shape", "corr", "corr-alone", "corr-type", "shim-none"],
)
def test_a_bad_key_is_one_line_with_its_line(emulator: str, message: str) -> None:
    with pytest.raises(ExperimentError) as e:
        parse_experiment(_text(emulator), "t.yaml")
    assert str(e.value) == message


def test_every_shimmed_process_gets_them(tmp_path: Path, fake_build: Path) -> None:
    exp = _exp(tmp_path, "latency_dist: normal:20us", "seed: 9\n")
    launch = point_launch(exp, exp.workloads[0], KnobSet.parse({"latency": "5us"}), tmp_path, None)
    for name, value in (("LOGGP_LATENCY_DIST", "normal:20us"), ("LOGGP_SEED", "9")):
        assert launch.env[name] == value
        assert launch.argv[launch.argv.index(name) - 1] == "-x"  # to every rank
    assert "LOGGP_LATENCY_CORR" not in launch.env


@pytest.mark.parametrize("var", ["LOGGP_LATENCY_DIST", "LOGGP_LATENCY_CORR", "LOGGP_SEED"])
def test_the_file_beside_the_environment_is_refused(
    tmp_path: Path, fake_build: Path, monkeypatch: pytest.MonkeyPatch, var: str
) -> None:
    exp = _exp(tmp_path, "latency_dist: uniform:5us")
    monkeypatch.setenv(var, {"LOGGP_LATENCY_CORR": "0.5"}.get(var, "normal:1us"))
    if var == "LOGGP_SEED":
        monkeypatch.setenv(var, "3")
    with pytest.raises(KnobError) as e:
        preflight(exp, tmp_path)
    assert str(e.value) == (
        f"{var} is set in the environment and the experiment file names a delay distribution "
        "(emulator.latency_dist, emulator.latency_corr, seed): unset "
        f"{var} or remove emulator.latency_dist from the file"
    )


def test_the_empirical_file_is_read_before_the_run(
    tmp_path: Path, fake_build: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    exp = _exp(tmp_path, "latency_dist: empirical:d.txt")
    # the path made absolute, echoed up to 64 characters
    with pytest.raises(KnobError, match=r"^cannot read the delays of LOGGP_LATENCY_DIST '/"):
        preflight(exp, Path("."))
    Path("d.txt").write_text("10us\nfast\n")
    with pytest.raises(KnobError, match=r"^bad value 'fast' at /.*:2 for LOGGP_LATENCY_DIST"):
        preflight(exp, Path("."))
    Path("d.txt").write_text("10us\n20us\n")
    preflight(exp, Path("."))


def test_provenance_names_the_distribution_and_its_source(
    tmp_path: Path, fake_build: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exp = _exp(tmp_path, "latency_dist: normal:20us, latency_corr: 0.5", "seed: 4\n")
    assert delay_distribution(exp, tmp_path) == {
        "latency_dist": "normal:20us",
        "latency_corr": "0.5",
        "seed": "4",
        "from": "experiment file",
    }
    plain = _exp(tmp_path, "shim: fabric")
    assert delay_distribution(plain, tmp_path) == {"latency_dist": "constant", "from": "default"}
    monkeypatch.setenv(DIST_ENV, "pareto:3us")
    assert delay_distribution(plain, tmp_path) == {
        "latency_dist": "pareto:3us",
        "seed": "1",
        "from": "environment",
    }
    assert delay_distribution(_exp(tmp_path, "shim: none"), tmp_path) is None


class _Wire:
    """A stand-in for the wire's control connection: get answers doc, dist replaces its
    distribution as loggp-wire does (emulator/wire/wire_ctl.c), stats answers ports."""

    def __init__(self, doc: dict[str, object]) -> None:
        self.doc = doc
        self.sent: list[dict[str, object]] = []

    def __enter__(self) -> _Wire:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def request(self, req: dict[str, object]) -> dict[str, object]:
        self.sent.append(req)
        if req["cmd"] == "dist":
            self.doc.update(
                latency_dist=req.get("latency_dist", "constant"),
                latency_corr=req.get("latency_corr"),
                seed=int(str(req.get("seed", 1))),
            )
        return {"ok": True, "ports": [], **self.doc}


def test_the_wire_draws_what_the_file_names_for_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exp = _exp(tmp_path, "shim: wire, latency_dist: normal:20us", "seed: 5\n")
    session = WireSession("ut", dist=exp.dist_env(tmp_path))
    wire = _Wire({"latency_dist": "pareto:1us", "latency_corr": "0.5", "seed": 2})
    monkeypatch.setattr(session, "_control", lambda: wire)
    session.save()
    assert wire.sent[-1] == {"cmd": "dist", "latency_dist": "normal:20us", "seed": "5"}
    session.restore()  # the wire's own again
    assert wire.doc == {"latency_dist": "pareto:1us", "latency_corr": "0.5", "seed": 2}
    assert delay_distribution(exp, tmp_path) == {
        "latency_dist": "normal:20us",
        "seed": "5",
        "from": "experiment file",
    }
    # a file without one: the wire draws none for the run; a wire that draws the file's
    # already is left alone
    plain = WireSession("ut")
    monkeypatch.setattr(plain, "_control", lambda: wire)
    plain.save()
    assert wire.sent[-1] == {"cmd": "dist"} and wire.doc["latency_dist"] == "constant"
    plain.restore()
    sent = len(wire.sent)
    same = WireSession("ut", dist=wire_dist(wire.doc))
    monkeypatch.setattr(same, "_control", lambda: wire)
    same.save()
    same.restore()
    assert [r["cmd"] for r in wire.sent[sent:]] == ["get"]


def test_a_points_drawn_delays_on_the_wire(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each port's histogram grows over a point, or starts again for another latency."""

    def port(starts: int, hist: list[int]) -> dict[str, object]:
        return {
            "port": 0, "drops": {}, "late_hist_us": [0] * 16, "delay_latency_ns": 100000,
            "delay_bucket_ns": 1000, "delay_starts": starts,
            "delay_hist": hist + [0] * (128 - len(hist)),
        }  # fmt: skip

    session = WireSession("ut")
    for before, after, want in [
        (port(1, [1, 2, 3]), port(1, [4, 6, 3]), [3, 4, 0]),
        # begun again (another latency, or a new distribution with the same buckets)
        (port(1, [1, 2, 3]), port(2, [0, 1, 1]), [0, 1, 1]),
        ({"port": 0}, port(1, [5]), [5]),
    ]:
        monkeypatch.setattr(session, "_control", lambda a=after: _Wire({"ports": [a]}))
        (got,) = session.record([{"port": 0}], [before])
        assert got["delay_hist"][: len(want)] == want and sum(got["delay_hist"]) == sum(want)
        assert got["delay_latency_ns"] == after["delay_latency_ns"]
    monkeypatch.setattr(session, "_control", lambda: _Wire({"ports": [{"port": 0}]}))
    assert "delay_hist" not in session.record([{"port": 0}], [{"port": 0}])[0]


def test_testbed_up_takes_the_wires_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = argparse.Namespace(latency_dist="empirical:d.txt", latency_corr="0.5", seed=None)
    (tmp_path / "d.txt").write_text("5us\n7us\n")
    monkeypatch.chdir(tmp_path)
    assert dist_argv(args) == [
        "--latency-dist", f"empirical:{tmp_path / 'd.txt'}", "--latency-corr", "0.5",
        "--seed", "1",
    ]  # fmt: skip
    args = argparse.Namespace(latency_dist="normal:20", latency_corr=None, seed="7")
    with pytest.raises(KnobError, match="^bad value 'normal:20' for --latency-dist: expected"):
        dist_argv(args)
    args = argparse.Namespace(latency_dist=None, latency_corr=None, seed="x")
    with pytest.raises(KnobError, match="^bad value 'x' for --seed: expected a whole number"):
        dist_argv(args)
    assert dist_argv(argparse.Namespace(latency_dist=None, latency_corr=None, seed=None)) == []

"""The experiment schema: good files load, each bad file gives its documented message."""

from __future__ import annotations

import pytest

from loggp.plan.experiment import ExperimentError, load_experiment, parse_experiment
from loggp.plan.yamlpos import YamlError

pytestmark = pytest.mark.unit

HEAD = "version: 1\nname: t\n"
ONE = "workloads:\n  - name: a\n    program: prog\n"


def test_builtin_default_suite_loads() -> None:
    exp, text, source = load_experiment(None)
    assert exp.name == "default"
    assert "built-in" in source and text.startswith("#")
    assert {w.name for w in exp.workloads} == {"pingpong", "exchange", "stencil"}


def test_minimal_file_gets_documented_defaults() -> None:
    exp = parse_experiment(HEAD + ONE, "f.yaml")
    assert exp.repeats == 1 and exp.timeout == 120.0
    assert exp.launcher.kind == "mpirun" and exp.emulator.shim == "fabric"
    assert exp.emulator.provider == "tcp;ofi_rxm" and exp.sweep.mode == "one-at-a-time"
    w = exp.workloads[0]
    assert (w.kind, w.ranks, w.metric, w.higher_is_better) == ("mpi", 2, "time_s", False)


def test_merge_keys_merge_with_own_keys_first() -> None:
    text = HEAD + (
        "workloads:\n"
        "  - &base {name: a, program: prog, ranks: 3, timeout: 5s}\n"
        "  - <<: *base\n    name: b\n    ranks: 4\n"
        "  - <<: [{name: c, ranks: 5}, *base]\n"
    )
    a, b, c = parse_experiment(text, "f.yaml").workloads
    assert (b.name, b.program, b.ranks, b.timeout) == ("b", "prog", 4, 5.0)
    assert (c.name, c.program, c.ranks) == ("c", "prog", 5)


def test_merge_of_a_scalar_is_one_line() -> None:
    with pytest.raises(YamlError, match=r"f.yaml:4: a merge key \(<<\) takes a mapping"):
        parse_experiment(HEAD + "workloads:\n  - <<: 5\n    name: a\n", "f.yaml")


def test_full_file() -> None:
    text = HEAD + (
        "description: all keys\noutput: out\nrepeats: 3\nseed: 7\ntimeout: 2min\n"
        "launcher: {kind: mpirun, hostfile: hosts, mpirun_args: [--mca, foo, bar]}\n"
        "emulator: {shim: fabric, provider: shm, baseline: {latency: 1us}}\n"
        "sweep:\n  mode: grid\n  knobs:\n    gap: [1us, 2.5us]\n"
        "    bandwidth: {from: 10MB/s, to: 1GB/s, steps: 3, scale: log}\n"
        "workloads:\n  - {name: a, kind: process, program: p, args: [-n, 5], ranks: 1,\n"
        "     metric: rate_per_s, higher_is_better: true, timeout: 500ms}\n"
    )
    exp = parse_experiment(text, "f.yaml")
    assert exp.timeout == 120.0 and exp.workloads[0].timeout == 0.5
    assert exp.workloads[0].args == ["-n", "5"]
    assert exp.emulator.baseline == {"latency": "1us"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (ONE + "    rankz: 2\n",
         "f.yaml:6: unknown key 'workloads[0].rankz' (accepted keys: name,"),
        (ONE + "    ranks: two\n", "f.yaml:6: key 'workloads[0].ranks': Input should be a valid"),
        (ONE + "    ranks: 0\n", "f.yaml:6: key 'workloads[0].ranks': Input should be greater"),
        (ONE + "colour: red\n", "f.yaml:6: unknown key 'colour' (accepted keys: version, name,"),
        ("launcher: {kind: pbs}\n" + ONE, "f.yaml:3: key 'launcher.kind': Input should be "
         "'local', 'mpirun', 'netns', 'ansible' or 'slurm'"),
        ("launcher: {kind: mpirun, nodes: 2}\n" + ONE, "f.yaml:3: key 'launcher': nodes, "
         "sbatch_args and share_nodes are only read by launcher 'slurm'"),
        ("launcher: {kind: ansible, inventory: i, interface: eth0}\n" + ONE,
         "f.yaml:3: key 'launcher': interface is only read by launcher 'slurm'"),
        ("launcher: {kind: slurm, interface: eth0:1}\n" + ONE, "f.yaml:3: key 'launcher': "
         "bad interface name 'eth0:1': expected a network interface's name such as eth0"),
        ("emulator: {shim: dpdk}\n" + ONE, "f.yaml:3: key 'emulator.shim': Input should be "
         "'fabric', 'wire', 'none' or 'smpi'"),
        ("sweep:\n  knobs:\n    latency: [10us,\n      10]\n" + ONE,
         "f.yaml:6: key 'sweep.knobs.latency[1]': value 10 of latency has no unit: expected "
         "<number>{ns|us|ms|s}"),
        ("sweep:\n  knobs:\n    latncy: [10us]\n" + ONE,
         "f.yaml:5: key 'sweep.knobs.latncy': unknown knob 'latncy': expected one of overhead,"),
        ("sweep:\n  knobs:\n    gap: [-5us]\n" + ONE,
         "f.yaml:5: key 'sweep.knobs.gap[0]': bad value '-5us' for LOGGP_GAP: expected"),
        ("sweep:\n  knobs:\n    latency: {from: 0us, to: 1ms, steps: 3, scale: log}\n" + ONE,
         "f.yaml:5: key 'sweep.knobs.latency.from': a log range needs both ends above zero"),
        ("sweep:\n  knobs:\n    latency: {from: 1us, to: 1ms, stepz: 3}\n" + ONE,
         "f.yaml:5: key 'sweep.knobs.latency.stepz': unknown key in a range (accepted keys: "
         "from, to, steps, scale)"),
        ("sweep:\n  knobs:\n    latency: {from: 1us, to: 1ms, steps: 1}\n" + ONE,
         "f.yaml:5: key 'sweep.knobs.latency.steps': bad steps 1: expected a whole number "
         "from 2 to 1000"),
        ("sweep:\n  knobs:\n    latency: 10us\n" + ONE,
         "f.yaml:5: key 'sweep.knobs.latency': expected a list of latency values with units"),
        ("sweep:\n  knobs:\n    bulk_gap: [1ns/B]\n    bandwidth: [1MB/s]\n" + ONE,
         "f.yaml:4: key 'sweep.knobs': sweep bulk_gap or bandwidth, not both"),
        ("sweep: {mode: random}\n" + ONE, "f.yaml:3: key 'sweep.mode': Input should be "
         "'one-at-a-time' or 'grid'"),
        ("emulator:\n  baseline: {latency: 5}\n" + ONE,
         "f.yaml:4: key 'emulator.baseline.latency': value 5 of latency has no unit"),
        ("timeout: 30\n" + ONE, "f.yaml:3: key 'timeout': bad duration 30: expected "
         "<number>{ms|s|min|h} above 0, e.g. 30s"),
        ("emulator: {shim: none}\nsweep: {knobs: {latency: [1us]}}\n" + ONE,
         "f.yaml:1: shim: none adds no delays: remove sweep.knobs and baseline"),
        (ONE + "  - name: a\n    program: q\n", "f.yaml:1: workload names must be unique: a"),
        ("workloads: [{name: a, program: p, kind: process, ranks: 2}]\n",
         "f.yaml:3: key 'workloads[0]': a workload of kind 'process' runs one process"),
        ("launcher: {kind: ansible}\n" + ONE,
         "f.yaml:3: key 'launcher': launcher 'ansible' needs inventory"),
        ("workloads: [{name: a b, program: p}]\n",
         "f.yaml:3: key 'workloads[0].name': bad name 'a b': expected letters, digits"),
        ("workloads: []\n", "f.yaml:3: key 'workloads': List should have at least 1 item"),
        ("", "f.yaml:1: missing key 'workloads'"),
    ],
)  # fmt: skip
def test_bad_file_message(body: str, message: str) -> None:
    with pytest.raises(ExperimentError) as e:
        parse_experiment(HEAD + body, "f.yaml")
    assert str(e.value).startswith(message), str(e.value)
    assert "\n" not in str(e.value)
    assert e.value.exit_code == 2


def test_wrong_version_named() -> None:
    with pytest.raises(ExperimentError, match=r"^f.yaml:1: key 'version': Input should be 1"):
        parse_experiment("version: 2\nname: t\n" + ONE, "f.yaml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "f.yaml: empty file"),
        ("- 1\n- 2\n", "f.yaml:1: expected a mapping of keys at the top"),
        ("a: [1, 2\nb: 3\n", "f.yaml:2: not valid YAML"),
        ("a: 1\na: 2\n", "f.yaml:2: duplicate key 'a'"),
    ],
)
def test_not_an_experiment(text: str, message: str) -> None:
    with pytest.raises(YamlError) as e:
        parse_experiment(text, "f.yaml")
    assert str(e.value).startswith(message), str(e.value)


def test_unreadable_file(tmp_path) -> None:
    with pytest.raises(ExperimentError, match="cannot read"):
        load_experiment(tmp_path / "missing.yaml")

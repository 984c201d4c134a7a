"""loggp bench dist's pieces that need no run: its experiments load, its table reads."""

from __future__ import annotations

import pytest
import yaml

from loggp.bench.dist import SHAPES, experiment, markdown
from loggp.plan.experiment import parse_experiment

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("shim", ["fabric", "wire"])
def test_each_shapes_experiment_loads(shim: str) -> None:
    for shape in SHAPES:
        exp = parse_experiment(yaml.safe_dump(experiment(shim, shape, 100)), "x.yaml")
        assert exp.emulator.shim == shim and exp.emulator.latency_dist == shape
        assert exp.launcher.kind == ("netns" if shim == "wire" else "local")


def test_the_table_says_which_runs_are_within_the_samples_own_spread() -> None:
    run = {"shim": "fabric", "shape": "normal:20us", "delays": 4000, "ks": 0.01,
           "ks_critical": 0.0308}  # fmt: skip
    machine = {"cpu": "c", "cores": 2, "kernel": "k", "libfabric": "1", "date": "d",
               "loadavg_1min": 0.1}  # fmt: skip
    doc = {"machine": machine, "rounds": 100, "runs": [run, {**run, "ks": 0.2}],
           "wire_skipped": "not root"}  # fmt: skip
    text = markdown(doc)
    assert "| fabric | normal:20us | 4000 | 0.0100 | 0.0308 | yes |" in text
    assert "| 0.2000 | 0.0308 | no |" in text and "The wire was not measured: not root." in text

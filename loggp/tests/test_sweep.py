"""Plan expansion: one knob at a time and grid, units, linear and log ranges."""

from __future__ import annotations

import pytest

from loggp.plan.experiment import Range, parse_experiment
from loggp.plan.knobs import KnobSet
from loggp.plan.sweep import expand, range_values, report_value

pytestmark = pytest.mark.unit


def exp(sweep: str, repeats: int = 1, baseline: str = "{}", workloads: str = "[a]"):
    names = [n.strip() for n in workloads.strip("[]").split(",")]
    wl = "".join(f"  - {{name: {n}, program: p}}\n" for n in names)
    text = (
        f"version: 1\nname: t\nrepeats: {repeats}\nemulator: {{baseline: {baseline}}}\n"
        f"sweep:\n{sweep}workloads:\n{wl}"
    )
    return parse_experiment(text, "t.yaml")


def test_one_at_a_time_from_the_baseline() -> None:
    e = exp("  knobs:\n    latency: [10us, 1ms]\n    overhead: [5us]\n", baseline="{gap: 1us}")
    plan = expand(e)
    assert [(p.sweep_knob, p.knobs.as_dict()) for p in plan] == [
        ("baseline", {"gap": "1us"}),
        ("latency", {"gap": "1us", "latency": "10us"}),
        ("latency", {"gap": "1us", "latency": "1ms"}),
        ("overhead", {"overhead": "5us", "gap": "1us"}),
    ]
    assert [p.sweep_value for p in plan] == [None, 10.0, 1000.0, 5.0]
    assert [p.point_id for p in plan] == [
        "a/baseline/r0", "a/latency=10us/r0", "a/latency=1ms/r0", "a/overhead=5us/r0",
    ]  # fmt: skip


def test_repeats_are_outermost_and_ids_unique() -> None:
    e = exp("  knobs:\n    latency: [10us]\n", repeats=3, workloads="[a, b]")
    plan = expand(e)
    assert len(plan) == 3 * 2 * 2
    assert [p.repeat for p in plan] == [0] * 4 + [1] * 4 + [2] * 4
    assert [p.seq for p in plan] == list(range(12))
    assert len({p.point_id for p in plan}) == 12


def test_grid_is_every_combination() -> None:
    e = exp("  mode: grid\n  knobs:\n    latency: [1us, 2us, 3us]\n    gap: [4us, 5us]\n")
    plan = expand(e)
    assert len(plan) == 6
    assert {p.sweep_knob for p in plan} == {"grid"}
    settings = {tuple(sorted(p.knobs.as_dict().items())) for p in plan}
    assert (("gap", "5us"), ("latency", "3us")) in settings and len(settings) == 6


def test_no_sweep_is_the_baseline_only() -> None:
    assert [p.sweep_knob for p in expand(exp("  knobs: {}\n"))] == ["baseline"]


def test_bandwidth_replaces_baseline_bulk_gap() -> None:
    e = exp("  knobs:\n    bandwidth: [10MB/s]\n", baseline="{bulk_gap: 1ns/B}")
    assert expand(e)[1].knobs.as_dict() == {"bandwidth": "10MB/s"}


@pytest.mark.parametrize(
    ("knob", "rng", "values"),
    [
        ("latency", Range(**{"from": "0us", "to": "100us", "steps": 5}),
         ["0us", "25us", "50us", "75us", "100us"]),
        ("latency", Range(**{"from": "1us", "to": "1ms", "steps": 4, "scale": "log"}),
         ["1us", "10us", "100us", "1000us"]),
        ("overhead", Range(**{"from": "1ns", "to": "2ns", "steps": 3}), ["1ns", "2ns"]),
        ("gap", Range(**{"from": "1.5us", "to": "2us", "steps": 2}), ["1500ns", "2us"]),
        ("bulk_gap", Range(**{"from": "0ns/B", "to": "1ns/B", "steps": 3}),
         ["0ns/B", "0.5ns/B", "1ns/B"]),
        ("bandwidth", Range(**{"from": "1MB/s", "to": "1GB/s", "steps": 4, "scale": "log"}),
         ["1MB/s", "10MB/s", "100MB/s", "1000MB/s"]),
    ],
)  # fmt: skip
def test_ranges(knob: str, rng: Range, values: list[str]) -> None:
    out = range_values(knob, rng)
    assert out == values
    for v in out:
        KnobSet.parse({knob: v})  # every value is one the shim accepts


def test_range_in_a_file_expands() -> None:
    e = exp("  knobs:\n    overhead: {from: 1us, to: 100us, steps: 3, scale: log}\n")
    assert [p.knobs.as_dict().get("overhead") for p in expand(e)] == [None, "1us", "10us", "100us"]


@pytest.mark.parametrize(
    ("knob", "text", "value"),
    [("latency", "2.5ms", 2500.0), ("overhead", "500ns", 0.5), ("bulk_gap", "2ns/B", 2.0),
     ("bulk_gap", "500ps/B", 0.5), ("bandwidth", "1Gbit/s", 125.0), ("bandwidth", "50MB/s", 50.0)],
)  # fmt: skip
def test_report_units(knob: str, text: str, value: float) -> None:
    assert report_value(knob, text) == pytest.approx(value, rel=1e-9)


@pytest.mark.parametrize(("text", "value"), [("15MB/s", 15.0), ("38MB/s", 38.0), ("3MB/s", 3.0),
                                             ("100GB/s", 1e5), ("12.5MB/s", 12.5)])  # fmt: skip
def test_bandwidth_reads_back_as_given(text: str, value: float) -> None:
    """Not a few ppm off from the round trip through the shim's whole fs/B."""
    assert report_value("bandwidth", text) == value

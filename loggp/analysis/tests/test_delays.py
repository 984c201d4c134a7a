"""Drawn delays against the configured distribution: the shapes' quantiles as the shims
define them, the measured CDF of the stored histograms, the KS distance, the figures."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.image import imread

from loggp.analysis.delays import configured_delays, drawn, ks_distance, most_drawn, quantile
from loggp.analysis.report import write_report
from loggp.analysis.store import load_run
from loggp.analysis.tests.rundata import Row, make_run
from loggp.results.protocol import DELAY_BUCKETS
from loggp.results.rundir import RUN_FILE

pytestmark = pytest.mark.unit

BUCKET_NS = 2000


def test_the_shapes_quantiles_are_the_shims() -> None:
    u = np.array([0.1, 0.5, 0.9])
    assert quantile("uniform", u) == pytest.approx([-0.8, 0.0, 0.8])
    assert quantile("normal", u) == pytest.approx([-1.2816, 0.0, 1.2816], abs=1e-4)
    # Pareto of shape 3 around its mean 1.5, scaled by 4/3: never below -2/3
    assert quantile("pareto", np.array([0.0]))[0] == pytest.approx(-2 / 3)
    assert quantile("pareto", np.array([0.5]))[0] == pytest.approx((2 ** (1 / 3) - 1.5) * 4 / 3)
    assert quantile("normal", np.array([1e-12]))[0] == -4.0  # clipped as netem's tables
    mixed = quantile("paretonormal", u)
    assert mixed == pytest.approx((quantile("normal", u) + 3 * quantile("pareto", u)) / 4)


def test_configured_delays_are_its_quantiles_and_never_below_zero(tmp_path: Path) -> None:
    normal = configured_delays("normal:20us", 100_000)
    assert normal is not None and np.median(normal) == pytest.approx(100_000, rel=1e-3)
    assert np.std(normal) == pytest.approx(20_000, rel=0.01)
    wide = configured_delays("uniform:50us", 20_000)
    assert wide is not None and wide.min() == 0 and np.mean(wide == 0) == pytest.approx(0.3, 0.01)
    delays = tmp_path / "d.txt"
    delays.write_text("# measured\n5us\n\n15us\n")
    assert configured_delays(f"empirical:{delays}", 1000).tolist() == [6000, 16000]
    assert configured_delays(f"empirical:{tmp_path / 'gone'}", 0) is None
    assert configured_delays("constant", 1000) is None


def hist_of(delays_ns: np.ndarray) -> list[int]:
    k = np.minimum(delays_ns // BUCKET_NS, DELAY_BUCKETS - 1).astype(int)
    return np.bincount(k, minlength=DELAY_BUCKETS).tolist()


def stats(delays_ns: np.ndarray, **more: Any) -> list[dict[str, Any]]:
    """Two processes' lines, the delays split between them."""
    half = len(delays_ns) // 2
    return [
        {"pid": 1, "provider": "tcp", "delay_bucket_ns": BUCKET_NS,
         "delay_hist": hist_of(part)} | more
        for part in (delays_ns[:half], delays_ns[half:])
    ]  # fmt: skip


def sample(n: int, mean_us: float, sigma_us: float) -> np.ndarray:
    rng = np.random.default_rng(7)
    return np.maximum(rng.normal(mean_us * 1000, sigma_us * 1000, n), 0).astype(np.int64)


def rows() -> list[Row]:
    return [
        Row("pp", "baseline", None, 0, 1.0, shim_stats=stats(sample(400, 0, 20))),
        Row("pp", "latency", 100, 0, 2.0, shim_stats=stats(sample(4000, 100, 20))),
        Row("pp", "latency", 200, 0, 3.0, shim_stats=stats(sample(4000, 100, 20))),
    ]


def test_a_true_sample_is_near_its_shape_and_a_wrong_one_far(tmp_path: Path) -> None:
    points = load_run(make_run(tmp_path, rows())).points
    (d,) = most_drawn(points)
    assert d.point_id == "pp/latency=100/r0" and d.counts.sum() == 4000  # first of equals
    assert d.latency_ns == 100_000  # the point's ΔL
    assert d.cdf[-1] == pytest.approx(1.0)
    right = configured_delays("normal:20us", d.latency_ns)
    assert right is not None and ks_distance(d, right) < 0.04  # 4000 draws: ~0.02
    narrow = configured_delays("normal:10us", d.latency_ns)
    assert narrow is not None and ks_distance(d, narrow) > 0.15
    port = {**points[1].shim_stats[0], "delay_latency_ns": 90_000}
    got = drawn(dataclasses.replace(points[1], shim_stats=[port]))
    assert got is not None and got.latency_ns == 90_000  # the wire's port says its own


def test_the_report_draws_the_delays_only_with_a_distribution(tmp_path: Path) -> None:
    run = make_run(tmp_path, rows())
    doc = json.loads((run / RUN_FILE).read_text())
    doc["provenance"]["delay_distribution"] = {"latency_dist": "normal:20us", "seed": "1"}
    (run / RUN_FILE).write_text(json.dumps(doc))
    out = run / "report"
    write_report(run)
    assert imread(out / "delays_pp.png").shape[2] in (3, 4)
    page = (out / "index.html").read_text()
    assert page.count('<h2 id="delays">') == 1 and '<a href="delays_pp.svg">' in page
    doc["provenance"]["delay_distribution"] = {"latency_dist": "constant", "from": "default"}
    (run / RUN_FILE).write_text(json.dumps(doc))
    write_report(run)
    assert (
        not (out / "delays_pp.png").exists()
        and 'id="delays"' not in (out / "index.html").read_text()
    )

"""The KVS study's claims (loggp/analysis/kap.py) assessed from KAP points with known phases."""

from __future__ import annotations

import math

import pytest

from loggp.analysis.findings import NOT_MEASURED, NOT_REPRODUCED, REPRODUCED
from loggp.analysis.kap import assess_kap, kap_means, r_squared
from loggp.results.reader import StoredPoint

pytestmark = pytest.mark.unit


def kap_point(
    ranks: int,
    sync_ms: float,
    consumer_ms: float = 1.0,
    *,
    redundant: bool = False,
    dirs: int = 1,
    per_dir: int = 1000,
    access: int = 4,
    knob: str = "baseline",
    repeat: int = 0,
    status: str = "ok",
) -> StoredPoint:
    result = {
        "loggp_result": 1,
        "workload": "kap",
        "valid": True,
        "ranks": ranks,
        "metrics": {"sync_max_s": sync_ms / 1e3, "consumer_max_s": consumer_ms / 1e3},
        "params": {
            "producers": ranks,
            "consumers": ranks,
            "value_size": 8,
            "access": access,
            "puts": 16,
            "redundant": redundant,
            "per_dir": per_dir,
            "dirs": dirs,
        },
    }
    return StoredPoint(
        point_id=f"k{ranks}/{knob}/r{repeat}",
        seq=0,
        workload=f"kap-p{ranks}",
        sweep_knob=knob,
        sweep_value=None,
        knob_values={},
        repeat=repeat,
        status=status,
        exit_code=0,
        metric="time_s",
        value=1.0,
        higher_is_better=False,
        result=result,
        msgs_check=None,
        stderr_tail=None,
        row={},
    )


def verdicts(points: list[StoredPoint]) -> list[str]:
    found = assess_kap(points)
    assert found is not None
    return [f.verdict for f in found]


def test_seed_like_data_reproduces_every_claim() -> None:
    pts = [kap_point(p, 2.0 * p) for p in (1, 2, 4, 8)]  # unique: linear in P
    pts += [kap_point(p, 1.0 + math.log2(p), redundant=True) for p in (1, 2, 4, 8)]
    for c in (4, 8):  # one directory vs directories of 128: gain grows with C
        pts.append(kap_point(c, 1.0, consumer_ms=0.5 * c * math.log2(c), access=16))
        pts.append(kap_point(c, 1.0, consumer_ms=0.5 * c, dirs=8, per_dir=128, access=16))
    assert verdicts(pts) == [REPRODUCED, REPRODUCED, REPRODUCED]


def test_contrary_data_is_not_reproduced() -> None:
    pts = [kap_point(p, 1.0 + math.log2(p)) for p in (1, 2, 4, 8)]  # unique but log
    pts += [kap_point(p, 2.0 * p, redundant=True) for p in (1, 2, 4, 8)]  # redundant but linear
    pts.append(kap_point(4, 1.0, consumer_ms=1.0, access=16))
    pts.append(kap_point(4, 1.0, consumer_ms=2.0, dirs=8, per_dir=128, access=16))  # slower
    assert verdicts(pts) == [NOT_REPRODUCED, NOT_REPRODUCED, NOT_REPRODUCED]


def test_missing_settings_are_not_measured() -> None:
    pts = [kap_point(p, 1.0) for p in (1, 2)]
    pts.append(kap_point(2, 1.0, dirs=4, per_dir=128))  # C = 2: the model predicts no gain
    assert verdicts(pts) == [NOT_MEASURED, NOT_MEASURED, NOT_MEASURED]


def test_only_ok_baseline_kap_points_count_and_repeats_average() -> None:
    pts = [
        kap_point(2, 1.0, repeat=0),
        kap_point(2, 3.0, repeat=1),
        kap_point(2, 100.0, knob="latency"),
        kap_point(2, 100.0, status="failed", repeat=2),
    ]
    (m,) = kap_means(pts)
    assert m.n == 2 and m.sync_s == pytest.approx(2e-3)
    assert assess_kap([kap_point(2, 1.0, knob="latency")]) is None


def test_r_squared() -> None:
    assert r_squared([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert r_squared([1, 1, 1], [1, 2, 3]) is None
    assert 0 < r_squared([1, 2, 3, 4], [1, 3, 2, 4]) < 1

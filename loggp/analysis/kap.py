"""The KVS study's claims ([KVS] in docs/design.md) next to what a run measured.

Ahn et al. measured the maximum latency of KAP's phases over all processes with
producers = consumers = processes and found:

1. fence (the sync phase) grows linearly with the number of producers when every value
   is unique (batches are concatenated on their way up the tree), and
2. logarithmically when values are redundant (identical operations are reduced);
3. spreading the objects over directories of 128 cuts the consumer phase by about
   ½·log2(C) against a single directory, because a get faults in whole directory objects
   along the tree path.

Only the run's baseline points of workload program `kap` count (no knob added); points
with equal settings are averaged.  Each claim gets `reproduced`, `not reproduced` or
`not measured` (the run lacks the settings it needs) with the numbers that decided it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from loggp.analysis.findings import NOT_MEASURED, NOT_REPRODUCED, REPRODUCED, Finding
from loggp.results.reader import StoredPoint
from loggp.results.store import SWEEP_BASELINE

# A fit must explain this much more variance to be called the better model.
FIT_MARGIN = 0.02
MIN_CONSUMERS = 4


@dataclass(frozen=True)
class KapSetting:
    """The settings of a KAP point that shape its phases (the result line's params)."""

    ranks: int
    producers: int
    consumers: int
    value_size: int
    access: int
    puts: int
    redundant: bool
    per_dir: int
    dirs: int


@dataclass(frozen=True)
class KapMeans:
    setting: KapSetting
    sync_s: float
    consumer_s: float
    n: int


def kap_means(points: Sequence[StoredPoint]) -> list[KapMeans]:
    """Mean sync and consumer maxima of every KAP setting at the baseline."""
    acc: dict[KapSetting, list[tuple[float, float]]] = defaultdict(list)
    for p in points:
        if not p.measured or p.sweep_knob != SWEEP_BASELINE or p.result.get("workload") != "kap":
            continue
        prm, m = p.result.get("params", {}), p.result.get("metrics", {})
        try:
            s = KapSetting(
                ranks=int(p.result["ranks"]),
                producers=int(prm["producers"]),
                consumers=int(prm["consumers"]),
                value_size=int(prm["value_size"]),
                access=int(prm["access"]),
                puts=int(prm["puts"]),
                redundant=bool(prm["redundant"]),
                per_dir=int(prm["per_dir"]),
                dirs=int(prm["dirs"]),
            )
            acc[s].append((float(m["sync_max_s"]), float(m["consumer_max_s"])))
        except (KeyError, TypeError, ValueError):
            continue
    return [
        KapMeans(s, sum(v[0] for v in vs) / len(vs), sum(v[1] for v in vs) / len(vs), len(vs))
        for s, vs in sorted(acc.items(), key=lambda kv: (kv[0].redundant, kv[0].ranks))
    ]


def r_squared(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """R² of the least-squares line y = a + b·x; None when x or y does not vary."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    return sxy * sxy / (sxx * syy)


def _fully_populated(means: Sequence[KapMeans], redundant: bool) -> list[KapMeans]:
    """The study's fence curve: producers = consumers = ranks, one directory, and of the
    groups of equal value size, access count and puts, the one measured at the most
    producer counts (ties: the smallest values)."""
    groups: dict[tuple[int, int, int], list[KapMeans]] = defaultdict(list)
    for k in means:
        s = k.setting
        if s.redundant == redundant and s.producers == s.consumers == s.ranks and s.dirs == 1:
            groups[(s.value_size, s.access, s.puts)].append(k)
    if not groups:
        return []
    best = max(groups, key=lambda g: (len({k.setting.producers for k in groups[g]}), -g[0]))
    return sorted(groups[best], key=lambda k: k.setting.producers)


def _fence_fit(means: Sequence[KapMeans], redundant: bool) -> Finding:
    kind = "redundant" if redundant else "unique"
    expect = "logarithmically" if redundant else "linearly"
    claim = f"Fence latency grows {expect} with the producers when values are {kind}"
    curve = _fully_populated(means, redundant)
    if len({k.setting.producers for k in curve}) < 3:
        return Finding(claim, NOT_MEASURED, f"needs {kind}-value KAP runs at 3 or more "
                       "producer counts (producers = consumers = ranks)")  # fmt: skip
    ps = [float(k.setting.producers) for k in curve]
    ts = [k.sync_s * 1e3 for k in curve]
    lin = r_squared(ps, ts)
    log = r_squared([math.log2(p) for p in ps], ts)
    points = ", ".join(f"P={p:g}: {t:.3g} ms" for p, t in zip(ps, ts, strict=True))
    if lin is None or log is None:
        return Finding(claim, NOT_MEASURED, f"the sync phase did not vary ({points})")
    fits = f"R² linear {lin:.3f}, R² log2 {log:.3f}"
    better_log = log > lin + FIT_MARGIN
    better_lin = lin > log + FIT_MARGIN
    ok = better_log if redundant else better_lin
    verdict = REPRODUCED if ok else NOT_REPRODUCED
    if not ok and not (better_log or better_lin):
        why = "neither model fits clearly better at this scale"
    elif not ok:
        why = f"the {'linear' if better_lin else 'logarithmic'} model fits better"
    else:
        why = f"the {'logarithmic' if redundant else 'linear'} model fits better"
    return Finding(claim, verdict, f"sync-phase max {points}; {fits}: {why}")


def _multidir(means: Sequence[KapMeans]) -> Finding:
    claim = (
        "Objects spread over directories of 128 cut consumer latency by about ½·log2(C) "
        "against one directory"
    )
    single: dict[tuple[int, int, int, bool], KapMeans] = {}
    multi: dict[tuple[int, int, int, bool], KapMeans] = {}
    for k in means:
        s = k.setting
        key = (s.consumers, s.access, s.value_size, s.redundant)
        if s.dirs == 1:
            single[key] = k
        elif s.per_dir <= 128:
            multi[key] = k
    # The model is asymptotic: below 4 consumers it predicts no gain (½·log2(C) <= 1).
    pairs = [p for p in sorted(set(single) & set(multi)) if p[0] >= MIN_CONSUMERS]
    if not pairs:
        return Finding(claim, NOT_MEASURED, f"needs KAP runs with {MIN_CONSUMERS} or more "
                       "consumers and the same access count in one directory and in "
                       "directories of 128 objects (-D 128)")  # fmt: skip
    rows, ratios = [], []
    for key in pairs:
        gain = single[key].consumer_s / multi[key].consumer_s
        model = 0.5 * math.log2(key[0])
        ratios.append((key[0], gain, model))
        rows.append(f"C={key[0]} access {key[1]}: ×{gain:.2f} (model ×{model:.2f})")
    faster = all(g > 1.0 for _, g, _ in ratios)
    growing = len(ratios) < 2 or ratios[-1][1] >= ratios[0][1]
    verdict = REPRODUCED if faster and growing else NOT_REPRODUCED
    return Finding(claim, verdict, "; ".join(rows))


ASSESSMENTS: tuple[Callable[[Sequence[KapMeans]], Finding], ...] = (
    lambda m: _fence_fit(m, redundant=False),
    lambda m: _fence_fit(m, redundant=True),
    _multidir,
)


def assess_kap(points: Sequence[StoredPoint]) -> list[Finding] | None:
    """The KVS study's claims against this run; None when the run has no KAP points."""
    means = kap_means(points)
    if not means:
        return None
    return [a(means) for a in ASSESSMENTS]

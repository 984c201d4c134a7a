"""Cross-validation of the simulator against the emulator (`loggp validate-sim`,
docs/simulator.md): the same experiment's slowdown curves, emulated and simulated, point by
point.

A point agrees when the simulated median slowdown lies inside the emulated median's
order-statistic interval (loggp/analysis/slowdown.py; none below six repeats), or within
AGREE_REL of the emulated median.  Baselines (slowdown 1 by definition) are not compared.
"""

from __future__ import annotations

from dataclasses import dataclass

from loggp.analysis.slowdown import Analysis, Stat

AGREE_REL = 0.15


@dataclass(frozen=True)
class Agreement:
    workload: str
    knob: str
    x: float  # the knob's value in its report unit
    emulated: Stat
    simulated: Stat

    @property
    def inside_interval(self) -> bool:
        lo, hi = self.emulated.low, self.emulated.high
        return lo is not None and hi is not None and lo <= self.simulated.median <= hi

    @property
    def rel_diff(self) -> float:
        return (self.simulated.median - self.emulated.median) / self.emulated.median

    @property
    def agrees(self) -> bool:
        return self.inside_interval or abs(self.rel_diff) <= AGREE_REL

    def as_dict(self) -> dict[str, object]:
        return {
            "workload": self.workload,
            "knob": self.knob,
            "x": self.x,
            "emulated": self.emulated.median,
            "emulated_low": self.emulated.low,
            "emulated_high": self.emulated.high,
            "simulated": self.simulated.median,
            "rel_diff": self.rel_diff,
            "agrees": self.agrees,
        }


def compare(emulated: Analysis, simulated: Analysis) -> list[Agreement]:
    """Every swept point measured both ways, in the emulated run's order."""
    sim = {
        (c.workload, c.knob, p.x): p.stat
        for k in simulated.knobs
        for c in k.curves
        for p in c.points
        if not p.baseline
    }
    out = []
    for k in emulated.knobs:
        for c in k.curves:
            for p in c.points:
                found = sim.get((c.workload, c.knob, p.x))
                if not p.baseline and found is not None:
                    out.append(Agreement(c.workload, c.knob, p.x, p.stat, found))
    return out

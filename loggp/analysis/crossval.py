"""Cross-validation of the simulator against the emulator (`loggp validate-sim`,
docs/simulator.md): the same experiment's slowdown curves, emulated and simulated, point by
point, at each rank count validated.

A point agrees when the simulated median slowdown lies inside the emulated median's
order-statistic interval (loggp/analysis/slowdown.py; none below six repeats), or within
AGREE_REL of the emulated median.  Baselines (slowdown 1 by definition) are not compared.
A point that does not agree says so with how many of its emulated repeats were stored
degraded (the shim released late beyond its bound, docs/results.md) when they were most:
there the emulation is off too, and the disagreement is not the simulator's alone.

validate-sim's directory holds, per rank count N, the two runs in ranks-N/emulated and
ranks-N/simulated (section_dir); the comparison of each is a Section.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loggp.analysis.slowdown import Analysis, Stat, analyse
from loggp.analysis.store import load_run

AGREE_REL = 0.15
AGREE_RULE = (
    "a point agrees when the simulated median slowdown lies inside the emulated interval or "
    f"within {AGREE_REL * 100:.0f} % of the emulated median"
)
EMULATED = "emulated"
SIMULATED = "simulated"


@dataclass(frozen=True)
class Agreement:
    workload: str
    knob: str
    x: float  # the knob's value in its report unit
    emulated: Stat
    simulated: Stat
    degraded: int = 0  # of the emulated repeats, those stored degraded

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

    @property
    def verdict(self) -> str:
        """yes, no, or no with the emulated repeats stored degraded when they are most."""
        if self.agrees:
            return "yes"
        if 2 * self.degraded > self.emulated.n:
            return f"no (emulated degraded {self.degraded} of {self.emulated.n})"
        return "no"

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
            "emulated_degraded": self.degraded,
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class Section:
    """Both runs at one rank count, and their comparison."""

    ranks: int
    emulated: Analysis
    simulated: Analysis
    points: tuple[Agreement, ...]

    @property
    def agree(self) -> int:
        return sum(a.agrees for a in self.points)

    def as_dict(self) -> dict[str, object]:
        return {
            "ranks": self.ranks,
            "agree": self.agree,
            "compared": len(self.points),
            "points": [a.as_dict() for a in self.points],
        }


def section_dir(top: Path, ranks: int) -> Path:
    """Where validate-sim keeps its two runs at a rank count."""
    return top / f"ranks-{ranks}"


def compare_section(top: Path, ranks: int) -> Section:
    """The stored emulated and simulated runs at ranks, compared (ReportError when either
    cannot be read)."""
    where = section_dir(top, ranks)
    emulated, simulated = (analyse(load_run(where / n).points) for n in (EMULATED, SIMULATED))
    return Section(ranks, emulated, simulated, tuple(compare(emulated, simulated)))


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
                    out.append(Agreement(c.workload, c.knob, p.x, p.stat, found, p.n_degraded))
    return out

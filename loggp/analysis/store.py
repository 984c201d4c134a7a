"""Read a run directory (run.json and results.sqlite, docs/results.md) into typed records.

The points come through loggp's results interface (loggp/results/README.md):
`loggp.results.reader.read_points` reads and checks table `points` and gives each row as a
StoredPoint.  This module adds what run.json says about the run, and turns every failure
(a database the reader refuses, an unreadable run.json) into a ReportError naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loggp.analysis.errors import ReportError
from loggp.results.reader import StoredPoint, read_points
from loggp.results.rundir import RUN_FILE, RunDirError, read_run_doc
from loggp.results.store import BACKEND_SMPI, STORE_FILE, StoreError


@dataclass(frozen=True)
class RunInfo:
    """What run.json says about the run."""

    path: Path
    name: str
    provenance: dict[str, Any]
    experiment: Any  # the resolved experiment, shown as YAML; None when absent
    host_noise: tuple[dict[str, Any], ...] = ()  # run.json's, one per start and resume


@dataclass(frozen=True)
class Run:
    info: RunInfo
    points: tuple[StoredPoint, ...]
    columns: tuple[str, ...]  # columns present in the database, in store.COLUMNS order

    @property
    def simulated(self) -> frozenset[str]:
        """The point ids simulated by SMPI (shim smpi, docs/simulator.md), not emulated."""
        return frozenset(p.point_id for p in self.points if p.backend == BACKEND_SMPI)


def load_run(run_dir: Path) -> Run:
    """Read run.json and results.sqlite of a run directory."""
    run_dir = Path(run_dir)
    if not run_dir.exists():
        raise ReportError(f"{run_dir}: run directory does not exist")
    if not run_dir.is_dir():
        raise ReportError(f"{run_dir}: not a directory")
    info = load_run_info(run_dir)
    columns, points = load_points(run_dir / STORE_FILE)
    return Run(info=info, points=points, columns=columns)


def load_run_info(run_dir: Path) -> RunInfo:
    path = run_dir / RUN_FILE
    try:
        doc = read_run_doc(path)
    except RunDirError as e:
        raise ReportError(str(e)) from None

    # the top level's plain values (state, source, ...) and then the provenance object
    prov = {k: v for k, v in doc.items() if k != "name" and not isinstance(v, dict | list)}
    if isinstance(doc.get("provenance"), dict):
        prov.update(doc["provenance"])
    experiment = doc.get("experiment")
    name = doc.get("name")
    if not isinstance(name, str) and isinstance(experiment, dict):
        name = experiment.get("name")
    if not isinstance(name, str) or not name:
        name = run_dir.resolve().name
    noise = doc.get("host_noise")
    noise = tuple(n for n in noise if isinstance(n, dict)) if isinstance(noise, list) else ()
    return RunInfo(
        path=path, name=name, provenance=dict(prov), experiment=experiment, host_noise=noise
    )


def load_points(db: Path) -> tuple[tuple[str, ...], tuple[StoredPoint, ...]]:
    try:
        return read_points(db)
    except StoreError as e:
        raise ReportError(str(e)) from None

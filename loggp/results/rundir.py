"""The run directory's run.json: provenance, the resolved experiment, the plan, and the
time window of every point, rewritten atomically as the run goes on."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from loggp.errors import LoggpError
from loggp.plan.experiment import Experiment, parse_experiment
from loggp.plan.sweep import Point

RUN_FILE = "run.json"
RUN_VERSION = 1


class RunDirError(LoggpError):
    """A run directory is missing, unreadable or belongs to another experiment."""

    exit_code = 2


@dataclass
class RunRecord:
    """The contents of run.json."""

    name: str
    source: str
    experiment_yaml: str
    experiment: dict[str, Any]
    provenance: dict[str, Any]
    plan: list[dict[str, Any]]
    state: str = "running"
    windows: dict[str, list[float]] = field(default_factory=dict)
    prometheus: dict[str, Any] = field(default_factory=dict)
    resumed: list[str] = field(default_factory=list)
    host_noise: list[dict[str, Any]] = field(default_factory=list)  # one per start and resume

    def as_json(self) -> dict[str, Any]:
        return {"loggp_run": RUN_VERSION, **self.__dict__}


def plan_entry(p: Point) -> dict[str, Any]:
    return {
        "point_id": p.point_id,
        "seq": p.seq,
        "workload": p.workload.name,
        "sweep_knob": p.sweep_knob,
        "sweep_value": p.sweep_value,
        "knobs": p.knobs.as_dict(),
        "repeat": p.repeat,
    }


def new_run_dir(exp: Experiment, out: Path | None) -> Path:
    """out, or <experiment output>/<name>-<timestamp>; created, must not hold a run."""
    if out is None:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        out = Path(exp.output) / f"{exp.name}-{stamp}"
    if (out / RUN_FILE).exists():
        raise RunDirError(f"{out} already holds a run: use --resume to continue it")
    out.mkdir(parents=True, exist_ok=True)
    return out


def latest_run_dir(exp: Experiment) -> Path:
    """The newest run directory of this experiment under its output directory."""
    parent = Path(exp.output)
    runs = sorted(
        (d for d in parent.glob(f"{exp.name}-*") if (d / RUN_FILE).is_file()),
        key=lambda d: d.name,
    )
    if not runs:
        raise RunDirError(f"no run of '{exp.name}' to resume under {parent}/")
    return runs[-1]


def write_run(run_dir: Path, rec: RunRecord) -> None:
    """Atomic rewrite: a reader never sees half a file, even after a crash."""
    tmp = run_dir / (RUN_FILE + ".tmp")
    tmp.write_text(json.dumps(rec.as_json(), indent=1) + "\n")
    os.replace(tmp, run_dir / RUN_FILE)


def read_run(run_dir: Path) -> RunRecord:
    path = run_dir / RUN_FILE
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise RunDirError(f"{run_dir} is not a run directory: {RUN_FILE} missing") from None
    except (OSError, json.JSONDecodeError) as e:
        raise RunDirError(f"{path}: cannot read: {e}") from None
    if doc.get("loggp_run") != RUN_VERSION:
        raise RunDirError(f"{path}: not a loggp run file of version {RUN_VERSION}")
    doc.pop("loggp_run")
    return RunRecord(**doc)


def stored_experiment(rec: RunRecord, run_dir: Path) -> Experiment:
    """The experiment a run was started with (resume runs exactly that plan)."""
    return parse_experiment(rec.experiment_yaml, f"{run_dir / RUN_FILE} (experiment)")

"""The run directory's run.json: provenance, the resolved experiment, the plan, and the
time window of every point, rewritten atomically as the run goes on.

Read through one schema (RunRecord, checked by pydantic): a file that is too large, not
UTF-8, not JSON, not an object, of another version or with a key of the wrong type is a
RunDirError naming the file and the key; keys this loggp does not know (written by a newer
one) are named on stderr and kept as they are when the file is rewritten.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import AllowInfNan, TypeAdapter, ValidationError

from loggp.errors import LoggpError, one_line
from loggp.plan.experiment import Experiment, parse_experiment
from loggp.plan.sweep import Point

RUN_FILE = "run.json"
RUN_VERSION = 1
# A run.json holds the plan: 100,000 points (MAX_POINTS) take about 30 MiB.
MAX_RUN_FILE_BYTES = 256 << 20
Seconds = Annotated[float, AllowInfNan(False)]
_RUNNING = b'"state": "running"'
_FAILED = b'"state": "failed" '  # as long: written over it in place


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
    windows: dict[str, tuple[Seconds, Seconds]] = field(default_factory=dict)
    prometheus: dict[str, Any] = field(default_factory=dict)
    resumed: list[str] = field(default_factory=list)
    host_noise: list[dict[str, Any]] = field(default_factory=list)  # one per start and resume
    unknown: dict[str, Any] = field(default_factory=dict)  # keys of a newer loggp, kept

    def as_json(self) -> dict[str, Any]:
        own = {k: v for k, v in self.__dict__.items() if k != "unknown"}
        return {**self.unknown, "loggp_run": RUN_VERSION, **own}


def plan_entry(p: Point) -> dict[str, Any]:
    return {
        "point_id": p.point_id,
        "seq": p.seq,
        "workload": p.workload.name,
        "sweep_knob": p.sweep_knob,
        "sweep_value": p.sweep_value,
        "knobs": p.knob_texts(),
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
    try:
        tmp.write_text(json.dumps(rec.as_json(), indent=1) + "\n")
        os.replace(tmp, run_dir / RUN_FILE)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        marked = rec.state != "running" and _mark_failed_in_place(run_dir / RUN_FILE)
        note = " (its state marked failed in place)" if marked else ""
        raise RunDirError(f"{run_dir / RUN_FILE}: cannot write: {e.strerror}{note}") from None


def _mark_failed_in_place(path: Path) -> bool:
    """For a disk too full for a new copy: `"state": "running"` of the file as it is made
    `"state": "failed" ` in place, in the blocks it has, so that a run that ended is never
    read as running; whether it was."""
    try:
        with path.open("r+b") as f:
            data = f.read(MAX_RUN_FILE_BYTES)
            at = data.find(_RUNNING)
            if at < 0:
                return False
            f.seek(at)
            f.write(_FAILED)
    except OSError:
        return False
    return True


def read_run_doc(path: Path) -> dict[str, Any]:
    """The object of a run.json; RunDirError naming the file if it is missing, larger than
    MAX_RUN_FILE_BYTES, not UTF-8, not JSON or not an object."""
    try:
        with path.open("rb") as f:
            data = f.read(MAX_RUN_FILE_BYTES + 1)
    except FileNotFoundError:
        raise RunDirError(f"{path}: not found (is {path.parent} a run directory?)") from None
    except OSError as e:
        raise RunDirError(f"{path}: cannot read: {e.strerror}") from None
    if len(data) > MAX_RUN_FILE_BYTES:
        raise RunDirError(f"{path}: larger than {MAX_RUN_FILE_BYTES >> 20} MiB: not a run.json")
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise RunDirError(
            f"{path}: not UTF-8 text: byte 0x{data[e.start]:02x} at offset {e.start}"
        ) from None
    except json.JSONDecodeError as e:
        raise RunDirError(f"{path}: not valid JSON: {e.msg} at line {e.lineno}") from None
    except (ValueError, RecursionError) as e:  # 5000-digit numbers, deep nesting
        raise RunDirError(f"{path}: not valid JSON: {one_line(e).split(';')[0]}") from None
    if not isinstance(doc, dict):
        raise RunDirError(f"{path}: expected a JSON object, found {type(doc).__name__}")
    return doc


_KNOWN = tuple(f.name for f in fields(RunRecord) if f.name != "unknown")
_RECORD = TypeAdapter(RunRecord)


def read_run(run_dir: Path) -> RunRecord:
    """run.json of run_dir through RunRecord's schema (module docstring)."""
    path = run_dir / RUN_FILE
    doc = read_run_doc(path)
    version = doc.get("loggp_run")
    if version != RUN_VERSION:
        raise RunDirError(
            f"{path}: key 'loggp_run' is {json.dumps(version)[:20]}: this loggp reads run "
            f"files of version {RUN_VERSION} (written by another loggp?)"
        )
    unknown = {k: v for k, v in doc.items() if k not in _KNOWN and k != "loggp_run"}
    try:
        rec = _RECORD.validate_python({k: doc[k] for k in _KNOWN if k in doc})
    except ValidationError as e:
        errors = e.errors(include_url=False)
        key = ".".join(str(p) for p in errors[0]["loc"])
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise RunDirError(f"{path}: key '{key}': {errors[0]['msg']}{more}") from None
    if unknown:
        print(
            f"loggp: {path}: ignoring key(s) this loggp does not know: {', '.join(unknown)} "
            "(written by a newer loggp?); kept as they are",
            file=sys.stderr,
        )
        rec.unknown = unknown
    return rec


def stored_experiment(rec: RunRecord, run_dir: Path) -> Experiment:
    """The experiment a run was started with (resume runs exactly that plan)."""
    return parse_experiment(rec.experiment_yaml, f"{run_dir / RUN_FILE} (experiment)")

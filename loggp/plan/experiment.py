"""The experiment file: a versioned schema, loading, and errors that point at file:line.

    version: 1
    name: quick-latency
    repeats: 3
    launcher: {kind: mpirun}
    emulator: {shim: fabric, provider: "tcp;ofi_rxm", baseline: {}}
    sweep:
      mode: one-at-a-time
      knobs: {latency: [10us, 50us], overhead: {from: 1us, to: 100us, steps: 3, scale: log}}
    workloads:
      - {name: pingpong, program: workloads/pingpong/pingpong, ranks: 2, metric: time_s}

Every key is documented in docs/experiments.md.  Unknown keys are rejected; an error
reads `FILE:LINE: key 'workloads[0].ranks': <what is wrong> (<what is accepted>)`.
"""

from __future__ import annotations

import math
import re
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import regex
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from loggp.errors import LoggpError, one_line
from loggp.plan.dist import check_corr, check_corr_with, check_dist_spec, file_dist_env
from loggp.plan.knobs import Knob, KnobSet, conflict, parse_knob
from loggp.plan.names import require_unique
from loggp.plan.netknobs import check_name, is_network_knob, value_knob
from loggp.plan.placeholders import INSTANCE_NAMES, POINT_NAMES, names_in, service_ref
from loggp.plan.schedule import Line, steps_lines, trace_lines
from loggp.plan.topology import Level, Link, Network
from loggp.plan.yamlpos import Located, Path_, decode_text, load_located

SCHEMA_VERSION = 1
DEFAULT_SUITE = "default.yaml"
MAX_FILE_BYTES = 1 << 20  # an experiment is a few hundred bytes; /dev/zero is endless
MAX_HOSTS = 64  # hosts of a namespace testbed (loggp testbed up N)
MAX_DURATION_S = 24 * 3600  # every timeout and wait: a point of a day is a run of its own

_DURATION_RE = re.compile(r"([0-9]+(?:\.[0-9]+)?) ?(ms|s|min|h)")
_DURATION_SCALE = {"ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_PREFIX_RE = re.compile(r"[a-z][a-z0-9]{0,9}")
# What Linux accepts as an interface name (the kernel's dev_valid_name: IFNAMSIZ less its
# NUL, no '/', ':' or white space).
_IFACE_RE = re.compile(r"[^/:\s]{1,15}")
_NAMED_KEY = re.compile(r"(\w+)\[(\d+)\]\.(\w+)")  # "services[0].args: ..." of _consistent


class ExperimentError(LoggpError):
    """The experiment file is invalid; the message names file, line and key."""

    exit_code = 2


def parse_duration(text: object) -> float:
    """'30s', '500ms', '2min', '1h' -> seconds; ValueError with the accepted forms, and for
    more than MAX_DURATION_S."""
    if isinstance(text, str):
        m = _DURATION_RE.fullmatch(text.strip())
        if m and float(m.group(1)) > 0:
            return check_duration(float(m.group(1)) * _DURATION_SCALE[m.group(2)], repr(text))
    raise ValueError(f"bad duration {text!r}: expected <number>{{ms|s|min|h}} above 0, e.g. 30s")


def check_duration(seconds: float, text: str) -> float:
    """seconds if finite and within MAX_DURATION_S, else ValueError naming text and the cap
    (every timeout and wait of loggp is bounded by it: docs/experiments.md, Limits)."""
    if not math.isfinite(seconds) or not 0 < seconds <= MAX_DURATION_S:
        raise ValueError(
            f"bad duration {text}: expected above 0 and at most {MAX_DURATION_S // 3600:g}h "
            "(MAX_DURATION_S)"
        )
    return seconds


def ready_pattern(text: str) -> regex.Pattern[str]:
    """A service's `ready` pattern, compiled by the matcher that runs it (the `regex`
    module, whose searches take a time budget); ValueError naming what is wrong."""
    try:
        return regex.compile(text)
    except (regex.error, ValueError, OverflowError, RecursionError) as e:
        raise ValueError(
            f"bad pattern {text!r}: {one_line(e)} (expected a Python regular expression)"
        ) from None


def _knob_name(name: str) -> str:
    try:
        return Knob.lookup(name).value
    except LoggpError as e:
        raise ValueError(str(e)) from None


def _knob_text(knob: str, value: object) -> str:
    """value as text of knob (a network knob's in its delay's forms); ValueError if not."""
    if not isinstance(value, str):
        forms = value_knob(knob).forms
        raise ValueError(f"value {value!r} of {knob} has no unit: expected {forms}")
    try:
        parse_knob(value_knob(knob), value)
    except LoggpError as e:
        raise ValueError(str(e)) from None
    return value


def _check_name(v: str) -> str:
    if not _NAME_RE.fullmatch(v):
        raise ValueError(f"bad name {v!r}: expected letters, digits, '_', '.', '-'")
    return v


Name = Annotated[str, AfterValidator(_check_name)]


def _arg_strings(v: Any) -> Any:
    """Numbers in a list of program arguments are taken as written."""
    if isinstance(v, list):
        return [str(a) if isinstance(a, int | float) and not isinstance(a, bool) else a for a in v]
    return v


Args = Annotated[list[str], BeforeValidator(_arg_strings)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Range(_Model):
    """{from, to, steps, scale}: steps values from..to inclusive, both with units."""

    from_: str = Field(alias="from")
    to: str
    steps: Annotated[int, Field(ge=2, le=1000)]
    scale: Literal["linear", "log"] = "linear"


class Workload(_Model):
    name: Name
    kind: Literal["mpi", "process"] = "mpi"
    program: str
    args: Args = []
    ranks: Annotated[int, Field(ge=1, le=4096)] = 2
    metric: str = "time_s"
    higher_is_better: bool = False
    timeout: float | None = None
    services: list[str] | None = None

    @field_validator("timeout", mode="before")
    @classmethod
    def _timeout(cls, v: Any) -> float | None:
        return None if v is None else parse_duration(v)

    @model_validator(mode="after")
    def _process_ranks(self) -> Workload:
        if self.kind == "process" and self.ranks != 1:
            raise ValueError("a workload of kind 'process' runs one process: set ranks: 1")
        return self


class Service(_Model):
    """A server started before each point and stopped after it (docs/experiments.md)."""

    name: Name
    program: str
    args: Args = []
    count: Annotated[int, Field(ge=1, le=64)] = 1
    mkdir: list[str] = []
    hosts: list[Annotated[int, Field(ge=0, lt=MAX_HOSTS)]] = []
    ready: str
    ready_timeout: float = 30.0
    stop_timeout: float = 10.0
    shim: bool = True
    metrics: str | None = None

    @field_validator("ready_timeout", "stop_timeout", mode="before")
    @classmethod
    def _duration(cls, v: Any) -> float:
        return parse_duration(v)

    @field_validator("ready")
    @classmethod
    def _pattern(cls, v: str) -> str:
        ready_pattern(v)
        return v

    def fields(self) -> set[str]:
        """What ${service.NAME.FIELD} may name: host, and the ready pattern's groups."""
        return {"host", *ready_pattern(self.ready).groupindex}


class Launcher(_Model):
    kind: Literal["local", "mpirun", "netns", "ansible", "slurm"] = "mpirun"
    hostfile: str | None = None
    inventory: str | None = None
    group: str | None = None
    prefix: str | None = None
    slots: Annotated[int, Field(ge=1, le=1024)] = 1
    pin: bool = False
    mpirun_args: list[str] = []
    nodes: Annotated[int, Field(ge=1, le=4096)] = 1  # slurm: whole nodes per point
    sbatch_args: list[str] = []  # slurm: more options of `loggp run --slurm`'s job
    share_nodes: bool = False  # slurm: array tasks may share nodes (no --exclusive)
    interface: str | None = None  # slurm: the network interface the nodes' ranks talk over

    @property
    def netns_prefix(self) -> str:
        """The namespace testbed the netns launcher runs in (loggp testbed --prefix)."""
        return self.prefix or "lgp"

    @model_validator(mode="after")
    def _needs(self) -> Launcher:
        if self.kind == "ansible" and not self.inventory:
            raise ValueError("launcher 'ansible' needs inventory: <inventory file>")
        if self.inventory and self.kind not in ("ansible", "slurm"):
            raise ValueError(
                "inventory is only read by launcher 'ansible' (its hosts) and 'slurm' (shim "
                "wire's emulator node)"
            )
        if self.hostfile and self.kind not in ("mpirun",):
            raise ValueError("hostfile is only read by launcher 'mpirun'")
        if (self.nodes != 1 or self.sbatch_args or self.share_nodes) and self.kind != "slurm":
            raise ValueError("nodes, sbatch_args and share_nodes are only read by launcher 'slurm'")
        if self.interface is not None and self.kind != "slurm":
            raise ValueError("interface is only read by launcher 'slurm'")
        if self.interface is not None and not _IFACE_RE.fullmatch(self.interface):
            raise ValueError(
                f"bad interface name {self.interface!r}: expected a network interface's "
                "name such as eth0 or ib0 (1 to 15 characters, no '/', ':' or white space)"
            )
        if self.prefix is not None and self.kind != "netns":
            raise ValueError("prefix is only read by launcher 'netns'")
        if self.prefix is not None and not _PREFIX_RE.fullmatch(self.prefix):
            raise ValueError(
                f"bad testbed prefix {self.prefix!r}: expected a lower-case letter then up "
                "to 9 lower-case letters or digits"
            )
        return self


class Emulator(_Model):
    shim: Literal["fabric", "wire", "none", "smpi"] = "fabric"
    provider: str = "tcp;ofi_rxm"
    baseline: dict[str, str] = {}
    # shim smpi: where the stack's own o, L and G come from (docs/simulator.md): `measure`
    # (loggp-calibrate of the provider, at the start of the run) or a file of a previous
    # calibration (relative to the experiment file's directory)
    calibration: str | None = None
    # the delay distribution (LOGGP_LATENCY_DIST, LOGGP_LATENCY_CORR; loggp/plan/dist.py)
    latency_dist: str | None = None
    latency_corr: str | None = None
    # knobs over time: steps, or a trace file (LOGGP_SCHEDULE; loggp/plan/schedule.py)
    schedule: list[dict[str, Any]] | str | None = None

    @field_validator("schedule", mode="before")
    @classmethod
    def _schedule(cls, v: Any) -> Any:
        if isinstance(v, list):
            steps_lines(v)  # ValueError naming the step; a trace file is read at the start
        elif v is not None and not isinstance(v, str):
            raise ValueError(
                "schedule: expected a list of steps such as {t: 2s, latency: 200us}, or the "
                "path of a trace file of 'TIME KNOB VALUE' lines"
            )
        return v

    @field_validator("latency_dist")
    @classmethod
    def _dist(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                check_dist_spec(v, read=False)  # the file is read when the run starts
            except LoggpError as e:
                raise ValueError(str(e)) from None
        return v

    @field_validator("latency_corr", mode="before")
    @classmethod
    def _corr(cls, v: Any) -> Any:
        if isinstance(v, int | float) and not isinstance(v, bool):
            v = str(v)  # a number as written: 0.25, 1
        if isinstance(v, str):
            try:
                check_corr(v)
            except LoggpError as e:
                raise ValueError(str(e)) from None
        return v

    def schedule_lines(self, exp_dir: Path | None) -> list[Line] | None:
        """The schedule's lines for the shim, a trace file read from exp_dir (else the working
        directory); None without one.  KnobError for a bad trace file."""
        if self.schedule is None:
            return None
        if isinstance(self.schedule, list):
            return steps_lines(self.schedule)
        return trace_lines((exp_dir or Path.cwd()) / self.schedule)

    @model_validator(mode="after")
    def _dist_needs(self) -> Emulator:
        if self.calibration is not None and self.shim != "smpi":
            raise ValueError(
                "calibration: read by shim smpi only (the simulated stack's own o, L, G)"
            )
        if self.latency_dist is not None and self.shim == "smpi":
            raise ValueError(
                "latency_dist: the simulated network has one latency per link: name a "
                "distribution with shim: fabric or wire"
            )
        if self.schedule is not None and self.shim not in ("fabric", "wire"):
            raise ValueError(
                f"schedule: applied by the fabric shim or the wire: expected shim fabric or "
                f"wire, not {self.shim}"
            )
        if isinstance(self.schedule, list) and self.shim == "wire":
            for line in steps_lines(self.schedule):
                _wire_schedule_knob(line[1])
        if self.latency_dist is not None and self.shim == "none":
            raise ValueError(
                "latency_dist: shim none draws no delays: name a distribution with "
                "shim: fabric or wire"
            )
        shape = self.latency_dist.partition(":")[0] if self.latency_dist else "constant"
        try:
            check_corr_with(self.latency_corr, shape)
        except LoggpError as e:
            raise ValueError(f"latency_corr: {e} (set emulator.latency_dist)") from None
        return self


SweepValues = list[str] | Range


class Sweep(_Model):
    mode: Literal["one-at-a-time", "grid"] = "one-at-a-time"
    knobs: dict[str, SweepValues] = {}


class Experiment(_Model):
    version: Literal[1]
    name: Name
    description: str = ""
    output: str = "results"
    repeats: Annotated[int, Field(ge=1, le=1000)] = 1
    warmup: Annotated[int, Field(ge=0, le=100)] = 0
    seed: Annotated[int, Field(ge=0, lt=1 << 64)] = 1
    timeout: float = 120.0
    launcher: Launcher = Launcher()
    emulator: Emulator = Emulator()
    sweep: Sweep = Sweep()
    network: Network | None = None
    services: list[Service] = []
    workloads: Annotated[list[Workload], Field(min_length=1)]

    @field_validator("timeout", mode="before")
    @classmethod
    def _timeout(cls, v: Any) -> float:
        return parse_duration(v)

    @model_validator(mode="after")
    def _consistent(self) -> Experiment:
        require_unique([w.name for w in self.workloads], "workload")
        if self.emulator.shim == "none" and (self.sweep.knobs or self.emulator.baseline):
            raise ValueError("shim: none adds no delays: remove sweep.knobs and baseline")
        self._check_services()
        self._check_network()
        self._check_simulated()
        return self

    def _check_simulated(self) -> None:
        """shim smpi simulates MPI programs only (docs/simulator.md, Limits)."""
        if self.emulator.shim != "smpi":
            return
        if self.services:
            raise ValueError(
                "services: shim smpi simulates MPI programs only; services that talk "
                "libfabric directly run emulated (shim: fabric) or on a cluster (docs/cluster.md)"
            )
        for i, w in enumerate(self.workloads):
            if w.kind != "mpi":
                raise ValueError(
                    f"workloads[{i}].kind: shim smpi simulates MPI programs: expected mpi, "
                    f"not {w.kind}"
                )

    def _check_network(self) -> None:
        net = self.network
        if net is None:
            return
        if self.emulator.shim not in ("fabric", "wire", "smpi"):
            raise ValueError(
                f"network: applied by the fabric shim or the wire and simulated by SMPI: "
                f"expected emulator.shim fabric, wire or smpi, not {self.emulator.shim}"
            )
        if self.emulator.shim == "wire" and self.launcher.kind != "netns":
            raise ValueError(
                "network: beneath shim wire node i is the namespace testbed's host i, the "
                f"wire's port i: expected launcher kind netns, not {self.launcher.kind}"
            )
        if self.emulator.shim == "smpi":
            if net.links is not None:
                raise ValueError(
                    "network: SMPI simulates a network given by levels: expected levels, "
                    "not links (the fabric shim takes either)"
                )
            gapped = [lv.name for lv in net.levels or [] if parse_knob("gap", lv.gap)]
            if gapped:
                raise ValueError(
                    f"network: level {gapped[0]}'s gap cannot be simulated (SMPI has no "
                    "per-message gap): expected latency and bulk_gap only"
                )
        for i, w in enumerate(self.workloads):
            try:
                net.check_ranks(w.ranks)
            except ValueError as e:
                raise ValueError(f"workloads[{i}].ranks: {e}") from None

    def _check_services(self) -> None:
        names = [s.name for s in self.services]
        require_unique(names, "service")
        for i, svc in enumerate(self.services):
            if svc.hosts and self.launcher.kind != "netns":
                raise ValueError(
                    f"services[{i}].hosts: testbed hosts need launcher: {{kind: netns}}"
                )
            for key, texts in (("args", svc.args), ("mkdir", svc.mkdir)):
                for arg in texts:
                    self._check_placeholders(
                        f"services[{i}].{key}", arg, self.services[:i], INSTANCE_NAMES
                    )
            if svc.metrics is not None:
                # filled in once the instance is ready: its own ready groups too
                own = INSTANCE_NAMES | svc.fields()
                self._check_placeholders(
                    f"services[{i}].metrics", svc.metrics, self.services[:i], own
                )
        for i, w in enumerate(self.workloads):
            unknown = sorted(set(w.services or ()) - set(names))
            if unknown:
                raise ValueError(
                    f"workloads[{i}].services: no service {', '.join(unknown)} "
                    f"(those declared: {', '.join(names) or 'none'})"
                )
            mine = self.services_of(w)
            for arg in w.args:
                self._check_placeholders(f"workloads[{i}].args", arg, mine)

    def services_of(self, w: Workload) -> list[Service]:
        """The services started for w's points, in the file's order (all by default)."""
        if w.services is None:
            return list(self.services)
        return [s for s in self.services if s.name in w.services]

    @staticmethod
    def _check_placeholders(
        where: str, arg: str, started: list[Service], local: frozenset[str] = frozenset()
    ) -> None:
        """Every ${...} of arg names the point, one of local, or a field of one of the
        services started before."""
        before = {s.name: s for s in started}
        try:
            names = list(names_in(arg))
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
        for name in names:
            if name in POINT_NAMES or name in local:
                continue
            ref = service_ref(name)
            if ref is None:
                accepted = sorted(POINT_NAMES | local) + ["service.NAME[I].FIELD"]
                raise ValueError(
                    f"{where}: unknown placeholder ${{{name}}} (accepted: {', '.join(accepted)})"
                )
            svc = before.get(ref[0])
            if svc is None:
                which = ", ".join(before) or "none"
                raise ValueError(
                    f"{where}: ${{{name}}} names no service started before (those: {which})"
                )
            if ref[1] >= svc.count:
                raise ValueError(
                    f"{where}: ${{{name}}}: service {svc.name} has {svc.count} instance(s)"
                )
            if ref[2] not in svc.fields():
                raise ValueError(
                    f"{where}: ${{{name}}}: service {svc.name} gives "
                    f"{', '.join(sorted(svc.fields()))} (named groups of its ready pattern)"
                )

    def workload_timeout(self, w: Workload) -> float:
        return w.timeout if w.timeout is not None else self.timeout

    def dist_env(self, exp_dir: Path | None) -> dict[str, str]:
        """The LOGGP_* settings of the delay distribution this file names ({} for none),
        an empirical file's path taken from exp_dir (else the working directory)."""
        e = self.emulator
        return file_dist_env(e.latency_dist, e.latency_corr, self.seed, exp_dir or Path.cwd())


def _loc_path(loc: tuple[int | str, ...]) -> Path_:
    """pydantic's error location without its internal union/tag entries."""
    out: list[str | int] = []
    for part in loc:
        if isinstance(part, str) and ("[" in part or part in ("list[str]", "Range")):
            continue
        out.append("from" if part == "from_" else part)
    return tuple(out)


def _key_text(path: Path_) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "(top)"


def _allowed_keys(model: type[BaseModel]) -> str:
    return ", ".join(f.alias or name for name, f in model.model_fields.items())


def _model_at(path: Path_) -> type[BaseModel] | None:
    models: dict[str, type[BaseModel]] = {
        "launcher": Launcher,
        "emulator": Emulator,
        "sweep": Sweep,
        "workloads": Workload,
        "services": Service,
    }
    if not path:
        return Experiment
    if path[0] == "sweep" and len(path) >= 3:
        return Range
    if path[0] == "network":
        inner = {"levels": Level, "links": Link}
        return inner.get(str(path[1]), Network) if len(path) >= 2 else Network
    return models.get(str(path[0]))


def _describe(err: dict[str, Any], located: Located, source: str) -> str:
    path = _loc_path(tuple(err["loc"]))
    msg = str(err["msg"]).removeprefix("Value error, ")
    named = _NAMED_KEY.match(msg) if not path else None  # a check of the whole file's
    line = located.line_of((named[1], int(named[2]), named[3]) if named else path)
    where = f"{source}:{line}" if line else source
    if err["type"] == "extra_forbidden":
        parent = _model_at(tuple(p for p in path[:-1] if not isinstance(p, int)))
        accepted = f" (accepted keys: {_allowed_keys(parent)})" if parent else ""
        return f"{where}: unknown key '{_key_text(path)}'{accepted}"
    if not path:
        return f"{where}: {msg}"
    if err["type"] == "missing":
        return f"{where}: missing key '{_key_text(path)}'"
    return f"{where}: key '{_key_text(path)}': {msg}"


# Why a backend that is not the fabric shim applies only some knobs (knobs.def's shims).
_NOT_APPLIED = {
    "wire": "has no meaning on the wire (o is CPU time in the hosts)",
    "smpi": "cannot be simulated (SMPI has no per-message gap)",
}


def _wire_schedule_knob(knob: str) -> None:
    """ValueError for a schedule's knob the wire does not apply (its steps are `set`
    requests)."""
    if not Knob(knob).applies_on("wire"):
        *rest, last = [k.value for k in Knob if k.applies_on("wire")]
        raise ValueError(
            f"schedule: knob '{knob}' {_NOT_APPLIED['wire']}: expected {', '.join(rest)} or "
            f"{last} beneath shim wire"
        )


def _level_names(data: dict[str, Any]) -> list[str] | None:
    """The names of the file's network levels as written (None without a network): what
    a network knob may name before the network itself is checked."""
    net = data.get("network")
    if not isinstance(net, dict):
        return None
    levels = net.get("levels")
    if not isinstance(levels, list):
        return []
    return [lv["name"] for lv in levels if isinstance(lv, dict) and isinstance(lv.get("name"), str)]


def _check_knob_values(located: Located, source: str) -> None:
    """Knob names and values of emulator.baseline and sweep.knobs, with the exact line of
    each (pydantic would only see the whole mapping)."""
    data = located.data

    def fail(path: Path_, msg: str) -> ExperimentError:
        line = located.line_of(path)
        return ExperimentError(f"{source}:{line}: key '{_key_text(path)}': {msg}")

    def check(path: Path_, knob: str, value: object) -> None:
        try:
            _knob_text(knob, value)
        except ValueError as e:
            raise fail(path, str(e)) from None

    emulator = data.get("emulator")
    shim = emulator.get("shim") if isinstance(emulator, dict) else None
    why_not = _NOT_APPLIED.get(shim) if isinstance(shim, str) else None

    def name(path: Path_, raw: str) -> str:
        try:
            if is_network_knob(raw):  # the network's checks (its shim's too) come after
                check_name(raw, _level_names(data))
                if shim == "smpi" and raw.endswith(".gap"):
                    raise ValueError(f"knob '{raw}' {_NOT_APPLIED['smpi']}")
                return raw
            knob = _knob_name(raw)
        except ValueError as e:
            raise fail(path, str(e)) from None
        if why_not is not None and not Knob(knob).applies_on(shim):
            *rest, last = [k.value for k in Knob if k.applies_on(shim)]
            raise fail(
                path,
                f"knob '{knob}' {why_not}: shim {shim} takes {', '.join(rest)} or {last}; "
                f"sweep {knob} with shim: fabric",
            )
        return knob

    baseline = emulator.get("baseline") if isinstance(emulator, dict) else None
    if isinstance(baseline, dict):
        for raw, value in baseline.items():
            path: Path_ = ("emulator", "baseline", raw)
            check(path, name(path, raw), value)
        try:
            KnobSet.parse({_knob_name(k): v for k, v in baseline.items()})
        except LoggpError as e:
            raise fail(("emulator", "baseline"), str(e)) from None
    sweep = data.get("sweep")
    knobs = sweep.get("knobs") if isinstance(sweep, dict) else None
    if not isinstance(knobs, dict):
        return
    names = []
    for raw, values in knobs.items():
        path = ("sweep", "knobs", raw)
        knob = name(path, raw)
        names.append(knob)
        if isinstance(values, list):
            if not values:
                raise fail(path, f"sweep of {knob} has no values")
            for i, v in enumerate(values):
                check((*path, i), knob, v)
        elif isinstance(values, dict):
            extra = set(values) - {"from", "to", "steps", "scale"}
            if extra:
                raise fail(
                    (*path, sorted(extra)[0]),
                    "unknown key in a range (accepted keys: from, to, steps, scale)",
                )
            for end in ("from", "to"):
                if end not in values:
                    raise fail(
                        path, f"a range needs '{end}' (accepted keys: from, to, steps, scale)"
                    )
                check((*path, end), knob, values[end])
                if values.get("scale") == "log" and parse_knob(value_knob(knob), values[end]) == 0:
                    raise fail(
                        (*path, end),
                        f"a log range needs both ends above zero ({end}: {values[end]})",
                    )
            steps = values.get("steps")
            if isinstance(steps, bool) or not isinstance(steps, int) or not 2 <= steps <= 1000:
                raise fail(
                    (*path, "steps"), f"bad steps {steps!r}: expected a whole number from 2 to 1000"
                )
            if values.get("scale", "linear") not in ("linear", "log"):
                raise fail(
                    (*path, "scale"), f"bad scale {values['scale']!r}: expected linear or log"
                )
        else:
            raise fail(
                path,
                f"expected a list of {knob} values with units, or a range "
                "{from, to, steps, scale}",
            )
    pair = conflict([n for n in names if not is_network_knob(n)])
    if pair is not None:
        raise fail(
            ("sweep", "knobs"),
            f"sweep {pair[0]} or {pair[1]}, not both (one is the other's inverse)",
        )


def parse_experiment(text: str, source: str) -> Experiment:
    """Validate an experiment given as YAML text; ExperimentError names file:line and key."""
    located = load_located(text, source)
    _check_knob_values(located, source)
    try:
        return Experiment.model_validate(located.data)
    except ValidationError as e:
        errors = e.errors(include_url=False)
        first = _describe(errors[0], located, source)
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ExperimentError(first + more) from None


def load_experiment(path: Path | None) -> tuple[Experiment, str, str]:
    """(experiment, its YAML text, source name); path None is the built-in default suite."""
    if path is None:
        text = resources.files("loggp.suites").joinpath(DEFAULT_SUITE).read_text()
        source = f"<built-in {DEFAULT_SUITE}>"
    else:
        source = str(path)
        try:
            with path.open("rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
        except OSError as e:
            raise ExperimentError(f"{path}: cannot read: {e.strerror}") from None
        if len(data) > MAX_FILE_BYTES:
            raise ExperimentError(
                f"{path}: larger than {MAX_FILE_BYTES >> 20} MiB: expected an experiment file "
                f"of at most {MAX_FILE_BYTES >> 20} MiB (is it the right file?)"
            )
        text = decode_text(data, source)
    return parse_experiment(text, source), text, source

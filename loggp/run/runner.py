"""`loggp run`: runs an experiment's plan point by point and stores every outcome.

A point that fails is recorded (status, exit code, stderr tail) and the run goes on, unless
fail_fast.  A point that finished ok is judged by its own evidence (loggp/results/judge.py):
the other work on the host during it and the shim's release lateness against its bound and
the host's own floor, measured beside the point when the lateness crosses the bound.  It is
stored `degraded` with the reason when either says it may not measure its knobs; it keeps
its value and counts as a failure only for strict.  Ctrl-C or SIGTERM kills the running
point's processes, marks the run interrupted and leaves every finished point stored;
--resume continues with the points not yet stored.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from loggp.errors import LoggpError, one_line
from loggp.metrics.exporter import RunMetrics
from loggp.metrics.hostnoise import BESIDE_S, HostNoise, measure_host_noise
from loggp.metrics.node import OtherWork, cpu_sample, other_work
from loggp.metrics.prometheus import PrometheusServer, find_node_exporter, find_prometheus
from loggp.plan.experiment import Experiment
from loggp.plan.platform import Stack
from loggp.plan.sweep import Point, expand
from loggp.results.judge import (
    LateSummary,
    busy_host,
    crosses_bound,
    degraded_reason,
    injected_delay_ns,
    lateness,
)
from loggp.results.protocol import messages_check, result_line, result_problem, shim_stats
from loggp.results.rundir import RunRecord, plan_entry, write_run
from loggp.results.store import (
    BACKEND_EMULATOR,
    BACKEND_SMPI,
    STATUS_DEGRADED,
    STATUS_OK,
    PointRecord,
    Store,
)
from loggp.run.capture import MAX_STREAM_BYTES, dropped_note, tail_text
from loggp.run.cgroup import (
    Containment,
    detect,
    end_dead_runs,
    end_recorded_groups,
    kill_groups,
    make_group,
)
from loggp.run.launch import Launch, point_launch
from loggp.run.proc import end, kept, recording
from loggp.run.proctree import end_recorded
from loggp.run.provenance import delay_distribution, provenance
from loggp.run.services import ServiceError, Services
from loggp.run.shmregion import remove_stale_regions
from loggp.run.slurm import allocation, in_allocation, point_records, record_point
from loggp.run.slurmnodes import NodeCpu, NodeExporters, shares
from loggp.run.smpi import run_stack
from loggp.run.trips import measure_trips
from loggp.run.wirerun import WireSchedule, WireSession

_TAIL_LINES = 20
KEEPER_LOG = "keeper.log"  # in a point's directory: what its keeper itself said
KEEPER_ONLY = Containment("keeper", None, "not detected")
_FIRST_SCRAPE_S = 20.0
_LAST_SCRAPE_S = 10.0
PROCESS_RECORDS = "pids"  # in the run directory: the processes running now (proctree.py)


@dataclass(frozen=True)
class RunOptions:
    fail_fast: bool = False
    strict: bool = False  # a degraded point is a failure (fail_fast stops at it too)
    prometheus: bool | None = None  # None: on when the prometheus binary is installed
    exp_dir: Path | None = None
    wire: WireSession | None = None  # shim wire: the launcher's wire (run_plan's default)
    service_targets: Path | None = None  # the Prometheus server's services file, if any
    stack: Stack | None = None  # shim smpi: the simulated stack (run_plan's default)
    containment: Containment = KEEPER_ONLY  # a cgroup per point where the host allows
    only: int | None = None  # the one point (its seq) a Slurm array task runs
    nodes: NodeExporters | None = None  # inside a Slurm allocation: its nodes' CPU


@dataclass
class RunSummary:
    run_dir: Path
    planned: int
    skipped: int
    ok: int
    failed: list[str]
    interrupted: bool
    degraded: list[str] = dataclasses.field(default_factory=list)

    @property
    def stored(self) -> int:
        """Points stored by this invocation."""
        return self.ok + len(self.degraded) + len(self.failed)


def _tail(path: Path) -> str:
    return "\n".join(tail_text(path).splitlines()[-_TAIL_LINES:])


def _note(point_dir: Path, line: str) -> None:
    """A line of the runner's in the point's stderr (and so in its stored tail)."""
    try:
        with (point_dir / "stderr").open("a") as f:
            f.write(f"loggp: {line}\n")
    except OSError:
        pass  # a full disk: the point is stored without it


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _execute(
    launch: Launch, point_dir: Path, timeout: float, groups: list[Path]
) -> tuple[int | None, bool]:
    """Runs the point's command beneath a keeper in the point's cgroup, its output into
    capped files (capture.py); (exit status, timed out).  A timeout, Ctrl-C or SIGTERM ends
    its whole tree (every host's processes under netns) before returning or propagating, and
    so does the runner's death: no rank outlives the runner."""
    outputs = (point_dir / "stdout", point_dir / "stderr")
    with (point_dir / KEEPER_LOG).open("wb") as keeper_log:
        try:
            proc = subprocess.Popen(
                kept(launch.argv, cgroups=groups, outputs=outputs),
                env=launch.env,
                stdin=subprocess.DEVNULL,
                stdout=keeper_log,
                stderr=keeper_log,
                start_new_session=True,
            )
        except ValueError as e:  # a NUL byte from a service's ready line
            for path in outputs:
                path.write_bytes(b"")
            _note(point_dir, f"cannot start the point's command: {one_line(e)}")
            return 127, False
        try:
            return proc.wait(timeout), False
        except subprocess.TimeoutExpired:
            end(proc)
            return None, True
        except BaseException:
            end(proc)
            raise


def _read_stdout(point_dir: Path) -> str:
    try:
        with (point_dir / "stdout").open("rb") as f:
            return f.read(2 * MAX_STREAM_BYTES).decode(errors="replace")  # capped by the keeper
    except OSError:
        return ""


def _outcome(
    exp: Experiment, p: Point, point_dir: Path, rc: int | None, timed_out: bool
) -> tuple[str, float | None, dict[str, Any] | None]:
    for stream in ("stdout", "stderr"):
        cut = dropped_note(point_dir / stream)
        if cut is not None:
            _note(point_dir, f"{stream} cut to its tail: {cut} (MAX_STREAM_BYTES)")
    keeper = tail_text(point_dir / KEEPER_LOG).strip()
    if keeper:
        _note(point_dir, keeper.splitlines()[-1].removeprefix("loggp: "))
    result = result_line(_read_stdout(point_dir))
    if timed_out:
        return "timeout", None, result
    if rc != 0 or result is None:
        if result is None and rc == 0:
            _note(point_dir, "the workload printed no result line (docs/results.md)")
        return "failed", None, result
    problem = result_problem(result)
    if problem is not None:
        _note(point_dir, f"invalid result line: {problem} (docs/results.md)")
        return "invalid", None, result
    if result.get("valid") is False:
        return "invalid", None, result
    value = result.get("metrics", {}).get(p.workload.metric)
    if not isinstance(value, int | float) or isinstance(value, bool):
        _note(point_dir, f"the result has no number metrics.{p.workload.metric}")
        return "failed", None, result
    return "ok", float(value), result


def _record(p: Point, backend: str, **outcome: Any) -> PointRecord:
    """The stored form of a point: who it is from the plan, what happened from outcome."""
    return PointRecord(
        backend=backend,
        point_id=p.point_id,
        seq=p.seq,
        workload=p.workload.name,
        sweep_knob=p.sweep_knob,
        sweep_value=p.sweep_value,
        knobs=p.knob_texts(),
        knob_values=p.knob_values(),
        repeat=p.repeat,
        metric=p.workload.metric,
        higher_is_better=p.workload.higher_is_better,
        **outcome,
    )


def _judgement(
    late: LateSummary | None,
    other: OtherWork | None,
    noise: HostNoise | None,
    reason: str | None,
) -> dict[str, Any]:
    """The columns that judge a point by its own evidence (None where unknown)."""
    return {
        "releases": None if late is None else late.releases,
        "late_p99_ns": None if late is None else late.p99_ns,
        "late_max_ns": None if late is None else late.max_ns,
        "early_releases": None if late is None else late.early,
        "host_other_cpu": None if other is None else other.share,
        "host_floor_ns": None if noise is None else noise.floor_ns,
        "degraded_reason": reason,
    }


def _noise_beside() -> HostNoise | None:
    """The host's own stalls right after a point (loggp/metrics/hostnoise.py); None when the
    probe is not built or fails, or when other work ran during it: its stalls would then be
    that work's, not the host's."""
    before = cpu_sample()
    noise = measure_host_noise(seconds=BESIDE_S)
    return None if busy_host(other_work(before, cpu_sample())) else noise


def _nodes_cpu(nodes: NodeExporters, before: dict[str, NodeCpu]) -> dict[str, Any]:
    """The point's Slurm record's nodes_cpu (each node's busy share during the point, its
    own ranks included) and, for nodes not read, why."""
    measured = shares(before, nodes.sample())
    missing = {**nodes.missing}
    for node in nodes.addresses:
        if node not in measured:
            missing[node] = "its node exporter did not answer at the point's start or end"
    return {"nodes_cpu": measured, **({"nodes_cpu_missing": missing} if missing else {})}


def _backend(exp: Experiment) -> str:
    """Column backend: emulated beneath a shim (or none), or simulated by SMPI."""
    return BACKEND_SMPI if exp.emulator.shim == "smpi" else BACKEND_EMULATOR


def _not_run(exp: Experiment, p: Point, point_dir: Path, why: str) -> PointRecord:
    """A point that could not start (the testbed's wire did not take its knobs, a service
    did not become ready)."""
    (point_dir / "stderr").write_text(f"loggp: {why}\n")
    now = time.time()
    return _record(
        p,
        _backend(exp),
        status="failed",
        exit_code=None,
        value=None,
        result=None,
        shim_stats=[],
        msgs_check=None,
        **_judgement(None, None, None, None),
        wall_s=0.0,
        started=now,
        finished=now,
        stderr_tail=f"loggp: {why}",
    )


def run_point(exp: Experiment, p: Point, run_dir: Path, opts: RunOptions) -> PointRecord:
    """Launches one point and returns what is stored of it."""
    point_dir = run_dir / "points" / str(p.seq)
    point_dir.mkdir(parents=True, exist_ok=True)
    stats_path = point_dir / "stats.jsonl"
    stats_path.unlink(missing_ok=True)
    wire_ports: list[dict[str, Any]] = []
    wire_before: list[dict[str, Any]] = []
    steps: WireSchedule | None = None
    timing: dict[str, Any] = {}
    if opts.wire is not None:
        try:
            lines = exp.emulator.schedule_lines(opts.exp_dir)
            steps = WireSchedule(p.knobs, lines) if lines else None
            knobs = steps.first() if steps is not None else p.knobs
            wire_ports, wire_before = opts.wire.apply(knobs, p.network)
        except LoggpError as e:
            return _not_run(exp, p, point_dir, f"cannot set the point's knobs on the wire: {e}")
    remove_stale_regions()  # a killed point's shm files would collide with reused pids
    groups = make_group(opts.containment, f"{os.getpid()}-{p.seq}", run_dir / PROCESS_RECORDS)
    try:
        with Services(
            exp,
            p.workload,
            p.knobs,
            point_dir,
            opts.exp_dir,
            targets_file=opts.service_targets,
            point_id=p.point_id,
            cgroups=groups,
        ) as services:
            values = services.values
            launch = point_launch(
                exp, p.workload, p.knobs, point_dir, opts.exp_dir, values, opts.stack, p.network
            )
            (point_dir / "command").write_text(" ".join(launch.argv) + "\n")
            # The nodes' exporters are read over HTTP outside the point's own window.
            nodes_before = {} if opts.nodes is None else opts.nodes.sample()
            if exp.launcher.kind == "slurm":
                record_point(point_dir)
            started = time.time()
            t0 = time.monotonic()
            before = cpu_sample()
            if steps is not None and opts.wire is not None:
                steps.start(opts.wire)
            try:
                rc, timed_out = _execute(
                    launch, point_dir, exp.workload_timeout(p.workload), groups
                )
            finally:
                timing = steps.stop() if steps is not None else {}
            other = other_work(before, cpu_sample())
            wall = time.monotonic() - t0
            if opts.nodes is not None:
                record_point(point_dir, **_nodes_cpu(opts.nodes, nodes_before))
            service_died = services.failure()
    except ServiceError as e:
        return _not_run(exp, p, point_dir, str(e))
    finally:
        left = kill_groups(groups)
    if left:
        _note(point_dir, f"{left} process(es) outlived the point's keepers: killed with its cgroup")
    status, value, result = _outcome(exp, p, point_dir, rc, timed_out)
    if service_died is not None:
        _note(point_dir, f"{service_died} while the point ran")
        if status == STATUS_OK:
            status, value = "failed", None
    problems: list[str] = []
    stats = shim_stats(stats_path, problems=problems)
    for problem in problems:
        _note(point_dir, f"LOGGP_STATS_FILE {problem}")
    if opts.wire is not None:
        try:
            stats = opts.wire.record(wire_ports, wire_before)
        except LoggpError as e:
            _note(point_dir, f"the wire's counters after the point: {e}")
            stats = [{"shim": "wire", **port} for port in wire_ports]
            status, value = "failed", None
        for port in stats:
            port.update(timing)
        for error in steps.errors if steps is not None else []:
            _note(point_dir, f"the schedule's {error}")
            status, value = "failed", None
    check = messages_check(result, stats, exp.emulator.shim == "fabric") if result else None
    late = lateness(stats)
    delay = injected_delay_ns(p.knobs, stats)
    noise = None
    if status == STATUS_OK and crosses_bound(late, delay):
        noise = _noise_beside()
    reason = degraded_reason(late, delay, other, noise)
    if status == STATUS_OK and reason is not None:
        status = STATUS_DEGRADED
    return _record(
        p,
        _backend(exp),
        status=status,
        exit_code=rc,
        value=value,
        result=result,
        shim_stats=stats,
        msgs_check=check,
        **_judgement(late, other, noise, reason if status == STATUS_DEGRADED else None),
        wall_s=wall,
        started=started,
        finished=time.time(),
        stderr_tail=_tail(point_dir / "stderr"),
    )


def _start_prometheus(
    run_dir: Path,
    metrics: RunMetrics,
    want: bool | None,
    console: Console,
    nodes: NodeExporters | None,
) -> PrometheusServer | None:
    """A Prometheus server scraping the runner (and node_exporter when installed, and a
    Slurm allocation's node exporters); with want None only if the binary is there, with
    want True a missing one is an error."""
    if want is False:
        return None
    if want is None:
        try:
            find_prometheus()
        except LoggpError:
            return None
    remote = [] if nodes is None else nodes.targets()
    server = PrometheusServer(
        run_dir, exporter=metrics.address, extra_targets=remote, scrape_services=True
    ).start()
    local = find_node_exporter() is not None
    jobs = 1 + local + len(remote)
    node = " and node_exporter" if local else ""
    node += f" and {len(remote)} Slurm nodes' exporters" if remote else ""
    console.print(f"Prometheus: {server.url} (scraping the runner{node})")
    # Prometheus scrapes a new target only after a few seconds: wait until every target
    # has been scraped once, so the first points' windows have data.
    server.wait_for_series(f"count(up == 1) >= {jobs}", _FIRST_SCRAPE_S)
    return server


def _last_scrape(server: PrometheusServer, finished: int, console: Console) -> None:
    """Waits until Prometheus has scraped the runner after its last point, so the stored
    data covers every window; a miss is only worth a warning."""
    try:
        server.wait_for_series(
            f"sum(loggp_run_points_finished_total) >= {finished}", _LAST_SCRAPE_S
        )
    except LoggpError as e:
        console.print(f"warning: {e}")


def _host_noise(rec: RunRecord, console: Console) -> None:
    """The host's own stalls before the points (loggp/metrics/hostnoise.py), kept in run.json
    and printed; each point is judged by its own (_noise_beside)."""
    noise = measure_host_noise()
    at = datetime.now(UTC).isoformat(timespec="seconds")
    if noise is None:
        rec.host_noise.append({"at": at, "measured": False})
        console.print("host noise: not measured (loggp-hostnoise not built or failed)")
        return
    rec.host_noise.append({"at": at, "measured": True, **noise.as_dict()})
    console.print(f"host noise: {noise.text()}")


def _node_exporters(run_dir: Path, console: Console) -> NodeExporters:
    """The allocation's node exporters, started (loggp/run/slurmnodes.py)."""
    job = os.environ.get("SLURM_JOB_ID", "job")
    nodes = NodeExporters(run_dir / "slurm" / f"nodes-{job}").start()
    read = f"{len(nodes.addresses)} node(s) read"
    missing = "".join(f"; {n}: {why}" for n, why in nodes.missing.items())
    console.print(f"Slurm nodes' CPU: {read}{missing}", soft_wrap=True)
    return nodes


def _slurm_provenance(rec: RunRecord, run_dir: Path) -> None:
    """The job's id (a submitted run's: its array's), partition and nodes (an array's
    tasks have theirs each), and each point's job, array task and nodes."""
    alloc = allocation()
    slurm = rec.provenance.setdefault("slurm", {})
    slurm["job_id"] = alloc.get("array_job_id", alloc.get("job_id"))
    slurm["partition"] = alloc.get("partition")
    if "array_job_id" not in alloc:
        slurm["nodes"] = alloc.get("nodes")
    slurm["points"] = point_records(run_dir, rec.plan)


def new_record(exp: Experiment, yaml_text: str, source: str, plan: list[Point]) -> RunRecord:
    return RunRecord(
        name=exp.name,
        source=source,
        experiment_yaml=yaml_text,
        experiment=exp.model_dump(mode="json", by_alias=True),
        provenance=provenance(),
        plan=[plan_entry(p) for p in plan],
    )


def run_plan(
    exp: Experiment,
    rec: RunRecord,
    run_dir: Path,
    opts: RunOptions,
    console: Console,
) -> RunSummary:
    """Runs every point of the plan not yet in the store."""
    if exp.emulator.shim == "wire" and opts.wire is None:
        inventory = exp.launcher.inventory if exp.launcher.kind in ("ansible", "slurm") else None
        wire = WireSession(
            exp.launcher.netns_prefix,
            Path(inventory) if inventory else None,
            dist=exp.dist_env(opts.exp_dir),
        )
        opts = dataclasses.replace(opts, wire=wire)
    if exp.emulator.shim == "smpi" and opts.stack is None:
        stack, rec.provenance["smpi"] = run_stack(
            exp, run_dir, opts.exp_dir, lambda work: measure_trips(exp, work)
        )
        s = stack.as_dict()
        console.print(
            f"simulated stack ({rec.provenance['smpi']['calibration']}): o_s {s['o_s_us']:.3g} "
            f"us, o_r {s['o_r_us']:.3g} us, L {s['L_us']:.3g} us, G {s['G_ns_per_B']:.3g} ns/B, "
            f"latency factor by size {stack.lat_factor()}"
        )
        opts = dataclasses.replace(opts, stack=stack)
    plan = expand(exp)
    metrics = RunMetrics()
    store = Store(run_dir)
    done = store.finished_ids()
    todo = [p for p in plan if p.point_id not in done and opts.only in (None, p.seq)]
    summary = RunSummary(run_dir, len(plan), len(plan) - len(todo), 0, [], False)
    server: PrometheusServer | None = None
    # Processes of a run that died with its keepers (both SIGKILLed) may still run, and
    # its Prometheus still hold the TSDB: end those its records still name exactly.
    records = run_dir / PROCESS_RECORDS
    ended = end_recorded(records) + end_recorded_groups(records)
    if opts.containment is KEEPER_ONLY:
        opts = dataclasses.replace(opts, containment=detect())
    ended += end_dead_runs(opts.containment)
    rec.provenance["containment"] = opts.containment.describe()
    delays = delay_distribution(exp, opts.exp_dir)
    if delays is not None:
        rec.provenance["delay_distribution"] = delays
    if exp.launcher.kind == "slurm" and in_allocation():
        _slurm_provenance(rec, run_dir)
    if ended:
        console.print(f"ended {ended} processes left by a dead run (records: {records})")
    with recording(records):
        # kill (SIGTERM) stops a run like Ctrl-C: the point's processes are killed and every
        # finished point stays stored for --resume.  (A run started in the background of a
        # shell has SIGINT ignored, so SIGTERM is how one stops it.)
        old_term = signal.signal(signal.SIGTERM, _interrupt)
        try:
            if opts.wire is not None:
                opts.wire.save()
            metrics.start()
            metrics.plan(exp.name, len(plan))
            if exp.launcher.kind == "slurm" and in_allocation():
                opts = dataclasses.replace(opts, nodes=_node_exporters(run_dir, console))
            server = _start_prometheus(run_dir, metrics, opts.prometheus, console, opts.nodes)
            if server is not None:
                rec.prometheus = {"url": server.url, "data": "prometheus/data"}
                opts = dataclasses.replace(opts, service_targets=server.services_file)
            if exp.emulator.shim not in ("none", "smpi"):  # nothing is released late
                _host_noise(rec, console)
            rec.state = "running"
            write_run(run_dir, rec)
            columns = (
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
            )
            with Progress(*columns, console=console, transient=False) as bar:
                task = bar.add_task(exp.name, total=len(plan), completed=summary.skipped)
                warm: tuple[int, str] | None = None
                for p in todo:
                    if exp.warmup and warm != (p.repeat, p.workload.name):
                        warm = (p.repeat, p.workload.name)
                        bar.update(task, description=f"{'warm-up ' + p.point_id:<40.40}")
                        for _ in range(exp.warmup):
                            run_point(exp, p, run_dir, opts)  # discarded; its logs overwritten
                    bar.update(task, description=f"{p.point_id:<40.40}")
                    metrics.point_started(p.point_id, p.workload.name, p.sweep_knob)
                    r = run_point(exp, p, run_dir, opts)
                    store.add(r)
                    rec.windows[p.point_id] = (r.started, r.finished)
                    write_run(run_dir, rec)
                    metrics.point_finished(
                        p.point_id, p.workload.name, p.sweep_knob, p.sweep_value,
                        r.status, r.value, r.wall_s,
                    )  # fmt: skip
                    metrics.shim_lateness(p.workload.name, r.shim_stats)
                    bar.advance(task)
                    if r.status == STATUS_OK:
                        summary.ok += 1
                        continue
                    if r.status == STATUS_DEGRADED:
                        summary.degraded.append(p.point_id)
                        bar.console.print(
                            f"[yellow]point {p.point_id}: degraded[/yellow] ({r.degraded_reason})",
                            soft_wrap=True,  # the whole reason, never cropped to the width
                        )
                        if opts.strict and opts.fail_fast:
                            break
                        continue
                    summary.failed.append(p.point_id)
                    first = r.stderr_tail.splitlines()[-1] if r.stderr_tail else "no stderr"
                    bar.console.print(
                        f"[red]point {p.point_id}: {r.status}[/red] (exit {r.exit_code}): {first} "
                        f"(logs: {run_dir / 'points' / str(p.seq)})"
                    )
                    if opts.fail_fast:
                        break
            if summary.failed or (opts.strict and summary.degraded):
                rec.state = "stopped" if opts.fail_fast else "failed"
            elif opts.only is not None and len(store.finished_ids()) < len(plan):
                rec.state = "interrupted"  # the array's other tasks store the rest
            else:
                rec.state = "complete"
            if exp.launcher.kind == "slurm" and in_allocation():
                _slurm_provenance(rec, run_dir)
        except KeyboardInterrupt:
            summary.interrupted = True
            rec.state = "interrupted"
        except BaseException:
            rec.state = "failed"  # never left "running": the error goes on to the CLI
            raise
        finally:
            signal.signal(signal.SIGTERM, old_term)
            write_run(run_dir, rec)
            if opts.wire is not None:
                try:
                    opts.wire.restore()
                except LoggpError as e:
                    console.print(f"warning: the wire's knobs before the run not restored: {e}")
            if server is not None:
                if not summary.interrupted:
                    _last_scrape(server, summary.stored, console)
                server.stop()
            if opts.nodes is not None:
                opts.nodes.stop()
            metrics.close()
            store.close()
    return summary

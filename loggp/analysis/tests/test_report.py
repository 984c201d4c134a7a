"""write_report end to end: files, HTML contents, CSV rows and the errors it raises."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pytest
from matplotlib.image import imread

from loggp.analysis.report import ReportError, write_report
from loggp.analysis.tests.rundata import (
    CPU_MODEL,
    DEGRADED_REASON,
    GIT_REVISION,
    RUN_NAME,
    Row,
    app,
    make_run,
)
from loggp.results.rundir import RUN_FILE
from loggp.results.store import COLUMNS

pytestmark = pytest.mark.unit

FIGURE_KNOBS = ("overhead", "send_overhead", "latency", "bulk_gap", "bandwidth")


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return make_run(tmp_path)


def test_files_written(run_dir: Path) -> None:
    index = write_report(run_dir)
    out = run_dir / "report"
    assert index == out / "index.html"
    for knob in FIGURE_KNOBS:
        png = out / f"slowdown_{knob}.png"
        assert imread(png).shape[2] in (3, 4)
        assert "<svg" in (out / f"slowdown_{knob}.svg").read_text()
    assert not (out / "slowdown_gap.png").exists()
    assert not (out / "slowdown_gap.svg").exists()
    assert (out / "results.csv").is_file()


def test_custom_out_dir_and_stale_figures(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "elsewhere" / "rep"
    out.mkdir(parents=True)
    (out / "slowdown_gap.png").write_bytes(b"old")
    (out / "notes.txt").write_text("mine")
    index = write_report(run_dir, out_dir=out)
    assert index == out / "index.html" and index.is_file()
    assert not (out / "slowdown_gap.png").exists()  # the gap knob has no figure any more
    assert (out / "notes.txt").read_text() == "mine"
    assert not (run_dir / "report").exists()


def test_html_contents(run_dir: Path) -> None:
    html = write_report(run_dir).read_text()
    assert html.startswith("<!DOCTYPE html>")
    # provenance
    assert RUN_NAME in html
    assert GIT_REVISION in html
    assert CPU_MODEL in html
    assert "node&lt;1&gt;" in html and "node<1>" not in html
    assert "fi_info: 1.17.0" in html
    prov = html.split('<pre class="yaml provenance">')[1].split("</pre>")[0]
    assert prov.startswith(f"name: {RUN_NAME}\nstate: complete\nsource: suites/unit.yaml\n")
    assert "argv:\n- loggp\n- run\n- suite.yaml\n" in prov
    # last: after every table
    assert html.index('id="provenance"') > html.index("<h2>All points</h2>")
    # baselines: app 0.9, 1.0, 1.1 s; server 1000, 1000 ops/s
    baselines = html.split('<table class="baselines">')[1].split("</table>")[0]
    assert '<th>app</th><td>time_s (time)</td><td class="num">1.00</td>' in baselines  # n < 6
    assert "ops_per_s (rate, higher is better)" in baselines
    assert "orphan" in baselines and "no baseline" in baselines
    # figures embedded, one per drawn knob
    assert html.count('src="data:image/png;base64,') == len(FIGURE_KNOBS)
    # slowdown tables: app at ΔL = 10 µs is the median 1.50 of three repeats (no interval)
    assert html.count('<table class="slowdown">') == len(FIGURE_KNOBS)
    assert '1.50 <span class="n">n=3</span>' in html
    assert '6.00 <span class="n">n=1</span>' in html
    assert '4.50 <span class="n">n=2</span>' in html  # server, a rate
    assert "order statistics" in html and "distribution-free" in html
    assert "<th>100 µs</th>" in html and "<th>0 µs (baseline)</th>" in html
    assert "T = T0 + m·ΔL" in html and "R² = 1.000" in html
    assert "no msgs.critical_path reported" in html
    # no baseline, no figure
    assert "Workload orphan: no baseline" in html
    assert "Knob gap: no figure" in html and "No figure: all 1 point(s) failed." in html
    # the failed points, escaped
    assert "&lt;script&gt;x&lt;/script&gt;" in html and "<script>" not in html
    excluded = html.split('<table class="excluded">')[1].split("</table>")[0]
    for pid in ("app/latency=1000/r0", "app/gap=10/r0", "server/latency=10/r1"):
        assert pid in excluded
    assert "app/latency=10/r0" not in excluded
    # message-count check
    assert "mismatch: workload 50000 != shim 49990" in html
    assert "Message-count check: 14 match, 1 mismatch" in html
    assert '<span class="cpu">other work 2 %</span>' in html  # every ok point: 2 %


def test_other_work_is_shown_as_stored(tmp_path: Path) -> None:
    """One figure everywhere: the other work the runner stored (host_other_cpu), never the
    run's own ranks' CPU."""
    rows = [
        app("baseline", None, 0, 1.0),
        app("latency", 10, 0, 1.5, other_cpu=0.10),
        app("latency", 10, 1, 1.5, other_cpu=0.30),
        app("latency", 10, 2, 1.6, other_cpu=0.60, status="degraded"),
        app("latency", 20, 0, None, status="failed"),
    ]
    run = make_run(tmp_path, rows)
    html = write_report(run).read_text()
    # the cell's mean over its repeats, red above the 25 % that degrades a point
    assert '<span class="bad">other work 33 %</span>' in html
    points = html.split('<table class="points">')[1].split("</table>")[0]
    assert "<th>other work</th>" in points and ">60 %</td>" in points
    rows_csv = read_csv(run / "report" / "results.csv")
    assert float(rows_csv["app/latency=10/r2"]["host_other_cpu"]) == 0.6
    assert rows_csv["app/latency=20/r0"]["host_other_cpu"] == ""


def read_csv(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="") as f:
        return {r["point_id"]: r for r in csv.DictReader(f)}


def test_csv_rows(run_dir: Path) -> None:
    write_report(run_dir)
    path = run_dir / "report" / "results.csv"
    with path.open(newline="") as f:
        header = next(csv.reader(f))
    assert header == [*COLUMNS, "slowdown", "baseline_median", "excluded", "outlier"]
    rows = read_csv(path)
    con = sqlite3.connect(run_dir / "results.sqlite")
    ids = [r[0] for r in con.execute("SELECT point_id FROM points ORDER BY seq")]
    con.close()
    assert list(rows) == ids
    r = rows["app/latency=10/r0"]
    assert float(r["slowdown"]) == pytest.approx(1.4)
    assert float(r["baseline_median"]) == pytest.approx(1.0)
    assert float(r["value"]) == 1.4 and r["status"] == "ok" and r["excluded"] == ""
    assert json.loads(r["knob_values"]) == {"latency": 10}
    assert float(rows["server/latency=100/r1"]["slowdown"]) == pytest.approx(5.0)
    assert float(rows["app/baseline/r2"]["slowdown"]) == pytest.approx(1.1)
    failed = rows["app/latency=1000/r0"]
    assert failed["slowdown"] == "" and failed["value"] == ""
    assert failed["excluded"] == "failed (exit 1)"
    assert failed["stderr_tail"] == "boom <script>x</script>"
    orphan = rows["orphan/latency=10/r0"]
    assert orphan["slowdown"] == ""
    assert orphan["excluded"] == "no baseline: no baseline points recorded"


def test_all_points_failed(tmp_path: Path) -> None:
    rows = [
        app("baseline", None, 0, None, status="failed"),
        app("latency", 10, 0, None, status="timeout"),
    ]
    run = make_run(tmp_path, rows)
    html = write_report(run).read_text()
    assert "Workload app: no baseline" in html
    assert "Knob latency: no figure" in html
    assert not list((run / "report").glob("*.png"))
    assert len(read_csv(run / "report" / "results.csv")) == 2


def test_degraded_points_stay_on_the_curves_and_are_marked(tmp_path: Path) -> None:
    rows = [
        app("baseline", None, 0, 1.0),
        app("latency", 10, 0, 2.0),
        app("latency", 10, 1, 2.2, status="degraded"),  # near its clean sibling: no outlier
        app("latency", 20, 0, 3.0),
        app("latency", 30, 0, None, status="failed"),
    ]
    run = make_run(tmp_path, rows)
    html = write_report(run).read_text()
    assert "5 point(s), 3 ok, " in html and "1 degraded ⚠</span>" in html
    assert "2 not ok" not in html and "1 not ok" in html
    # on the curve: the median at 10 us is over both repeats, the cell marks the degraded one
    assert "2.10 <span" in html and "⚠ 1 degraded" in html
    assert "4 point(s), 2 ok, 1 degraded." in html
    degraded = html.split('<h2 id="degraded">')[1].split("<h2")[0]
    assert "app/latency=10/r1" in degraded and DEGRADED_REASON in degraded
    assert "app/latency=10/r0" not in degraded
    assert "app/latency=10/r1" not in html.split("<h2>Failed and invalid points")[1].split("<h2")[0]
    assert imread(run / "report" / "slowdown_latency.png").shape[2] in (3, 4)
    assert "with degraded repeats" in (run / "report" / "slowdown_latency.svg").read_text()
    by_id = read_csv(run / "report" / "results.csv")
    row = by_id["app/latency=10/r1"]
    assert (row["status"], row["excluded"], row["degraded_reason"]) == (
        "degraded",
        "",
        DEGRADED_REASON,
    )
    assert float(row["slowdown"]) == 2.2 and row["late_p99_ns"] == "8000"


def test_the_summary_names_the_hosts_own_stalls(tmp_path: Path) -> None:
    run = make_run(tmp_path, [app("baseline", None, 0, 1.0), app("latency", 10, 0, 2.0)])
    doc = json.loads((run / RUN_FILE).read_text())
    doc["host_noise"] = [
        {"at": "2026-11-27T06:00:00+00:00", "measured": True, "floor_ns": 3200,
         "stalls_per_s": 1100.0, "stalled_share": 0.012, "max_stall_ns": 12_000_000},
        {"at": "2026-11-27T07:00:00+00:00", "measured": False},
    ]  # fmt: skip
    (run / RUN_FILE).write_text(json.dumps(doc))
    summary = write_report(run).read_text().split("<h2>Summary</h2>")[1].split("<h2")[0]
    assert (
        "Host noise at 2026-11-27T06:00:00+00:00: host stops a busy thread 1100 times/s, "
        "1.2 % of its time (longest 12 ms): p99 lateness floor 3.2 us" in summary
    )
    assert "Host noise at 2026-11-27T07:00:00+00:00: not measured." in summary


# --- errors ----------------------------------------------------------------------------


def expect_error(run_dir: Path, *fragments: str, **kw: object) -> str:
    with pytest.raises(ReportError) as info:
        write_report(run_dir, **kw)  # type: ignore[arg-type]
    msg = str(info.value)
    assert "\n" not in msg
    for fragment in fragments:
        assert fragment in msg
    return msg


def test_missing_run_dir(tmp_path: Path) -> None:
    expect_error(tmp_path / "nope", str(tmp_path / "nope"), "does not exist")


def test_run_dir_is_a_file(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    expect_error(f, str(f), "not a directory")


def test_missing_run_json(run_dir: Path) -> None:
    (run_dir / "run.json").unlink()
    expect_error(run_dir, str(run_dir / "run.json"), "not found")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [("{not json", "not valid JSON"), ("[1, 2]", "expected a JSON object")],
)
def test_bad_run_json(run_dir: Path, text: str, fragment: str) -> None:
    (run_dir / "run.json").write_text(text)
    expect_error(run_dir, str(run_dir / "run.json"), fragment)


def test_missing_database(run_dir: Path) -> None:
    (run_dir / "results.sqlite").unlink()
    expect_error(run_dir, str(run_dir / "results.sqlite"), "not found")


def test_database_is_not_sqlite(run_dir: Path) -> None:
    db = run_dir / "results.sqlite"
    db.write_bytes(b"this is not a database, just text " * 100)
    expect_error(run_dir, str(db), "cannot read")


def test_database_without_points_table(run_dir: Path) -> None:
    db = run_dir / "results.sqlite"
    db.unlink()
    sqlite3.connect(db).execute("CREATE TABLE other (x)").connection.close()
    expect_error(run_dir, str(db), "no table 'points'")


def test_database_missing_columns(run_dir: Path) -> None:
    db = run_dir / "results.sqlite"
    db.unlink()
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE points (point_id TEXT, workload TEXT, value REAL)")
    con.close()
    expect_error(run_dir, str(db), "lacks column(s) sweep_knob, sweep_value, repeat")


def test_empty_results(tmp_path: Path) -> None:
    run = make_run(tmp_path, rows=[])
    expect_error(run, str(run / "results.sqlite"), "no points recorded")


def test_bad_json_cell_in_ok_point(run_dir: Path) -> None:
    db = run_dir / "results.sqlite"
    con = sqlite3.connect(db)
    con.execute("UPDATE points SET result = '{broken' WHERE point_id = 'app/latency=10/r0'")
    con.commit()
    con.close()
    expect_error(run_dir, str(db), "app/latency=10/r0", "result is not JSON")


def test_out_dir_not_writable(run_dir: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the report directory should go")
    expect_error(run_dir, str(blocker / "rep"), "cannot create report directory",
                 out_dir=blocker / "rep")  # fmt: skip


def test_interval_and_unfit_model_in_table(tmp_path: Path) -> None:
    """Six repeats show the median with its order-statistic interval; a model that does not
    fit says so beside its R² and largest error."""
    msgs = {"critical_path": 100_000}
    rows = [Row("w", "baseline", None, r, 1.0, msgs=msgs) for r in range(6)]
    rows += [Row("w", "latency", 10, r, v, msgs=msgs)
             for r, v in enumerate([1.0, 1.1, 1.2, 1.3, 1.4, 1.5])]  # fmt: skip
    html = write_report(make_run(tmp_path, rows)).read_text()
    assert '1.25 [1.00, 1.50] <span class="n">n=6</span>' in html
    assert "does not fit, not drawn" in html and "max error ×" in html


def test_the_report_leads_with_the_answer(tmp_path: Path) -> None:
    """Headline per workload, then the figures, then findings and tables, provenance last."""
    rows = [Row("w", "baseline", None, r, 1.0) for r in range(6)]
    rows += [Row("w", "latency", 100, r, 11.0 + 0.2 * r) for r in range(6)]
    rows += [Row("w", "overhead", 50, r, 3.0 + 0.1 * r) for r in range(6)]
    html = write_report(make_run(tmp_path, rows)).read_text()
    head = html.split('<table class="headline" id="headline">')[1].split("</table>")[0]
    # latency: ×11.5 at ΔL = 100 µs with its interval; overhead second
    assert "<th>w</th><td>latency</td>" in head
    assert "×11.5 [11.0, 12.0] at ΔL = 100 µs (n=6)" in head
    assert "overhead ×3.25 at Δo = 50 µs" in head
    order = [
        html.index('id="headline"'),
        html.index('<div class="figures">'),
        html.index("<h2>Summary</h2>"),
        html.index("<h2>Baselines</h2>"),
        html.index('<h2 id="knob-latency">'),
        html.index('id="provenance"'),
    ]
    assert order == sorted(order)
    assert 'id="host"' not in html  # a quiet run: no banner


def test_a_banner_says_when_the_host_shaped_points_and_what_to_do(tmp_path: Path) -> None:
    rows = [
        app("baseline", None, 0, 1.0),
        app("baseline", None, 1, 9.0, status="degraded", other_cpu=0.72),
        app("latency", 10, 0, 1.5, floor_ns=36_000),  # held to the host's floor: clean
        app("latency", 10, 1, 1.5),
    ]
    html = write_report(make_run(tmp_path, rows)).read_text()
    banner = html.split('<div class="banner" id="host">')[1].split("</div>")[0]
    assert html.index('id="host"') < html.index('id="headline"')
    assert "1 point(s) ran beside other work, up to 72 % of the host&#x27;s CPU" in banner
    assert "within the host&#x27;s own stops (floor up to 36 us)" in banner
    assert banner.count("Remedy: ") == 2 and "launcher: {pin: true}" in banner


def test_provenance_keeps_the_experiment_file_as_a_block(tmp_path: Path) -> None:
    run = make_run(tmp_path, [app("baseline", None, 0, 1.0), app("latency", 10, 0, 2.0)])
    doc = json.loads((run / RUN_FILE).read_text())
    doc["experiment_yaml"] = "version: 1\nname: unit\nrepeats: 3\n"
    (run / RUN_FILE).write_text(json.dumps(doc))
    prov = write_report(run).read_text().split('<pre class="yaml provenance">')[1]
    assert "experiment_yaml: |\n  version: 1\n  name: unit\n  repeats: 3\n" in prov


def test_a_slurm_points_nodes_cpu_stands_beside_its_other_work(tmp_path: Path) -> None:
    run = make_run(tmp_path, [app("baseline", None, 0, 1.0), app("latency", 10, 0, 2.0)])
    doc = json.loads((run / RUN_FILE).read_text())
    nodes = {"n1": 0.42, "n0": 0.9}
    doc["provenance"]["slurm"] = {
        "job_id": "7",
        "points": {"app/latency=10/r0": {"nodes_cpu": nodes}},
    }
    (run / RUN_FILE).write_text(json.dumps(doc))
    html = write_report(run).read_text()
    assert '<td class="num">2 %; nodes busy n0 90 %, n1 42 %</td>' in html
    assert "nodes busy n0" not in html.split("app/baseline/r0")[1].split("</tr>")[0]

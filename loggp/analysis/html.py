"""index.html: one self-contained page (figures embedded as base64 PNG, no external files
needed to view it) that leads with the answer: for a run of shim smpi that its points were
simulated, and on which stack; a banner when the host could not emulate reliably (with the
remedy), a headline per workload (the knob it is most sensitive to and the slowdown at its
worst setting with its interval), the figures side by side, then the summary, the findings
and the tables, and the run's provenance last, as YAML.

"Other work" is the same figure everywhere: the share of the host's CPU time during a point
that the run's own processes did not spend (`host_other_cpu`, loggp/metrics/node.py).
Every value that comes from the run directory is HTML-escaped.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

import yaml

from loggp.analysis.figures import DPI, FIGSIZE, FigureFiles
from loggp.analysis.findings import NOT_MEASURED, assess, judged_baseline
from loggp.analysis.headline import Headline, Worst, headlines, host_trouble
from loggp.analysis.kap import assess_kap, kap_means
from loggp.analysis.knobs import knob_info
from loggp.analysis.model import FIT_RULE, Models
from loggp.analysis.monotone import inversions
from loggp.analysis.overlap import COMPUTE_METRIC, IO_METRIC, TIME_METRIC, OverlapRow, overlap
from loggp.analysis.pairs import FIGSIZE as PAIR_FIGSIZE
from loggp.analysis.slowdown import STAT_METHOD, Analysis, CurvePoint, KnobSummary, Stat
from loggp.analysis.store import Run
from loggp.metrics.hostnoise import HostNoise
from loggp.results.judge import OTHER_CPU_LIMIT, bound_rule
from loggp.results.reader import StoredPoint

# The mark of a table cell or point that holds degraded repeats.
DEGRADED_MARK = "⚠"
# The mark of a cell or point with repeats left out of its slowdown (loggp/analysis/outliers.py).
OUTLIER_MARK = "⊘"
OUTLIER_RULE = (
    "outlier: a repeat further than 3.5 robust deviations (1.4826·MAD, at least 5 % of the "
    "median) from the median of its point's clean repeats, degraded itself unless its point "
    "has 3 repeats or more, and never more than half of them; kept in the tables, marked "
    f"{OUTLIER_MARK}, and left out of the slowdown"
)
_DELAY = "(the largest of the point’s Δo_s, Δo_r, Δg, ΔL and mean ΔG per message)"
DEGRADED_RULE = (
    "degraded: measured, but its own evidence says it may not measure its knobs — other "
    f"work took more than {100 * OTHER_CPU_LIMIT:.0f} % of the host's CPU during it, or its "
    f"p99 release lateness was above {bound_rule(_DELAY)} and above the host's own floor "
    "measured beside it, or the shim released an item early; kept on the curves unless an "
    f"outlier, and marked {DEGRADED_MARK}"
)
OTHER_WORK = "other work"  # the column and cell label of host_other_cpu
NODES_BUSY = "nodes busy"  # beside it, a Slurm point's nodes' CPU

# Provenance keys shown first, in this order; the rest follow alphabetically.
PROVENANCE_ORDER = (
    "name",
    "state",
    "source",
    "time",
    "host",
    "platform",
    "cpu",
    "cpu_model",
    "cpus",
    "git_revision",
    "git_dirty",
    "loggp",
    "python",
    "libfabric",
    "openmpi",
    "dpdk",
)

CSS = """
body { font-family: sans-serif; margin: 1em auto; max-width: 80em; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; margin: 0.3em 0; } h2 { font-size: 1.25em; margin-top: 2em; }
h3 { font-size: 1.05em; }
.banner { border: 2px solid #c60; background: #fff4e5; padding: 0.4em 0.8em; margin: 0.5em 0; }
.banner p, .simulated p { margin: 0.2em 0; }
.simulated { border: 2px solid #36c; background: #eef3ff; padding: 0.4em 0.8em; margin: 0.5em 0; }
table.headline { font-size: 1em; margin: 0.3em 0; }
table.headline td.answer { font-weight: bold; }
.figures { display: grid; grid-template-columns: repeat(auto-fit, minmax(34em, 1fr));
  gap: 0.5em 1em; }
.figures figure { margin: 0; }
.figures figcaption { color: #555; font-size: 0.85em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #eee; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.none { color: #999; }
.n, .cpu { color: #666; font-size: 0.85em; }
.note { color: #555; }
.bad { color: #a00; }
pre { margin: 0; white-space: pre-wrap; font-size: 0.85em; max-width: 50em; }
pre.yaml { white-space: pre; background: #f6f6f6; padding: 0.5em; max-width: none;
  overflow-x: auto; }
img { max-width: 100%; height: auto; }
"""


def e(value: Any) -> str:
    """HTML-escaped text of any value."""
    return escape("" if value is None else str(value), quote=True)


def fmt(v: float | None, digits: int = 3) -> str:
    """A number with about `digits` significant digits, never in exponent form."""
    if v is None or not math.isfinite(v):
        return "–"
    if v == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(v))))
    return f"{v:.{decimals}f}"


def fmt_stat(s: Stat) -> str:
    text = fmt(s.median)
    if s.low is not None and s.high is not None:
        text += f" [{fmt(s.low)}, {fmt(s.high)}]"
    return text


def fmt_cpu(v: float | None) -> str:
    return "–" if v is None else f"{100.0 * v:.0f} %"


@dataclass(frozen=True)
class Page:
    run: Run
    analysis: Analysis
    models: Models
    figures: Sequence[FigureFiles]
    pair_figures: Sequence[Path] = ()  # PNGs of loggp/analysis/pairs.py, beneath a network
    delay_figures: Sequence[Path] = ()  # PNGs of loggp/analysis/delays.py, with a distribution


def render(page: Page) -> str:
    name = page.run.info.name + (" (simulated)" if page.run.simulated else "")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>loggp report: {e(name)}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>loggp report: {e(name)}</h1>",
        _simulated(page),
        _banner(page),
        _headline(page),
        _figures(page),
        _pairs(page),
        _delays(page),
        _summary(page),
        _findings(page),
        _kap(page),
        _overlap(page),
        _baselines(page),
    ]
    parts += [_knob_section(page, summary) for summary in page.analysis.knobs]
    parts += [
        _grid(page),
        _excluded(page),
        _degraded(page),
        _outliers(page),
        _all_points(page),
        _provenance(page),
        _experiment(page),
        _definitions(),
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def write_html(page: Page, path: Path) -> Path:
    path.write_text(render(page), encoding="utf-8")
    return path


# --- sections ---------------------------------------------------------------------------


def _banner(page: Page) -> str:
    """What the host did to the points, with the remedy (loggp/analysis/headline.py)."""
    trouble = host_trouble(page.run.points)
    if not trouble:
        return ""
    lines = "".join(f"<p><b>{e(t.what)}.</b> Remedy: {e(t.remedy)}.</p>" for t in trouble)
    return (
        '<div class="banner" id="host"><p><b>This host could not emulate every point '
        "reliably.</b></p>"
        f'{lines}<p class="note">The points are marked below '
        '(<a href="#degraded">degraded</a>, <a href="#outliers">outliers</a>).</p></div>'
    )


def _simulated(page: Page) -> str:
    """That the points were simulated, not emulated, and on which stack (run.json's
    provenance.smpi, loggp/run/smpi.py); empty for an emulated run."""
    n_sim, n = len(page.run.simulated), len(page.run.points)
    if not n_sim:
        return ""
    smpi = page.run.info.provenance.get("smpi")
    if isinstance(smpi, dict) and isinstance(smpi.get("stack"), dict):
        st = smpi["stack"]
        stack = (
            f"{e(st.get('provider'))}: o_s {e(fmt(st.get('o_s_us')))} µs, o_r "
            f"{e(fmt(st.get('o_r_us')))} µs, L {e(fmt(st.get('L_us')))} µs (measured "
            f"{e(fmt(smpi.get('measured_L_us')))} µs), G {e(fmt(st.get('G_ns_per_B')))} ns/B, "
            f"calibration {e(smpi.get('calibration'))} (kept as {e(smpi.get('file'))})"
        )
    else:
        stack = "not recorded (run.json has no provenance.smpi)"
    return (
        '<div class="simulated" id="simulated"><p><b>Simulated, not emulated:</b> '
        f"{n_sim} of {n} point(s) ran in SimGrid's SMPI (<code>shim: smpi</code>), on a "
        "platform of the stack's calibrated o, L and G plus each point's knobs; their "
        "curves are dash-dotted with hollow markers.</p>"
        f"<p>Stack: {stack}.</p>"
        '<p class="note">Each point\'s platform, its knobs added, is platform.json in its '
        'directory; the calibration is in the <a href="#provenance">provenance</a>.</p></div>'
    )


def _worst_text(w: Worst) -> str:
    cp = w.point
    text = f"×{fmt_stat(cp.stat)} at {w.at()}"
    if cp.stat.low is None:
        text += f" (n={cp.stat.n}, no interval below 6 repeats)"
    else:
        text += f" (n={cp.stat.n})"
    return text


def _headline_row(h: Headline) -> str:
    top = h.top
    if top is None:
        return f'<tr><th>{e(h.workload)}</th><td class="note" colspan="3">{e(h.why_none)}</td></tr>'
    marks = _degraded_mark(top.point.n_degraded) + _outlier_mark(len(top.point.outliers))
    others = "; ".join(f"{w.knob} ×{fmt(w.point.stat.median)} at {w.at()}" for w in h.knobs[1:])
    return (
        f"<tr><th>{e(h.workload)}</th><td>{e(top.knob)}</td>"
        f'<td class="answer">{e(_worst_text(top))}{marks}</td>'
        f"<td>{e(others) or '–'}</td></tr>"
    )


def _headline(page: Page) -> str:
    rows = "".join(_headline_row(h) for h in headlines(page.analysis))
    return (
        '<table class="headline" id="headline"><tr><th>workload</th>'
        "<th>most sensitive to</th><th>slowdown at the worst setting swept "
        "[≥95 % interval]</th><th>the other knobs, at theirs</th></tr>"
        f"{rows}</table>"
    )


def _figures(page: Page) -> str:
    if not page.figures:
        return ""
    figs = "".join(figure_tag(f, f"knob-{f.knob}") for f in page.figures)
    return f'<div class="figures">{figs}</div>'


def _embedded(pngs: Sequence[Path]) -> str:
    """Figures of PAIR_FIGSIZE embedded, each with links to its PNG and SVG."""
    figs = []
    for png in pngs:
        data = base64.b64encode(png.read_bytes()).decode("ascii")
        svg = png.with_suffix(".svg").name
        figs.append(
            f'<figure><img src="data:image/png;base64,{data}" alt="{e(png.stem)}" '
            f'width="{round(PAIR_FIGSIZE[0] * DPI)}" '
            f'height="{round(PAIR_FIGSIZE[1] * DPI)}">'
            f'<figcaption>files: <a href="{e(png.name)}">{e(png.name)}</a>, '
            f'<a href="{e(svg)}">{e(svg)}</a></figcaption></figure>'
        )
    return f'<div class="figures">{"".join(figs)}</div>'


def _pairs(page: Page) -> str:
    """The network drawn (loggp/analysis/netfig.py), then the heatmaps of who sent to whom
    and what the network added, one per workload run beneath it (loggp/analysis/pairs.py
    says which point each shows)."""
    if not page.pair_figures:
        return ""
    return (
        '<h2 id="pairs">Pairs of ranks</h2><p>The experiment\'s network: its nodes, what '
        "each level or link adds and where the ranks run.  Then messages from each rank "
        "(row) to each rank (column) and the latency the network added to each, as the "
        "shims counted them, at the point of each workload where the network added the "
        "most.</p>" + _embedded(page.pair_figures)
    )


def _delays(page: Page) -> str:
    """The delays the shims drew against the configured distribution, one point per
    workload (loggp/analysis/delays.py says which)."""
    if not page.delay_figures:
        return ""
    return (
        '<h2 id="delays">Drawn delays</h2><p>The ΔL each message got, as the shims counted '
        "it, against the distribution the run named, at the point of each workload with "
        "the most drawn delays; the Kolmogorov-Smirnov distance between the two at the "
        "histogram's bucket edges is the shims' own error.</p>" + _embedded(page.delay_figures)
    )


def _summary(page: Page) -> str:
    pts = page.run.points
    n_ok = sum(p.ok for p in pts)
    n_degraded = sum(p.degraded for p in pts)
    a = page.analysis
    degraded = (
        f'<span class="bad">{n_degraded} degraded {DEGRADED_MARK}</span> '
        '(<a href="#degraded">below</a>)'
        if n_degraded
        else "0 degraded"
    )
    items = [
        f"{len(pts)} point(s), {n_ok} ok, {degraded}, {len(pts) - n_ok - n_degraded} not ok; "
        f"{len(a.workloads)} workload(s): {e(', '.join(a.workloads))}."
    ]
    for wl, why in a.no_baseline.items():
        items.append(f'<span class="bad">Workload {e(wl)}: no baseline</span> ({e(why)}).')
    for k in a.knobs:
        why = k.why_no_figure
        if why is not None:
            items.append(f'<span class="bad">Knob {e(k.knob)}: no figure</span> ({e(why)}).')
    for inv in inversions(a):
        items.append(f'<span class="bad">{e(inv.text())}</span>.')
    if a.outliers:
        items.append(
            f'<span class="bad">{len(a.outliers)} outlier repeat(s) {OUTLIER_MARK} left out of '
            'their point\'s slowdown</span> (<a href="#outliers">below</a>).'
        )
    items.extend(_host_noise(page))
    if "msgs_check" in page.run.columns:
        checks = [p.msgs_check for p in pts if p.msgs_check is not None]
        if checks:
            bad = sum(not c.startswith("match") for c in checks)
            cls = ' class="bad"' if bad else ""
            items.append(
                f"<span{cls}>Message-count check: {len(checks) - bad} match, "
                f"{bad} mismatch</span> (msgs reported by the workloads against the shim's "
                "counters)."
            )
    lis = "".join(f"<li>{i}</li>" for i in items)
    return f"<h2>Summary</h2><ul>{lis}</ul>"


def _host_noise(page: Page) -> list[str]:
    """A line per measurement of the host's own stalls (loggp/metrics/hostnoise.py)."""
    items = []
    for d in page.run.info.host_noise:
        noise = HostNoise.of(d)
        at = e(str(d.get("at", "")))
        if noise is None:
            items.append(f"Host noise at {at}: not measured.")
            continue
        items.append(
            f"Host noise at {at}: {e(noise.text())} (loggp-hostnoise before the points; each "
            "point whose lateness crossed its bound is held to the floor measured beside it)."
        )
    return items


class _YamlDumper(yaml.SafeDumper):
    """Multi-line strings (the experiment file, a command's output) as YAML blocks."""


def _text_block(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_YamlDumper.add_representer(str, _text_block)


def as_yaml(doc: Any) -> str:
    return yaml.dump(doc, Dumper=_YamlDumper, sort_keys=False, allow_unicode=True, width=100)


def _provenance(page: Page) -> str:
    info = page.run.info
    prov: dict[str, Any] = {"name": info.name, **info.provenance}
    rank = {k: i for i, k in enumerate(PROVENANCE_ORDER)}
    ordered = dict(sorted(prov.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))
    return (
        f'<h2 id="provenance">Provenance</h2><p class="note">From {e(info.path)}.</p>'
        f'<pre class="yaml provenance">{e(as_yaml(ordered))}</pre>'
    )


def _baselines(page: Page) -> str:
    a = page.analysis
    rows = []
    for wl in a.workloads:
        base = a.baselines.get(wl)
        if base is None:
            why = a.no_baseline.get(wl, "")
            rows.append(
                f'<tr><th>{e(wl)}</th><td class="bad" colspan="3">no baseline ({e(why)})</td></tr>'
            )
            continue
        s = base.stat
        kind = "rate, higher is better" if base.higher_is_better else "time"
        rows.append(
            f"<tr><th>{e(wl)}</th><td>{e(base.metric)} ({kind})</td>"
            f'<td class="num">{e(fmt_stat(s))}{_outlier_mark(len(base.outliers))}</td>'
            f'<td class="num">{s.n}</td></tr>'
        )
    return (
        "<h2>Baselines</h2>"
        '<table class="baselines"><tr><th>workload</th><th>metric</th>'
        f"<th>median [≥95% interval]</th><th>n</th></tr>{''.join(rows)}</table>"
    )


def figure_tag(fig: FigureFiles, table: str, files_dir: str = "") -> str:
    """The figure's PNG embedded, captioned with links to its table (an anchor of the page)
    and to its files (in files_dir, relative to the page)."""
    data = base64.b64encode(fig.png.read_bytes()).decode("ascii")
    alt = f"slowdown against {fig.knob}"
    png, svg = files_dir + fig.png.name, files_dir + fig.svg.name
    return (
        f'<figure><img src="data:image/png;base64,{data}" alt="{e(alt)}" '
        f'width="{round(FIGSIZE[0] * DPI)}" height="{round(FIGSIZE[1] * DPI)}">'
        f'<figcaption><a href="#{e(table)}">table</a>; files: '
        f'<a href="{e(png)}">{e(fig.png.name)}</a>, '
        f'<a href="{e(svg)}">{e(fig.svg.name)}</a></figcaption></figure>'
    )


def _other_mean(page: Page, ids: Iterable[str]) -> float | None:
    """The mean other work over the points (those that measured it)."""
    by_id = {p.point_id: p for p in page.run.points}
    known = [v for i in ids if (v := by_id[i].host_other_cpu) is not None]
    return sum(known) / len(known) if known else None


def _other_cell(page: Page, ids: Iterable[str]) -> str:
    mean = _other_mean(page, ids)
    if mean is None:
        return ""
    cls = "bad" if mean > OTHER_CPU_LIMIT else "cpu"
    return f'<br><span class="{cls}">{OTHER_WORK} {e(fmt_cpu(mean))}</span>'


def _cell(page: Page, cp: CurvePoint | None) -> str:
    if cp is None:
        return '<td class="num none">–</td>'
    text = f'{e(fmt_stat(cp.stat))} <span class="n">n={cp.stat.n}</span>'
    text += _degraded_mark(cp.n_degraded) + _outlier_mark(len(cp.outliers))
    text += _other_cell(page, (*cp.point_ids, *cp.outliers))
    return f'<td class="num">{text}</td>'


def _degraded_mark(n: int) -> str:
    return f'<br><span class="bad">{DEGRADED_MARK} {n} degraded</span>' if n else ""


def _outlier_mark(n: int) -> str:
    return (
        f'<br><a class="bad" href="#outliers">{OUTLIER_MARK} {n} outlier(s) left out</a>'
        if n
        else ""
    )


def _knob_section(page: Page, summary: KnobSummary) -> str:
    info = knob_info(summary.knob)
    out = [
        f'<h2 id="knob-{e(summary.knob)}">{e(info.title)}</h2>',
        f'<p class="note">Knob <code>{e(summary.knob)}</code>, values in {e(info.unit)}; '
        f"{summary.n_points} point(s), {summary.n_ok} ok, {summary.n_degraded} degraded.</p>",
    ]
    why = summary.why_no_figure
    if why is not None:
        out.append(f'<p class="bad">No figure: {e(why)}.</p>')
    xs = sorted({cp.x for c in summary.curves for cp in c.points}, reverse=info.decreasing_x)
    if summary.curves or summary.no_baseline:
        base_xs = {cp.x for c in summary.curves for cp in c.points if cp.baseline}
        head = "".join(
            f"<th>{e(f'{x:g}')} {e(info.unit)}{' (baseline)' if x in base_xs else ''}</th>"
            for x in xs
        )
        rows = []
        for c in summary.curves:
            at = {cp.x: cp for cp in c.points}
            cells = "".join(_cell(page, at.get(x)) for x in xs)
            rows.append(
                f"<tr><th>{e(c.workload)}</th><td>{e(c.metric)}</td>{cells}"
                f"<td>{_model_cell(page, summary.knob, c.workload)}</td></tr>"
            )
        for wl in summary.no_baseline:
            why_wl = page.analysis.no_baseline.get(wl, "")
            rows.append(
                f'<tr><th>{e(wl)}</th><td></td><td class="bad" colspan="{len(xs) + 1}">'
                f"no baseline ({e(why_wl)})</td></tr>"
            )
        out.append(
            f'<table class="slowdown"><tr><th>workload</th><th>metric</th>{head}'
            f"<th>model</th></tr>{''.join(rows)}</table>"
        )
        out.append(
            f'<p class="note">Slowdown at each {e(info.symbol)}: median over repeats '
            f"[{STAT_METHOD}]; n = repeats. The model line is drawn where it fits "
            f"({FIT_RULE}); its fit is shown either way.</p>"
        )
    n_bad = summary.n_points - summary.n_ok - summary.n_degraded
    if n_bad:
        out.append(f'<p class="note">{n_bad} of {summary.n_points} point(s) not ok (below).</p>')
    return "\n".join(out)


def _model_cell(page: Page, knob: str, workload: str) -> str:
    model = page.models.get(knob, workload)
    if model is None:
        why = page.models.skipped.get((knob, workload), "no model")
        return f'<span class="note">{e(why)}</span>'
    r2 = "R² –" if model.r2 is None else f"R² = {model.r2:.3f}"
    r2 += f", max error ×{model.max_error:.2f}"
    if not model.fits:
        r2 += " — does not fit, not drawn"
    count = {
        "critical_path": "m",
        "critical_bytes": "B",
        "overhead_count": "S+R",
        "send_count": "S",
        "recv_count": "R",
    }[model.count_name]
    return (
        f"{e(model.equation)}<br>{count} = {e(fmt(model.count, 6))}, "
        f"T0 = {e(fmt(model.t0_s, 4))} s<br>{e(r2)}"
    )


def _findings(page: Page) -> str:
    """The Berkeley study's findings against this run (loggp/analysis/findings.py)."""
    found = assess(page.analysis, page.models)
    head = "<h2>The Berkeley study's findings, measured here</h2>"
    if all(f.verdict == NOT_MEASURED for f in found):
        return (
            f'{head}<p class="note">None of the study\'s findings can be assessed from '
            "this run's workloads and knobs (the sensitivity suite can).</p>"
        )
    rows = "".join(
        f"<tr><td>{e(f.claim)}</td><td>{e(f.verdict)}</td><td>{e(f.evidence)}</td></tr>"
        for f in found
    )
    return (
        f'{head}<p class="note">Judged from {e(judged_baseline(page.analysis))}.</p>'
        f"<table><tr><th>finding (Martin et al., ISCA'97)</th><th>here</th>"
        f"<th>evidence from this run</th></tr>{rows}</table>"
    )


def _kap(page: Page) -> str:
    """KAP's phases and the KVS study's claims (loggp/analysis/kap.py); empty without KAP."""
    found = assess_kap(page.run.points)
    if found is None:
        return ""
    rows = "".join(
        f"<tr><td>{e(f.claim)}</td><td>{e(f.verdict)}</td><td>{e(f.evidence)}</td></tr>"
        for f in found
    )
    data = "".join(
        f"<tr><td class=num>{k.setting.ranks}</td><td class=num>{k.setting.producers}</td>"
        f"<td class=num>{k.setting.consumers}</td><td class=num>{k.setting.value_size}</td>"
        f"<td class=num>{k.setting.puts}</td><td class=num>{k.setting.access}</td>"
        f"<td>{'yes' if k.setting.redundant else 'no'}</td>"
        f"<td class=num>{k.setting.dirs}</td><td class=num>{k.sync_s * 1e3:.3f}</td>"
        f"<td class=num>{k.consumer_s * 1e3:.3f}</td><td class=num>{k.n}</td></tr>"
        for k in kap_means(page.run.points)
    )
    return (
        "<h2>KVS (KAP): the study's claims, measured here</h2>"
        "<table><tr><th>claim (Ahn et al. [KVS])</th><th>here</th>"
        f"<th>evidence from this run</th></tr>{rows}</table>"
        '<p class="note">Maximum over the processes of each phase, at the baseline '
        "(no knob added), mean over repeats.</p>"
        "<table><tr><th>ranks</th><th>producers</th><th>consumers</th><th>value B</th>"
        "<th>puts</th><th>access</th><th>redundant</th><th>dirs</th><th>sync max ms</th>"
        f"<th>consumer max ms</th><th>n</th></tr>{data}</table>"
    )


def _stat_cell(s: Stat | None, why: str | None = None, marks: str = "") -> str:
    if s is None:
        return f'<td class="note">{e(why or "–")}</td>'
    return f'<td class="num">{e(fmt_stat(s))} <span class="n">n={s.n}</span>{marks}</td>'


def _overlap_row(r: OverlapRow) -> str:
    return (
        f"<tr><th>{e(r.workload)}</th><td>{e(r.unhinted)}</td><td>{e(r.setting.label)}</td>"
        f"{_stat_cell(r.io_off, r.why)}{_stat_cell(r.io)}"
        f"{_stat_cell(r.bound, r.why, _degraded_mark(r.n_degraded))}"
        f"{_stat_cell(r.gain, r.why)}"
        f'<td class="num">{e(fmt(r.best_gain))}</td></tr>'
    )


def _overlap(page: Page) -> str:
    """Prefetching against the unhinted run (loggp/analysis/overlap.py); empty without pairs."""
    rows = overlap(page.run.points, page.analysis)
    if not rows:
        return ""
    return (
        '<h2 id="overlap">Prefetching: the overlap bound</h2>'
        '<table class="overlap"><tr><th>prefetching</th><th>against</th><th>setting</th>'
        f"<th>I/O unhinted ({IO_METRIC})</th><th>I/O prefetching ({IO_METRIC})</th>"
        "<th>overlap bound: I/O hidden ÷ I/O</th><th>run-time gain</th>"
        f"<th>most an overlap can gain</th></tr>{''.join(_overlap_row(r) for r in rows)}</table>"
        f'<p class="note">Per repeat of the prefetching workload, against the medians of the '
        f"unhinted one at the same setting: overlap bound = (I/O<sub>off</sub> − I/O) / "
        f"I/O<sub>off</sub> of {IO_METRIC}, the time waited in reads; run-time gain = 1 − "
        f"{TIME_METRIC} / {TIME_METRIC}<sub>off</sub>; median over repeats [{e(STAT_METHOD)}]. "
        f"Most an overlap can gain: min({COMPUTE_METRIC}, {IO_METRIC}) / {TIME_METRIC} of the "
        "unhinted run. Workloads pair by name, &lt;mode&gt;-&lt;configuration&gt; against "
        "off-&lt;configuration&gt;, when their results report io_s and time_s.</p>"
    )


def _grid(page: Page) -> str:
    cells = page.analysis.grid
    if not cells:
        return ""
    rows = "".join(
        f"<tr><th>{e(c.workload)}</th>"
        f"<td>{e(', '.join(f'{k}={v:g}' for k, v in c.knob_values.items()))}</td>"
        f'<td class="num">{e(fmt_stat(c.stat))} <span class="n">n={c.stat.n}</span>'
        f"{_degraded_mark(c.n_degraded)}{_outlier_mark(len(c.outliers))}"
        f"{_other_cell(page, (*c.point_ids, *c.outliers))}</td></tr>"
        for c in cells
    )
    return (
        "<h2>Grid points</h2>"
        '<table class="grid"><tr><th>workload</th><th>knobs (report units)</th>'
        f"<th>slowdown</th></tr>{rows}</table>"
    )


def _point_cols(page: Page) -> tuple[bool, bool]:
    """Whether the point tables show msgs_check and other work (when any point has it)."""
    has_check = "msgs_check" in page.run.columns and any(
        p.msgs_check is not None for p in page.run.points
    )
    return has_check, any(p.host_other_cpu is not None for p in page.run.points)


def _excluded(page: Page) -> str:
    excluded = page.analysis.excluded
    if not excluded:
        return '<h2>Failed and invalid points</h2><p class="note">None.</p>'
    has_check, has_cpu = _point_cols(page)
    head = (
        "<tr><th>point</th><th>workload</th><th>knob</th><th>Δ</th><th>repeat</th>"
        "<th>status</th><th>reason</th>"
        + ("<th>msgs_check</th>" if has_check else "")
        + (f"<th>{OTHER_WORK}</th>" if has_cpu else "")
        + "<th>stderr (tail)</th></tr>"
    )
    rows = []
    for x in excluded:
        p = x.point
        rows.append(
            f"<tr><td>{e(p.point_id)}</td><td>{e(p.workload)}</td><td>{e(p.sweep_knob)}</td>"
            f'<td class="num">{e(_delta(p))}</td><td class="num">{p.repeat}</td>'
            f'<td class="bad">{e(p.status)}</td><td>{e(x.reason)}</td>'
            + (f"<td>{e(p.msgs_check or '')}</td>" if has_check else "")
            + (f'<td class="num">{e(_point_cpu(page, p))}</td>' if has_cpu else "")
            + f"<td><pre>{e(_tail(p.stderr_tail))}</pre></td></tr>"
        )
    return (
        "<h2>Failed and invalid points</h2>"
        '<p class="note">Not on any curve. Workloads without a baseline are listed in the '
        "summary and in their knob's table.</p>"
        f'<table class="excluded">{head}{"".join(rows)}</table>'
    )


def _status_cell(page: Page, p: StoredPoint) -> str:
    mark = f" {OUTLIER_MARK} outlier" if page.analysis.outlier(p.point_id) else ""
    if p.degraded:
        return f'<td class="bad">{e(p.status)} {DEGRADED_MARK}{mark}</td>'
    return f'<td class="bad">{e(p.status)}{mark}</td>' if mark else f"<td>{e(p.status)}</td>"


def _degraded(page: Page) -> str:
    head = '<h2 id="degraded">Degraded points</h2>'
    pts = [p for p in page.run.points if p.degraded]
    if not pts:
        return f'{head}<p class="note">None.</p>'
    rows = "".join(
        f"<tr><td>{e(p.point_id)}</td><td>{e(p.workload)}</td><td>{e(p.sweep_knob)}</td>"
        f'<td class="num">{e(_delta(p))}</td><td class="num">{p.repeat}</td>'
        f'<td class="num">{e(fmt(p.value, 6))}</td><td>{e(p.degraded_reason)}</td></tr>'
        for p in pts
    )
    return (
        f'{head}<p class="note">{e(DEGRADED_RULE)}.</p>'
        "<table><tr><th>point</th><th>workload</th><th>knob</th><th>Δ</th><th>repeat</th>"
        f"<th>value</th><th>reason</th></tr>{rows}</table>"
    )


def _outliers(page: Page) -> str:
    head = '<h2 id="outliers">Outlier repeats</h2>'
    found = page.analysis.outliers
    if not found:
        return f'{head}<p class="note">None.</p>'
    rows = "".join(
        f"<tr><td>{e(o.point.point_id)}</td><td>{e(o.point.workload)}</td>"
        f'<td>{e(o.point.sweep_knob)}</td><td class="num">{e(_delta(o.point))}</td>'
        f'<td class="num">{o.point.repeat}</td><td class="num">{e(fmt(o.point.value, 6))}</td>'
        f"<td>{e(o.reason)}</td></tr>"
        for o in found
    )
    return (
        f'{head}<p class="note">{e(OUTLIER_RULE)}.</p>'
        '<table class="outliers"><tr><th>point</th><th>workload</th><th>knob</th><th>Δ</th>'
        f"<th>repeat</th><th>value</th><th>why</th></tr>{rows}</table>"
    )


def _all_points(page: Page) -> str:
    has_check, has_cpu = _point_cols(page)
    head = (
        "<tr><th>point</th><th>workload</th><th>knob</th><th>Δ</th><th>repeat</th>"
        "<th>status</th><th>metric</th><th>value</th><th>slowdown</th>"
        + ("<th>msgs_check</th>" if has_check else "")
        + (f"<th>{OTHER_WORK}</th>" if has_cpu else "")
        + "</tr>"
    )
    rows = []
    for p in page.run.points:
        sd = page.analysis.slowdown.get(p.point_id)
        check = p.msgs_check or ""
        check_cls = ' class="bad"' if check and not check.startswith("match") else ""
        rows.append(
            f"<tr><td>{e(p.point_id)}</td><td>{e(p.workload)}</td><td>{e(p.sweep_knob)}</td>"
            f'<td class="num">{e(_delta(p))}</td><td class="num">{p.repeat}</td>'
            f"{_status_cell(page, p)}<td>{e(p.metric)}</td>"
            f'<td class="num">{e(fmt(p.value, 6))}</td><td class="num">{e(fmt(sd, 4))}</td>'
            + (f"<td{check_cls}>{e(check)}</td>" if has_check else "")
            + (f'<td class="num">{e(_point_cpu(page, p))}</td>' if has_cpu else "")
            + "</tr>"
        )
    return (
        f"<h2>All points</h2><details><summary>{len(rows)} point(s); also in "
        '<a href="results.csv">results.csv</a></summary>'
        f'<table class="points">{head}{"".join(rows)}</table></details>'
    )


def _experiment(page: Page) -> str:
    exp = page.run.info.experiment
    if exp is None:
        return ""
    return (
        "<h2>Experiment</h2><details><summary>Resolved experiment from run.json</summary>"
        f'<pre class="yaml">{e(as_yaml(exp))}</pre></details>'
    )


def _definitions() -> str:
    return (
        '<h2>Definitions</h2><ul class="note">'
        "<li>slowdown<sub>i</sub> = value<sub>i</sub> / median(baseline) for times, "
        "median(baseline) / value<sub>i</sub> for rates (higher is better).</li>"
        f"<li>Cells show the median over repeats and, in brackets, the {e(STAT_METHOD)}.</li>"
        "<li>Model: T(Δ) = T0 + count·Δ from the workload's msgs.critical_path (m), "
        "msgs.critical_sends and critical_recvs (S, R; default m) or msgs.critical_bytes "
        "(B); slowdown = T(Δ)/T0; R² and the largest error against the measured medians; "
        f"the line is drawn only where it fits ({e(FIT_RULE)}).</li>"
        f"<li>{e(DEGRADED_RULE)}.</li>"
        f"<li>{e(OUTLIER_RULE)}.</li>"
        f"<li>{OTHER_WORK}: the share of the host's CPU time during a point that the run's own "
        "processes (its ranks, services and Prometheus) did not spend, from the kernel's "
        "counters; for a point in a Slurm allocation, then "
        f"{NODES_BUSY}: each node's busy share of its CPUs, the point's own ranks included "
        "(read from node exporters the run started there).</li>"
        "</ul>"
    )


def _delta(p: StoredPoint) -> str:
    if p.sweep_value is None:
        return ""
    return f"{p.sweep_value:g} {knob_info(p.sweep_knob).unit}"


def _point_cpu(page: Page, p: StoredPoint) -> str:
    """The host's other work and, for a point in a Slurm allocation, how busy each of its
    nodes was (provenance.slurm, loggp/run/slurmnodes.py)."""
    text = fmt_cpu(p.host_other_cpu)
    record = page.run.info.provenance.get("slurm", {}).get("points", {}).get(p.point_id, {})
    nodes = record.get("nodes_cpu") or {}
    if nodes:
        text += f"; {NODES_BUSY} " + ", ".join(
            f"{n} {fmt_cpu(v)}" for n, v in sorted(nodes.items())
        )
    return text


def _tail(text: str | None, limit: int = 600) -> str:
    if not text:
        return ""
    return text if len(text) <= limit else "…" + text[-limit:]

"""The report's first screen, as a browser shows it at 1400×1000: the headline and a figure.

A run shaped like the default suite's (loggp/suites/default.yaml: three workloads, overhead,
latency and bandwidth at two settings each, six repeats; one repeat taken beside other
work, so the host banner is up too) is reported, and the page is opened in a headless
Chromium twice: once to read the layout back (a probe script writes each part's box into
the DOM, which --dump-dom prints), once for a screenshot whose pixels must show the figure
where the layout says it is.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from loggp.analysis.report import write_report
from loggp.analysis.tests.rundata import Row, make_run

pytestmark = pytest.mark.integration

BROWSER = "chromium-headless-shell"
WIDTH, HEIGHT = 1400, 1000
TIMEOUT_S = 60
PROBE = """<script>
window.addEventListener("load", () => {
  const box = (el) => {
    const b = el.getBoundingClientRect();
    return [b.left, b.top, b.width, b.height].map(Math.round);
  };
  document.body.setAttribute("data-layout", JSON.stringify({
    banner: box(document.getElementById("host")),
    headline: box(document.getElementById("headline")),
    figure: box(document.querySelector(".figures img")),
  }));
});
</script></body>"""

# (workload, time at the baseline in s, slowdown at each swept setting)
SHAPE = {
    "pingpong": (0.13, {"overhead": {10: 2.6, 50: 9.0}, "latency": {20: 3.3, 100: 11.6},
                        "bandwidth": {200: 1.0, 50: 1.1}}),
    "exchange": (0.40, {"overhead": {10: 1.1, 50: 1.4}, "latency": {20: 1.1, 100: 1.5},
                        "bandwidth": {200: 2.1, 50: 6.9}}),
    "stencil": (0.30, {"overhead": {10: 1.5, 50: 3.2}, "latency": {20: 1.4, 100: 2.9},
                       "bandwidth": {200: 1.1, 50: 1.3}}),
}  # fmt: skip
REPEATS = 6


def default_like_rows() -> list[Row]:
    rows = []
    for wl, (base, knobs) in SHAPE.items():
        jitter = [1.0, 1.02, 0.98, 1.01, 0.99, 1.03]
        rows += [Row(wl, "baseline", None, r, base * jitter[r]) for r in range(REPEATS)]
        for knob, at in knobs.items():
            for x, slow in at.items():
                rows += [Row(wl, knob, x, r, base * slow * jitter[r]) for r in range(REPEATS)]
    # one repeat beside a compile: degraded by other work, an outlier, the banner up
    rows[1] = Row("pingpong", "baseline", None, 1, 14.8, status="degraded", other_cpu=0.8)
    return rows


def browser(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which(BROWSER)
    if exe is None:
        pytest.skip(f"{BROWSER} not installed (Debian package {BROWSER}, in the Makefile's list)")
    argv = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--window-size={WIDTH},{HEIGHT}", *args]  # fmt: skip
    res = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    assert res.returncode == 0, res.stderr[-2000:]
    return res


def test_the_first_screen_shows_the_headline_and_a_figure(tmp_path: Path) -> None:
    index = write_report(make_run(tmp_path, default_like_rows()))
    probe = index.with_name("probe.html")
    probe.write_text(index.read_text().replace("</body>", PROBE))

    dom = browser("--dump-dom", probe.as_uri()).stdout
    found = re.search(r'data-layout="([^"]*)"', dom)
    assert found, "the probe did not run: no layout in the DOM"
    layout = json.loads(found.group(1).replace("&quot;", '"'))
    _, head_top, head_w, head_h = layout["headline"]
    left, top, width, height = layout["figure"]
    # the banner, then the headline, whole, then a figure wide enough to read, at least
    # two thirds of it on the first screen
    assert layout["banner"][1] < head_top
    assert head_w > 0 and head_top + head_h < HEIGHT, layout
    assert top >= head_top + head_h and width >= 500 and height >= 250, layout
    assert top + 2 * height / 3 <= HEIGHT, layout

    shot = tmp_path / "first.png"
    browser(f"--screenshot={shot}", index.as_uri())
    pixels = imread(shot)[:, :, :3]
    assert pixels.shape[:2] == (HEIGHT, WIDTH)
    seen = pixels[top : min(HEIGHT, top + height), left : left + width]
    # the figure is drawn there: lines in the workloads' colours, not a blank box
    coloured = np.ptp(seen, axis=2) > 0.25
    assert coloured.mean() > 0.002, coloured.mean()
    head = pixels[head_top : head_top + head_h, :]
    assert (head.max(axis=2) < 0.3).mean() > 0.005  # the headline's text

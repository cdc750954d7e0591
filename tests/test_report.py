"""The landscape report: self-contained, one scope, every chart drawn, and what a person sees in a real headless
Chromium (charts, map legend, nothing cut off), as HTML, PDF and PNG."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from ctmirror import Mirror
from ctmirror.read.report import bar_chart, landscape_report

pytestmark = pytest.mark.slow  # renders in a browser

BROWSER = shutil.which("chromium")
needs_browser = pytest.mark.skipif(BROWSER is None, reason="Debian's chromium is not installed (CI installs it)")


def pixel_rows(png: Path) -> tuple[int, int, list[bytes]]:
    """(width, height, the rows' pixel bytes), filters undone: what a viewer shows."""
    data = png.read_bytes()
    width, height = struct.unpack(">II", data[16:24])
    channels = {2: 3, 6: 4}[data[25]]
    idat, position = b"", 8
    while position < len(data):
        length = struct.unpack(">I", data[position:position + 4])[0]
        if data[position + 4:position + 8] == b"IDAT":
            idat += data[position + 8:position + 8 + length]
        position += 12 + length
    raw, stride, rows = zlib.decompress(idat), width * channels, []
    previous = bytearray(stride)
    for r in range(height):
        kind, line = raw[r * (stride + 1)], bytearray(raw[r * (stride + 1) + 1:(r + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, rows


def ink(png: Path) -> float:
    """Share of pixels that are not white, from the PNG's own bytes."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    bit_depth, colour_type = data[24], data[25]
    channels = {2: 3, 6: 4}[colour_type]
    assert bit_depth == 8
    idat, position = b"", 8
    while position < len(data):
        length = struct.unpack(">I", data[position:position + 4])[0]
        kind = data[position + 4:position + 8]
        if kind == b"IDAT":
            idat += data[position + 8:position + 8 + length]
        position += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels + 1
    filtered_rows = [raw[r * stride:(r + 1) * stride] for r in range(height)]
    # Count rows holding anything but white; unfiltered rows (filter 0) are checked byte by byte.
    coloured = sum(1 for row in filtered_rows if row[0] == 0 and any(b < 240 for b in row[1:]))
    changing = sum(1 for row in filtered_rows if row[0] != 0 and any(row[1:]))
    return (coloured + changing) / height


def test_report_is_self_contained_with_every_chart(sample_warehouse):
    with Mirror(sample_warehouse) as m:
        page = landscape_report(m, "erectile dysfunction")
        landscape = m.get_landscape("erectile dysfunction")
        [scope] = m.stats("stats_completion", condition="erectile dysfunction")
    assert page.count("<svg") == 6 and page.count("<rect") > 30 and "<circle" in page
    assert not re.search(r"(src|href)=\"https?://", page)  # nothing to fetch
    assert f"Scope: the {scope['trials']:,} trials whose conditions match" in page
    assert f"the {landscape.total_trial_count:,} of them in Early Phase 1 to Phase 4" in page
    assert landscape.competitors[0].drug_name in page and "Why the" in page
    assert "<th class=num>Total enrollment</th>" in page and "total_enrollment" not in page


def test_numbers_formatted_statuses_in_words_and_long_labels_wrapped(sample_warehouse):
    with Mirror(sample_warehouse) as m:
        page = landscape_report(m, "breast cancer")
    assert '<td class="num">10,300</td>' in page  # AstraZeneca's three Phase 3 trials of anastrozole
    assert "<td>Recruiting</td>" in page and "RECRUITING" not in page
    chart = bar_chart("Top lead sponsors", [("Post Graduate Institute of Medical Education and Research", 2),
                                            ("A", 1)])
    labels = "".join(re.findall(r'<text class="label".*?</text>', chart))
    lines = re.findall(r"<tspan[^>]*>([^<]*)</tspan>", labels)
    assert lines[:2] == ["Post Graduate Institute of", "Medical Education and…"] and all(len(x) <= 28 for x in lines)
    assert "<title>Post Graduate Institute of Medical Education and Research</title>" in chart


# Run in the page by the browser: what a person sees, measured after layout.
_CHECKS = """<script>
const page = document.documentElement, out = {};
const charts = [...document.querySelectorAll("svg.chart")];
out.visible_charts = charts.filter(s => {
  const r = s.getBoundingClientRect();
  return r.width > 100 && r.height > 50;
}).length;
out.clipped_texts = [];
for (const svg of charts) {
  const box = svg.viewBox.baseVal;
  for (const t of svg.querySelectorAll("text")) {
    const b = t.getBBox();
    const inside = b.x >= box.x - 0.5 && b.y >= box.y - 0.5 && b.x + b.width <= box.x + box.width + 0.5
                   && b.y + b.height <= box.y + box.height + 0.5;
    if (!inside) out.clipped_texts.push(t.textContent);
  }
}
out.overflowing_cells = [...document.querySelectorAll("td, th")]
  .filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent);
out.page_overflows = page.scrollWidth > window.innerWidth;
const map = document.querySelector("svg.map");
out.basemap_outlines = map ? map.querySelectorAll(".basemap path").length : 0;
const legend = map && map.querySelector(".legend");
out.legend = legend ? legend.textContent : null;
out.legend_inside = legend ? (() => {
  const b = legend.getBBox(), v = map.viewBox.baseVal;
  return b.x >= 0 && b.y >= 0 && b.x + b.width <= v.width && b.y + b.height <= v.height;
})() : false;
const scope = document.getElementById("scope");
out.scope_top = scope.getBoundingClientRect().top;
out.scope = scope.textContent;
const checks = JSON.stringify(out).replace(/</g, "\\u003c");
document.body.insertAdjacentHTML("beforeend", "<pre id=checks>" + checks + "</pre>");
</script>"""


def seen_in_chromium(report: Path, tmp_path: Path) -> dict:
    """The report laid out by headless Chromium 1280 px wide, measured by _CHECKS."""
    checked = tmp_path / "checked.html"
    checked.write_text(report.read_text(encoding="utf-8").replace("</body>", _CHECKS + "</body>"), encoding="utf-8")
    dom = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update", "--disable-sync",
                          f"--user-data-dir={tmp_path}/profile-dom", "--window-size=1280,1600", "--dump-dom",
                          checked.as_uri()], check=True, capture_output=True, text=True, timeout=120).stdout
    return json.loads(html.unescape(re.search(r"<pre id=\"checks\">(.*?)</pre>", dom, re.S).group(1)))


@needs_browser
def test_report_as_a_person_sees_it_in_chromium(tmp_path, sample_warehouse):
    """'breast cancer' on the sample, 1280 px wide: the scope line at the top, six charts, a map with country
    outlines and a legend, no label or cell cut off, nothing wider than the window; and a screenshot with ink."""
    out = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "ctmirror.cli", "-w", str(sample_warehouse), "report", "landscape",
                           "breast cancer", "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    seen = seen_in_chromium(out, tmp_path)
    assert seen["scope_top"] < 200 and "Scope: the 241 trials whose conditions match" in seen["scope"]
    assert "183 of them are partial records" in seen["scope"]
    assert seen["visible_charts"] == 6
    assert seen["basemap_outlines"] > 150 and seen["legend_inside"]
    assert "Trials with a site there" in seen["legend"] and "1 trial" in seen["legend"]
    assert seen["clipped_texts"] == [] and seen["overflowing_cells"] == [] and not seen["page_overflows"]
    shot = tmp_path / "shot.png"
    subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={tmp_path}/profile", "--window-size=1280,1600", f"--screenshot={shot}",
                    out.as_uri()], check=True, capture_output=True, timeout=120)
    assert ink(shot) > 0.2


@needs_browser
def test_report_as_pdf(tmp_path, sample_warehouse):
    out = tmp_path / "report.pdf"
    done = subprocess.run([sys.executable, "-m", "ctmirror.cli", "-w", str(sample_warehouse), "report", "landscape",
                           "erectile dysfunction", "--as-of", "2015-01-01", "--format", "pdf", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    data = out.read_bytes()
    assert data[:5] == b"%PDF-" and len(re.findall(rb"/Type\s*/Page\b", data)) >= 2


def test_pdf_without_chromium_says_what_to_install(tmp_path, sample_warehouse):
    done = subprocess.run([sys.executable, "-m", "ctmirror.cli", "-w", str(sample_warehouse), "report", "landscape",
                           "asthma", "--format", "pdf", "--out", str(tmp_path / "r.pdf")],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PATH": str(tmp_path)})
    assert done.returncode != 0 and not (tmp_path / "r.pdf").exists()
    assert "PDF reports need a headless Chromium" in done.stderr and "apt-get install chromium" in done.stderr


@needs_browser
def test_charts_as_png(tmp_path, sample_warehouse):
    done = subprocess.run([sys.executable, "-m", "ctmirror.cli", "-w", str(sample_warehouse), "report", "landscape",
                           "erectile dysfunction", "--format", "png", "--out", str(tmp_path / "charts")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    charts = sorted((tmp_path / "charts").glob("*.png"))
    assert [c.stem for c in charts] == ["phases", "sites", "sponsors", "start_years", "statuses", "stop_categories"]
    assert all(ink(c) > 0.05 for c in charts)
    with Mirror(sample_warehouse) as m:
        page = landscape_report(m, "erectile dysfunction")
    heights = [int(h) for h in re.findall(r'<svg[^>]* height="(\d+)"', page)]
    for chart in (charts[0], charts[-1]):  # the short ones, which Chromium's screenshot used to cut
        width, height, rows = pixel_rows(chart)
        assert height in heights
        drawn = [i for i, row in enumerate(rows) if any(b < 200 for b in row)]
        assert drawn[-1] >= height - 20, (chart.stem, drawn[-1], height)  # the last bar is whole, near the bottom

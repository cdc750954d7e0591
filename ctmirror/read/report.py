"""`ctmirror report landscape CONDITION`: one self-contained page (no network needed to open it) about one
condition's trials: the scope stated at the top, phase and status charts, the competitors, trials started per
year, top sponsors, stopped trials with their stop categories, and a world map and table of sites. Every chart
and table counts the same trials, the condition's, or says in its title which of them (the competitors: those
in Early Phase 1 to Phase 4); each says how many of them lack the field it counts. Charts are inline SVG drawn
here (a plotting library would add megabytes for a handful of bar charts); the map's basemap is Natural Earth's
country outlines (public domain), shipped in ctmirror/data/world_outline.json. As HTML, PNG (a file a chart) or
PDF, the last two through Debian's headless Chromium."""

from __future__ import annotations

import html
import json
import shutil
import struct
import subprocess
import tempfile
import textwrap
import zlib
from collections import Counter
from datetime import date
from functools import cache
from importlib import resources
from pathlib import Path

from ctmirror.core.errors import CtmirrorError
from ctmirror.read.mirror import Mirror

_BAR = "#3b6ea5"
_FONT = "system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"
_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem auto;max-width:1100px;
color:#1d2733;padding:0 1rem}h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;
border-bottom:1px solid #d8dee6;padding-bottom:.3rem}.meta{color:#5b6b7c;font-size:.9rem}
.scope{background:#f4f6f9;border-left:4px solid #3b6ea5;padding:.6rem .9rem;margin:1rem 0;font-size:.95rem}
table{border-collapse:collapse;width:100%;font-size:.85rem;table-layout:auto}th,td{text-align:left;
padding:.3rem .5rem;border-bottom:1px solid #eef1f5;vertical-align:top;overflow-wrap:break-word}th{background:#f4f6f9}
.grid{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1.5rem}svg{max-width:100%;height:auto}
td.num,th.num{text-align:right;white-space:nowrap}@media print{body{margin:0;max-width:none}h2{break-after:avoid}
svg,tr{break-inside:avoid}}
"""
# Table headers in words, by field.
_HEADERS = {
    "sponsor": "Sponsor", "drug_name": "Drug", "drug_type": "Type", "max_phase": "Highest phase",
    "trial_count": "Trials", "total_enrollment": "Total enrollment", "most_recent_start": "Most recent start",
    "statuses": "Statuses", "nct_id": "NCT ID", "status": "Status", "stop_category": "Why stopped (category)",
    "phase": "Phase", "termination_date": "Stopped", "why_stopped": "Reason given", "country": "Country",
    "trials": "Trials", "sites": "Sites", "start_date": "Start", "drug": "Drug",
}
_NUMERIC = {"trial_count", "total_enrollment", "trials", "sites"}
# Statuses as the registry displays them.
_STATUS_LABELS = {
    "RECRUITING": "Recruiting", "NOT_YET_RECRUITING": "Not yet recruiting", "ACTIVE_NOT_RECRUITING":
    "Active, not recruiting", "ENROLLING_BY_INVITATION": "Enrolling by invitation", "COMPLETED": "Completed",
    "TERMINATED": "Terminated", "WITHDRAWN": "Withdrawn", "SUSPENDED": "Suspended", "UNKNOWN": "Unknown status",
    "AVAILABLE": "Available", "NO_LONGER_AVAILABLE": "No longer available", "TEMPORARILY_NOT_AVAILABLE":
    "Temporarily not available", "APPROVED_FOR_MARKETING": "Approved for marketing", "WITHHELD": "Withheld",
}
NOT_GIVEN = "not given"
# The map: equirectangular, longitudes -180..180 across, latitudes from 84 N down to 58 S (Antarctica left out).
MAP_WIDTH, MAP_NORTH, MAP_SOUTH = 1000, 84.0, -58.0
MAP_HEIGHT = round(MAP_WIDTH * (MAP_NORTH - MAP_SOUTH) / 360)


def status_label(status: str | None) -> str:
    return _STATUS_LABELS.get(status or "", status or NOT_GIVEN)


def _label_lines(label: str, width: int = 28, lines: int = 2) -> list[str]:
    """A label wrapped to at most `lines` lines of `width` characters; what does not fit ends in '…' (the whole
    label is the element's tooltip)."""
    wrapped = textwrap.wrap(label, width) or [""]
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][:width - 1].rstrip() + "…"
    return wrapped


def bar_chart(title: str, rows: list[tuple[str, float]], *, width: int = 520) -> str:
    """A horizontal bar chart as inline SVG: labels wrapped into their column, values formatted."""
    if not rows:
        return (f'<figure><figcaption><strong>{html.escape(title)}</strong></figcaption>'
                f'<p class="meta">no data</p></figure>')
    label_width, line_height = 190, 14
    title_lines = textwrap.wrap(title, width // 8) or [""]  # about 8 px a character at 14 px, bold
    top = 10 + 18 * len(title_lines)
    heights = [max(22, 8 + line_height * len(_label_lines(label))) for label, _ in rows]
    height = top + sum(heights) + 10
    peak = max(v for _, v in rows) or 1
    heading = "".join(f'<tspan x="0" y="{16 + 18 * i}">{html.escape(line)}</tspan>'
                      for i, line in enumerate(title_lines))
    parts = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{html.escape(title)}" font-family="{_FONT}">',
             f'<text font-size="14" font-weight="600" fill="#1d2733">{heading}</text>']
    y = top
    for (label, value), row_height in zip(rows, heights):
        length = (width - label_width - 70) * value / peak
        lines = _label_lines(label)
        first = y + row_height / 2 - (len(lines) - 1) * line_height / 2 + 4
        spans = "".join(f'<tspan x="{label_width - 6}" y="{first + i * line_height:.1f}">{html.escape(line)}</tspan>'
                        for i, line in enumerate(lines))
        parts.append(f'<text class="label" font-size="12" text-anchor="end" fill="#33414f">'
                     f'<title>{html.escape(label)}</title>{spans}</text>')
        parts.append(f'<rect x="{label_width}" y="{y + row_height / 2 - 7.5:.1f}" width="{max(length, 1):.1f}" '
                     f'height="15" fill="{_BAR}"><title>{html.escape(label)}: {value:,g}</title></rect>')
        parts.append(f'<text x="{label_width + length + 5:.1f}" y="{y + row_height / 2 + 4:.1f}" font-size="12" '
                     f'fill="#33414f">{value:,g}</text>')
        y += row_height
    parts.append("</svg>")
    return "".join(parts)


def _project(lon: float, lat: float) -> tuple[float, float]:
    return (lon + 180) / 360 * MAP_WIDTH, (MAP_NORTH - lat) / (MAP_NORTH - MAP_SOUTH) * MAP_HEIGHT


@cache
def _basemap_paths() -> str:
    """Every country's outline as one SVG path (coastlines and borders), points closer than a pixel merged."""
    outline = json.loads(resources.files("ctmirror").joinpath("data/world_outline.json").read_text("utf-8"))
    paths = []
    for country in outline["countries"]:
        if country["iso_a3"] == "ATA":
            continue
        rings = []
        for ring in country["rings"]:
            points: list[tuple[float, float]] = []
            for lon, lat in ring:
                x, y = _project(lon / 10, lat / 10)
                if not points or abs(x - points[-1][0]) + abs(y - points[-1][1]) >= 1.0:
                    points.append((x, y))
            if len(points) >= 3:
                rings.append("M" + "L".join(f"{x:.1f} {y:.1f}" for x, y in points) + "Z")
        if rings:
            paths.append(f'<path d="{"".join(rings)}"><title>{html.escape(country["name"])}</title></path>')
    return "".join(paths)


def site_map(countries: list[dict]) -> str:
    """Countries with sites as circles (area ~ trials) on Natural Earth's country outlines, with a legend."""
    width, height = MAP_WIDTH, MAP_HEIGHT
    parts = [f'<svg class="chart map" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="Trials by country of their sites" '
             f'font-family="{_FONT}">',
             f'<rect width="{width}" height="{height}" fill="#eaf1f8"/>',
             f'<g class="basemap" fill="#f7f7f4" stroke="#9aa6b2" stroke-width="0.5" stroke-linejoin="round">'
             f'{_basemap_paths()}</g>']
    placed = [c for c in countries if c.get("lat") is not None and c.get("lon") is not None]
    peak = max((c["trials"] for c in placed), default=1)

    def radius(trials: float) -> float:
        return 3 + 25 * (trials / peak) ** 0.5

    for country in sorted(placed, key=lambda c: -c["trials"]):  # small circles drawn over large ones
        x, y = _project(country["lon"], min(max(country["lat"], MAP_SOUTH), MAP_NORTH))
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius(country["trials"]):.1f}" fill="{_BAR}" '
                     f'fill-opacity="0.55" stroke="#1d4f80"><title>{html.escape(country["country"])}: '
                     f'{country["trials"]:,} trials, {country["sites"]:,} sites</title></circle>')
    steps = sorted({peak, max(1, round(peak / 4)), 1}, reverse=True) if placed else []
    box_height = 30 + sum(2 * radius(s) + 6 for s in steps)
    parts.append(f'<g class="legend" font-size="12" fill="#33414f"><rect x="10" y="{height - box_height - 10:.1f}" '
                 f'width="170" height="{box_height:.1f}" fill="#ffffff" fill-opacity="0.9" stroke="#c5ced8"/>'
                 f'<text x="20" y="{height - box_height + 8:.1f}" font-weight="600">Trials with a site there</text>')
    y = height - box_height + 18
    for step in steps:
        r = radius(step)
        parts.append(f'<circle cx="{20 + 28:.1f}" cy="{y + r:.1f}" r="{r:.1f}" fill="{_BAR}" fill-opacity="0.55" '
                     f'stroke="#1d4f80"/><text x="84" y="{y + r + 4:.1f}">{step:,} trial{"s" if step != 1 else ""}'
                     f'</text>')
        y += 2 * r + 6
    parts.append("</g></svg>")
    return "".join(parts)


def _cell(column: str, value: object) -> str:
    if isinstance(value, (list, set, tuple)):
        items = sorted(map(str, value)) if isinstance(value, set) else list(map(str, value))
        value = ", ".join(status_label(v) if column == "statuses" else v for v in items)
    elif column == "status":
        value = status_label(value)  # type: ignore[arg-type]
    elif isinstance(value, int) and column in _NUMERIC:
        return f'<td class="num">{value:,}</td>'
    return f"<td>{html.escape('' if value is None else str(value))}</td>"


def _table(rows: list[dict], columns: list[str]) -> str:
    if not rows:
        return '<p class="meta">none</p>'
    head = "".join(f'<th{" class=num" if c in _NUMERIC else ""}>{html.escape(_HEADERS.get(c, c))}</th>'
                   for c in columns)
    body = "".join("<tr>" + "".join(_cell(c, row.get(c)) for c in columns) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _given(rows: list[tuple[object, int]]) -> tuple[list[tuple[str, int]], int]:
    """A statistic's (value, trials) rows without the trials lacking the value, and how many those are."""
    lacking = sum(n for value, n in rows if value in ("(none)", None, "unknown"))
    return [(str(value), n) for value, n in rows if value not in ("(none)", None, "unknown")], lacking


def _lacking(lacking: int, what: str) -> str:
    return f"; {lacking:,} {'gives' if lacking == 1 else 'give'} no {what}" if lacking else ""


class _Scope:
    """The trials a report counts: the condition's, as the statistics match them, at the cutoff."""

    def __init__(self, m: Mirror, condition: str, as_of: date | None) -> None:
        self.m, self.condition, self.as_of = m, condition, as_of
        self._answered: dict[str, list[dict]] = {}
        self.total = self.stats("stats_completion")[0]["trials"]
        self.label = f"all {self.total:,}"

    def stats(self, name: str) -> list[dict]:
        """A statistic on the scope, asked once however many parts of the page read it."""
        if name not in self._answered:
            self._answered[name] = self.m.stats(name, condition=self.condition, date_before=self.as_of)
        return self._answered[name]

    def nct_ids(self) -> set[str]:
        found: set[str] = set()
        cursor = None
        while True:
            page = self.m.search(condition=self.condition, date_before=self.as_of, page_size=200, cursor=cursor)
            found.update(item.nct_id for item in page.items)
            cursor = page.pagination.cursor
            if cursor is None:
                return found


def landscape_charts(m: Mirror, condition: str, as_of: date | None) -> dict[str, str]:
    """The report's charts, by name, as SVG."""
    scope = _Scope(m, condition, as_of)
    return _charts(scope, _stopped(scope))


def _charts(scope: _Scope, stopped: list) -> dict[str, str]:
    phases, no_phase = _given([(r["phase"], r["trials"]) for r in scope.stats("stats_by_phase")])
    statuses, no_status = _given([(r["overall_status"], r["trials"]) for r in scope.stats("stats_by_status")])
    years, no_start = _given([(r["start_year"], r["trials"]) for r in scope.stats("stats_by_start_year")])
    sponsors, no_sponsor = _given([(r["sponsor"], r["trials"]) for r in scope.stats("stats_by_sponsor")])
    categories = Counter(t.stop_category for t in stopped)
    n = scope.label
    return {
        "phases": bar_chart(f"Trials by phase ({n}{_lacking(no_phase, 'phase')})", phases),
        "statuses": bar_chart(f"Trials by status ({n}{_lacking(no_status, 'status')})",
                              [(status_label(s), v) for s, v in statuses]),
        "start_years": bar_chart(f"Trials started per year ({n}, last 25 years shown"
                                 f"{_lacking(no_start, 'start date')})", years[-25:]),
        "sponsors": bar_chart(f"Top lead sponsors ({n}{_lacking(no_sponsor, 'lead sponsor')})",
                              sponsors[:12]),
        "stop_categories": bar_chart(f"Why the {len(stopped):,} stopped trials stopped (of {n})",
                                     sorted(categories.items(), key=lambda kv: -kv[1])),
        "sites": site_map(scope.stats("stats_by_country")),
    }


def _stopped(scope: _Scope) -> list:
    """The scope's terminated, withdrawn and suspended trials (get_terminated also matches drugs: kept to the scope)."""
    ids = scope.nct_ids()
    return [t for t in scope.m.get_terminated(scope.condition, scope.as_of, max_results=10_000) if t.nct_id in ids]


def landscape_report(m: Mirror, condition: str, as_of: date | None = None) -> str:
    scope = _Scope(m, condition, as_of)
    landscape = m.get_landscape(condition, as_of)
    stopped = _stopped(scope)
    charts = _charts(scope, stopped)
    countries = scope.stats("stats_by_country")
    with_sites = sum(c["trials"] for c in countries if c["country"] == "(none)")
    no_status = sum(r["trials"] for r in scope.stats("stats_by_status") if r["overall_status"] == "(none)")
    competitors = [c.model_dump() for c in landscape.competitors]
    title = f"Landscape: {condition}"
    when = f"as the registry stood on {as_of.isoformat()} (strict: nothing posted later)" if as_of \
        else "in the current registry"
    partial = (f" {no_status:,} of them are partial records (no status, phase or type: fetched with a restricted "
               f"<code>fields</code>); the charts count them as giving none.") if no_status else ""
    phases_scope = f"the {landscape.total_trial_count:,} of them in Early Phase 1 to Phase 4"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title><style>{_STYLE}</style></head>
<body>
<h1>{html.escape(title)}</h1>
<p class="scope" id="scope"><strong>Scope: the {scope.total:,} trials whose conditions match
&ldquo;{html.escape(condition)}&rdquo;</strong>, any phase and status, {html.escape(when)}. Every chart and
table counts these trials, or says in its title which of them.{partial}</p>
<p class="meta">warehouse state {html.escape(m.state_id)} · made by ctmirror</p>
<div class="grid"><div>{charts["phases"]}</div><div>{charts["statuses"]}</div></div>
<h2>Competitors: sponsor and drug ({phases_scope})</h2>
{_table(competitors, ["sponsor", "drug_name", "drug_type", "max_phase", "trial_count", "total_enrollment",
                      "most_recent_start", "statuses"])}
<div class="grid"><div>{charts["start_years"]}</div><div>{charts["sponsors"]}</div></div>
<h2>Terminated, withdrawn and suspended trials ({len(stopped):,} of the {scope.total:,}; 200 shown)</h2>
{charts["stop_categories"]}
{_table([t.model_dump() for t in stopped[:200]], ["nct_id", "status", "stop_category", "phase", "drug_name",
                                                 "termination_date", "why_stopped"])}
<h2>Sites by country (the {scope.total - with_sites:,} of the {scope.total:,} that list a site)</h2>
{charts["sites"]}
{_table([c for c in countries if c["country"] != "(none)"][:40], ["country", "trials", "sites"])}
<h2>Recent starts ({phases_scope})</h2>
{_table([r.model_dump() for r in landscape.recent_starts], ["nct_id", "start_date", "phase", "sponsor", "drug"])}
</body></html>
"""


def chromium(purpose: str = "PNG charts") -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not found:
        raise CtmirrorError(f"{purpose} need a headless Chromium, and none was found on PATH: apt-get install "
                            "chromium", hint="or use --format html (the default), which needs nothing")
    return found


def _headless(browser: str, profile: str) -> list[str]:
    """Chromium offline: a fresh profile, no background traffic."""
    return [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}"]


# Headless Chromium's screenshot of a short window is shorter than the window (about 87 px less under ~135 px):
# the chart is drawn in a window this much taller, and the picture cut to the chart's own height.
SCREENSHOT_MARGIN = 400


def svg_to_png(svg: str, target: Path) -> None:
    """Renders one SVG chart to PNG with headless Chromium, exactly the chart's size."""
    width = int(svg.split('width="', 1)[1].split('"', 1)[0])
    height = int(svg.split('height="', 1)[1].split('"', 1)[0])
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "chart.html"
        page.write_text(f'<!doctype html><html><body style="margin:0;background:#fff">{svg}</body></html>')
        shot = Path(tmp) / "shot.png"
        subprocess.run([*_headless(chromium(), f"{tmp}/profile"), "--hide-scrollbars",
                        f"--window-size={width},{height + SCREENSHOT_MARGIN}", f"--screenshot={shot}",
                        page.as_uri()], check=True, capture_output=True, timeout=120)
        target.write_bytes(png_top_rows(shot.read_bytes(), height))


def png_top_rows(data: bytes, rows: int) -> bytes:
    """A non-interlaced PNG cut to its first `rows` rows. A row's filter refers only to rows above it, so the first
    rows' filtered bytes stand as they are: no pixel is decoded."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise CtmirrorError("Chromium's screenshot is not a PNG", hint="run it by hand to see its error")
    chunks, position = [], 8
    while position < len(data):
        length = struct.unpack(">I", data[position:position + 4])[0]
        chunks.append((data[position + 4:position + 8], data[position + 8:position + 8 + length]))
        position += 12 + length
    header = dict(chunks)[b"IHDR"]
    width, height = struct.unpack(">II", header[:8])
    bit_depth, colour_type, interlace = header[8], header[9], header[12]
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour_type]
    if interlace or rows >= height:
        return data
    stride = 1 + (width * channels * bit_depth + 7) // 8
    pixels = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))[: rows * stride]
    kept = [(b"IHDR", header[:4] + struct.pack(">I", rows) + header[8:])]
    kept += [(kind, body) for kind, body in chunks if kind not in (b"IHDR", b"IDAT", b"IEND")]
    kept += [(b"IDAT", zlib.compress(pixels, 9)), (b"IEND", b"")]
    return b"\x89PNG\r\n\x1a\n" + b"".join(struct.pack(">I", len(body)) + kind + body
                                              + struct.pack(">I", zlib.crc32(kind + body)) for kind, body in kept)


def html_to_pdf(page: str, target: Path) -> None:
    """Prints the report to PDF with headless Chromium (A4, no header or footer)."""
    browser = chromium("PDF reports")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "report.html"
        source.write_text(page, encoding="utf-8")
        subprocess.run([*_headless(browser, f"{tmp}/profile"), "--no-pdf-header-footer",
                        f"--print-to-pdf={target.resolve()}", source.as_uri()],
                       check=True, capture_output=True, timeout=300)
    if not target.exists() or target.read_bytes()[:5] != b"%PDF-":
        raise CtmirrorError(f"Chromium wrote no PDF to {target}", hint="run it by hand to see its error")

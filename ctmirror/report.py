"""`ctmirror report landscape CONDITION`: one self-contained HTML page (no network needed to open it) about one
condition: the landscape table, phase and status charts, trials started per year, top sponsors, terminated
trials with their stop categories, and a map and table of sites. Charts are inline SVG drawn here: a
plotting library would add megabytes for a handful of bar charts."""

from __future__ import annotations

import html
import shutil
import subprocess
import tempfile
from collections import Counter
from datetime import date
from pathlib import Path

from ctmirror.core.errors import CtmirrorError
from ctmirror.mirror import Mirror

_BAR = "#3b6ea5"
_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem auto;max-width:1100px;
color:#1d2733;padding:0 1rem}h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.15rem;margin-top:2rem;
border-bottom:1px solid #d8dee6;padding-bottom:.3rem}.meta{color:#5b6b7c;font-size:.9rem}
table{border-collapse:collapse;width:100%;font-size:.85rem}th,td{text-align:left;padding:.3rem .5rem;
border-bottom:1px solid #eef1f5;vertical-align:top}th{background:#f4f6f9}.grid{display:grid;
grid-template-columns:1fr 1fr;gap:1.5rem}svg{max-width:100%;height:auto}.num{text-align:right}
"""


def bar_chart(title: str, rows: list[tuple[str, float]], *, width: int = 520) -> str:
    """A horizontal bar chart as inline SVG."""
    if not rows:
        return f'<figure><figcaption>{html.escape(title)}</figcaption><p class="meta">no data</p></figure>'
    bar_height, label_width, top = 22, 190, 28
    height = top + bar_height * len(rows) + 10
    peak = max(v for _, v in rows) or 1
    parts = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{html.escape(title)}">',
             f'<text x="0" y="16" font-size="14" font-weight="600" fill="#1d2733">{html.escape(title)}</text>']
    for i, (label, value) in enumerate(rows):
        y = top + i * bar_height
        length = (width - label_width - 60) * value / peak
        shown = label if len(label) <= 28 else label[:27] + "…"
        parts.append(f'<text x="{label_width - 6}" y="{y + 15}" font-size="12" text-anchor="end" '
                     f'fill="#33414f">{html.escape(shown)}</text>')
        parts.append(f'<rect x="{label_width}" y="{y + 3}" width="{max(length, 1):.1f}" height="{bar_height - 7}" '
                     f'fill="{_BAR}"><title>{html.escape(label)}: {value:g}</title></rect>')
        parts.append(f'<text x="{label_width + length + 5:.1f}" y="{y + 15}" font-size="12" '
                     f'fill="#33414f">{value:g}</text>')
    parts.append("</svg>")
    return "".join(parts)


def site_map(countries: list[dict], *, width: int = 1000, height: int = 500) -> str:
    """Countries with sites as circles on an equirectangular grid (area ~ trials), as inline SVG."""
    parts = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="Sites by country">',
             f'<rect width="{width}" height="{height}" fill="#f4f7fb" stroke="#d8dee6"/>']
    for lon in range(-180, 181, 30):
        x = (lon + 180) / 360 * width
        parts.append(f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{height}" stroke="#e3e8ef"/>')
    for lat in range(-90, 91, 30):
        y = (90 - lat) / 180 * height
        parts.append(f'<line x1="0" y1="{y:.1f}" x2="{width}" y2="{y:.1f}" stroke="#e3e8ef"/>')
    peak = max((c["trials"] for c in countries), default=1)
    for country in countries:
        if country.get("lat") is None or country.get("lon") is None:
            continue
        x = (country["lon"] + 180) / 360 * width
        y = (90 - country["lat"]) / 180 * height
        radius = 4 + 26 * (country["trials"] / peak) ** 0.5
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius:.1f}" fill="{_BAR}" fill-opacity="0.55" '
                     f'stroke="#1d4f80"><title>{html.escape(country["country"])}: {country["trials"]} trials, '
                     f'{country["sites"]} sites</title></circle>')
    parts.append("</svg>")
    return "".join(parts)


def _table(rows: list[dict], columns: list[str]) -> str:
    if not rows:
        return '<p class="meta">none</p>'
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = []
    for row in rows:
        cells = []
        for column in columns:
            value = row.get(column)
            if isinstance(value, (list, set, tuple)):
                value = ", ".join(sorted(map(str, value)) if isinstance(value, set) else map(str, value))
            cells.append(f"<td>{html.escape('' if value is None else str(value))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def landscape_charts(m: Mirror, condition: str, as_of: date | None) -> dict[str, str]:
    """The report's charts, by name, as SVG."""
    phases = m.stats("stats_by_phase", condition=condition, date_before=as_of)
    statuses = m.stats("stats_by_status", condition=condition, date_before=as_of)
    years = m.stats("stats_by_start_year", condition=condition, date_before=as_of)
    sponsors = m.stats("stats_by_sponsor", condition=condition, date_before=as_of)[:12]
    stopped = m.get_terminated(condition, as_of, max_results=10_000)
    categories = Counter(t.stop_category for t in stopped)
    countries = m.stats("stats_by_country", condition=condition, date_before=as_of)
    return {
        "phases": bar_chart("Trials by phase", [(r["phase"], r["trials"]) for r in phases]),
        "statuses": bar_chart("Trials by status", [(r["overall_status"], r["trials"]) for r in statuses]),
        "start_years": bar_chart("Trials started per year", [(str(r["start_year"]), r["trials"]) for r in years[-25:]]),
        "sponsors": bar_chart("Top lead sponsors", [(r["sponsor"], r["trials"]) for r in sponsors]),
        "stop_categories": bar_chart("Why trials stopped", sorted(categories.items(), key=lambda kv: -kv[1])),
        "sites": site_map(countries),
    }


def landscape_report(m: Mirror, condition: str, as_of: date | None = None) -> str:
    landscape = m.get_landscape(condition, as_of)
    charts = landscape_charts(m, condition, as_of)
    stopped = m.get_terminated(condition, as_of, max_results=200)
    countries = m.stats("stats_by_country", condition=condition, date_before=as_of)
    competitors = [c.model_dump() for c in landscape.competitors]
    title = f"Landscape: {condition}"
    scope = f"as of {as_of.isoformat()} (strict)" if as_of else "current registry"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title><style>{_STYLE}</style></head>
<body>
<h1>{html.escape(title)}</h1>
<p class="meta">{html.escape(scope)} · warehouse state {html.escape(m.state_id)} · {landscape.total_trial_count} trials in
Early Phase 1 to Phase 4 · made by ctmirror</p>
<div class="grid"><div>{charts["phases"]}</div><div>{charts["statuses"]}</div></div>
<h2>Competitors (sponsor and drug)</h2>
{_table(competitors, ["sponsor", "drug_name", "drug_type", "max_phase", "trial_count", "total_enrollment",
                      "most_recent_start", "statuses"])}
<div class="grid"><div>{charts["start_years"]}</div><div>{charts["sponsors"]}</div></div>
<h2>Terminated, withdrawn and suspended trials</h2>
{charts["stop_categories"]}
{_table([t.model_dump() for t in stopped], ["nct_id", "status", "stop_category", "phase", "drug_name",
                                           "termination_date", "why_stopped"])}
<h2>Sites</h2>
{charts["sites"]}
{_table(countries[:40], ["country", "trials", "sites"])}
<h2>Recent starts</h2>
{_table([r.model_dump() for r in landscape.recent_starts], ["nct_id", "start_date", "phase", "sponsor", "drug"])}
</body></html>
"""


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not found:
        raise CtmirrorError("PNG charts need a headless Chromium: apt-get install chromium",
                            hint="or use the HTML report, which needs nothing")
    return found


def svg_to_png(svg: str, target: Path) -> None:
    """Renders one SVG chart to PNG with headless Chromium (offline, a fresh profile, no background traffic)."""
    width = int(svg.split('width="', 1)[1].split('"', 1)[0])
    height = int(svg.split('height="', 1)[1].split('"', 1)[0])
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "chart.html"
        page.write_text(f'<!doctype html><html><body style="margin:0;background:#fff">{svg}</body></html>')
        subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={tmp}/profile", "--hide-scrollbars", f"--window-size={width},{height}",
                        f"--screenshot={target}", page.as_uri()],
                       check=True, capture_output=True, timeout=120)

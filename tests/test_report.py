"""The HTML landscape report: self-contained, every chart drawn, and it renders in a real headless Chromium."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from ctmirror import Mirror
from ctmirror.report import landscape_report

pytestmark = pytest.mark.slow  # renders in a browser

BROWSER = shutil.which("chromium")
needs_browser = pytest.mark.skipif(BROWSER is None, reason="Debian's chromium is not installed (CI installs it)")


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
    assert page.count("<svg") == 6 and page.count("<rect") > 30 and "<circle" in page
    assert not re.search(r"(src|href)=\"https?://", page)  # nothing to fetch
    assert f"{landscape.total_trial_count} trials" in page
    assert landscape.competitors[0].drug_name in page and "Why trials stopped" in page


@needs_browser
def test_report_renders_in_headless_chromium(tmp_path, sample_warehouse):
    out = tmp_path / "report.html"
    done = subprocess.run([sys.executable, "-m", "ctmirror.cli", "-w", str(sample_warehouse), "report", "landscape",
                           "erectile dysfunction", "--as-of", "2015-01-01", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    shot = tmp_path / "shot.png"
    subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={tmp_path}/profile", "--window-size=1200,1600", f"--screenshot={shot}",
                    out.as_uri()], check=True, capture_output=True, timeout=120)
    assert ink(shot) > 0.2


@needs_browser
def test_charts_as_png(tmp_path, sample_warehouse):
    done = subprocess.run([sys.executable, "-m", "ctmirror.cli", "-w", str(sample_warehouse), "report", "landscape",
                           "erectile dysfunction", "--format", "png", "--out", str(tmp_path / "charts")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    charts = sorted((tmp_path / "charts").glob("*.png"))
    assert [c.stem for c in charts] == ["phases", "sites", "sponsors", "start_years", "statuses", "stop_categories"]
    assert all(ink(c) > 0.05 for c in charts)

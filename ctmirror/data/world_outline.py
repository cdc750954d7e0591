"""Writes ctmirror/data/world_outline.json, the landscape report's basemap: the country outlines of Natural Earth's
1:110m Admin 0 countries (public domain, naturalearthdata.com), as geopandas 0.14 bundled them
(geopandas/datasets/naturalearth_lowres/, a shapefile). Not imported at run time.

    pip download geopandas==0.14.4 --no-deps -d /tmp/gp && cd /tmp/gp && unzip -q geopandas-0.14.4-*.whl
    python ctmirror/data/world_outline.py /tmp/gp/geopandas/datasets/naturalearth_lowres/naturalearth_lowres

Each ring is kept as whole tenths of a degree (about 11 km at the equator, far below a pixel of the report's
map), consecutive repeats dropped. Read with the standard library: a shapefile of polygons is a few fixed
structures (ESRI's technical description, 1998), its attribute table a dBASE file."""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

TARGET = Path(__file__).with_name("world_outline.json")


def dbf_rows(path: Path) -> list[dict[str, str]]:
    data = path.read_bytes()
    count, header_length, record_length = struct.unpack("<IHH", data[4:12])
    fields, position = [], 32
    while data[position] != 0x0D:
        name = data[position:position + 11].split(b"\0", 1)[0].decode("ascii")
        fields.append((name, data[position + 16]))
        position += 32
    rows = []
    for index in range(count):
        record = data[header_length + index * record_length:header_length + (index + 1) * record_length]
        row, offset = {}, 1  # the first byte marks a deleted record
        for name, width in fields:
            row[name] = record[offset:offset + width].decode("utf-8", "replace").strip()
            offset += width
        rows.append(row)
    return rows


def shp_polygons(path: Path) -> list[list[list[tuple[float, float]]]]:
    """Each record's rings, as (lon, lat) points."""
    data = path.read_bytes()
    shapes, position = [], 100
    while position < len(data):
        _number, words = struct.unpack(">ii", data[position:position + 8])
        content = data[position + 8:position + 8 + 2 * words]
        position += 8 + 2 * words
        shape_type = struct.unpack("<i", content[:4])[0]
        if shape_type != 5:  # polygon
            shapes.append([])
            continue
        parts, points = struct.unpack("<ii", content[36:44])
        starts = list(struct.unpack(f"<{parts}i", content[44:44 + 4 * parts])) + [points]
        xy = struct.unpack(f"<{2 * points}d", content[44 + 4 * parts:44 + 4 * parts + 16 * points])
        shapes.append([[(xy[2 * i], xy[2 * i + 1]) for i in range(a, b)] for a, b in zip(starts, starts[1:])])
    return shapes


def main(stem: str) -> None:
    base = Path(stem)
    countries = []
    for row, rings in zip(dbf_rows(base.with_suffix(".dbf")), shp_polygons(base.with_suffix(".shp"))):
        kept = []
        for ring in rings:
            tenths: list[list[int]] = []
            for lon, lat in ring:
                point = [round(lon * 10), round(lat * 10)]
                if not tenths or tenths[-1] != point:
                    tenths.append(point)
            if len(tenths) >= 4:
                kept.append(tenths)
        countries.append({"name": row["name"], "iso_a3": row["iso_a3"], "rings": kept})
    TARGET.write_text(json.dumps({
        "source": "Natural Earth 1:110m Admin 0 countries (public domain), via geopandas 0.14.4 naturalearth_lowres",
        "units": "tenths of a degree, [longitude, latitude]", "countries": countries}, separators=(",", ":")))
    sys.stdout.write(f"wrote {TARGET}: {len(countries)} countries, {TARGET.stat().st_size:,} bytes\n")


if __name__ == "__main__":
    main(sys.argv[1])

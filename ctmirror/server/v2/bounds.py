"""RANGE[low, high] bounds of Essie as the matcher compares them: an age in days, a whole number, a date (a year or
a month standing for all its days)."""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

from ctmirror.server.v2.errors import V2Error

AGE_UNITS = {"year": 365.25, "years": 365.25, "month": 30.4375, "months": 30.4375, "week": 7, "weeks": 7, "day": 1,
             "days": 1, "hour": 1 / 24, "hours": 1 / 24, "minute": 1 / 1440, "minutes": 1 / 1440}


MAX_RANGE_NUMBER = 10**9  # beyond any enrollment or age in days; larger bounds are refused, not overflowed


def bound(field: str, text: str, *, high: bool = False) -> tuple[str, Any]:
    """A RANGE bound as the SQL compares it. A partial date stands for its whole year or month: its first day as
    the low bound, its last as the high one (RANGE[2020, 2021] is 2020-01-01 to 2021-12-31)."""
    text = text.strip()
    if field in ("MinimumAge", "MaximumAge"):
        found = re.fullmatch(r"(\d{1,9}(?:\.\d+)?)\s*([A-Za-z]+)?", text)
        if not found or (found[2] and found[2].lower() not in AGE_UNITS):
            raise V2Error(f"RANGE of AREA[{field}]: {text!r} is not an age such as 50 years or 6 months")
        days = int(float(found[1]) * AGE_UNITS[(found[2] or "years").lower()])
        if days > MAX_RANGE_NUMBER:
            raise V2Error(f"RANGE of AREA[{field}]: {text!r} is beyond any age")
        return "number", days
    if field == "EnrollmentCount":
        if not re.fullmatch(r"\d{1,10}", text) or int(text) > MAX_RANGE_NUMBER:
            raise V2Error(f"RANGE of AREA[{field}]: {text!r} is not a whole number up to {MAX_RANGE_NUMBER:,}")
        return "number", int(text)
    if field in ("OverallStatus", "Phase", "StudyType", "Sex", "StdAge", "LeadSponsorClass", "HasResults",
                 "EnrollmentType"):
        raise V2Error(f"RANGE does not apply to AREA[{field}], which takes values")
    try:
        if re.fullmatch(r"\d{4}", text):
            return "day", date(int(text), 12, 31) if high else date(int(text), 1, 1)
        if re.fullmatch(r"\d{4}-\d{2}", text):
            first = date.fromisoformat(f"{text}-01")
            return "day", (first.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1) if high \
                else first
        return "day", date.fromisoformat(text)
    except ValueError:
        raise V2Error(f"RANGE of AREA[{field}]: {text!r} is not a date (YYYY-MM-DD, YYYY-MM or YYYY)") from None

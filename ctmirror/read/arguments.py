"""Validation of method arguments: every rule in one place, each failure an InvalidArgument that names the
argument, what was given and what is allowed (the contract's INVALID_INPUT envelope)."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from ctmirror.core.errors import InvalidArgument, InvalidNctId

PHASES = ("EARLY_PHASE1", "PHASE1", "PHASE2", "PHASE3", "PHASE4", "NA")
STATUSES = ("RECRUITING", "COMPLETED", "ACTIVE_NOT_RECRUITING", "NOT_YET_RECRUITING", "SUSPENDED", "TERMINATED",
            "WITHDRAWN", "ENROLLING_BY_INVITATION", "UNKNOWN")
SEXES = ("ALL", "FEMALE", "MALE")
STUDY_TYPES = ("INTERVENTIONAL", "OBSERVATIONAL", "EXPANDED_ACCESS")
SPONSOR_CLASSES = ("INDUSTRY", "NIH", "FED", "OTHER_GOV", "INDIV", "NETWORK", "AMBIG", "OTHER", "UNKNOWN")
_NCT_ID = re.compile(r"^NCT:?(\d{8})$", re.IGNORECASE)  # the contract also writes NCT:01234567
_PHASE_FILTER = re.compile(r"^\s*\(?\s*[A-Z0-9_]+(\s+OR\s+[A-Z0-9_]+)*\s*\)?\s*$", re.IGNORECASE)
_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(years?|months?|weeks?|days?)?\s*$", re.IGNORECASE)
_DAYS_PER = {"year": 365.25, "month": 30.4375, "week": 7, "day": 1}


def text(name: str, value: object, *, required: bool = True) -> str | None:
    """Words to match; any text is searched as text. It must be valid Unicode (a lone surrogate is not). A value
    with no letter or digit ('%', '-', '*') normalises to nothing and matches nothing, in every argument alike."""
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument(f"{name} must be a non-empty text, got {value!r}", invalid_input=value,
                              recovery_hint=f"Give {name} as words to search for, e.g. 'semaglutide' or 'NASH'.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgument(f"{name} is not valid text: it holds a lone surrogate ({value!r})",
                              invalid_input=value.encode("utf-8", "backslashreplace").decode("utf-8"),
                              recovery_hint="Send the text as valid UTF-8.") from None
    return value


def optional_text(name: str, value: object) -> str | None:
    if value is None:
        return None
    return text(name, value)


def cutoff(value: object) -> date | None:
    """A cutoff date. One after tomorrow is refused: the registry has not published what it would show (a day's
    grace for clocks ahead of ours)."""
    found: date | None = None
    if value is None or isinstance(value, date) and not isinstance(value, datetime):
        found = value  # type: ignore[assignment]
    elif isinstance(value, datetime):
        found = value.date()
    elif isinstance(value, str):
        try:
            found = date.fromisoformat(value.strip())
        except ValueError:
            pass
    if found is None and value is not None:
        raise InvalidArgument(f"date_before must be a date (YYYY-MM-DD), got {value!r}", invalid_input=value,
                              recovery_hint="Give the cutoff as an ISO date such as 2019-06-01.")
    if found is not None and found > date.today() + timedelta(days=1):
        raise InvalidArgument(f"date_before {found.isoformat()} is in the future: nothing the registry will publish "
                              "by then is known yet", invalid_input=found.isoformat(),
                              recovery_hint="Leave date_before out for the current state, or give a past date.")
    return found


def bounded(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidArgument(f"{name} must be a whole number from {low} to {high}, got {value!r}",
                              invalid_input=value, recovery_hint=f"Use a {name} between {low} and {high}.")
    return value


def phase_filter(value: object) -> str | None:
    """'PHASE3' or '(PHASE2 OR PHASE3)', as the contract writes it."""
    if value is None:
        return None
    if not isinstance(value, str) or not _PHASE_FILTER.match(value):
        raise InvalidArgument(f"phase_filter must look like 'PHASE3' or '(PHASE2 OR PHASE3)', got {value!r}",
                              invalid_input=value, recovery_hint=f"Use phases among {', '.join(PHASES)}.")
    for phase in re.findall(r"[A-Z0-9_]+", value.upper()):
        if phase != "OR":
            one_of("phase_filter", phase, PHASES)
    return value.upper()


def one_of(name: str, value: object, allowed: tuple[str, ...], *, upper: bool = True) -> str:
    chosen = value.strip().upper() if upper and isinstance(value, str) else value.strip() \
        if isinstance(value, str) else None
    if chosen not in allowed:
        raise InvalidArgument(f"Invalid {name} value. Must be one of: {', '.join(allowed)}", invalid_input=value,
                              recovery_hint=f"Check the {name} parameter and use a valid value from the allowed list.")
    return chosen


def any_of(name: str, value: object, allowed: tuple[str, ...], *, upper: bool = True) -> list[str] | None:
    """One value, a comma-separated list, or a list, each among `allowed`: any of them matches."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not items:
        raise InvalidArgument(f"{name} must be a {name} or a list of them, got {value!r}", invalid_input=value)
    return [one_of(name, item, allowed, upper=upper) for item in items]


def statuses(value: object) -> list[str] | None:
    return any_of("status", value, STATUSES)


def phases(value: object) -> list[str] | None:
    return any_of("phase", value, PHASES)


def sponsor_classes(value: object) -> list[str] | None:
    return any_of("sponsor_class", value, SPONSOR_CLASSES)


def nct_ids(value: object) -> list[str] | None:
    """NCT IDs, as a list or comma-separated, each in either form nct_id takes."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not items or len(items) > MAX_NCT_IDS:
        raise InvalidArgument(f"nct_ids must be a list of 1 to {MAX_NCT_IDS:,} NCT IDs, got {value!r}"[:300],
                              invalid_input=str(value)[:200], recovery_hint="Give NCT IDs such as NCT00711542.")
    return sorted({nct_id(item) for item in items})


MAX_NCT_IDS = 10_000
# A latitude, a longitude and a distance, 'LAT, LON, D' (then its unit): near's, filter.geo's and DISTANCE's.
_POINT_AND_DISTANCE = r"(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*,\s*(\d+(?:\.\d+)?)\s*"
_NEAR = re.compile(rf"^\s*(?:distance\()?\s*{_POINT_AND_DISTANCE}(mi|km)\s*\)?\s*$", re.IGNORECASE)
_POINT_AND_RADIUS = re.compile(rf"^{_POINT_AND_DISTANCE}(mi|km)?$")
KM_PER_MILE = 1.609344


def kilometres(distance: float | str, unit: str | None) -> float:
    """A distance in kilometres: in miles when its unit is 'mi' (any case), else in kilometres."""
    return float(distance) * (KM_PER_MILE if (unit or "").lower() == "mi" else 1.0)


def point_and_radius(text: str) -> tuple[float, float, float] | None:
    """'LAT, LON, 50mi' (km unless said, as filter.geo and Essie's DISTANCE write it) as (latitude, longitude,
    kilometres); None for another form. The caller checks the point's range and says what is wrong."""
    found = _POINT_AND_RADIUS.match(text)
    if found is None:
        return None
    return float(found[1]), float(found[2]), kilometres(found[3], found[4])


def near(value: object) -> str | None:
    """A point and a distance, 'LAT,LON,50mi' or '...,80km' (the v2 API's distance(LAT,LON,50mi) too), written back
    as 'LAT,LON,Dkm'."""
    if value is None:
        return None
    found = _NEAR.match(value) if isinstance(value, str) else None
    if found is None or not -90 <= float(found[1]) <= 90 or not -180 <= float(found[2]) <= 180:
        raise InvalidArgument(f"near must look like '42.36,-71.06,50mi' (latitude -90..90, longitude -180..180, a "
                              f"distance in mi or km), got {value!r}", invalid_input=value,
                              recovery_hint="Give a point and a distance, e.g. '52.52,13.40,100km'.")
    return f"{float(found[1])},{float(found[2])},{kilometres(found[3], found[4]):g}km"


def near_point(value: str | None) -> list[float] | None:
    """near's canonical text as [lat, lon, km]."""
    return None if value is None else [float(part) for part in value.removesuffix("km").split(",")]


SEARCH_SORTS = ("StartDate", "PrimaryCompletionDate", "StudyFirstPostDate", "EnrollmentCount")


def search_sort(value: object) -> str | None:
    """'StartDate', 'EnrollmentCount:desc', ...: a field and a direction, by default as the v2 spec says (dates
    descending, the enrollment ascending)."""
    if value is None:
        return None
    field, _, direction = value.partition(":") if isinstance(value, str) else ("", "", "")
    chosen = {name.lower(): name for name in SEARCH_SORTS}.get(field.strip().lower())
    if chosen is None or direction.strip().lower() not in ("", "asc", "desc"):
        raise InvalidArgument(f"sort must be one of {', '.join(SEARCH_SORTS)}, with ':asc' or ':desc', got {value!r}",
                              invalid_input=value, recovery_hint="Leave sort out to order by relevance.")
    default = "asc" if chosen == "EnrollmentCount" else "desc"
    return f"{chosen}:{direction.strip().lower() or default}"


def nct_id(value: object) -> str:
    """NCT01234567, as the registry writes it, from that form or the contract's NCT:01234567."""
    found = _NCT_ID.match(value.strip()) if isinstance(value, str) else None
    if found is None:
        raise InvalidNctId(f"{value!r} is not an NCT ID: expected NCT followed by 8 digits, e.g. NCT00711542",
                           invalid_input=value, recovery_hint="Check the identifier; it looks like NCT01234567.")
    return f"NCT{found.group(1)}"


def age_days(name: str, value: object) -> int | None:
    """A patient age: a number of years, or '18 Years', '6 Months', ... → whole days, as the warehouse counts."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return int(value * _DAYS_PER["year"])
    if isinstance(value, str) and (match := _AGE.match(value)):
        unit = (match.group(2) or "years").lower().rstrip("s")
        return int(float(match.group(1)) * _DAYS_PER[unit])
    raise InvalidArgument(f"{name} must be an age such as 45 or '6 Months', got {value!r}", invalid_input=value,
                          recovery_hint="Give the patient's age in years, or as '<n> Years|Months|Weeks|Days'.")

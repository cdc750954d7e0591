"""How each method's answer reads in a terminal (the registry names one per method; --json prints the contract's
JSON instead)."""

from __future__ import annotations

from typing import Any

from ctmirror.read.models import ConditionLandscape, PaginationEnvelope, WhitespaceResult, left_out_of
from ctmirror.read.render import key_values, table

RECONSTRUCTED = "*"


def marked(rows: list[dict[str, Any]], key: str = "nct_id") -> tuple[list[dict[str, Any]], str]:
    """Rows with a reconstructed one's `key` marked (as_of_exact false: a later version shown for want of the
    cutoff's), and the line saying how many there are ("" when none)."""
    count = sum(row.get("as_of_exact") is False for row in rows)
    if not count:
        return rows, ""
    shown = [{**row, key: f"{row[key]}{RECONSTRUCTED}"} if row.get("as_of_exact") is False else row for row in rows]
    return shown, (f"\n{RECONSTRUCTED} {count} of {len(rows)} reconstructed from a later version (the cutoff's is "
                   "not held; see as_of_exact)")


def left_out_note(answer: Any) -> str:
    """The line an exact-only answer at a cutoff ends with: how many studies it left out ("" for any other)."""
    count = left_out_of(answer)
    if count is None:
        return ""
    return (f"{count} left out: reconstructed for this cutoff (its version of the day is not held), which exact "
            "answers do not show")


def trials(columns: tuple[str, ...]):
    """A list of trial cards as a table of these columns, reconstructed rows marked and counted."""
    def show(answer: list[Any]) -> str:
        rows, note = marked([t.model_dump() for t in answer])
        return table(rows, list(columns)) + note
    return show


def whitespace(result: WhitespaceResult) -> str:
    text = key_values([("is_whitespace", result.is_whitespace), ("exact_match_count", result.exact_match_count),
                       ("drug_only_trials", result.drug_only_trials),
                       ("condition_only_trials", result.condition_only_trials)])
    if result.condition_drugs:
        text += "\n\nother drugs tested for the condition (Phase 2+):\n" + table(
            [d.model_dump() for d in result.condition_drugs], ["drug_name", "phase", "status", "nct_id", "condition"])
    return text


def landscape(result: ConditionLandscape) -> str:
    text = (f"trials: {result.total_trial_count}   phases: "
            + ", ".join(f"{k} {v}" for k, v in result.phase_distribution.items()) + "\n")
    competitors, note = marked([c.model_dump() for c in result.competitors], "sponsor")
    text += table(competitors, ["sponsor", "drug_name", "drug_type", "max_phase", "trial_count", "total_enrollment",
                                "most_recent_start", "statuses"], max_width=36) + note
    if result.recent_starts:
        text += "\n\nrecent starts:\n" + table([r.model_dump() for r in result.recent_starts],
                                               ["nct_id", "start_date", "phase", "sponsor", "drug"])
    return text


def trial(answer: Any) -> str:
    data = answer.model_dump()
    data["interventions"] = [f"{i['intervention_type']}: {i['intervention_name']}" for i in data["interventions"]]
    data["primary_outcomes"] = [o["measure"] for o in data["primary_outcomes"]]
    if "locations" in data:
        data["locations"] = [", ".join(filter(None, (x["facility"], x["city"], x["country"])))
                             for x in data["locations"]]
    return key_values(list(data.items()))


PHASE_WORDS = {"EARLY_PHASE1": "Early Phase 1", "PHASE1": "Phase 1", "PHASE2": "Phase 2", "PHASE3": "Phase 3",
               "PHASE4": "Phase 4", "NA": "Not Applicable"}


def phase_label(phase: str | None) -> str | None:
    """A phase as every table shows it ("Phase 1/Phase 2"); the contract's JSON keeps its own form."""
    if not phase:
        return phase
    return "/".join(PHASE_WORDS.get(p, p) for p in phase.replace(",", "/").split("/"))


def search_page(page: PaginationEnvelope) -> str:
    items, note = marked([{**i.model_dump(), "nct_id": i.id.replace("NCT:", "NCT", 1), "phase": phase_label(i.phase)}
                          for i in page.items])
    return (table(items, ["nct_id", "phase", "status", "sponsor", "title"]) + note
            + f"\n\n{page.pagination.total_count} found"
            + (f"; next page: --cursor {page.pagination.cursor}" if page.pagination.cursor else ""))


def rows(answer: list[dict[str, Any]]) -> str:
    return table(answer, list(answer[0]) if answer else [])

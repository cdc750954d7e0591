"""Agent tool calls the tests make on every surface (in Python, and through the MCP SDK over stdio and HTTP): the
broadest questions of the sample at default arguments, which must fit an answer's budget, and arguments of the
wrong JSON type, which must be refused naming the argument."""

from __future__ import annotations

from ctmirror import Mirror

ANSWER_BUDGET = 25_000  # characters of a tool's answer at default arguments

WRONG_JSON_TYPES = [
    ("find_eligible", {"conditions": ["asthma"], "healthy_volunteer": "false"},
     "healthy_volunteer must be true or false"),
    ("find_eligible", {"conditions": ["asthma"], "max_results": True}, "max_results must be a whole number"),
    ("find_eligible", {"conditions": "asthma"}, "conditions must be a list"),
    ("get_landscape", {"condition": "NASH", "top_n": True}, "top_n must be a whole number"),
    ("get_landscape", {"condition": "NASH", "top_n": "5"}, "top_n must be a whole number"),
    ("search_trials", {"drug": "tadalafil", "condition": 7}, "condition must be a string"),
    ("get_study", {"nct_id": "NCT00711542", "max_list_items": 0}, "max_list_items must be from 1 to 1000"),
]


def broadest_calls(m: Mirror) -> list[tuple[str, dict]]:
    """Every tool on the sample's broadest questions (cancer; the trial with the most sites; 20 with results)."""
    crowded = m.rows("SELECT nct_id FROM locations GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")[0]["nct_id"]
    with_results = [r["nct_id"] for r in m.rows("SELECT nct_id FROM studies WHERE has_results ORDER BY 1 LIMIT 20")]
    return [("search_trials", {"drug": "placebo", "condition": "cancer"}), ("get_landscape", {"condition": "cancer"}),
            ("get_terminated", {"query": "cancer"}), ("detect_whitespace", {"drug": "placebo", "condition": "cancer"}),
            ("search", {"condition": "cancer"}), ("get_trial_details", {"nct_id": crowded}),
            ("get_trial", {"nct_id": crowded}), ("get_study", {"nct_id": crowded}),
            *(("statistics", {"statistic": name}) for name in ("stats_by_facility", "stats_by_sponsor",
                                                               "stats_by_country", "stats_by_start_year")),
            ("count_studies", {"query.cond": "cancer"}), ("field_values", {"fields": ["LeadSponsorName"]}),
            ("field_definitions", {}), ("field_definitions", {"query": "date"}),
            ("get_results", {"nct_ids": with_results}), ("find_eligible", {"conditions": ["cancer"]}),
            ("find_eligible", {"conditions": ["breast cancer"], "statuses": []})]

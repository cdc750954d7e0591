"""The ClinicalTrials.gov v2 API answered from a Mirror: GET /api/v2/studies with its query parameters, the Essie
expressions they hold (ctmirror/server/essie.py) matched as the methods match, filters, sorting, paging with
page tokens, `fields` projections and CSV; GET /api/v2/studies/{nctId}. Every query runs from sql/serve/ with its
values bound.

    areas.py        where an Essie term is looked for: the parameters' contexts, every AREA[...] name, sort fields
    request.py      a request's parameters parsed and checked (Search)
    matcher.py      Essie trees evaluated in DuckDB: each term a named subquery, AND/OR/NOT combining them
    record_areas.py AREA[...] of the other leaf fields, matched on the records shown
    bounds.py       RANGE[...] bounds: ages, numbers, dates
    search.py       a page of matches, JSON or CSV
    stored.py       a page's records as stored or as of a cutoff
    study_lookup.py one study by NCT ID or alias
    page_tokens.py  pageToken: a signed cursor (ctmirror/read/cursors.py) with the API's errors
    field_stats.py  /stats/field/values and /stats/field/sizes of any field of the record
    routes.py       the HTTP routes (/api/v2/...)
    errors.py       V2Error: what the API would refuse, as a 400 (or 404) naming it

Each Essie term becomes a set of versions (with scores, for relevance) from one leaf query; AND, OR and NOT combine
the sets; the page query then keeps the trial_card rows shown at the server's cutoff (NULL: the current state) and
applies the filters, sort and page.
"""

from ctmirror.server.v2.errors import V2Error
from ctmirror.server.v2.page_tokens import page_token_state
from ctmirror.server.v2.request import listed, parameters
from ctmirror.server.v2.search import csv_text, make_search_tables, matching_nct_ids, page_json, studies
from ctmirror.server.v2.stored import PAGE_COLUMNS, stored_records, stored_texts
from ctmirror.server.v2.study_lookup import loaded_current_text, study, study_by_query, study_text

__all__ = ["PAGE_COLUMNS", "V2Error", "csv_text", "listed", "loaded_current_text", "make_search_tables",
           "matching_nct_ids", "page_json", "page_token_state", "parameters", "stored_records", "stored_texts",
           "studies", "study", "study_by_query", "study_text"]

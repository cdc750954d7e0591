"""Where an Essie term is looked for: the query parameters' contexts and every AREA[...] name ctmirror searches
(by piece name, alternative name or field path), and the fields a search sorts by."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctmirror.server.records import leaf_pieces

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class Context:
    """Where an Essie term is looked for. kind: 'text' (the search index: field, areas), 'value' (a structured
    field of trial_card), 'record' (field, a piece name, read from the records: record_areas.py), or one of the
    leaf queries of sql/serve/."""
    kind: str
    field: str = ""
    areas: tuple[str, ...] | None = None
    expansion: str = "relaxation"  # Essie's EXPANSION level in force (EXPANSION_LEVELS)
    coverage: str = "contains"  # Essie's COVERAGE in force (essie.COVERAGES)


# EXPANSION[level] → (concept expansion, scattered words): None and Term match the words as written (plural and
# case folded, as every match is); Concept adds synonyms and the links the records teach; Relaxation (the
# default) and Lossy let unquoted words scatter over the areas.
EXPANSION_LEVELS = {"none": (False, False), "term": (False, False), "concept": (True, False),
                    "relaxation": (True, True), "lossy": (True, True)}
# Leaf queries whose unquoted words are each looked for (a phrase in quotes stays one).
WORD_BY_WORD = ("eligibility", "outcome", "sponsor", "lead_sponsor", "stored_words", "why_stopped")
# Text fields read from every version's rows (sql/serve/stored_words_leaf.sql), not the search index.
STORED_WORDS = ("DetailedDescription", "OrgFullName", "InterventionDescription", "InterventionArmGroupLabel",
                "PrimaryOutcomeDescription", "PrimaryOutcomeTimeFrame", "SecondaryOutcomeDescription",
                "SecondaryOutcomeTimeFrame", "OtherOutcomeMeasure", "OtherOutcomeDescription", "OtherOutcomeTimeFrame")


QUERY_PARAMETERS = {
    "query.cond": Context("text", "condition", None),
    "query.intr": Context("text", "intervention", None),
    "query.term": Context("text", "term"),
    "query.titles": Context("text", "term", ("Acronym", "BriefTitle", "OfficialTitle")),
    "query.locn": Context("location"),
    "query.spons": Context("sponsor"),
    "query.lead": Context("lead_sponsor"),
    "query.outc": Context("outcome"),
    "query.id": Context("id"),
    # PatientSearch: the words a patient would use, over the basic search's areas
    "query.patient": Context("text", "term"),
}
ADVANCED = Context("text", "term")
# The organisation's study ID and the secondary IDs (study_identifier): IdSearch's, found whole; BasicSearch's too,
# weighing this (ours: the API does not publish it), the weight of the lane the free text's matcher scores them in
# (sql/methods/_matching.sql, identifier_lane).
IDENTIFIER_AREAS = ("OrgStudyId", "SecondaryId")
IDENTIFIER_WEIGHT = 0.3
# AREA[...] names → where they are looked for. The search index's areas are matched as the methods match.
INDEX_AREAS = {
    "condition": ("Condition", "ConditionMeshTerm", "ConditionAncestorTerm", "Keyword"),
    "intervention": ("InterventionName", "InterventionOtherName", "InterventionMeshTerm", "InterventionAncestorTerm",
                     "ArmGroupLabel", "ArmGroupDescription"),
    "term": ("BriefTitle", "OfficialTitle", "Acronym", "NCTId", "BriefSummary"),
}
STRUCTURED_AREAS = ("OverallStatus", "Phase", "StudyType", "Sex", "StdAge", "LeadSponsorClass", "HasResults",
                    "MinimumAge", "MaximumAge", "EnrollmentCount", "StartDate", "PrimaryCompletionDate",
                    "CompletionDate", "StudyFirstPostDate", "LastUpdatePostDate", "ResultsFirstPostDate",
                    "EnrollmentType")
# The record's submission, QC and verification dates (sql/schema/helpers.sql, submission_day): AREA[...] ranges
# and sorts.
SUBMISSION_DATES = ("StatusVerifiedDate", "StudyFirstSubmitDate", "StudyFirstSubmitQCDate", "ResultsFirstSubmitDate",
                    "ResultsFirstSubmitQCDate", "DispFirstSubmitDate", "DispFirstSubmitQCDate", "DispFirstPostDate",
                    "LastUpdateSubmitDate", "EstimatedResultsFirstSubmitDate", "FirstMCPPostDate")
STRUCTURED_AREAS += SUBMISSION_DATES
DATE_AREAS = ("StartDate", "PrimaryCompletionDate", "CompletionDate", "StudyFirstPostDate", "LastUpdatePostDate",
              "ResultsFirstPostDate", *SUBMISSION_DATES)
OTHER_AREAS = {"EligibilityCriteria": Context("eligibility"), "LeadSponsorName": Context("lead_sponsor"),
               "LocationCountry": Context("location"), "LocationCity": Context("location"),
               "LocationState": Context("location"), "LocationFacility": Context("location"),
               "LocationZip": Context("location"),
               "OutcomeMeasure": Context("outcome"), "PrimaryOutcomeMeasure": Context("outcome"),
               "SecondaryOutcomeMeasure": Context("outcome"), "NCTIdAlias": Context("id"),
               "CollaboratorName": Context("sponsor"), "HealthyVolunteers": Context("healthy"),
               **{area: Context("stored_words", area) for area in STORED_WORDS},
               "WhyStopped": Context("why_stopped"), "LastKnownStatus": Context("last_known"),
               **{area: Context("identifier", "", (area,)) for area in IDENTIFIER_AREAS},
               **{area: Context("design", area) for area in ("DesignAllocation", "DesignPrimaryPurpose",
                                                             "DesignInterventionModel", "DesignMasking",
                                                             "InterventionType", "LocationStatus",
                                                             "CollaboratorClass")}}
# The search-areas listing's areas outside the search index: name, parameter (query.<param>), the pieces searched.
OTHER_SEARCH_DOCUMENTS = (("TitleSearch", "titles", ("Acronym", "BriefTitle", "OfficialTitle")),
                          ("LocationSearch", "locn", ("LocationFacility", "LocationCity", "LocationState",
                                                      "LocationZip", "LocationCountry")),
                          ("SponsorSearch", "spons", ("LeadSponsorName", "CollaboratorName", "OrgFullName")),
                          ("OutcomeSearch", "outc", ("OutcomeMeasure",)),
                          ("IdSearch", "id", ("NCTId", "NCTIdAlias", "Acronym", *IDENTIFIER_AREAS)),
                          ("LeadSponsorName", "lead", ("LeadSponsorName",)))
# An area name that is no piece of the record, as the pieces it stands for.
AREA_PIECES = {"OutcomeMeasure": ("PrimaryOutcomeMeasure", "SecondaryOutcomeMeasure", "OtherOutcomeMeasure")}
# The search-areas listing's areas by name, each what its query parameter searches (AREA[ConditionSearch] is
# query.cond's search; PatientSearch, query.patient's, which the listing leaves out).
SEARCH_DOCUMENT_AREAS = {"BasicSearch": "query.term", "ConditionSearch": "query.cond",
                         "InterventionSearch": "query.intr", "TitleSearch": "query.titles",
                         "LocationSearch": "query.locn", "SponsorSearch": "query.spons", "OutcomeSearch": "query.outc",
                         "IdSearch": "query.id", "PatientSearch": "query.patient"}
AREAS: dict[str, Context] = {
    **{area.lower(): QUERY_PARAMETERS[param] for area, param in SEARCH_DOCUMENT_AREAS.items()},
    **{area.lower(): Context("text", field, (area,))
       for field, areas in INDEX_AREAS.items() for area in areas},
    **{area.lower(): Context("value", area) for area in STRUCTURED_AREAS},
    **{area.lower(): context for area, context in OTHER_AREAS.items()},
}
SORTABLE = {name.lower(): name for name in ("EnrollmentCount", "StartDate", "PrimaryCompletionDate", "CompletionDate",
                                            "StudyFirstPostDate", "LastUpdatePostDate", "ResultsFirstPostDate",
                                            *SUBMISSION_DATES)}


def area_context(name: str) -> Context | None:
    """What AREA[name] searches: name is an area or leaf field by piece name, alternative name or field path (any
    case); a leaf field with no area of its own is read from the records (record_areas.py); None: no such field."""
    piece = leaf_pieces().get(name.lower())
    return AREAS.get(name.lower()) or (piece and (AREAS.get(piece.lower()) or Context("record", piece))) or None



-- study_structure(): the JSON structure of a v2 study record that ctmirror reads (a json_transform shape).
-- It is also the shape the loader validates records against (ingest/validate.py walks it), so a field added
-- here is both extracted and type-checked. Fields not named here are kept in the raw JSON, never lost.
CREATE OR REPLACE MACRO study_structure() AS '{
  "protocolSection": {
    "identificationModule": {
      "nctId": "VARCHAR", "nctIdAliases": ["VARCHAR"], "briefTitle": "VARCHAR", "officialTitle": "VARCHAR",
      "acronym": "VARCHAR", "orgStudyIdInfo": {"id": "VARCHAR"}, "secondaryIdInfos": [{"id": "VARCHAR"}],
      "organization": {"fullName": "VARCHAR", "class": "VARCHAR"}
    },
    "statusModule": {
      "statusVerifiedDate": "VARCHAR", "overallStatus": "VARCHAR", "lastKnownStatus": "VARCHAR",
      "whyStopped": "VARCHAR",
      "startDateStruct": {"date": "VARCHAR", "type": "VARCHAR"},
      "primaryCompletionDateStruct": {"date": "VARCHAR", "type": "VARCHAR"},
      "completionDateStruct": {"date": "VARCHAR", "type": "VARCHAR"},
      "studyFirstSubmitDate": "VARCHAR", "studyFirstSubmitQcDate": "VARCHAR", "resultsFirstSubmitDate": "VARCHAR",
      "resultsFirstSubmitQcDate": "VARCHAR", "dispFirstSubmitDate": "VARCHAR", "dispFirstSubmitQcDate": "VARCHAR",
      "dispFirstPostDateStruct": {"date": "VARCHAR", "type": "VARCHAR"}, "lastUpdateSubmitDate": "VARCHAR",
      "studyFirstPostDateStruct": {"date": "VARCHAR", "type": "VARCHAR"},
      "resultsFirstPostDateStruct": {"date": "VARCHAR", "type": "VARCHAR"},
      "lastUpdatePostDateStruct": {"date": "VARCHAR", "type": "VARCHAR"}
    },
    "sponsorCollaboratorsModule": {
      "leadSponsor": {"name": "VARCHAR", "class": "VARCHAR"},
      "collaborators": [{"name": "VARCHAR", "class": "VARCHAR"}]
    },
    "descriptionModule": {"briefSummary": "VARCHAR", "detailedDescription": "VARCHAR"},
    "conditionsModule": {"conditions": ["VARCHAR"], "keywords": ["VARCHAR"]},
    "designModule": {
      "studyType": "VARCHAR", "phases": ["VARCHAR"],
      "enrollmentInfo": {"count": "BIGINT", "type": "VARCHAR"},
      "designInfo": {"allocation": "VARCHAR", "interventionModel": "VARCHAR", "primaryPurpose": "VARCHAR",
                     "observationalModel": "VARCHAR", "timePerspective": "VARCHAR",
                     "maskingInfo": {"masking": "VARCHAR", "whoMasked": ["VARCHAR"]}}
    },
    "armsInterventionsModule": {
      "armGroups": [{"label": "VARCHAR", "type": "VARCHAR", "description": "VARCHAR", "interventionNames": ["VARCHAR"]}],
      "interventions": [{"type": "VARCHAR", "name": "VARCHAR", "description": "VARCHAR",
                         "armGroupLabels": ["VARCHAR"], "otherNames": ["VARCHAR"]}]
    },
    "outcomesModule": {
      "primaryOutcomes": [{"measure": "VARCHAR", "description": "VARCHAR", "timeFrame": "VARCHAR"}],
      "secondaryOutcomes": [{"measure": "VARCHAR", "description": "VARCHAR", "timeFrame": "VARCHAR"}],
      "otherOutcomes": [{"measure": "VARCHAR", "description": "VARCHAR", "timeFrame": "VARCHAR"}]
    },
    "eligibilityModule": {
      "eligibilityCriteria": "VARCHAR", "healthyVolunteers": "BOOLEAN", "sex": "VARCHAR",
      "minimumAge": "VARCHAR", "maximumAge": "VARCHAR", "stdAges": ["VARCHAR"]
    },
    "contactsLocationsModule": {
      "locations": [{"facility": "VARCHAR", "status": "VARCHAR", "city": "VARCHAR", "state": "VARCHAR",
                     "zip": "VARCHAR", "country": "VARCHAR", "geoPoint": {"lat": "DOUBLE", "lon": "DOUBLE"}}]
    },
    "referencesModule": {"references": [{"pmid": "VARCHAR", "type": "VARCHAR", "citation": "VARCHAR"}]}
  },
  "derivedSection": {
    "miscInfoModule": {
      "versionHolder": "VARCHAR",
      "submissionTracking": {"estimatedResultsFirstSubmitDate": "VARCHAR",
                             "firstMcpInfo": {"postDateStruct": {"date": "VARCHAR", "type": "VARCHAR"}}}
    },
    "conditionBrowseModule": {
      "meshes": [{"id": "VARCHAR", "term": "VARCHAR"}], "ancestors": [{"id": "VARCHAR", "term": "VARCHAR"}],
      "browseLeaves": [{"id": "VARCHAR", "name": "VARCHAR", "asFound": "VARCHAR", "relevance": "VARCHAR"}]
    },
    "interventionBrowseModule": {
      "meshes": [{"id": "VARCHAR", "term": "VARCHAR"}], "ancestors": [{"id": "VARCHAR", "term": "VARCHAR"}],
      "browseLeaves": [{"id": "VARCHAR", "name": "VARCHAR", "asFound": "VARCHAR", "relevance": "VARCHAR"}]
    }
  },
  "hasResults": "BOOLEAN"
}';

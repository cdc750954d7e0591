-- study_versions: one row per distinct version of a study ever seen, with its raw JSON until the first publish
-- that reads the segment has written it to the segment's record file (records.zst) and dropped it from here
-- (publish/without_records.sql): a segment holds each record once. record_bytes: the record's size.
-- key: nct_id, content_hash
SELECT
    nct_id,
    content_hash,
    partial_date(d.protocolSection.statusModule.lastUpdatePostDateStruct.date) AS last_update_post_date,
    partial_date(d.protocolSection.statusModule.studyFirstPostDateStruct.date) AS study_first_post_date,
    d.derivedSection.miscInfoModule.versionHolder AS version_holder,
    ingested_at,
    source,
    source_date,
    receipt_id,
    locator,
    raw,
    strlen(raw) AS record_bytes
FROM new_versions

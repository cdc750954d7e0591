-- study_versions: one row per distinct version of a study ever seen, with its raw JSON until the first publish
-- that reads the segment has written it to the segment's record file (records.zst) and dropped it from here
-- (publish/queries.sql (without_records)): a segment holds each record once. record_bytes: the record's size. A record
-- received as a whole zip member is not here even then: raw_member (dropped with raw) says where it lies in the
-- zip, from which the record file refers to it (ctmirror/core/record_files.py).
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
    -- a zip member's record is read from raw/ to write the record file: not written here at all
    CASE WHEN raw_member IS NULL THEN raw END AS raw,
    raw_member,
    coalesce(raw_member[3]::BIGINT, strlen(raw)) AS record_bytes
FROM new_versions

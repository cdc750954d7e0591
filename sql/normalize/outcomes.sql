-- outcomes: one row per primary, secondary or other outcome measure of a study version.
-- key: nct_id, content_hash, outcome_type, ordinal
SELECT nct_id, content_hash, outcome_type, ordinal, o.measure AS measure, o.description AS description,
       o.timeFrame AS time_frame
FROM (
    SELECT nct_id, content_hash, 'PRIMARY' AS outcome_type, generate_subscripts(l, 1) AS ordinal, unnest(l) AS o
    FROM (SELECT nct_id, content_hash, d.protocolSection.outcomesModule.primaryOutcomes AS l FROM new_versions)
    UNION ALL
    SELECT nct_id, content_hash, 'SECONDARY', generate_subscripts(l, 1), unnest(l)
    FROM (SELECT nct_id, content_hash, d.protocolSection.outcomesModule.secondaryOutcomes AS l FROM new_versions)
    UNION ALL
    SELECT nct_id, content_hash, 'OTHER', generate_subscripts(l, 1), unnest(l)
    FROM (SELECT nct_id, content_hash, d.protocolSection.outcomesModule.otherOutcomes AS l FROM new_versions)
)

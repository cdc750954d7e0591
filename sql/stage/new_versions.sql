-- new_versions: parsed records whose (nct_id, content_hash) the warehouse has not seen, first occurrence kept.
-- known_versions holds earlier segments' (nct_id, content_hash); receipts this batch's receipts. Only the
-- surviving ordinals are materialised: copying the parsed records themselves would double the batch's memory.
CREATE OR REPLACE TABLE new_ordinals AS
SELECT ordinal
FROM (SELECT ordinal, content_hash, d.protocolSection.identificationModule.nctId AS nct_id FROM parsed) AS p
WHERE NOT EXISTS (
    SELECT 1 FROM known_versions AS k WHERE k.nct_id = p.nct_id AND k.content_hash = p.content_hash
)
QUALIFY row_number() OVER (PARTITION BY nct_id, content_hash ORDER BY ordinal) = 1;

CREATE OR REPLACE VIEW new_versions AS
SELECT
    p.ordinal,
    p.receipt_id,
    p.locator,
    p.raw,
    p.raw_member,
    p.content_hash,
    p.d,
    p.d.protocolSection.identificationModule.nctId AS nct_id,
    rc.received_at AS ingested_at,
    rc.source,
    rc.source_date,
    rc.origin
FROM parsed AS p
SEMI JOIN new_ordinals USING (ordinal)
JOIN receipts AS rc USING (receipt_id);

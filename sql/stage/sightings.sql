-- sightings of one batch: every well-formed record received, new version or not (a full harvest's "seen" set).
SELECT p.receipt_id, p.d.protocolSection.identificationModule.nctId AS nct_id, p.content_hash, p.locator,
       rc.received_at AS seen_at
FROM parsed AS p
JOIN receipts AS rc USING (receipt_id)
ORDER BY p.ordinal

-- seen_in_receipts: the studies a set of receipts ($receipts) carried ($sightings: every segment's sightings).
SELECT DISTINCT nct_id FROM read_parquet($sightings) WHERE list_contains($receipts, receipt_id)

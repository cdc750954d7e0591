-- The Python API's one-statement queries. Each query begins with a line `-- name: <name>` and is read by
-- read_sql("calls/queries.sql", "<name>") (ctmirror/core/sqlfiles.py).

-- name: catalog_format
-- What a catalog was built by (publish/queries.sql (catalog_format)). A catalog built before the digests has no such
-- columns, or no such table: the Mirror reads either as another version's.
SELECT tables_digest, macros_digest FROM catalog_format;

-- name: near_versions
-- The versions with a site within $geo_km km of ($geo_lat, $geo_lon) (versions_near): search's `near`, read before
-- the search, so a search without one never opens the locations (a filter of the search that read them would read
-- them at every call: a NULL point does not fold).
SELECT coalesce(list(version_no), []) FROM versions_near($geo_lat::DOUBLE, $geo_lon::DOUBLE, $geo_km::DOUBLE)

-- name: reconstructed_cards
-- Of the cards a strict call ranked ($card_numbers), those shown reconstructed for its cutoff: the studies the same
-- call with exact answers only leaves out (the methods' left_out). {card_table}: trial_card or stopped_card, ours.
SELECT card_no FROM {card_table} WHERE card_no IN (SELECT unnest($card_numbers::BIGINT[])) AND NOT as_of_exact

-- The rows a patch kept of a table of PATCHED_BY_NEW_VERSION ({table}) under their versions' new numbers, where it
-- renumbered them (patch/renumbered_version.sql): between the two statements of patch/by_new_version.sql.
UPDATE {table} SET version_no = r.new_no
FROM patch.renumbered_version AS r
WHERE {table}.version_no = r.old_no;

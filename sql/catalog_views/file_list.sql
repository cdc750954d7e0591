-- The files of a view, as paths relative to the folder the catalog belongs to ({relative}: a list of quoted
-- relative paths). A reader sets the variable ctmirror_root to where that folder is now (ctmirror.mirror), so a
-- warehouse answers the same from any working directory and after being moved or copied; a plain `duckdb`
-- session without it reads the folder where the catalog was built ({root}).
list_transform({relative}, f -> coalesce(getvariable('ctmirror_root'), {root}) || '/' || f)

-- Where the folder a catalog reads its files from is now ($root, absolute): see sql/catalog_views/file_list.sql.
SET VARIABLE ctmirror_root = $root;

-- A reader may read files only below these folders ($folders: the state's folder and the segments it reads, or a
-- snapshot's folder), once sql/session/lock_reader.sql has turned external access off.
SET allowed_directories = $folders;

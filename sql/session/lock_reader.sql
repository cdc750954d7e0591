-- Run last when a reader opens (ctmirror/readonly.py): no file outside the allowed folders, no URL, no ATTACH, and
-- no further change of any setting, these included.
SET enable_external_access = false;
SET lock_configuration = true;

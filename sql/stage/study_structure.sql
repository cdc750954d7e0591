-- The record shape (sql/schema/study_structure.sql) as JSON text, for the Python validator to compile.
SELECT study_structure()

-- The cards of a call's stopped trials, from stopped_card ({card_numbers}: integer literals of ours, as in
-- cards.sql, so DuckDB looks them up in the table's index).
SELECT card_no, card FROM stopped_card WHERE card_no IN ({card_numbers})

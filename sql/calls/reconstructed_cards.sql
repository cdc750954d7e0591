-- Of the cards a strict call ranked ($card_numbers), those shown reconstructed for its cutoff: the studies the same
-- call with exact answers only leaves out (the methods' left_out). {card_table}: trial_card or stopped_card, ours.
SELECT card_no FROM {card_table} WHERE card_no IN (SELECT unnest($card_numbers::BIGINT[])) AND NOT as_of_exact

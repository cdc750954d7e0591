-- The cards of many calls' stopped trials at once (more than answers.LITERAL_KEYS_MAX): one scan of stopped_card.
SELECT card_no, card FROM stopped_card WHERE card_no IN (SELECT unnest($card_numbers::BIGINT[]))

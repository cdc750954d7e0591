-- After a patch, the keys that order as names do (sponsor_keys(), drug_keys(): sql/index/07_trial_card.sql)
-- over every version again: a name the changed studies brought moves the places of the names after it, and the
-- patch's own rows were numbered among their studies' names alone. Only rows whose key changed are written.
CREATE TEMP TABLE patched_sponsor_key AS FROM sponsor_keys();
UPDATE trial_card SET sponsor_key = k.sponsor_key
FROM patched_sponsor_key AS k
WHERE trial_card.sponsor = k.sponsor AND trial_card.sponsor_key <> k.sponsor_key;
DROP TABLE patched_sponsor_key;
CREATE TEMP TABLE patched_drug_key AS FROM drug_keys();
UPDATE trial_drug_key SET drug_key = k.drug_key
FROM patched_drug_key AS k
WHERE lower(trial_drug_key.drug_name) = k.drug_lower AND trial_drug_key.drug_key <> k.drug_key;
DROP TABLE patched_drug_key;

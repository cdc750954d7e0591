-- Words as the matcher reads them: every text's (search_norm, after its Unicode tables) and a query's.

-- possessive_s(possessed): an apostrophe (' ’ ʼ ‘ `) between a word's last letter and a final s deleted, so the
-- possessive is the word's plural, which search_norm drops: "Alzheimer's Disease", "Alzheimers Disease" and
-- "Alzheimer Disease" (the MeSH heading) are one text, as the registry finds them. Other apostrophes separate
-- words. Applied to lower-case, space-padded text, after compatibility forms are folded. The s must end the word
-- at an ASCII separator (any other character is taken for a letter, as on its left): the classes of RE2's Unicode
-- letters took milliseconds to compile, and every query planned over search_norm compiles them.
CREATE OR REPLACE MACRO possessive_s(possessed) AS
    regexp_replace(possessed,
                   '([^\x00-\x2F\x3A-\x40\x5B-\x60\x7B-\x7F])[''’ʼ‘`]s([\x00-\x2F\x3A-\x40\x5B-\x60\x7B-\x7F])',
                   '\1s\2', 'g');

-- search_norm(s): text as the matcher compares it: compatibility forms folded (NFKC, one character at a time:
-- 'Ｘ' -> 'X', 'ﬁ' -> 'fi'), lower case, accents stripped, a possessive's apostrophe deleted (possessive_s), every
-- run of punctuation, separators and separating symbols of any script turned to one space ('X，Y' and 'X–Y' are
-- two words), a plain plural 's' dropped, one space padding each side. A phrase matches a text when
-- search_norm(text) contains search_norm(phrase): whole words only, so 'ASA' never matches 'Glasgow', and
-- 'Non-Alcoholic' matches 'non alcoholic'. Letters of every script are kept. ASCII text (strlen counting bytes
-- equals length counting characters) takes the short class of everything ASCII but letters and digits; other text
-- the Unicode macros of unicode_text.sql. Each macro here reads its argument once where it passes it on: a macro's
-- argument is copied wherever the macro reads it, and compatibility_fold reads its own nine times.
CREATE OR REPLACE MACRO search_norm(s) AS
    regexp_replace(
        CASE WHEN strlen(s) = length(s)
             THEN regexp_replace(possessive_s(' ' || lower(s) || ' '), '[\x00-\x2F\x3A-\x40\x5B-\x60\x7B-\x7F]+', ' ',
                                 'g')
             ELSE word_separators_to_space(possessive_s(' ' || lower(strip_accents(compatibility_fold(s))) || ' '))
        END,
        '(\S{3})s ', '\1 ', 'g');

-- query_norm(q): a query as the matcher takes it: search_norm of its text; a query written in double quotes is
-- a phrase, marked by a leading '"' (ctmirror/core/words.py query_norm, the same rule).
CREATE OR REPLACE MACRO query_norm(q) AS
    CASE WHEN regexp_full_match(trim(q), '"[^"]*[^"\s][^"]*"') THEN '"' || search_norm(trim(q)[2:-2])
         ELSE search_norm(q) END;

-- stop_words(): words a query's scattered words may leave out (field_hit_rows_many): a phrase keeps them.
CREATE OR REPLACE MACRO stop_words() AS
    ['a', 'an', 'and', 'are', 'as', 'at', 'be', 'by', 'for', 'from', 'in', 'is', 'it', 'of', 'on', 'or', 'the',
     'to', 'with'];

-- spelling_pairs(): the two spellings of one word, each pair once: British and American ("tumour", "tumor";
-- "leukaemia", "leukemia"; "oesophageal", "esophageal"; "randomised", "randomized") and the Roman numerals of one
-- to four ("type II diabetes", "type 2 diabetes"; "stage IV", "stage 4"), which the registry's search treats as one
-- word (its spelling variants). Written as search_norm leaves them (a plural 's' dropped: "oesophagu");
-- tests/test_word_semantics.py checks that.
CREATE OR REPLACE MACRO spelling_pairs() AS
    [['1', 'i'], ['2', 'ii'], ['3', 'iii'], ['4', 'iv'], ['aetiology', 'etiology'], ['ageing', 'aging'],
     ['aluminium', 'aluminum'], ['amenorrhea', 'amenorrhoea'], ['anaemia', 'anemia'], ['anaemic', 'anemic'],
     ['anaesthesia', 'anesthesia'], ['anaesthesiology', 'anesthesiology'], ['anaesthetic', 'anesthetic'],
     ['anaesthetist', 'anesthetist'], ['apnea', 'apnoea'], ['bacteraemia', 'bacteremia'], ['behavior', 'behaviour'],
     ['behavioral', 'behavioural'], ['caesarean', 'cesarean'], ['caesarian', 'cesarian'],
     ['catheterisation', 'catheterization'], ['celiac', 'coeliac'], ['center', 'centre'], ['color', 'colour'],
     ['diarrhea', 'diarrhoea'], ['diarrheal', 'diarrhoeal'], ['dyslipidaemia', 'dyslipidemia'],
     ['dysmenorrhea', 'dysmenorrhoea'], ['dyspnea', 'dyspnoea'], ['edema', 'oedema'], ['esophageal', 'oesophageal'],
     ['esophagectomy', 'oesophagectomy'], ['esophagiti', 'oesophagiti'], ['esophagogastric', 'oesophagogastric'],
     ['esophagogastroduodenoscopy', 'oesophagogastroduodenoscopy'], ['esophagu', 'oesophagu'],
     ['estradiol', 'oestradiol'], ['estrogen', 'oestrogen'], ['faecal', 'fecal'], ['faece', 'fece'],
     ['fetal', 'foetal'], ['fetu', 'foetu'], ['fiber', 'fibre'], ['gastroesophageal', 'gastrooesophageal'],
     ['glycaemia', 'glycemia'], ['glycaemic', 'glycemic'], ['gonorrhea', 'gonorrhoea'],
     ['gynaecologic', 'gynecologic'], ['gynaecological', 'gynecological'], ['gynaecology', 'gynecology'],
     ['haem', 'heme'], ['haemangioma', 'hemangioma'], ['haematologic', 'hematologic'],
     ['haematological', 'hematological'], ['haematology', 'hematology'], ['haematoma', 'hematoma'],
     ['haematopoietic', 'hematopoietic'], ['haematuria', 'hematuria'], ['haemochromatosi', 'hemochromatosi'],
     ['haemodialysi', 'hemodialysi'], ['haemodynamic', 'hemodynamic'], ['haemoglobin', 'hemoglobin'],
     ['haemoglobinopathy', 'hemoglobinopathy'], ['haemolysi', 'hemolysi'], ['haemolytic', 'hemolytic'],
     ['haemophagocytic', 'hemophagocytic'], ['haemophilia', 'hemophilia'], ['haemopoietic', 'hemopoietic'],
     ['haemoptysi', 'hemoptysi'], ['haemorrhage', 'hemorrhage'], ['haemorrhagic', 'hemorrhagic'],
     ['haemorrhoid', 'hemorrhoid'], ['haemostasi', 'hemostasi'], ['haemostatic', 'hemostatic'],
     ['hospitalisation', 'hospitalization'], ['hospitalised', 'hospitalized'], ['hypercalcaemia', 'hypercalcemia'],
     ['hypercholesterolaemia', 'hypercholesterolemia'], ['hyperglycaemia', 'hyperglycemia'],
     ['hyperkalaemia', 'hyperkalemia'], ['hyperkalaemic', 'hyperkalemic'], ['hyperlipidaemia', 'hyperlipidemia'],
     ['hypernatraemia', 'hypernatremia'], ['hyperphosphataemia', 'hyperphosphatemia'],
     ['hypertriglyceridaemia', 'hypertriglyceridemia'], ['hyperuricaemia', 'hyperuricemia'],
     ['hypocalcaemia', 'hypocalcemia'], ['hypoglycaemia', 'hypoglycemia'], ['hypokalaemia', 'hypokalemia'],
     ['hypomagnesaemia', 'hypomagnesemia'], ['hyponatraemia', 'hyponatremia'],
     ['hypophosphataemia', 'hypophosphatemia'], ['hypopnea', 'hypopnoea'], ['hypoxaemia', 'hypoxemia'],
     ['hypoxaemic', 'hypoxemic'], ['immunisation', 'immunization'], ['ischaemia', 'ischemia'],
     ['ischaemic', 'ischemic'], ['labor', 'labour'], ['leucocyte', 'leukocyte'], ['leucopenia', 'leukopenia'],
     ['leukaemia', 'leukemia'], ['leukaemic', 'leukemic'], ['liter', 'litre'], ['milliliter', 'millilitre'],
     ['normoglycaemia', 'normoglycemia'], ['orthopaedic', 'orthopedic'], ['paediatric', 'pediatric'],
     ['paediatrician', 'pediatrician'], ['paralysed', 'paralyzed'], ['program', 'programme'],
     ['randomisation', 'randomization'], ['randomised', 'randomized'], ['sensitisation', 'sensitization'],
     ['septicaemia', 'septicemia'], ['stabilisation', 'stabilization'], ['sulfasalazine', 'sulphasalazine'],
     ['sulfate', 'sulphate'], ['sulfonylurea', 'sulphonylurea'], ['sulfur', 'sulphur'],
     ['thalassaemia', 'thalassemia'], ['toxaemia', 'toxemia'], ['tumor', 'tumour'], ['uraemia', 'uremia'],
     ['uraemic', 'uremic'], ['vascularisation', 'vascularization'], ['viraemia', 'viremia']];

-- spelling_twins(): normalised words → the other spelling of the same word, both ways (a word in two pairs is an
-- error of map_from_entries). A constant: folded once where a query plans it.
CREATE OR REPLACE MACRO spelling_twins() AS
    map_from_entries(list_concat(list_transform(spelling_pairs(), p -> {'key': p[1], 'value': [p[2]]}),
                                 list_transform(spelling_pairs(), p -> {'key': p[2], 'value': [p[1]]})));

-- spelled_otherwise(norm): a normalised text with each word that has a spelling twin spelled as its first one
-- ("type 2 diabetes" → "type ii diabetes", and back): the synonym groups hold both spellings of each phrase
-- (sql/index/06_synonym.sql), as the index holds both of each word.
CREATE OR REPLACE MACRO spelled_otherwise(norm) AS
    ' ' || array_to_string(list_transform(string_split(trim(norm), ' '),
                                          w -> coalesce(spelling_twins()[w][1], w)), ' ') || ' ';

-- word_variants(w): a normalised word and the other forms the index also holds it as, at the same position
-- (sql/index/04_search_token.sql), so a query's word finds each of them as it is: its other number where English
-- spells it otherwise (search_norm drops a plain plural 's' alone: "therapy" and "therapies", stored as
-- "therapie", find each other, as the registry's lexical variants do; only a 'y' after a consonant, in words of
-- four letters or more), and its spelling_twins.
CREATE OR REPLACE MACRO word_variants(w) AS
    CASE WHEN length(w) >= 4 AND regexp_matches(w, '[^aeiouy]y$') THEN [w, w[:-2] || 'ie']
         WHEN length(w) >= 5 AND regexp_matches(w, '[^aeiouy]ie$') THEN [w, w[:-3] || 'y']
         ELSE [w] END || coalesce(spelling_twins()[w], []);

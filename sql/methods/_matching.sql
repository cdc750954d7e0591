-- The matcher shared by every method: words, phrases and their concepts → texts (token index) → studies, scored.

-- Every matcher takes a list of queries and answers for each by its position k (from 1), so a backtest's
-- thousands of calls match in one pass over the index; the one-query forms are the list of one. They answer with
-- versions of studies (version_no): which version a call shows is trial_card's (shown_at), so a method joins the
-- matched versions to the trial_card rows its call shows. as_ofs: each call's strict cutoff (NULL: current).

-- The query texts the matchers and the methods' *_many macros take (qs) are already normalised,
-- query_norm of what the user wrote: the Python API binds them so (ctmirror/core/words.py, the same function),
-- because the macro's Unicode tables cost a query about a millisecond to set up each time it runs. The forms for
-- SQL users (matched_texts, field_hits, field_matches, term_matches, and each method's one-call macro:
-- search_trials, detect_whitespace, ...) take the text as written and normalise it.

-- Essie's word semantics (docs/methods.md, "How words match"): a query's words need not be contiguous. A version
-- matches when one text of the field's areas holds the query as a phrase (its words at consecutive positions) or a
-- phrase of its concept (synonyms, data-taught links), or when each of the query's words is in some text of the
-- field's areas (scattered: title and condition may hold one each). A query text starting with '"' (query_norm of a
-- quoted query) is a phrase: it matches contiguously only. Phrase matches rank above scattered ones
-- (field_hits_many).

-- covered(norm, term, how): whether a text holds a term (both search_norm's form: words between spaces) as Essie's
-- COVERAGE says: 'fullmatch' the whole text, 'startswith' its first words, 'endswith' its last, else ('contains')
-- anywhere.
CREATE OR REPLACE MACRO covered(norm, term, how) AS
    CASE how WHEN 'fullmatch' THEN norm = term WHEN 'startswith' THEN starts_with(norm, term)
             WHEN 'endswith' THEN ends_with(norm, term) ELSE contains(norm, term) END;

-- scattered_word_list(query): those words of one query; scatters(query, relax): whether its words scatter.
CREATE OR REPLACE MACRO scattered_word_list(query) AS
    list_distinct(list_filter(string_split(trim(query), ' '), w -> w <> '' AND NOT list_contains(stop_words(), w)))[:32];
CREATE OR REPLACE MACRO scatters(query, relax) AS
    relax AND NOT starts_with(query, '"') AND len(list_filter(string_split(trim(query), ' '), w -> w <> '')) >= 2
    AND len(scattered_word_list(query)) >= 1;

-- search_phrases_many(field, qs, expand, relax): per query, the query and, when expand, the phrases of its synonym
-- groups (sql/data/synonyms.csv and an imported thesaurus); scattered: whether the phrase is the query itself and
-- its words scatter (scatters, with relax).
CREATE OR REPLACE MACRO search_phrases_many(field_name, qs, expand := true, relax := false) AS TABLE
WITH normed AS (
    SELECT k, ltrim(query, '"') AS phrase, scatters(query, relax) AS scatters
    FROM (SELECT generate_subscripts(qs, 1) AS k, unnest(qs) AS query)
)
SELECT k, phrase, scatters AND phrase = query_phrase AS scattered
FROM (SELECT n.k, n.phrase AS query_phrase, n.scatters,
             unnest(CASE WHEN expand THEN coalesce(s.phrases, [n.phrase]) ELSE [n.phrase] END) AS phrase
      FROM normed AS n
      LEFT JOIN synonym_set AS s ON s.field = field_name AND s.phrase = n.phrase
      WHERE length(trim(n.phrase)) > 0);

CREATE OR REPLACE MACRO search_phrases(field_name, q) AS TABLE
SELECT phrase FROM search_phrases_many(field_name, [query_norm(q)]);

-- matched_texts_many(field, qs, expand): per query, the texts holding one of its phrases as whole words: each of
-- the phrase's words at consecutive positions (what contains(norm, phrase) would find, read from the narrow
-- token table alone). A text holding two of the phrases comes twice: every use of these rows merges them (a
-- DISTINCT here cost every call half a millisecond).
-- field_tokens(field): the token table a field's phrases read: search_token for the free text (term), field_token
-- (the texts of the condition's and intervention's areas alone, a fraction of the words) for the others; the
-- field is a constant, so the choice is made when the call is planned.
CREATE OR REPLACE MACRO field_tokens(field_name) AS TABLE
SELECT * FROM query_table(CASE WHEN field_name = 'term' THEN 'search_token' ELSE 'field_token' END);

CREATE OR REPLACE MACRO matched_texts_many(field_name, qs, expand := true) AS TABLE
WITH words AS (
    SELECT k, phrase, word_count, i, word
    FROM (SELECT k, phrase, len(words) AS word_count, unnest(words) AS word, generate_subscripts(words, 1) AS i
          FROM (SELECT k, phrase, string_split(trim(phrase), ' ') AS words
                FROM search_phrases_many(field_name, qs, expand := expand)))
),
placed AS (
    -- A phrase's word i sits at start + i, one row per word found, so the count of rows is the count of words.
    SELECT w.k, t.text_id
    FROM words AS w
    JOIN field_tokens(field_name) AS t ON t.token = w.word
    GROUP BY w.k, w.phrase, w.word_count, t.text_id, t.position - w.i
    HAVING count(*) = w.word_count
)
SELECT k, text_id FROM placed;

CREATE OR REPLACE MACRO matched_texts(field_name, q) AS TABLE
SELECT DISTINCT text_id FROM matched_texts_many(field_name, [query_norm(q)]);

-- field_texts_many(field, qs, as_ofs, expand): per query, the texts whose hits count (text_id), in every area of
-- the field they are in, and whether by a link the records taught (learned), when expand, by the call's cutoff:
-- - a drug's other names (intervention_link): the names linked to a text that is the query itself are phrases
--   of the query too, so "Keytruda" finds "Pembrolizumab + Carboplatin" (a link from a text merely holding the
--   query would run away: "pembrolizumab biosimilar BCD-201" would bring in BCD-201's own names);
-- - a condition's MeSH heading (condition_link), linked from every text holding the query, found as the exact
--   text it is in the MeSH and ancestor areas alike, so a study filed under a narrower heading (whose ancestor it
--   is) is found: the heading's descendants.
-- The free text (term) expands by both, as BasicSearch expands a condition's and a drug's names.
-- skip_scattered (a constant: for a caller that only needs which versions match, not how): leaves out the texts
-- holding the query's own phrase when its words scatter (scatters, with relax), whose versions the
-- scattered words find anyway; those texts still lead to their headings.
CREATE OR REPLACE MACRO field_texts_many(field_name, qs, as_ofs, expand := true, skip_scattered := false,
                                         relax := true) AS TABLE
WITH cutoffs AS (SELECT generate_subscripts(as_ofs, 1) AS k, unnest(as_ofs)::DATE AS as_of),
own AS (SELECT k, phrase, scattered
        FROM search_phrases_many(field_name, qs, expand := expand, relax := skip_scattered AND relax)),
phrases AS (  -- a drug's names deduplicated; a condition's phrases are distinct already (a constant branch)
    SELECT k, phrase, false AS learned, scattered FROM own
    WHERE NOT (expand AND field_name IN ('intervention', 'term'))
    UNION ALL
    (SELECT k, phrase, false AS learned, scattered FROM own
     WHERE expand AND field_name IN ('intervention', 'term')
     UNION
     SELECT o.k, lt.norm, true, false
     FROM own AS o
     JOIN search_text AS st ON st.norm = o.phrase
     JOIN intervention_link AS l ON l.text_id = st.text_id
     JOIN search_text AS lt ON lt.text_id = l.term_text_id
     JOIN cutoffs AS a ON a.k = o.k
     WHERE expand AND field_name IN ('intervention', 'term')
       AND CASE WHEN a.as_of IS NULL THEN l.is_current ELSE l.learned_from <= a.as_of END)
),
words AS (
    SELECT k, phrase, learned, scattered, word_count, i, word
    FROM (SELECT k, phrase, learned, scattered, len(words) AS word_count, unnest(words) AS word,
                 generate_subscripts(words, 1) AS i
          FROM (SELECT k, phrase, learned, scattered, string_split(trim(phrase), ' ') AS words FROM phrases))
),
direct AS (  -- a phrase's word i sits at start + i, one row per word found: the count of rows is the count of words
    SELECT w.k, t.text_id, w.learned, w.scattered
    FROM words AS w
    JOIN field_tokens(field_name) AS t ON t.token = w.word
    GROUP BY w.k, w.phrase, w.learned, w.scattered, w.word_count, t.text_id, t.position - w.i
    HAVING count(*) = w.word_count
),
headings AS (  -- a heading that is the very text teaching it counts once, as that text
    SELECT d.k, l.term_text_id AS text_id
    FROM direct AS d
    JOIN condition_link AS l USING (text_id)
    JOIN cutoffs AS a ON a.k = d.k
    WHERE expand AND field_name IN ('condition', 'term') AND NOT d.learned AND l.term_text_id <> d.text_id
      AND CASE WHEN a.as_of IS NULL THEN l.is_current ELSE l.learned_from <= a.as_of END
)
SELECT DISTINCT k, text_id, learned  -- a text several phrases or headings find, once
FROM (SELECT k, text_id, learned FROM direct WHERE NOT scattered
      UNION ALL
      SELECT k, text_id, true FROM headings);

-- packed_areas(mask, how): a mask of a field's areas (fewer than 16) shifted to the 16 bits of how it matched
-- (0 a phrase, 1 a linked concept, 2 scattered words), so one bit_or per version gathers all three; the areas of
-- each come out with phrase_areas, concept_areas and scattered_areas (NULL: none). The shift is by a UBIGINT: by
-- an INTEGER column DuckDB widens the result to HUGEINT, and every phrase row's mask would be grouped as 128 bits.
CREATE OR REPLACE MACRO packed_areas(mask, how) AS (mask::UBIGINT << (16 * how)::UBIGINT);
CREATE OR REPLACE MACRO phrase_areas(packed) AS nullif((packed & 65535)::UINTEGER, 0);
CREATE OR REPLACE MACRO concept_areas(packed) AS nullif(((packed >> 16) & 65535)::UINTEGER, 0);
CREATE OR REPLACE MACRO scattered_areas(packed) AS nullif(((packed >> 32) & 65535)::UINTEGER, 0);
-- within_packed(mask): a mask of areas in each of the three places, to keep those areas of a packed mask alone.
CREATE OR REPLACE MACRO within_packed(mask) AS (mask::UBIGINT | (mask::UBIGINT << 16) | (mask::UBIGINT << 32));

-- field_hit_rows_many(field, qs, as_ofs, expand, relax, within, stopped_only, hits_in_plan): per query, the index
-- rows that count: the version (version_no) and the areas of the field it matched in, packed by how (area_mask: see
-- packed_areas): by a phrase, by a linked concept (phrase_hit_rows_many), by scattered words
-- (scattered_word_versions_many: the versions holding every word). expand: concept expansion (synonyms, links); relax:
-- scattered words; within: of these areas alone, a mask (NULL: all); stopped_only (a constant: get_terminated's):
-- of stopped_card's versions alone, read from stopped_hit and stopped_word, a few percent of search_hit and
-- search_word. Each table is a branch of its own, one folded away by the constant: joined as one UNION ALL of the
-- two, the join's filter on text_id no longer reached search_hit's scan (detect_whitespace nearly 4 times as slow).
-- The free text (term) also finds a study by its organisation's or secondary study ID given whole, as BasicSearch does
-- (study_identifier, kept apart from the search index's texts), scored in its lane of weight 0.3 (identifier_lane).
CREATE OR REPLACE MACRO identifier_lane() AS (
    SELECT (1::UINTEGER << (area_id - 1))::UINTEGER FROM search_area WHERE field = 'term' AND area = 'StudyType');

-- phrase_hit_rows_many(field, qs, as_ofs, expand, stopped_only, skip_scattered, relax, hits_in_plan): the rows of a
-- phrase or a linked concept (see field_hit_rows_many below), one per text found (field_texts_many) and version
-- holding it. Here phrase_hit_rows_in_sql_many's, as any DuckDB client reads the catalog; ctmirror's readers replace
-- it, on their own connections, by one that reads the condition's and the intervention's from the search_hit rows
-- they hold (ctmirror/read/phrase_hits.py), for the same rows, unless hits_in_plan is true (a constant: a batch of
-- search_trials calls, whose texts' rows one join reads for all the calls in less time).
CREATE OR REPLACE MACRO phrase_hit_rows_in_sql_many(field_name, qs, as_ofs, expand := true, stopped_only := false,
                                                    skip_scattered := false, relax := true) AS TABLE
SELECT w.k, h.version_no, packed_areas(h.area_mask, w.learned::INTEGER) AS area_mask
FROM search_hit AS h
JOIN field_texts_many(field_name, qs, as_ofs, expand := expand, skip_scattered := skip_scattered,
                      relax := relax) AS w USING (text_id)
WHERE NOT stopped_only AND h.field = field_name
UNION ALL
SELECT w.k, h.version_no, packed_areas(h.area_mask, w.learned::INTEGER) AS area_mask
FROM stopped_hit AS h
JOIN field_texts_many(field_name, qs, as_ofs, expand := expand, skip_scattered := skip_scattered,
                      relax := relax) AS w USING (text_id)
WHERE stopped_only AND h.field = field_name
UNION ALL
SELECT q.k, i.version_no, packed_areas(identifier_lane(), 0) AS area_mask
FROM (SELECT generate_subscripts(qs, 1) AS k, ltrim(unnest(qs), '"') AS norm) AS q
JOIN study_identifier AS i USING (norm)
WHERE NOT stopped_only AND field_name = 'term';

CREATE OR REPLACE MACRO phrase_hit_rows_many(field_name, qs, as_ofs, expand := true, stopped_only := false,
                                             skip_scattered := false, relax := true, hits_in_plan := false) AS TABLE
SELECT *
FROM phrase_hit_rows_in_sql_many(field_name, qs, as_ofs, expand := expand, stopped_only := stopped_only,
                                 skip_scattered := skip_scattered, relax := relax);

-- scattered_words(qs, relax): the queries whose words may scatter (unquoted, two words or more, relax true), each
-- with its distinct words, stop words aside (at most 32).
CREATE OR REPLACE MACRO scattered_words(qs, relax := true) AS TABLE
SELECT k, scattered_word_list(query) AS words
FROM (SELECT generate_subscripts(qs, 1) AS k, unnest(qs) AS query)
WHERE scatters(query, relax);

-- scattered_word_rows_many(field, qs, relax, within, stopped_only): the rows of scattered words (scattered_words),
-- one per word of the query and version holding it in some text of the field's areas (area_mask), before they are
-- grouped by version: those holding every word have word_count rows, so grouping by (k, version_no, word_count)
-- keeps them with HAVING count(*) = word_count (a count costs half what a bit per word and its bit_or did). A
-- condition's or intervention's words are read from search_word (a word's versions, one run of rows), or, with
-- stopped_only (a constant: get_terminated's), from stopped_word, its rows of stopped_card's versions alone; the
-- free text's (term), whose long summaries search_word leaves out, from the texts holding each word (search_token)
-- and their versions (search_hit). (Leaving out the texts that hold the whole query as a phrase, whose versions
-- match anyway, read every candidate text's norm: search's free text 44 ms at the median at 500,000 studies,
-- against 39 without.)
CREATE OR REPLACE MACRO scattered_word_rows_many(field_name, qs, relax := true, within := NULL,
                                                 stopped_only := false) AS TABLE
WITH words AS (
    SELECT k, word_count, word
    FROM (SELECT k, len(words)::UTINYINT AS word_count, unnest(words) AS word
          FROM scattered_words(qs, relax := relax))
),
term_texts AS (
    SELECT DISTINCT w.k, w.word_count, w.word, t.text_id
    FROM words AS w
    JOIN search_token AS t ON t.token = w.word
    WHERE field_name = 'term'
)
SELECT w.k, p.version_no, p.area_mask & coalesce(within::UINTEGER, p.area_mask) AS area_mask, w.word_count
FROM words AS w
JOIN search_word AS p ON p.token = w.word
WHERE NOT stopped_only AND field_name <> 'term' AND p.field = field_name
  AND p.area_mask & coalesce(within::UINTEGER, p.area_mask) <> 0
UNION ALL
SELECT w.k, p.version_no, p.area_mask & coalesce(within::UINTEGER, p.area_mask) AS area_mask, w.word_count
FROM words AS w
JOIN stopped_word AS p ON p.token = w.word
WHERE stopped_only AND field_name <> 'term' AND p.field = field_name
  AND p.area_mask & coalesce(within::UINTEGER, p.area_mask) <> 0
UNION ALL
SELECT x.k, h.version_no, bit_or(h.area_mask & coalesce(within::UINTEGER, h.area_mask)), x.word_count
FROM term_texts AS x
JOIN search_hit AS h ON h.text_id = x.text_id
WHERE h.field = field_name AND h.area_mask & coalesce(within::UINTEGER, h.area_mask) <> 0
GROUP BY x.k, x.word_count, x.word, h.version_no;

-- grouped_word_versions_many(field, qs, relax, within, stopped_only): per query, the versions holding every one of
-- its scattered words, each with the areas they were found in (area_mask, within those of `within`), by grouping
-- scattered_word_rows_many.
CREATE OR REPLACE MACRO grouped_word_versions_many(field_name, qs, relax := true, within := NULL,
                                                   stopped_only := false) AS TABLE
SELECT k, version_no, bit_or(area_mask) AS area_mask
FROM scattered_word_rows_many(field_name, qs, relax := relax, within := within, stopped_only := stopped_only)
GROUP BY k, version_no, word_count
HAVING count(*) = word_count;

-- scattered_word_versions_many(field, qs, relax, within, stopped_only): the same versions. Here
-- grouped_word_versions_many's, as any DuckDB client reads the catalog; ctmirror's readers replace it, on their own
-- connections, by a matcher that intersects the words' sorted versions where it can skip them
-- (ctmirror/read/word_postings.py), for the same rows.
CREATE OR REPLACE MACRO scattered_word_versions_many(field_name, qs, relax := true, within := NULL,
                                                     stopped_only := false) AS TABLE
SELECT *
FROM grouped_word_versions_many(field_name, qs, relax := relax, within := within, stopped_only := stopped_only);

-- words_intersected_outside_plan(): false here, true on ctmirror's readers, whose scattered_word_versions_many
-- intersects each query's words outside the plan. A caller that needs one query's words among a few versions alone
-- (search_trials' condition, among the drug's) reads their rows among those versions itself where this is false, and
-- takes the intersection where it is true. A constant either way: one of the two branches is planned away.
CREATE OR REPLACE MACRO words_intersected_outside_plan() AS false;

CREATE OR REPLACE MACRO field_hit_rows_many(field_name, qs, as_ofs, expand := true, relax := true,
                                            within := NULL, stopped_only := false,
                                            skip_scattered := false, hits_in_plan := false) AS TABLE
SELECT k, version_no, area_mask
FROM phrase_hit_rows_many(field_name, qs, as_ofs, expand := expand, stopped_only := stopped_only,
                          skip_scattered := skip_scattered AND within IS NULL, relax := relax,
                          hits_in_plan := hits_in_plan)
UNION ALL
SELECT k, version_no, packed_areas(area_mask, 2)
FROM scattered_word_versions_many(field_name, qs, relax := relax, within := within, stopped_only := stopped_only);

-- concept_merged(field): the areas in which a linked concept's match adds to a phrase match's score: the
-- condition's MeSH terms (a study whose condition names the query and whose MeSH term is its heading ranks above
-- one with the words alone). Elsewhere a link ranks a study only when no phrase matched it.
CREATE OR REPLACE MACRO concept_merged(field_name) AS TABLE
SELECT coalesce(bit_or((1::UINTEGER << (area_id - 1))::UINTEGER), 0::UINTEGER) AS mask
FROM search_area WHERE field = field_name AND area = 'ConditionMeshTerm';

-- phrase_mask(packed, merged): the areas a version's phrase-level score counts, from its packed areas: a
-- phrase's own, with the linked concept's in the merged areas; a linked concept's alone when no phrase matched.
CREATE OR REPLACE MACRO phrase_mask(packed, merged) AS
    CASE WHEN phrase_areas(packed) IS NULL THEN concept_areas(packed)
         ELSE phrase_areas(packed) | coalesce(concept_areas(packed) & merged, 0::UINTEGER) END;

-- area_mask_score(): every field's area combinations and their scores (sql/index/03_search_hit.sql), a table a
-- field, so a lookup of one field's combination plans the others away.
CREATE OR REPLACE MACRO area_mask_score() AS TABLE
SELECT * FROM condition_mask_score UNION ALL SELECT * FROM intervention_mask_score
UNION ALL SELECT * FROM term_mask_score;

-- scores_by_mask(field): a condition's or an intervention's scores as a list by area mask (1 + the mask: every
-- combination is there, 128 and 2,048), so a version's two scores are two lookups rather than two joins.
CREATE OR REPLACE MACRO scores_by_mask(field_name) AS
    (SELECT list(score ORDER BY area_mask) FROM area_mask_score() WHERE field = field_name);

-- hit_score(phrase_mask, phrase_score, word_score): a version's score from the area_mask_score of its phrase_mask
-- and of the areas its scattered words were found in: a phrase or concept match scores its areas' weights;
-- scattered words alone a quarter of theirs (below a phrase in the Condition or intervention name area alone).
CREATE OR REPLACE MACRO hit_score(phrase_mask, phrase_score, word_score) AS
    CASE WHEN phrase_mask IS NOT NULL THEN phrase_score ELSE 0.25 * word_score END;

-- field_hits_many(field, qs, as_ofs, relax, stopped_only, scores_joined, hits_in_plan): per query, the versions (version_no) matching
-- it in a field ('condition', 'intervention'), scored (hit_score). The methods join on version_no; analysts get the
-- current studies' NCT IDs from field_matches. relax false (a constant: no query of the call has two words or more,
-- as the Python API tells) plans no scattered words; stopped_only true (a constant) finds stopped_card's versions
-- alone; scores_joined true (a constant) looks the scores up by joins rather than in a list by mask;
-- hits_in_plan: see phrase_hit_rows_many.
CREATE OR REPLACE MACRO field_hits_many(field_name, qs, as_ofs, relax := true, stopped_only := false,
                                        scores_joined := false, hits_in_plan := false) AS TABLE
WITH versions AS (
    SELECT k, version_no, bit_or(area_mask) AS packed
    FROM field_hit_rows_many(field_name, qs, as_ofs, relax := relax, stopped_only := stopped_only,
                             hits_in_plan := hits_in_plan)
    GROUP BY k, version_no
),
masked AS (
    SELECT k, version_no, phrase_mask(packed, (SELECT mask FROM concept_merged(field_name))) AS phrase_mask,
           scattered_areas(packed) AS word_mask
    FROM versions
)
SELECT s.k, s.version_no,
       hit_score(s.phrase_mask, c.by_mask[coalesce(s.phrase_mask, 0) + 1], c.by_mask[coalesce(s.word_mask, 0) + 1])
           AS score
FROM masked AS s, (SELECT scores_by_mask(field_name) AS by_mask) AS c
WHERE field_name <> 'term' AND NOT scores_joined
UNION ALL  -- BasicSearch's 65,536 combinations, and a caller's that asks so, looked up by joins (a constant branch)
SELECT s.k, s.version_no, hit_score(s.phrase_mask, p.score, w.score) AS score
FROM masked AS s
JOIN area_mask_score() AS p ON p.field = field_name AND p.area_mask = coalesce(s.phrase_mask, 0)
JOIN area_mask_score() AS w ON w.field = field_name AND w.area_mask = coalesce(s.word_mask, 0)
WHERE field_name = 'term' OR scores_joined;

-- field_studies_many(field, qs, as_ofs, relax): the versions field_hits_many finds, without their scores, for the
-- methods that count and group matches rather than rank them: a query's own phrase is not read where its
-- scattered words find the same versions and more (skip_scattered), which spares a broad query most of its rows.
CREATE OR REPLACE MACRO field_studies_many(field_name, qs, as_ofs, relax := true) AS TABLE
SELECT DISTINCT k, version_no FROM field_hit_rows_many(field_name, qs, as_ofs, relax := relax, skip_scattered := true);

-- field_hits(field, q): every version matching q (as the current state matches its MeSH terms).
CREATE OR REPLACE MACRO field_hits(field_name, q) AS TABLE
SELECT version_no, score FROM field_hits_many(field_name, [query_norm(q)], [NULL::DATE]);

-- field_matches(field, q): the current studies matching q, by NCT ID.
CREATE OR REPLACE MACRO field_matches(field_name, q) AS TABLE
SELECT v.nct_id, h.score FROM field_hits(field_name, q) AS h JOIN study_version AS v USING (version_no)
WHERE v.is_current;

-- term_matches(q): the current studies the free text q finds as query.term and search's `query` do (words,
-- phrases and concepts over BasicSearch's areas), by NCT ID.
CREATE OR REPLACE MACRO term_matches(q) AS TABLE
SELECT * FROM field_matches('term', q);

-- versions_within(lat, lon, km): the versions with a site within km kilometres of the point (haversine on the mean
-- Earth radius), each with the distance of its closest such site (km): the v2 API's filter.geo and geoDecay.
-- versions_near(lat, lon, km): the same versions alone: search's `near`.
-- lon_reach(lat, km): how many degrees of longitude a point within km of a point at latitude lat can lie from it
-- (on the sphere, asin(sin(km / R) / cos(lat)), a hundredth of a degree more for rounding); 180 where the circle
-- reaches a pole, so every longitude.
CREATE OR REPLACE MACRO lon_reach(point_lat, radius_km) AS
    CASE WHEN sin(least(radius_km::DOUBLE / 6371.0088, pi() / 2)) < 0.999 * cos(radians(point_lat::DOUBLE))
         THEN degrees(asin(sin(radius_km::DOUBLE / 6371.0088) / cos(radians(point_lat::DOUBLE)))) + 0.01
         ELSE 180.0 END;
CREATE OR REPLACE MACRO versions_within(point_lat, point_lon, radius_km) AS TABLE
SELECT v.version_no, min(d.km) AS km
FROM (SELECT nct_id, content_hash,
             6371.0088 * 2 * asin(sqrt(
                 pow(sin(radians(lat - point_lat::DOUBLE) / 2), 2)
                 + cos(radians(point_lat::DOUBLE)) * cos(radians(lat))
                   * pow(sin(radians(lon - point_lon::DOUBLE) / 2), 2))) AS km
      FROM all_locations
      -- a degree of latitude is at least 111.19 km of the distance, and lon_reach bounds the longitude: the box
      -- first, read by the scan, spares most sites the trigonometry (at 500,000 studies, 100 miles around Boston:
      -- 963,000 of 8.2 million sites in the band of latitude, 90,000 in the box); a box that crosses the 180th
      -- meridian takes every longitude
      WHERE lat BETWEEN point_lat::DOUBLE - radius_km::DOUBLE / 111.0 AND point_lat::DOUBLE + radius_km::DOUBLE / 111.0
        AND lon BETWEEN CASE WHEN abs(point_lon::DOUBLE) + lon_reach(point_lat, radius_km) <= 180
                             THEN point_lon::DOUBLE - lon_reach(point_lat, radius_km) ELSE -180.0 END
                    AND CASE WHEN abs(point_lon::DOUBLE) + lon_reach(point_lat, radius_km) <= 180
                             THEN point_lon::DOUBLE + lon_reach(point_lat, radius_km) ELSE 180.0 END) AS d
JOIN study_version AS v USING (nct_id, content_hash)
WHERE d.km <= radius_km::DOUBLE
GROUP BY v.version_no;

CREATE OR REPLACE MACRO versions_near(point_lat, point_lon, radius_km) AS TABLE
SELECT version_no FROM versions_within(point_lat, point_lon, radius_km);

-- geo_decay(func, km, scale_km, offset_km, decay): the v2 API's geoDecay, the factor a study's relevance is
-- multiplied by for the distance (km) of its closest site: 1 within offset_km, then falling with the distance
-- beyond it to `decay` at scale_km ('gauss', 'exp' or 'linear': the spec's functions, as search engines define
-- them; linear reaches 0 at scale_km / (1 - decay)).
CREATE OR REPLACE MACRO geo_decay(func, km, scale_km, offset_km, decay) AS
    CASE func
        WHEN 'linear' THEN greatest(0.0, 1.0 - greatest(0.0, km - offset_km) * (1.0 - decay) / scale_km)
        WHEN 'exp' THEN exp(ln(decay) * greatest(0.0, km - offset_km) / scale_km)
        ELSE exp(ln(decay) * pow(greatest(0.0, km - offset_km), 2) / pow(scale_km, 2))
    END;

-- location_matches(location): 'Boston, MA' → versions of studies (version_no) with a site whose place holds every
-- comma-separated part as whole words (a US state's code or name either way, a country by any of its names in
-- sql/data/synonyms.csv). A part with no letter or digit ('%', '-') is no condition: it normalises to nothing,
-- and nothing would be contained in every place. location_matches_many(locations): per location, by its
-- position k from 1, the same. location_places_many(locations): per location, the places (place_norm's norm,
-- a site's search_norm(concat_ws(' , ', facility, city, state, zip, country))) that hold every part.
CREATE OR REPLACE MACRO location_places_many(location_queries) AS TABLE
WITH queries AS (
    SELECT k, place,
           EXISTS (SELECT 1 FROM synonym WHERE field = 'location' AND phrase = search_norm(place)) AS known
    FROM (SELECT generate_subscripts(location_queries, 1) AS k, unnest(location_queries) AS place)
    WHERE place IS NOT NULL
),
parts AS (  -- a place named with a comma ("Korea, Republic of") is one part when it is a known name
    SELECT k, i, part
    FROM (SELECT k, i, search_norm(part) AS part
          FROM (SELECT k, unnest(l) AS part, generate_subscripts(l, 1) AS i
                FROM (SELECT k, CASE WHEN known THEN [place] ELSE string_split(place, ',') END AS l FROM queries)))
    WHERE trim(part) <> ''
),
part_count AS (SELECT k, count(*) AS n FROM parts GROUP BY k),
alternatives AS (
    SELECT k, i, part AS phrase FROM parts
    UNION
    SELECT p.k, p.i, s2.phrase
    FROM parts AS p
    JOIN synonym AS s1 ON s1.field = 'location' AND s1.phrase = p.part
    JOIN synonym AS s2 ON s2.field = 'location' AND s2.group_name = s1.group_name
),
places AS (
    SELECT a.k, pp.norm
    FROM place_norm AS pp
    JOIN alternatives AS a ON contains(pp.norm, a.phrase)
    GROUP BY a.k, pp.norm
    HAVING count(DISTINCT a.i) = (SELECT n FROM part_count AS c WHERE c.k = a.k)
)
SELECT k, norm FROM places;

CREATE OR REPLACE MACRO location_matches_many(location_queries) AS TABLE
SELECT DISTINCT p.k, pp.version_no
FROM place_posting AS pp
JOIN location_places_many(location_queries) AS p USING (norm);

CREATE OR REPLACE MACRO location_matches(location_query) AS TABLE
SELECT version_no FROM location_matches_many([location_query]);

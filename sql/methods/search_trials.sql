-- search_trials(drug, condition, date_before, phase_filter, max_results): trials matching the drug (query.intr
-- areas) and the condition (query.cond areas), as the contract's Trial, by relevance (sum of the two scores)
-- then nct_id. phase_filter: NULL, 'PHASE3' or '(PHASE2 OR PHASE3)'.
-- search_trials_many takes each argument as a list (one entry per call) and returns every call's trials as
-- (k: the call's position from 1, card_no and version_no of the trial_card row shown, relevance), in order: ranked
-- on narrow integer-keyed columns. as_ofs: each call's strict cutoff (NULL: the current state). The Python API runs
-- it (one call or a backtest's thousands at once) and then reads the trials' cards (calls/cards.sql) by number;
-- search_trials joins them here. relax_drugs, relax_conditions: false (a constant) when no drug, or no condition,
-- of the calls has two words or more: the plan then has no scattered words for that side (field_hits_many).
-- hits_in_plan: true (a constant) for a batch of calls, whose phrase texts' rows one join reads for all of them in
-- less time than a reader's function gives each call's (phrase_hit_rows_many).
CREATE OR REPLACE MACRO search_trials_many(drug_queries, condition_queries, cutoffs, as_ofs, phase_filters,
                                           result_limits, relax_drugs := true, relax_conditions := true,
                                           hits_in_plan := false) AS TABLE
WITH calls AS (
    SELECT generate_subscripts(drug_queries, 1) AS k, unnest(cutoffs)::DATE AS cutoff, unnest(as_ofs)::DATE AS as_of,
           unnest(phase_filters) AS phase_filter, unnest(result_limits) AS result_limit
),
d AS (SELECT * FROM field_hits_many('intervention', drug_queries, as_ofs, relax := relax_drugs,
                                  scores_joined := true, hits_in_plan := hits_in_plan)),
c AS (
    -- The condition's rows are kept only for the drug's versions (the only ones that can match both, and far fewer
    -- than a broad condition's) before they are grouped by version: its phrases' rows (word_count 0) and its
    -- scattered words', through one semi-join, so the drug's versions are hashed once. A reader's scattered words
    -- come intersected (one row a version, counted as one word); elsewhere each word's rows, grouped here, since
    -- grouping a broad word's rows for every version ("disease": 366,174 at 500,000 studies) costs more than the rest
    -- of the call (words_intersected_outside_plan).
    SELECT k, version_no, phrase_mask(packed, (SELECT mask FROM concept_merged('condition'))) AS phrase_mask,
           scattered_areas(packed) AS word_mask
    FROM (SELECT k, version_no, bit_or(packed) AS packed
          FROM (SELECT r.k, r.version_no,
                       CASE WHEN r.word_count = 0 THEN bit_or(r.area_mask)
                            ELSE packed_areas(bit_or(r.area_mask), 2) END AS packed
                FROM (SELECT k, version_no, area_mask, 0::UTINYINT AS word_count
                      FROM phrase_hit_rows_many('condition', condition_queries, as_ofs, hits_in_plan := hits_in_plan)
                      UNION ALL
                      SELECT k, version_no, area_mask::UBIGINT, word_count
                      FROM scattered_word_rows_many('condition', condition_queries, relax := relax_conditions)
                      WHERE NOT words_intersected_outside_plan()
                      UNION ALL
                      SELECT k, version_no, area_mask::UBIGINT, 1::UTINYINT AS word_count
                      FROM scattered_word_versions_many('condition', condition_queries, relax := relax_conditions)
                      WHERE words_intersected_outside_plan()) AS r
                SEMI JOIN d ON d.k = r.k AND d.version_no = r.version_no
                GROUP BY r.k, r.version_no, r.word_count
                HAVING r.word_count = 0 OR count(*) = r.word_count)
          GROUP BY k, version_no)
),
matched AS (
    SELECT d.k, d.version_no,
           round(d.score + hit_score(c.phrase_mask, s.by_mask[coalesce(c.phrase_mask, 0) + 1],
                                     s.by_mask[coalesce(c.word_mask, 0) + 1]), 4) AS relevance,
           calls.result_limit, calls.cutoff, calls.as_of, calls.phase_filter,
           unnest(shown_keys(d.version_no, calls.as_of)) AS shown_key
    FROM d
    JOIN c USING (k, version_no)
    JOIN calls USING (k)
    CROSS JOIN (SELECT scores_by_mask('condition') AS by_mask) AS s
),
scored AS (
    SELECT b.k, t.study_no, t.card_no, t.version_no, b.relevance, b.result_limit
    FROM matched AS b
    JOIN trial_card AS t ON t.shown_key = b.shown_key
    WHERE shown_at(t.valid_from, t.valid_to, t.is_current, t.study_first_post_date, b.cutoff, b.as_of,
                   as_of_exact := t.as_of_exact)
      AND (b.phase_filter IS NULL OR t.phase_mask & phase_mask(phase_filter_list(b.phase_filter)) <> 0)
)
SELECT k, card_no, version_no, relevance
FROM scored
QUALIFY row_number() OVER (PARTITION BY k ORDER BY relevance DESC, study_no) <= result_limit
ORDER BY k, relevance DESC, study_no;

CREATE OR REPLACE MACRO search_trials(drug_query, condition_query, cutoff, phase_filter_text, result_limit,
                                      as_of := NULL) AS TABLE
SELECT unnest(trial_of(card_json(x.card_head, x.references_json, t.reconstructed_from, t.overall_status, t.why_stopped,
                                 t.results_posted, t.as_of_exact, t.enrollment, t.start_date, t.completion_date,
                                 t.withheld))),
       r.relevance
FROM search_trials_many([query_norm(drug_query)], [query_norm(condition_query)], [cutoff], [as_of],
                        [phase_filter_text], [result_limit]) AS r
JOIN trial_card AS t USING (card_no)
JOIN trial_text AS x ON x.version_no = t.version_no
ORDER BY r.relevance DESC, r.card_no;

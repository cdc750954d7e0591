-- A boosted term ({inner}: a subquery of this request; Essie's term^N): the same versions, each score times $factor.
SELECT version_no, score * $factor::DOUBLE AS score FROM {inner}

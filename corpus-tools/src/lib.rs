//! heddle-corpus: BEIR corpora in and out, synthetic corpora, query sets.

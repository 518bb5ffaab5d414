//! One order for tied scores where rank matters: trec_eval's, score descending and then
//! external id descending ([`super::trec_order`]).
//!
//! The engine breaks ties by internal doc id, ascending, an order no file shows. A run
//! file is read in trec_eval's order whatever order its lines were written in, so a
//! fusion by rank that took each stream in the engine's order would not be the fusion of
//! the runs `--arm text` and `--arm vector` write: on near-duplicate documents (equal
//! BM25 scores) their RRF scores would differ. Fused streams and the fused list are put
//! in trec_eval's order here (docs/DECISIONS.md, "One order for ties").

use std::collections::HashMap;

use heddle::Searcher;

/// External id and title by internal doc id: what has been read of the stored fields.
pub(super) type Ids = HashMap<u64, (String, String)>;

/// Reorders each group of equal scores in `ranked` (best first) by external id,
/// descending, for the groups that start before `limit` (the rest are not kept). Only
/// documents that tie are looked up, once each, into `ids`.
pub(super) fn order_ties<T>(
    ranked: &mut [T],
    limit: usize,
    key: impl Fn(&T) -> (u64, f64),
    searcher: &Searcher,
    ids: &mut Ids,
) -> heddle::Result<()> {
    let mut start = 0;
    while start < ranked.len().min(limit) {
        let score = key(&ranked[start]).1;
        let end = start
            + ranked[start..]
                .iter()
                .take_while(|t| key(t).1.total_cmp(&score).is_eq())
                .count();
        if end - start > 1 {
            for t in &ranked[start..end] {
                let (doc, score) = key(t);
                if let std::collections::hash_map::Entry::Vacant(e) = ids.entry(doc) {
                    let hit = searcher.resolve(doc, score)?;
                    e.insert((hit.id, hit.title));
                }
            }
            ranked[start..end].sort_by(|a, b| {
                let id = |t: &T| ids[&key(t).0].0.as_bytes();
                id(b).cmp(id(a))
            });
        }
        start = end;
    }
    Ok(())
}

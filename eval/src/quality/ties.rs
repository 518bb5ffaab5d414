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
    let groups: Vec<(usize, usize)> = equal_runs(ranked, |t| key(t).1)
        .take_while(|&(start, _)| start < limit)
        .filter(|&(start, end)| end - start > 1)
        .collect();
    for (start, end) in groups {
        order_group(&mut ranked[start..end], &key, searcher, ids)?;
    }
    Ok(())
}

/// Puts one group of equal scores in trec_eval's order: external id, descending, each
/// id read once into `ids`.
fn order_group<T>(
    group: &mut [T],
    key: &impl Fn(&T) -> (u64, f64),
    searcher: &Searcher,
    ids: &mut Ids,
) -> heddle::Result<()> {
    for t in group.iter() {
        let (doc, score) = key(t);
        if let std::collections::hash_map::Entry::Vacant(e) = ids.entry(doc) {
            let hit = searcher.resolve(doc, score)?;
            e.insert((hit.id, hit.title));
        }
    }
    group.sort_by(|a, b| {
        let id = |t: &T| ids[&key(t).0].0.as_bytes();
        id(b).cmp(id(a))
    });
    Ok(())
}

/// Puts the RRF streams' ties in trec_eval's order (as [`order_ties`] does), but only the
/// groups whose order can change the fused top `hits`: the rest keep the engine's order,
/// and their documents' stored ids are never read.
///
/// A document of a tied group `a..b` (0-based) earns from it between `w / (k + b)` and
/// `w / (k + a + 1)` whatever the group's order, so each document's fused score has a
/// floor and a ceiling before any id is read. Let `floor` be the `hits`-th largest floor:
/// at least `hits` documents score that much in any order. A group none of whose
/// documents can reach `floor` only moves documents that stay below every kept one, so
/// its order is left alone; every document that can reach it sits only in ordered
/// groups, and so has its exact score. The fused top `hits`, and its ties, are then the
/// ones ordering every group gives (the test below shuffles the groups left alone).
pub(super) fn order_rrf_ties(
    streams: &mut [Vec<(u64, f64)>],
    weights: &[f64],
    k: f64,
    hits: usize,
    searcher: &Searcher,
    ids: &mut Ids,
) -> heddle::Result<()> {
    let needed = rrf_groups_to_order(streams, weights, k, hits);
    for (docs, groups) in streams.iter_mut().zip(needed) {
        for (start, end) in groups {
            order_group(&mut docs[start..end], &|&d| d, searcher, ids)?;
        }
    }
    Ok(())
}

/// For each stream, the tied groups (`start..end`, two or more equal scores) whose order
/// can change the RRF fusion's top `hits` ([`order_rrf_ties`]). A stream of weight 0
/// casts no vote, so none of its groups matter.
pub(super) fn rrf_groups_to_order(
    streams: &[Vec<(u64, f64)>],
    weights: &[f64],
    k: f64,
    hits: usize,
) -> Vec<Vec<(usize, usize)>> {
    // Each stream's runs of equal scores (a lone score is a run of one).
    let runs: Vec<Vec<(usize, usize)>> = streams
        .iter()
        .map(|docs| equal_runs(docs, |&(_, score)| score).collect())
        .collect();
    // Where no voting stream ties, nothing needs an order (and no bound is worth taking).
    let ties = |s: usize| runs[s].iter().any(|&(start, end)| end - start > 1);
    if !(0..streams.len()).any(|s| weights[s] > 0.0 && ties(s)) {
        return vec![Vec::new(); streams.len()];
    }
    // Every vote's floor and ceiling: (doc, stream, place, floor, ceiling), a document's
    // first place in a stream being the one that votes, as in the fusion.
    let mut votes: Vec<(u64, usize, usize, f64, f64)> = Vec::new();
    for (s, (docs, w)) in streams.iter().zip(weights).enumerate() {
        if *w <= 0.0 {
            continue;
        }
        for &(start, end) in &runs[s] {
            let floor = w / (k + end as f64);
            let ceiling = w / (k + (start + 1) as f64);
            votes.extend(
                docs[start..end]
                    .iter()
                    .enumerate()
                    .map(|(i, &(d, _))| (d, s, start + i, floor, ceiling)),
            );
        }
    }
    // Grouped by document; a repeat within a stream keeps its first (best) place. The
    // places are distinct, so an unstable sort gives this one order.
    votes.sort_unstable_by_key(|v| (v.0, v.1, v.2));
    votes.dedup_by(|later, first| (later.0, later.1) == (first.0, first.1));
    // Each document's floor and ceiling, summed as the fusion sums (smallest part first),
    // so that neither can differ from the fused score by a rounding: (doc, floor,
    // ceiling) in doc order, looked up by binary search.
    let mut bounds: Vec<(u64, f64, f64)> = Vec::with_capacity(votes.len());
    let mut parts: (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    for same in votes.chunk_by(|a, b| a.0 == b.0) {
        parts.0.clear();
        parts.1.clear();
        parts.0.extend(same.iter().map(|v| v.3));
        parts.1.extend(same.iter().map(|v| v.4));
        parts.0.sort_by(f64::total_cmp);
        parts.1.sort_by(f64::total_cmp);
        bounds.push((same[0].0, parts.0.iter().sum(), parts.1.iter().sum()));
    }
    let ceiling_of = |doc: u64| {
        bounds
            .binary_search_by_key(&doc, |b| b.0)
            .ok()
            .map(|at| bounds[at].2)
    };
    // The `hits`-th largest floor; with no more documents than that, every one is kept.
    let floor = if hits == 0 {
        f64::INFINITY
    } else if bounds.len() <= hits {
        f64::NEG_INFINITY
    } else {
        let mut floors: Vec<f64> = bounds.iter().map(|b| b.1).collect();
        let (_, nth, _) = floors.select_nth_unstable_by(hits - 1, |a, b| b.total_cmp(a));
        *nth
    };
    streams
        .iter()
        .zip(&runs)
        .zip(weights)
        .map(|((docs, runs), w)| {
            if *w <= 0.0 {
                return Vec::new();
            }
            runs.iter()
                .copied()
                .filter(|&(start, end)| end - start > 1)
                .filter(|&(start, end)| {
                    docs[start..end]
                        .iter()
                        .any(|&(d, _)| ceiling_of(d).is_some_and(|c| c >= floor))
                })
                .collect()
        })
        .collect()
}

/// The runs of equal scores in `ranked` (best first), as `start..end`, in order; a lone
/// score is a run of one. Lazy, so a caller that stops early reads no further.
fn equal_runs<'a, T>(
    ranked: &'a [T],
    score: impl Fn(&T) -> f64 + 'a,
) -> impl Iterator<Item = (usize, usize)> + 'a {
    let mut start = 0;
    std::iter::from_fn(move || {
        let first = score(ranked.get(start)?);
        let end = start
            + ranked[start..]
                .iter()
                .take_while(|t| score(t).total_cmp(&first).is_eq())
                .count();
        let run = (start, end);
        start = end;
        Some(run)
    })
}

#[cfg(test)]
mod tests {
    use heddle::fusion::{Rrf, Stream};
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// Streams of many ties: each a random subset of 80 documents, scored from a handful
    /// of values, every tied group in a random order.
    fn tied_streams(rng: &mut ChaCha8Rng, count: usize) -> Vec<Vec<(u64, f64)>> {
        (0..count)
            .map(|_| {
                let len = rng.random_range(0..60);
                let mut pool: Vec<u64> = (0..80).collect();
                pool.shuffle(rng);
                let levels = rng.random_range(1..8);
                let mut docs: Vec<(u64, f64)> = pool[..len]
                    .iter()
                    .map(|&d| (d, f64::from(rng.random_range(0..levels))))
                    .collect();
                // Best first; within a score the shuffled order stays (a stable sort).
                docs.sort_by(|a, b| b.1.total_cmp(&a.1));
                docs
            })
            .collect()
    }

    /// The fused top `hits` as (doc, score), ties by doc descending (trec_eval's order,
    /// with the doc standing for its external id).
    fn fused_top(
        streams: &[Vec<(u64, f64)>],
        weights: &[f64],
        k: f64,
        hits: usize,
    ) -> Vec<(u64, f64)> {
        let ranked: Vec<Vec<u64>> = streams
            .iter()
            .map(|s| s.iter().map(|&(d, _)| d).collect())
            .collect();
        let voting: Vec<Stream<u64>> = ranked
            .iter()
            .zip(weights)
            .map(|(r, &w)| Stream::weighted(r, w))
            .collect();
        let mut fused: Vec<(u64, f64)> = Rrf { k, depth: None }
            .fuse(&voting)
            .unwrap()
            .into_iter()
            .map(|f| (f.key, f.score))
            .collect();
        fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        fused.truncate(hits);
        fused
    }

    /// Puts `groups` of `docs` in trec_eval's order (doc descending for the external id).
    fn order(docs: &mut [(u64, f64)], groups: &[(usize, usize)]) {
        for &(start, end) in groups {
            docs[start..end].sort_by_key(|d| std::cmp::Reverse(d.0));
        }
    }

    #[test]
    fn ordering_only_the_groups_that_can_reach_the_top_gives_the_fully_ordered_top() {
        let mut rng = ChaCha8Rng::seed_from_u64(32);
        let (mut left_alone, mut ordered) = (0, 0);
        for case in 0..3000 {
            let count = rng.random_range(1..4);
            let streams = tied_streams(&mut rng, count);
            // Some streams of weight 0, never all (the fusion refuses that).
            let mut weights: Vec<f64> = (0..count)
                .map(|_| [0.0, 0.5, 1.0, 2.0][rng.random_range(0..4)])
                .collect();
            weights[0] = weights[0].max(1.0);
            let k = [0.0, 1.0, 60.0][rng.random_range(0..3)];
            let hits = [0, 1, 3, 10, 100][rng.random_range(0..5)];

            let mut every: Vec<Vec<(u64, f64)>> = streams.clone();
            for docs in &mut every {
                let runs: Vec<(usize, usize)> = equal_runs(docs, |&(_, s)| s).collect();
                order(docs, &runs);
            }
            let needed = rrf_groups_to_order(&streams, &weights, k, hits);
            let mut some: Vec<Vec<(u64, f64)>> = streams.clone();
            for ((docs, groups), all) in some.iter_mut().zip(&needed).zip(&every) {
                order(docs, groups);
                let tied = equal_runs(all, |&(_, s)| s)
                    .filter(|(a, b)| b - a > 1)
                    .count();
                ordered += groups.len();
                left_alone += tied - groups.len();
                // What is left alone is shuffled again: its order must not matter.
                for (start, end) in equal_runs(all, |&(_, s)| s) {
                    if end - start > 1 && !groups.contains(&(start, end)) {
                        docs[start..end].shuffle(&mut rng);
                    }
                }
            }
            assert_eq!(
                fused_top(&some, &weights, k, hits),
                fused_top(&every, &weights, k, hits),
                "case {case}: k {k}, hits {hits}, weights {weights:?}, groups ordered {needed:?}"
            );
        }
        // Both kinds happened: the check saw groups skipped, and groups that mattered.
        assert!(
            left_alone > 1000 && ordered > 1000,
            "{left_alone} left alone, {ordered} ordered"
        );
    }

    #[test]
    fn a_tie_at_the_top_is_ordered_and_one_far_below_it_is_not() {
        // Stream 0: doc 1 alone, then 5 and 6 tied for second; 30 singles; then 8 and 9
        // tied at the bottom. Stream 1 has doc 1 only. The top 2 needs the tie of 5 and 6
        // ordered (one of them is second); the bottom tie cannot reach it.
        let mut text: Vec<(u64, f64)> = vec![(1, 50.0), (5, 40.0), (6, 40.0)];
        text.extend((100..130).map(|d| (d, 30.0 - (d - 100) as f64 * 0.5)));
        text.extend([(8, 1.0), (9, 1.0)]);
        let streams = vec![text, vec![(1, 0.9)]];
        let needed = rrf_groups_to_order(&streams, &[1.0, 1.0], 60.0, 2);
        assert_eq!(needed, vec![vec![(1, 3)], vec![]]);
        // Asked for everything, every tie matters; asked for nothing, none does.
        let all = rrf_groups_to_order(&streams, &[1.0, 1.0], 60.0, 100);
        assert_eq!(all, vec![vec![(1, 3), (33, 35)], vec![]]);
        assert_eq!(
            rrf_groups_to_order(&streams, &[1.0, 1.0], 60.0, 0),
            vec![vec![], vec![]]
        );
        // A stream of weight 0 casts no vote: its ties never matter.
        assert_eq!(
            rrf_groups_to_order(&streams, &[0.0, 1.0], 60.0, 100)[0],
            vec![]
        );
    }
}

//! Reciprocal rank fusion against hand-computed fused lists.

use heddle::fusion::{Fused, Rrf, Stream};

fn keys<K: Clone>(fused: &[Fused<K>]) -> Vec<K> {
    fused.iter().map(|f| f.key.clone()).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn plain_rrf_matches_hand_computed_scores_and_order() {
    // a: 1/61 + 1/63 = 0.032266..., b: 1/62 + 1/61 = 0.032522..., c: 1/63, d: 1/62
    let s1 = ["a", "b", "c"];
    let s2 = ["b", "d", "a"];
    let fused = Rrf::default()
        .fuse(&[Stream::new(&s1), Stream::new(&s2)])
        .unwrap();
    assert_eq!(keys(&fused), ["b", "a", "d", "c"]);
    let expect = [
        1.0 / 62.0 + 1.0 / 61.0,
        1.0 / 61.0 + 1.0 / 63.0,
        1.0 / 62.0,
        1.0 / 63.0,
    ];
    for (f, e) in fused.iter().zip(expect) {
        assert!(close(f.score, e), "{} {} vs {e}", f.key, f.score);
    }
}

#[test]
fn weights_scale_each_streams_votes() {
    // k = 1 to make the arithmetic visible. Stream 1 (w 1): x@1 → 1/2, y@2 → 1/3.
    // Stream 2 (w 3): y@1 → 3/2, z@2 → 3/3 = 1. y = 1/3 + 3/2, z = 1, x = 1/2.
    let s1 = [10u64, 20];
    let s2 = [20u64, 30];
    let rrf = Rrf {
        k: 1.0,
        depth: None,
    };
    let fused = rrf
        .fuse(&[Stream::weighted(&s1, 1.0), Stream::weighted(&s2, 3.0)])
        .unwrap();
    assert_eq!(keys(&fused), [20, 30, 10]);
    assert!(close(fused[0].score, 1.0 / 3.0 + 1.5));
    assert!(close(fused[1].score, 1.0));
    assert!(close(fused[2].score, 0.5));
    // Weight 2 on stream 1 instead: x = 1, y = 2/3 + 1/2, z = 1/2.
    let fused = rrf
        .fuse(&[Stream::weighted(&s1, 2.0), Stream::weighted(&s2, 1.0)])
        .unwrap();
    assert_eq!(keys(&fused), [20, 10, 30]);
    assert!(close(fused[0].score, 2.0 / 3.0 + 0.5));
}

#[test]
fn equal_scores_go_to_the_smaller_key() {
    // d and a both at rank 1 of one stream each: equal scores, a first.
    let s1 = ["d", "c"];
    let s2 = ["a", "b"];
    let fused = Rrf::default()
        .fuse(&[Stream::new(&s1), Stream::new(&s2)])
        .unwrap();
    assert_eq!(keys(&fused), ["a", "d", "b", "c"]);
}

#[test]
fn fusion_is_independent_of_stream_order_with_equal_weights() {
    // Many overlapping streams whose sums are equal in exact arithmetic but would differ
    // in the last bit if summed in stream order.
    let streams: Vec<Vec<u32>> = (0..7u32)
        .map(|s| (0..200u32).map(|i| (i * (s + 3) + s * 11) % 173).collect())
        .collect();
    let base: Vec<Stream<u32>> = streams.iter().map(|s| Stream::new(s)).collect();
    let want = Rrf::default().fuse(&base).unwrap();
    let mut order: Vec<usize> = (0..streams.len()).collect();
    for round in 0..20 {
        order.rotate_left(round % 5 + 1);
        order.swap(round % 7, (round * 3) % 7);
        let permuted: Vec<Stream<u32>> = order.iter().map(|&i| base[i]).collect();
        let got = Rrf::default().fuse(&permuted).unwrap();
        assert_eq!(got, want, "order {order:?}");
    }
}

#[test]
fn depth_limits_each_stream_and_duplicates_vote_once() {
    let s1 = ["a", "b", "a", "c"];
    let s2 = ["c", "b"];
    let rrf = Rrf {
        k: 0.0,
        depth: Some(2),
    };
    // s1 to depth 2: a@1, b@2. s2: c@1, b@2. b = 1/2 + 1/2 = 1, a = 1, c = 1.
    let fused = rrf.fuse(&[Stream::new(&s1), Stream::new(&s2)]).unwrap();
    assert_eq!(keys(&fused), ["a", "b", "c"]);
    assert!(fused.iter().all(|f| close(f.score, 1.0)));
    // Full depth: a's second occurrence is ignored, c gets 1/4 + 1.
    let fused = Rrf {
        k: 0.0,
        depth: None,
    }
    .fuse(&[Stream::new(&s1), Stream::new(&s2)])
    .unwrap();
    assert_eq!(keys(&fused), ["c", "a", "b"]);
    assert!(close(fused[0].score, 1.25));
    assert!(close(fused[1].score, 1.0));
}

#[test]
fn zero_weight_streams_add_nothing_and_bad_parameters_are_errors() {
    let s1 = ["a"];
    let s2 = ["z"];
    let fused = Rrf::default()
        .fuse(&[Stream::new(&s1), Stream::weighted(&s2, 0.0)])
        .unwrap();
    assert_eq!(keys(&fused), ["a"]);
    assert!(Rrf::default().fuse::<&str>(&[]).unwrap().is_empty());
    for w in [-1.0, f64::NAN, f64::INFINITY] {
        assert!(Rrf::default().fuse(&[Stream::weighted(&s1, w)]).is_err());
    }
    let bad_k = Rrf {
        k: -1.0,
        depth: None,
    };
    assert!(bad_k.fuse(&[Stream::new(&s1)]).is_err());
}

mod score_sum {
    use heddle::fusion::{ScoredStream, weighted_sum};

    #[test]
    fn weighted_sum_matches_hand_computed_totals() {
        // title: a 2.0, b 1.0; text: b 3.0, c 0.5. Weights 2 and 1:
        // a = 4.0, b = 2.0 + 3.0 = 5.0, c = 0.5.
        let title = [("a", 2.0), ("b", 1.0)];
        let text = [("c", 0.5), ("b", 3.0)];
        let fused = weighted_sum(&[
            ScoredStream::new(&title, 2.0),
            ScoredStream::new(&text, 1.0),
        ])
        .unwrap();
        let got: Vec<(&str, f64)> = fused.iter().map(|f| (f.key, f.score)).collect();
        assert_eq!(got, [("b", 5.0), ("a", 4.0), ("c", 0.5)]);
    }

    #[test]
    fn stream_order_does_not_change_a_bit_and_ties_go_to_the_smaller_key() {
        let s1 = [(1u32, 0.1), (2, 0.7)];
        let s2 = [(1u32, 0.2), (3, 0.3)];
        let s3 = [(1u32, 0.3), (2, 1e-17)];
        let a = weighted_sum(&[
            ScoredStream::new(&s1, 1.0),
            ScoredStream::new(&s2, 1.0),
            ScoredStream::new(&s3, 1.0),
        ])
        .unwrap();
        let b = weighted_sum(&[
            ScoredStream::new(&s3, 1.0),
            ScoredStream::new(&s2, 1.0),
            ScoredStream::new(&s1, 1.0),
        ])
        .unwrap();
        assert_eq!(a, b);
        let tie = weighted_sum(&[ScoredStream::new(&[(9u32, 1.0), (4, 1.0)], 1.0)]).unwrap();
        assert_eq!(tie[0].key, 4);
        assert!(weighted_sum(&[ScoredStream::new(&s1, -1.0)]).is_err());
        assert!(weighted_sum(&[ScoredStream::new(&[(1u32, f64::NAN)], 1.0)]).is_err());
    }
}

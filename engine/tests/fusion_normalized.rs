//! Normalised score fusion (min-max and z-score): the arithmetic on a worked example,
//! invariance to each stream's scale, where a key a stream did not return ranks, and the
//! refusals.

use heddle::fusion::{Fused, Normalization, ScoredStream, normalized_sum};
use proptest::prelude::*;

fn keys<'a>(fused: &[Fused<&'a str>]) -> Vec<&'a str> {
    fused.iter().map(|f| f.key).collect()
}

#[test]
fn min_max_puts_each_stream_on_zero_to_one_before_weighting() {
    let bm25 = [("a", 10.0), ("b", 6.0), ("c", 2.0)];
    let cosine = [("c", 0.9), ("d", 0.5), ("a", 0.3)];
    let fused = normalized_sum(
        &[
            ScoredStream::new(&bm25, 1.0),
            ScoredStream::new(&cosine, 2.0),
        ],
        Normalization::MinMax,
    )
    .unwrap();
    // a: 1 + 2·0 = 1; b: 0.5 + 2·0 (absent: the stream's lowest) = 0.5;
    // c: 0 + 2·1 = 2; d: 0 (absent) + 2·(0.2/0.6) = 2/3.
    assert_eq!(keys(&fused), ["c", "a", "d", "b"]);
    let scores: Vec<f64> = fused.iter().map(|f| f.score).collect();
    let want = [2.0, 1.0, 2.0 / 3.0, 0.5];
    for (got, want) in scores.iter().zip(want) {
        assert!((got - want).abs() < 1e-12, "{scores:?}");
    }
}

#[test]
fn z_score_uses_the_population_standard_deviation() {
    let s = [("a", 3.0), ("b", 2.0), ("c", 1.0)];
    let fused = normalized_sum(&[ScoredStream::new(&s, 1.0)], Normalization::ZScore).unwrap();
    let sd = (2.0f64 / 3.0).sqrt();
    let want = [1.0 / sd, 0.0, -1.0 / sd];
    assert_eq!(keys(&fused), ["a", "b", "c"]);
    for (f, want) in fused.iter().zip(want) {
        assert!((f.score - want).abs() < 1e-12, "{fused:?}");
    }
}

#[test]
fn a_key_a_stream_did_not_return_counts_as_its_lowest_not_its_mean() {
    // Under z-score the stream's mean is 0: a key `ranked` left out must not score as if
    // it had been found at the middle.
    let ranked = [("a", 3.0), ("b", 2.0), ("c", 1.0)];
    let flat = [("a", 1.0), ("b", 1.0), ("c", 1.0), ("d", 1.0)];
    for norm in [Normalization::ZScore, Normalization::MinMax] {
        let fused = normalized_sum(
            &[
                ScoredStream::new(&ranked, 1.0),
                ScoredStream::new(&flat, 1.0),
            ],
            norm,
        )
        .unwrap();
        assert_eq!(keys(&fused), ["a", "b", "c", "d"], "{norm:?}");
        assert_eq!(
            fused[2].score, fused[3].score,
            "{norm:?}: d counts as c's score"
        );
    }
}

#[test]
fn a_stream_of_equal_scores_gives_each_the_same_normalised_score() {
    let same = [("x", 4.0), ("y", 4.0)];
    let mm = normalized_sum(&[ScoredStream::new(&same, 1.0)], Normalization::MinMax).unwrap();
    assert!(mm.iter().all(|f| f.score == 1.0), "{mm:?}");
    let z = normalized_sum(&[ScoredStream::new(&same, 1.0)], Normalization::ZScore).unwrap();
    assert!(z.iter().all(|f| f.score == 0.0), "{z:?}");
    // Equal scores go to the smaller key, as in every fusion.
    assert_eq!(keys(&mm), ["x", "y"]);
}

#[test]
fn a_stream_of_weight_zero_contributes_nothing_not_even_its_keys() {
    let a = [("a", 1.0), ("b", 0.5)];
    let b = [("z", 9.0)];
    let fused = normalized_sum(
        &[ScoredStream::new(&a, 1.0), ScoredStream::new(&b, 0.0)],
        Normalization::MinMax,
    )
    .unwrap();
    assert_eq!(keys(&fused), ["a", "b"]);
}

#[test]
fn bad_weights_and_scores_are_refused() {
    let ok = [("a", 1.0)];
    for norm in [Normalization::MinMax, Normalization::ZScore] {
        for w in [-1.0, f64::NAN, f64::INFINITY] {
            assert!(normalized_sum(&[ScoredStream::new(&ok, w)], norm).is_err());
        }
        let nan = [("a", f64::NAN)];
        assert!(normalized_sum(&[ScoredStream::new(&nan, 1.0)], norm).is_err());
        let far = [("a", 1e308), ("b", -1e308), ("c", 0.0)];
        let err = normalized_sum(&[ScoredStream::new(&far, 1.0)], norm).unwrap_err();
        assert!(err.to_string().contains("too far apart"), "{err}");
        assert!(normalized_sum::<&str>(&[], norm).unwrap().is_empty());
    }
}

fn stream() -> impl Strategy<Value = Vec<(u8, f64)>> {
    prop::collection::vec((0u8..12, -50.0f64..50.0), 0..10)
}

proptest! {
    /// What normalising is for: a stream's scale and offset (BM25's against a cosine's)
    /// do not change the fused order. A plain score sum fails this.
    #[test]
    fn an_affine_change_of_one_streams_scores_changes_nothing(
        a in stream(), b in stream(), scale in 0.01f64..100.0, shift in -100.0f64..100.0,
    ) {
        let moved: Vec<(u8, f64)> = b.iter().map(|&(k, s)| (k, s * scale + shift)).collect();
        for norm in [Normalization::MinMax, Normalization::ZScore] {
            let before = normalized_sum(
                &[ScoredStream::new(&a, 1.0), ScoredStream::new(&b, 0.7)], norm).unwrap();
            let after = normalized_sum(
                &[ScoredStream::new(&a, 1.0), ScoredStream::new(&moved, 0.7)], norm).unwrap();
            prop_assert_eq!(before.len(), after.len());
            for (x, y) in before.iter().zip(&after) {
                prop_assert!((x.score - y.score).abs() < 1e-9, "{:?} vs {:?}", before, after);
            }
        }
    }

    /// The order the streams are given in changes no bit of any score.
    #[test]
    fn the_order_of_the_streams_does_not_matter(a in stream(), b in stream(), c in stream()) {
        for norm in [Normalization::MinMax, Normalization::ZScore] {
            let one = normalized_sum(&[ScoredStream::new(&a, 1.0), ScoredStream::new(&b, 0.5),
                ScoredStream::new(&c, 2.0)], norm).unwrap();
            let two = normalized_sum(&[ScoredStream::new(&c, 2.0), ScoredStream::new(&a, 1.0),
                ScoredStream::new(&b, 0.5)], norm).unwrap();
            prop_assert_eq!(one, two);
        }
    }
}

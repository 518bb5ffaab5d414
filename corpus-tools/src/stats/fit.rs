//! Power-law fits: Zipf's rank–frequency exponent and Heaps' vocabulary-growth exponent.

/// A least-squares line through log–log points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerFit {
    /// The exponent: `-slope` for Zipf (frequency falls with rank), `slope` for Heaps.
    pub exponent: f64,
    /// How well a straight line fits in log–log space (1 is perfect).
    pub r_squared: f64,
}

/// Zipf exponent `s` of `freq(r) ∝ r^-s`, fitted over ranks `lo..=hi` (1-based) of
/// `freqs`, which must be sorted in descending order. Ranks are sampled at log-spaced
/// points (about 10 per decade) so that the thousands of tail ranks do not outweigh
/// the head. `None` if fewer than 3 points are available.
pub fn zipf_fit(freqs: &[u64], lo: usize, hi: usize) -> Option<PowerFit> {
    let hi = hi.min(freqs.len());
    let mut points = Vec::new();
    let mut r = lo.max(1) as f64;
    let mut last = 0;
    while (r as usize) <= hi {
        let rank = r as usize;
        if rank != last && freqs[rank - 1] > 0 {
            points.push(((rank as f64).ln(), (freqs[rank - 1] as f64).ln()));
            last = rank;
        }
        r *= 1.26; // 10 points per decade
    }
    line(&points).map(|(slope, r2)| PowerFit {
        exponent: -slope,
        r_squared: r2,
    })
}

/// Heaps exponent `β` of `V(n) ∝ n^β` from (tokens so far, vocabulary so far) samples.
pub fn heaps_fit(samples: &[(u64, u64)]) -> Option<PowerFit> {
    let points: Vec<(f64, f64)> = samples
        .iter()
        .filter(|(n, v)| *n > 0 && *v > 0)
        .map(|&(n, v)| ((n as f64).ln(), (v as f64).ln()))
        .collect();
    line(&points).map(|(slope, r2)| PowerFit {
        exponent: slope,
        r_squared: r2,
    })
}

/// Slope and R² of the least-squares line through `points`.
fn line(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    if points.len() < 3 {
        return None;
    }
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = points.iter().map(|p| (p.1 - my) * (p.1 - my)).sum();
    if sxx == 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let r2 = if syy == 0.0 {
        1.0
    } else {
        (sxy * sxy) / (sxx * syy)
    };
    Some((slope, r2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_a_known_zipf_exponent() {
        let freqs: Vec<u64> = (1..=5000)
            .map(|r| (1e9 * (r as f64).powf(-1.1)) as u64)
            .collect();
        let fit = zipf_fit(&freqs, 10, 5000).unwrap();
        assert!((fit.exponent - 1.1).abs() < 0.01, "{fit:?}");
        assert!(fit.r_squared > 0.999);
        assert!(zipf_fit(&freqs[..5], 10, 1000).is_none());
    }

    #[test]
    fn recovers_a_known_heaps_exponent() {
        let samples: Vec<(u64, u64)> = (1..20)
            .map(|k| {
                let n = 1u64 << k;
                (n, (3.0 * (n as f64).powf(0.6)) as u64 + 1)
            })
            .collect();
        let fit = heaps_fit(&samples).unwrap();
        assert!((fit.exponent - 0.6).abs() < 0.02, "{fit:?}");
    }
}

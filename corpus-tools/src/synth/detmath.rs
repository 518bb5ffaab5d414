//! `ln` and `exp` from IEEE basic operations only, so sampling gives the same bits everywhere.
//!
//! `f64::ln`/`exp`/`powf` call the platform's libm, whose last-bit rounding differs between
//! glibc, musl, macOS and Windows; one differing bit can move a sampled rank or length
//! across an integer boundary and change the output file. `+ - * /` and `sqrt` are
//! correctly rounded by IEEE 754 on every platform Rust supports, and Rust never fuses a
//! multiply-add on its own, so these functions give the same bits everywhere. They are
//! accurate to a few ulp, far more than sampling needs.

/// ln 2 split in two (fdlibm's constants): the high part has trailing zero bits, so
/// `k * LN2_HI` is exact for the exponents that occur.
const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);
const LN2: f64 = std::f64::consts::LN_2;

/// Natural logarithm of a positive, finite `x` (0 gives -inf, negative or NaN give NaN).
pub(crate) fn ln(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x.is_infinite() {
        return x;
    }
    // x = m * 2^e with m in [sqrt(1/2), sqrt(2)).
    let (mut m, mut e) = frexp(x);
    if m < std::f64::consts::FRAC_1_SQRT_2 {
        m *= 2.0;
        e -= 1;
    }
    // ln(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172: the series converges fast.
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut term = s;
    let mut sum = 0.0;
    let mut k = 1.0;
    while k < 40.0 {
        sum += term / k;
        term *= s2;
        k += 2.0;
    }
    let e = e as f64;
    e * LN2_HI + (2.0 * sum + e * LN2_LO)
}

/// `e^x`; overflows to +inf above ~709.8, underflows to 0 below ~-745.
pub(crate) fn exp(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 709.78 {
        return f64::INFINITY;
    }
    if x < -745.0 {
        return 0.0;
    }
    // x = k ln2 + r, |r| <= ln2 / 2; e^r by Taylor series, then scale by 2^k.
    let k = (x / LN2 + if x < 0.0 { -0.5 } else { 0.5 }) as i64;
    let kf = k as f64;
    let r = (x - kf * LN2_HI) - kf * LN2_LO;
    let mut term = 1.0;
    let mut sum = 1.0;
    let mut n = 1.0;
    while n < 24.0 {
        term *= r / n;
        sum += term;
        n += 1.0;
    }
    scale_by_pow2(sum, k)
}

/// `x^y` for positive `x`.
pub(crate) fn powf(x: f64, y: f64) -> f64 {
    exp(y * ln(x))
}

/// Splits a positive finite `x` into `m * 2^e` with `m` in [0.5, 1).
fn frexp(x: f64) -> (f64, i64) {
    let bits = x.to_bits();
    let exp_bits = ((bits >> 52) & 0x7ff) as i64;
    if exp_bits == 0 {
        // Subnormal: normalise first.
        let (m, e) = frexp(x * f64::from_bits(0x4350_0000_0000_0000)); // 2^54
        return (m, e - 54);
    }
    let m = f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52));
    (m, exp_bits - 1022)
}

/// `x * 2^k` exactly (for results in the normal range), in two steps so that a large `k`
/// cannot overflow the exponent field of one factor.
fn scale_by_pow2(x: f64, k: i64) -> f64 {
    let half = k / 2;
    x * pow2(half) * pow2(k - half)
}

fn pow2(k: i64) -> f64 {
    let biased = k + 1023;
    if biased <= 0 {
        // Below the normal range: build it from two normal factors.
        return pow2(k + 600) * pow2(-600);
    }
    f64::from_bits((biased as u64) << 52)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 4.0 * f64::EPSILON * b.abs().max(f64::MIN_POSITIVE)
    }

    #[test]
    fn ln_matches_std_to_a_few_ulp() {
        let mut x = 1e-300;
        while x < 1e300 {
            assert!(close(ln(x), x.ln()), "ln({x}) = {} vs {}", ln(x), x.ln());
            x *= 1.37;
        }
        for x in [0.5, 1.0, 1.0 + 1e-12, 2.0, std::f64::consts::E, 1e-310] {
            assert!(
                (ln(x) - x.ln()).abs() <= 1e-15 * x.ln().abs().max(1.0),
                "{x}"
            );
        }
        assert_eq!(ln(1.0), 0.0);
        assert!(ln(-1.0).is_nan());
        assert_eq!(ln(0.0), f64::NEG_INFINITY);
    }

    #[test]
    fn exp_matches_std_to_a_few_ulp() {
        let mut x = -700.0;
        while x < 700.0 {
            assert!(
                close(exp(x), x.exp()),
                "exp({x}) = {} vs {}",
                exp(x),
                x.exp()
            );
            x += 0.7331;
        }
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(800.0), f64::INFINITY);
        assert_eq!(exp(-800.0), 0.0);
    }

    #[test]
    fn powf_matches_std() {
        for (x, y) in [(2.0, 10.0), (171_332.0, -0.5), (3.7, -1.07), (0.25, 1.5)] {
            let (a, b) = (powf(x, y), f64::powf(x, y));
            assert!((a - b).abs() <= 1e-13 * b.abs(), "{x}^{y}: {a} vs {b}");
        }
    }
}

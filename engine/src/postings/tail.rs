//! The tail block: the last block of a list when it holds fewer than 128 postings — for
//! most terms the whole list. One posting is two varints (`gap`, `tf - 1`); two or more
//! are `doc_bits u8 | tf_bits u8 |` the gaps then the `tf - 1` values, bit-packed
//! LSB-first at those widths into one stream of `ceil(count · (doc_bits + tf_bits) / 8)`
//! bytes. Packing halves the bytes of a rare term's postings against varints (a gap in a
//! 171k-document segment takes 3 varint bytes and about 15 bits).
//!
//! Gaps are as in full blocks: `doc_j - doc_{j-1} - 1`, `doc_{-1}` the previous block's
//! last doc or -1.

use super::{BLOCK_LEN, TERMINATED};
use crate::varint;

fn bit_width(v: u32) -> u8 {
    (32 - v.leading_zeros()) as u8
}

/// Appends the tail of `docs` (1 to 127 postings, strictly increasing, after `prev_last`)
/// with `tfs_minus_1` to `out`.
pub(crate) fn encode(out: &mut Vec<u8>, prev_last: Option<u32>, docs: &[u32], tfs_minus_1: &[u32]) {
    debug_assert!(!docs.is_empty() && docs.len() < BLOCK_LEN);
    let mut gaps = [0u32; BLOCK_LEN];
    let mut next = prev_last.map_or(0, |d| d + 1); // d < u32::MAX: no overflow
    for (gap, &doc) in gaps.iter_mut().zip(docs) {
        *gap = doc - next;
        next = doc + 1;
    }
    let gaps = &gaps[..docs.len()];
    if docs.len() == 1 {
        varint::write(out, gaps[0]);
        varint::write(out, tfs_minus_1[0]);
        return;
    }
    let doc_bits = bit_width(gaps.iter().fold(0, |a, &g| a | g));
    let tf_bits = bit_width(tfs_minus_1.iter().fold(0, |a, &t| a | t));
    out.push(doc_bits);
    out.push(tf_bits);
    let (mut acc, mut held) = (0u64, 0u32);
    let values = gaps
        .iter()
        .map(|&g| (g, doc_bits))
        .chain(tfs_minus_1.iter().map(|&t| (t, tf_bits)));
    for (v, bits) in values {
        acc |= u64::from(v) << held;
        held += u32::from(bits);
        while held >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            held -= 8;
        }
    }
    if held > 0 {
        out.push(acc as u8);
    }
}

/// The `bits`-wide value at bit `at` of `bytes` (bits past the end read as 0).
#[inline]
fn read_bits(bytes: &[u8], at: usize, bits: u8) -> u32 {
    let start = at / 8;
    let word = match bytes.get(start..start + 8) {
        Some(eight) => u64::from_le_bytes(eight.try_into().expect("8 bytes")),
        None => {
            // The last few bytes of the stream: pad with zeros.
            let mut window = [0u8; 8];
            let rest = bytes.get(start..).unwrap_or(&[]);
            window[..rest.len()].copy_from_slice(rest);
            u64::from_le_bytes(window)
        }
    };
    let mask = (1u64 << bits) - 1; // bits ≤ 32
    ((word >> (at % 8)) & mask) as u32
}

/// Decodes a tail of `count` postings (1 to 127) that must be exactly `bytes`, after
/// `prev_last`, into `docs[..count]` and `tfs_minus_1[..count]`. Returns its last doc, or
/// `None` if the bytes are not such a tail or a doc id would reach [`TERMINATED`].
pub(crate) fn decode(
    bytes: &[u8],
    count: usize,
    prev_last: Option<u32>,
    docs: &mut [u32; BLOCK_LEN],
    tfs_minus_1: &mut [u32; BLOCK_LEN],
) -> Option<u32> {
    if count == 0 || count >= BLOCK_LEN {
        return None;
    }
    // Smallest doc id the next posting can have; u64 so hostile gaps cannot wrap.
    let mut next = prev_last.map_or(0, |d| u64::from(d) + 1);
    if count == 1 {
        let mut pos = 0;
        let gap = varint::read(bytes, &mut pos)?;
        tfs_minus_1[0] = varint::read(bytes, &mut pos)?;
        let doc = next + u64::from(gap);
        if pos != bytes.len() || doc >= u64::from(TERMINATED) {
            return None;
        }
        docs[0] = doc as u32;
        return Some(docs[0]);
    }
    let &[doc_bits, tf_bits, ref packed @ ..] = bytes else {
        return None;
    };
    if doc_bits > 32 || tf_bits > 32 {
        return None;
    }
    let total_bits = count * usize::from(doc_bits + tf_bits);
    if packed.len() != total_bits.div_ceil(8) {
        return None;
    }
    for (j, doc) in docs.iter_mut().enumerate().take(count) {
        let d = next + u64::from(read_bits(packed, j * usize::from(doc_bits), doc_bits));
        if d >= u64::from(TERMINATED) {
            return None;
        }
        *doc = d as u32;
        next = d + 1;
    }
    let tfs_at = count * usize::from(doc_bits);
    for (j, tf) in tfs_minus_1.iter_mut().enumerate().take(count) {
        *tf = read_bits(packed, tfs_at + j * usize::from(tf_bits), tf_bits);
    }
    Some(docs[count - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(prev: Option<u32>, docs: &[u32], tfs: &[u32]) -> Vec<u8> {
        let mut out = Vec::new();
        encode(&mut out, prev, docs, tfs);
        let (mut d, mut t) = ([0u32; BLOCK_LEN], [0u32; BLOCK_LEN]);
        let last = decode(&out, docs.len(), prev, &mut d, &mut t);
        assert_eq!(last, docs.last().copied());
        assert_eq!(&d[..docs.len()], docs);
        assert_eq!(&t[..docs.len()], tfs);
        out
    }

    #[test]
    fn one_posting_is_two_varints() {
        assert_eq!(round_trip(None, &[300], &[0]), vec![0xAC, 0x02, 0x00]);
        assert_eq!(round_trip(Some(9), &[10], &[4]), vec![0, 4]);
    }

    #[test]
    fn several_postings_pack_at_their_widths() {
        // gaps 3, 3 (docs 3 and 7) need 2 bits; tf-1 values 0, 1 need 1 bit:
        // 2 + 2 + 1 + 1 = 6 bits, one byte: 0b10_11_11 read LSB-first.
        assert_eq!(round_trip(None, &[3, 7], &[0, 1]), vec![2, 1, 0b0010_1111]);
        let docs: Vec<u32> = (0..127).map(|i| i * 1000 + 5).collect();
        let tfs: Vec<u32> = (0..127).map(|i| i % 7).collect();
        let out = round_trip(Some(1), &docs, &tfs);
        assert_eq!(out.len(), 2 + (127usize * (10 + 3)).div_ceil(8));
        let extreme = [u32::MAX - 2, u32::MAX - 1];
        round_trip(None, &extreme, &[u32::MAX, 0]);
    }

    #[test]
    fn anything_but_an_exact_tail_is_rejected() {
        let mut out = Vec::new();
        encode(&mut out, None, &[3, 7, 100], &[0, 1, 2]);
        let (mut d, mut t) = ([0u32; BLOCK_LEN], [0u32; BLOCK_LEN]);
        assert!(decode(&out[..out.len() - 1], 3, None, &mut d, &mut t).is_none());
        let mut longer = out.clone();
        longer.push(0);
        assert!(decode(&longer, 3, None, &mut d, &mut t).is_none());
        let mut wide = out.clone();
        wide[0] = 33;
        assert!(decode(&wide, 3, None, &mut d, &mut t).is_none());
        assert!(decode(&out, 0, None, &mut d, &mut t).is_none());
        // A gap that would reach TERMINATED.
        let mut near_end = Vec::new();
        encode(&mut near_end, None, &[0, 5], &[0, 0]);
        assert!(decode(&near_end, 2, Some(u32::MAX - 3), &mut d, &mut t).is_none());
    }
}

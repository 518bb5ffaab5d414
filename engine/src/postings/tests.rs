//! Round trips against naive oracles, and hostile bytes.

use std::path::Path;

use bitpacking::{BitPacker, BitPacker4x};
use proptest::collection::vec;
use proptest::prelude::*;

use super::writer::TermSummary;
use super::*;
use crate::error::Error;

const PATH: &str = "test.postings";

/// Doc ids, tfs and per-posting document lengths.
#[derive(Debug, Clone)]
struct Input {
    docs: Vec<u32>,
    tfs: Vec<u32>,
    lens: Vec<u32>,
}

impl Input {
    /// Lengths of the input's docs; 0 for any other doc (a damaged list may name one).
    fn doc_len(&self) -> impl Fn(u32) -> u32 + '_ {
        |doc| self.docs.binary_search(&doc).map_or(0, |i| self.lens[i])
    }

    /// Per-block `(last_doc, max_tf, min_len)` as a cursor must report them, computed
    /// naively: exact for a list shorter than a block, else the skip table's one-byte
    /// codes (tf rounded up, length rounded down).
    fn block_metas(&self) -> Vec<(u32, BlockBound)> {
        let coded = self.docs.len() >= BLOCK_LEN;
        (0..self.docs.len().div_ceil(BLOCK_LEN))
            .map(|b| {
                let r = b * BLOCK_LEN..((b + 1) * BLOCK_LEN).min(self.docs.len());
                let exact = r
                    .clone()
                    .map(|i| BlockBound::of(self.tfs[i], self.lens[i]))
                    .fold(BlockBound::NONE, BlockBound::merge);
                let bound = if coded {
                    BlockBound::from_codes(exact.codes())
                } else {
                    exact
                };
                (self.docs[r.end - 1], bound)
            })
            .collect()
    }
}

fn encode(input: &Input) -> (Vec<u8>, TermSummary) {
    let mut out = Vec::new();
    let summary = PostingsWriter::new().encode(&input.docs, &input.tfs, input.doc_len(), &mut out);
    (out, summary)
}

fn open(bytes: &[u8], df: u32) -> crate::Result<PostingsList<'_>> {
    PostingsList::open(bytes, df, |d| d % 1000, Path::new(PATH))
}

/// Opens with the dictionary's df and the input's document lengths.
fn open_summary<'a>(
    bytes: &'a [u8],
    summary: &TermSummary,
    input: &Input,
) -> crate::Result<PostingsList<'a>> {
    PostingsList::open(bytes, summary.df, input.doc_len(), Path::new(PATH))
}

fn simple(docs: Vec<u32>) -> Input {
    let n = docs.len();
    Input {
        tfs: (0..n as u32).map(|i| i % 7 + 1).collect(),
        lens: (0..n as u32).map(|i| 100 + i % 13).collect(),
        docs,
    }
}

/// Every posting, by `advance`.
fn drain(list: &PostingsList<'_>) -> Vec<(u32, u32)> {
    let mut cursor = list.cursor();
    let mut out = Vec::new();
    while cursor.doc() != TERMINATED {
        out.push((cursor.doc(), cursor.tf()));
        cursor.advance();
    }
    assert_eq!(
        cursor.advance(),
        TERMINATED,
        "exhausted cursors stay exhausted"
    );
    out
}

/// Drives a cursor over possibly-garbage data: must neither panic nor loop, and `seek` must
/// honour its contract.
fn exercise(list: &PostingsList<'_>, targets: &[u32]) {
    let mut cursor = list.cursor();
    let mut steps = 0u32;
    let mut last = None;
    while cursor.doc() != TERMINATED {
        let _ = (cursor.tf(), cursor.block_bound());
        // What pruning's progress rests on: docs strictly increase and never pass the
        // last doc of the block they are reported in.
        assert!(last.is_none_or(|l| cursor.doc() > l), "docs went down");
        assert!(
            cursor.doc() <= cursor.block_last_doc(),
            "doc beyond its block"
        );
        last = Some(cursor.doc());
        cursor.advance();
        steps += 1;
        assert!(steps <= list.df(), "advance visited more postings than df");
    }
    let mut cursor = list.cursor();
    for &target in targets {
        cursor.shallow_seek(target);
        let _ = (cursor.block_last_doc(), cursor.block_bound());
        let doc = cursor.seek(target);
        assert!(doc >= target, "seek({target}) returned {doc}");
        assert!(
            doc == TERMINATED || doc <= cursor.block_last_doc(),
            "doc beyond its block"
        );
        let _ = cursor.tf();
    }
}

fn input_strategy() -> impl Strategy<Value = Input> {
    let len = prop_oneof![
        Just(1usize),
        Just(127),
        Just(128),
        Just(129),
        Just(255),
        Just(256),
        Just(257),
        1..=1000usize,
    ];
    len.prop_flat_map(|n| {
        // Dense runs, typical gaps and sparse ones; sums stay far below u32::MAX.
        let gap = prop_oneof![4 => 1..=3u32, 3 => 1..=1000u32, 1 => 1..=(1u32 << 20)];
        let tf = prop_oneof![8 => 1..=1000u32, 1 => Just(1u32 << 31), 1 => Just(u32::MAX)];
        (vec(gap, n), vec(tf, n), vec(any::<u32>(), n))
    })
    .prop_map(|(gaps, tfs, lens)| {
        // A first gap of 1 puts the first doc at 0.
        let mut next = 0u32;
        let docs = gaps
            .iter()
            .map(|&g| {
                let doc = next + g - 1;
                next = doc + 1;
                doc
            })
            .collect();
        Input { docs, tfs, lens }
    })
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Seek(u32),
    Shallow(u32),
    Advance,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn round_trip_by_advance(input in input_strategy(), prefix in 0..20usize) {
        // Encode after unrelated bytes (the writer appends to a shared buffer).
        let mut out = vec![0xAB; prefix];
        let summary = PostingsWriter::new()
            .encode(&input.docs, &input.tfs, input.doc_len(), &mut out);
        let list_len = out.len() - prefix;

        let metas = input.block_metas();
        prop_assert_eq!(summary, TermSummary {
            df: input.docs.len() as u32,
            byte_len: list_len as u32,
        });

        let list = open_summary(&out[prefix..], &summary, &input).unwrap();
        prop_assert_eq!(list.byte_len(), list_len);
        // The term's bounds: the blocks' (as the cursor reports them), each covering
        // every posting of its block.
        let blocks: Vec<BlockBound> = list.block_bounds().collect();
        prop_assert_eq!(&blocks, &metas.iter().map(|m| m.1).collect::<Vec<_>>());
        for (i, (&tf, &len)) in input.tfs.iter().zip(&input.lens).enumerate() {
            prop_assert!(blocks[i / BLOCK_LEN].covers(tf, len), "posting {}", i);
            prop_assert!(list.bound().covers(tf, len), "posting {}", i);
        }
        prop_assert_eq!(list.n_blocks(), metas.len());
        let expected: Vec<_> = input.docs.iter().copied().zip(input.tfs.iter().copied()).collect();
        prop_assert_eq!(drain(&list), expected);

        // Block metas follow the current doc.
        let mut cursor = list.cursor();
        prop_assert_eq!(cursor.df(), summary.df);
        prop_assert_eq!(list.df(), summary.df);
        for (i, &doc) in input.docs.iter().enumerate() {
            prop_assert_eq!(cursor.doc(), doc);
            let (last, bound) = metas[i / BLOCK_LEN];
            prop_assert_eq!(cursor.block_last_doc(), last);
            prop_assert_eq!(cursor.block_bound(), bound);
            cursor.advance();
        }
        prop_assert_eq!(cursor.doc(), TERMINATED);
        prop_assert_eq!(cursor.block_last_doc(), TERMINATED);
        prop_assert_eq!(cursor.block_bound(), BlockBound::NONE);
    }

    #[test]
    fn seek_matches_linear_scan(
        input in input_strategy(),
        raw_ops in vec((0..4u8, any::<u32>()), 0..200),
    ) {
        let (bytes, summary) = encode(&input);
        let list = open_summary(&bytes, &summary, &input).unwrap();
        let metas = input.block_metas();
        let n = input.docs.len();
        let last = *input.docs.last().unwrap();

        // Monotone targets over [0, last + 2], so most land inside the list.
        let mut targets: Vec<u32> = raw_ops.iter().map(|&(_, t)| t % (last + 3)).collect();
        targets.sort_unstable();
        let ops: Vec<Op> = raw_ops.iter().zip(targets).map(|(&(kind, _), t)| match kind {
            0 | 1 => Op::Seek(t),
            2 => Op::Shallow(t),
            _ => Op::Advance,
        }).collect();

        let mut cursor = list.cursor();
        let (mut pos, mut ptr) = (0usize, 0usize); // the oracle: posting index, block pointer
        for op in ops {
            match op {
                Op::Seek(t) => {
                    if pos < n && input.docs[pos] < t {
                        while pos < n && input.docs[pos] < t {
                            pos += 1;
                        }
                        ptr = if pos == n { metas.len() } else { pos / BLOCK_LEN };
                    }
                    let want = input.docs.get(pos).copied().unwrap_or(TERMINATED);
                    prop_assert_eq!(cursor.seek(t), want, "seek({})", t);
                }
                Op::Shallow(t) => {
                    while ptr < metas.len() && metas[ptr].0 < t {
                        ptr += 1;
                    }
                    cursor.shallow_seek(t);
                }
                Op::Advance => {
                    pos = (pos + 1).min(n);
                    ptr = if pos == n { metas.len() } else { pos / BLOCK_LEN };
                    let want = input.docs.get(pos).copied().unwrap_or(TERMINATED);
                    prop_assert_eq!(cursor.advance(), want);
                }
            }
            prop_assert_eq!(cursor.doc(), input.docs.get(pos).copied().unwrap_or(TERMINATED));
            if pos < n {
                prop_assert_eq!(cursor.tf(), input.tfs[pos]);
            }
            let (last_doc, bound) =
                metas.get(ptr).copied().unwrap_or((TERMINATED, BlockBound::NONE));
            prop_assert_eq!(cursor.block_last_doc(), last_doc);
            prop_assert_eq!(cursor.block_bound(), bound);
        }
    }

    #[test]
    fn flipped_bytes_never_panic(
        len in prop_oneof![Just(5usize), Just(128), Just(300)],
        flips in vec((any::<prop::sample::Index>(), 1..=255u8), 1..4),
        targets in vec(any::<u32>(), 0..50),
    ) {
        let input = simple((0..len as u32).map(|i| i * 6 + i % 5).collect());
        let (mut bytes, summary) = encode(&input);
        for (at, xor) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= xor;
        }
        let mut targets = targets;
        targets.sort_unstable();
        if let Ok(list) = open_summary(&bytes, &summary, &input) {
            exercise(&list, &targets);
        }
    }

    #[test]
    fn random_bytes_never_panic(
        bytes in vec(any::<u8>(), 0..600),
        df in prop_oneof![1..=4u32, 120..=260u32, Just(u32::MAX)],
        targets in vec(any::<u32>(), 0..20),
    ) {
        if let Ok(list) = open(&bytes, df) {
            exercise(&list, &targets);
        }
    }
}

#[test]
fn every_truncation_is_rejected() {
    // Two full blocks and a tail.
    let input = simple((0..300).map(|i| i * 4 + (i % 3)).collect());
    let (bytes, summary) = encode(&input);
    for len in 0..bytes.len() {
        assert!(
            open_summary(&bytes[..len], &summary, &input).is_err(),
            "accepted a list cut to {len} of {} bytes",
            bytes.len()
        );
    }
    assert!(open_summary(&bytes, &summary, &input).is_ok());
}

#[test]
fn bytes_after_the_list_are_rejected() {
    // The dictionary gives each list's exact length: anything after it is damage.
    for n in [1u32, 5, 128, 256, 300] {
        let input = simple((0..n).map(|i| i * 4).collect());
        let (mut bytes, summary) = encode(&input);
        bytes.push(0);
        assert!(
            open_summary(&bytes, &summary, &input).is_err(),
            "accepted a trailing byte after {n} postings"
        );
    }
}

#[test]
fn wrong_df_is_rejected_or_harmless() {
    let input = simple((0..300).collect());
    let (bytes, _) = encode(&input);
    // A wrong df changes where the skip table ends and how the blocks are cut, so open
    // rejects it; where the bytes happen to parse anyway the cursor still never yields
    // more than df postings, nor panics.
    for df in [0, 255, 257, 299, 301, 384, u32::MAX] {
        assert!(open(&bytes, df).is_err(), "accepted df {df}");
    }
    for df in [1, 127, 256] {
        if let Ok(list) = open(&bytes, df) {
            assert!(drain(&list).len() <= df as usize, "df {df}");
        }
    }
}

/// The byte range of skip entry `block`.
fn entry_at(block: usize) -> std::ops::Range<usize> {
    block * SKIP_ENTRY_LEN..(block + 1) * SKIP_ENTRY_LEN
}

fn set_last_doc(bytes: &mut [u8], block: usize, value: u32) {
    bytes[entry_at(block)][..4].copy_from_slice(&value.to_le_bytes());
}

fn last_doc(bytes: &[u8], block: usize) -> u32 {
    u32::from_le_bytes(bytes[entry_at(block)][..4].try_into().unwrap())
}

/// Skip entry bytes after the last doc.
const DOC_BITS: usize = 4;
const TF_BITS: usize = 5;
const MAX_TF_CODE: usize = 6;

#[test]
fn bit_widths_above_32_are_rejected_at_open() {
    let input = simple((0..128).map(|i| i * 1000).collect());
    let (bytes, summary) = encode(&input);
    for (at, what) in [(DOC_BITS, "doc_bits"), (TF_BITS, "tf_bits")] {
        let mut bad = bytes.clone();
        bad[at] = 33;
        let err = open_summary(&bad, &summary, &input).unwrap_err();
        assert!(err.to_string().contains("bit widths"), "{what}: {err}");
    }
}

#[test]
fn bit_widths_disagreeing_with_the_bytes_are_rejected() {
    // One full block: one bit narrower leaves 16 bytes over, one wider needs 16 more.
    let input = simple((0..128).map(|i| i * 1000).collect());
    let (bytes, summary) = encode(&input);
    let mut narrow = bytes.clone();
    narrow[DOC_BITS] -= 1;
    assert!(matches!(
        open_summary(&narrow, &summary, &input),
        Err(Error::Corrupt { .. })
    ));
    let mut wide = bytes.clone();
    wide[DOC_BITS] += 1;
    assert!(matches!(
        open_summary(&wide, &summary, &input),
        Err(Error::Truncated {
            what: "postings block",
            ..
        })
    ));
    // Two full blocks and a tail: a wider first block moves where the tail starts.
    let input = simple((0..300).map(|i| i * 3).collect());
    let (mut bytes, summary) = encode(&input);
    bytes[entry_at(0)][TF_BITS] += 1;
    assert!(open_summary(&bytes, &summary, &input).is_err());
}

#[test]
fn non_monotone_last_doc_is_rejected() {
    let input = simple((0..256).map(|i| i * 10).collect());
    let (mut bytes, summary) = encode(&input);
    let last0 = last_doc(&bytes, 0);
    for bad in [last0, last0 - 1, last0 + 127] {
        set_last_doc(&mut bytes, 1, bad);
        let err = open_summary(&bytes, &summary, &input).unwrap_err();
        assert!(
            matches!(err, Error::Corrupt { .. }),
            "last_doc {bad}: {err}"
        );
    }
}

#[test]
fn terminated_as_last_doc_is_rejected() {
    // Two full blocks and a tail: the tail's skip entry claims the last doc is TERMINATED.
    let input = simple((0..300).map(|i| i * 2).collect());
    let (mut bytes, summary) = encode(&input);
    set_last_doc(&mut bytes, 2, TERMINATED);
    assert!(open_summary(&bytes, &summary, &input).is_err());
}

#[test]
fn zero_max_tf_is_rejected() {
    let input = simple((0..300).map(|i| i * 2).collect());
    let (mut bytes, summary) = encode(&input);
    bytes[entry_at(0)][MAX_TF_CODE] = 0;
    let err = open_summary(&bytes, &summary, &input).unwrap_err();
    assert!(err.to_string().contains("max tf is 0"), "{err}");
}

#[test]
fn a_tail_one_byte_short_is_rejected() {
    let input = simple((0..300).map(|i| i * 3).collect());
    let (bytes, summary) = encode(&input);
    let mut shorter = bytes.clone();
    shorter.pop();
    assert!(open_summary(&shorter, &summary, &input).is_err());
}

#[test]
fn a_short_list_has_no_skip_entry_and_exact_bounds() {
    let input = simple(vec![3, 7, 20]);
    let (bytes, summary) = encode(&input);
    let list = open_summary(&bytes, &summary, &input).unwrap();
    assert!(list.is_short());
    assert_eq!(list.byte_len(), bytes.len());
    // Exact, not coded: computed from the postings and the lengths at open.
    let exact = (0..3)
        .map(|i| BlockBound::of(input.tfs[i], input.lens[i]))
        .fold(BlockBound::NONE, BlockBound::merge);
    assert_eq!(list.bound(), exact);
    let mut cursor = list.cursor();
    assert_eq!((cursor.block_last_doc(), cursor.block_bound()), (20, exact));
    assert_eq!(cursor.seek(8), 20);
    // One posting: a gap that would reach TERMINATED.
    let mut huge = Vec::new();
    crate::varint::write(&mut huge, u32::MAX);
    crate::varint::write(&mut huge, 0);
    assert!(open(&huge, 1).is_err());
}

#[test]
fn worked_example_from_the_format_docs() {
    let input = Input {
        docs: vec![3, 7],
        tfs: vec![1, 2],
        lens: vec![10, 4],
    };
    let (bytes, summary) = encode(&input);
    // Shorter than a block: no skip table; gaps 3, 3 at 2 bits, tf - 1 = 0, 1 at 1 bit.
    assert_eq!(bytes, [2, 1, 0b0010_1111]);
    assert_eq!(summary, TermSummary { df: 2, byte_len: 3 });
    let list = open_summary(&bytes, &summary, &input).unwrap();
    // tf up to 2; length per occurrence 10/1 and 4/2, in quarters: 40 and 8.
    let bound = list.bound();
    assert_eq!((bound.max_tf, bound.min_ratio), (2, 8));
}

#[test]
fn extreme_doc_ids_round_trip() {
    let max = TERMINATED - 1;
    let full: Vec<u32> = (0..127).chain([max]).collect();
    let two_blocks: Vec<u32> = (0..128).chain([max]).collect();
    let far_blocks: Vec<u32> = (0..128).chain((0..128).map(|i| max - 127 + i)).collect();
    for docs in [
        vec![0],
        vec![max],
        vec![0, max],
        full,
        two_blocks,
        far_blocks,
    ] {
        let input = simple(docs);
        let (bytes, summary) = encode(&input);
        let list = open_summary(&bytes, &summary, &input).unwrap();
        let expected: Vec<_> = input.docs.iter().copied().zip(input.tfs.clone()).collect();
        assert_eq!(drain(&list), expected);
        let mut cursor = list.cursor();
        let has_max = input.docs.last() == Some(&max);
        assert_eq!(cursor.seek(max), if has_max { max } else { TERMINATED });
        assert_eq!(cursor.seek(TERMINATED), TERMINATED);
        let mut cursor = list.cursor();
        assert_eq!(cursor.seek(0), input.docs[0]);
    }
}

#[test]
fn huge_tfs_round_trip() {
    let mut input = simple((0..200).collect());
    input.tfs[0] = u32::MAX;
    input.tfs[150] = u32::MAX;
    input.tfs[3] = 1 << 31;
    let (bytes, summary) = encode(&input);
    let list = open_summary(&bytes, &summary, &input).unwrap();
    assert_eq!(list.bound().max_tf, u32::MAX);
    let tfs: Vec<u32> = drain(&list).into_iter().map(|p| p.1).collect();
    assert_eq!(tfs, input.tfs);
}

#[test]
fn dense_block_packs_to_zero_bits() {
    let mut input = simple((0..128).collect());
    input.tfs = vec![1; 128];
    let (bytes, summary) = encode(&input);
    assert_eq!(
        bytes.len(),
        SKIP_ENTRY_LEN,
        "0-bit gaps and tfs: the skip entry alone"
    );
    let list = open_summary(&bytes, &summary, &input).unwrap();
    let expected: Vec<_> = (0..128).map(|d| (d, 1)).collect();
    assert_eq!(drain(&list), expected);
}

/// A block whose 32-bit gaps wrap around u32 and still end at the skip entry's last_doc
/// decodes to doc ids that go down and past `u32::MAX`: the cursor must end there, not
/// report them. (Reported, it put a cursor beyond its own block's last doc, and
/// MaxScore's range skip looped forever on such a list.)
#[test]
fn a_full_block_whose_gaps_wrap_ends_the_cursor() {
    let bitpacker = BitPacker4x::new();
    let mut packed = [0u8; 4 * BLOCK_LEN];
    // Alone: docs 2^31 - 1, u32::MAX (wrapped), 2 (past zero), 3, 4, ..., 127.
    let mut gaps = [0u32; BLOCK_LEN];
    gaps[0] = (1 << 31) - 1;
    gaps[1] = (1 << 31) - 1;
    gaps[2] = 2;
    let n = bitpacker.compress(&gaps, &mut packed, 32);
    let mut bytes = 127u32.to_le_bytes().to_vec();
    // Widths 32 and 0, max tf 1, min ratio 1, inner bounds 0.
    bytes.extend_from_slice(&[32, 0, 1, 1, 0, 0, 0]);
    bytes.extend_from_slice(&packed[..n]);
    let list = open(&bytes, 128).expect("the skip entry and lengths are consistent");
    assert_eq!(list.cursor().doc(), TERMINATED);
    assert!(drain(&list).is_empty());
    exercise(&list, &[0, 1, 5, 100, 127, 128, TERMINATED]);

    // After an honest block: block 1 runs 5000, then wraps to 2^32 - 11, 1, 2, ..., 125,
    // and ends at its skip entry's 300. The cursor yields block 0 and stops.
    let input = simple((0..128).collect());
    let (mut bytes, _) = encode(&input);
    let mut docs = [0u32; BLOCK_LEN];
    docs[0] = 5000;
    docs[1] = u32::MAX - 10;
    for (i, d) in docs.iter_mut().enumerate().take(127).skip(2) {
        *d = i as u32 - 1;
    }
    docs[127] = 300;
    let mut gaps = [0u32; BLOCK_LEN];
    let mut prev = 127u32;
    for (g, &d) in gaps.iter_mut().zip(&docs) {
        *g = d.wrapping_sub(prev).wrapping_sub(1);
        prev = d;
    }
    let n = bitpacker.compress(&gaps, &mut packed, 32);
    let mut list_bytes = bytes[..SKIP_ENTRY_LEN].to_vec(); // block 0's entry
    list_bytes.extend_from_slice(&300u32.to_le_bytes());
    list_bytes.extend_from_slice(&[32, 0, 1, 1, 0, 0, 0]);
    list_bytes.extend_from_slice(&bytes[SKIP_ENTRY_LEN..]); // block 0's data
    list_bytes.extend_from_slice(&packed[..n]);
    bytes = list_bytes;
    let list = open(&bytes, 256).expect("open reads only the skip table of full blocks");
    let yielded: Vec<u32> = drain(&list).into_iter().map(|p| p.0).collect();
    assert_eq!(yielded, (0..128).collect::<Vec<_>>());
    exercise(&list, &[0, 100, 128, 129, 200, 300, 301, TERMINATED]);
}

/// The skip entry's last_doc disagrees with the packed gaps: the cursor stops at that block
/// rather than report docs beyond the bound the skip table promised.
#[test]
fn block_contradicting_its_skip_entry_exhausts_the_cursor() {
    let input = simple((0..256).map(|i| i * 4).collect());
    let (mut bytes, summary) = encode(&input);
    // Block 0 claims to end one doc later than it does; still leaves room for block 1.
    let last0 = last_doc(&bytes, 0);
    set_last_doc(&mut bytes, 0, last0 + 1);
    let list = open_summary(&bytes, &summary, &input).unwrap();
    assert_eq!(list.cursor().doc(), TERMINATED);
    exercise(&list, &[0, 10, 600, 2000]);
}

#[test]
fn shallow_seek_moves_only_the_block_pointer() {
    let input = simple((0..1000).map(|i| i * 2).collect());
    let (bytes, summary) = encode(&input);
    let list = open_summary(&bytes, &summary, &input).unwrap();
    let mut cursor = list.cursor();
    cursor.shallow_seek(2 * 300);
    assert_eq!(
        cursor.doc(),
        0,
        "shallow_seek does not move the current doc"
    );
    assert_eq!(cursor.block_last_doc(), 2 * 383);
    cursor.shallow_seek(0);
    assert_eq!(cursor.block_last_doc(), 2 * 383, "never backwards");
    // A seek below the pointer's block still finds docs the pointer jumped over.
    assert_eq!(cursor.seek(2 * 200), 2 * 200);
    assert_eq!(cursor.block_last_doc(), 2 * 255);
    cursor.shallow_seek(TERMINATED);
    assert_eq!(cursor.block_last_doc(), TERMINATED);
    assert_eq!(cursor.block_bound(), BlockBound::NONE);
    assert_eq!(cursor.doc(), 400);
    // Even a target behind the pointer is found (the pointer's earlier blocks are rescanned).
    assert_eq!(cursor.seek(401), 402);
    assert_eq!(cursor.seek(TERMINATED), TERMINATED);
}

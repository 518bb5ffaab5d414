//! Every decoder of on-disk bytes, fed damaged *bodies* directly (as a crafted file with
//! a valid checksum would feed them): mutations of real files and random bytes must give
//! an error or a value, never a panic or a hang. The same entry points serve the
//! cargo-fuzz targets in fuzz/ (`make fuzz`).

mod common;

use std::path::Path;

use heddle::fuzzing;
use proptest::prelude::*;

/// Bodies (footer removed) of each kind of file of a small index, with its decoder.
fn corpus_bodies() -> Vec<(&'static str, Vec<u8>)> {
    let dir = tempfile::tempdir().unwrap();
    let index = common::english_index(dir.path(), true);
    let mut w = index.writer().unwrap();
    for d in common::fixture() {
        w.add(d).unwrap();
    }
    // Enough postings for full bit-packed blocks.
    for i in 0..300 {
        w.add(heddle::Document::new(
            format!("x{i}"),
            "",
            format!("covid {}", "case ".repeat(i % 5 + 1)),
        ))
        .unwrap();
    }
    // One document past 255 tokens among the short ones: the flat lengths are then a
    // byte each with an exception.
    w.add(heddle::Document::new("long", "", "covid ".repeat(300)))
        .unwrap();
    w.commit().unwrap();
    w.delete("d1");
    w.commit().unwrap();
    // And an index with vectors, for its vectors files and graph files: m 2, so that 60
    // documents reach several layers for the mutations to damage.
    let vec_dir = dir.path().join("vectors");
    let index = common::vectors::vector_index(&vec_dir, common::vectors::DIM);
    let mut w = index.writer().unwrap();
    w.set_graph(heddle::GraphSettings {
        min_docs: 1,
        m: 2,
        ef_construction: 8,
    })
    .unwrap();
    for i in 0..60 {
        w.add(common::vectors::vector_doc(i)).unwrap();
    }
    w.commit().unwrap();
    let mut bodies = Vec::new();
    for entry in std::fs::read_dir(&vec_dir).unwrap() {
        let path = entry.unwrap().path();
        let kind = match path.extension().and_then(|e| e.to_str()) {
            Some("vec") => "vectors",
            Some("hnsw") => "graph",
            _ => continue,
        };
        let bytes = std::fs::read(&path).unwrap();
        bodies.push((kind, common::body_of(&bytes).to_vec()));
    }
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let kind = kind_of(&name);
        if kind == "lock" {
            continue;
        }
        let body = if kind == "deletes" {
            bytes.clone()
        } else {
            common::body_of(&bytes).to_vec()
        };
        bodies.push((kind, body));
    }
    // Postings lists, one per seed: a tail block only, full blocks, and both.
    bodies.retain(|(kind, _)| *kind != "postings");
    for n in [3usize, 128, 300, 1000] {
        let docs: Vec<u32> = (0..n as u32).map(|i| i * 8 + i % 7).collect();
        let tfs: Vec<u32> = (0..n as u32).map(|i| 1 + i % 13).collect();
        bodies.push(("postings", fuzzing::postings_seed(&docs, &tfs)));
    }
    bodies.sort();
    let graphs = bodies.iter().filter(|(kind, _)| *kind == "graph").count();
    assert_eq!(graphs, 1, "the corpus holds a graph body");
    let escaped = |(kind, body): &&(&str, Vec<u8>)| {
        *kind == "lengths" && body.windows(5).any(|w| w == b"flat\x81")
    };
    assert!(
        bodies.iter().any(|b| escaped(&b)),
        "the corpus holds lengths with exceptions"
    );
    bodies
}

fn kind_of(name: &str) -> &'static str {
    match Path::new(name).extension().and_then(|e| e.to_str()) {
        _ if name == "LOCK" => "lock",
        _ if name == "MANIFEST" => "manifest",
        _ if name.contains(".del-") => "deletes",
        Some("terms") => "termdict",
        Some("post") => "postings",
        Some("lens") => "lengths",
        Some("store") => "store",
        Some("vec") => "vectors",
        Some("hnsw") => "graph",
        _ => "footer",
    }
}

fn decode(kind: &str, bytes: &[u8]) {
    match kind {
        "manifest" => fuzzing::manifest(bytes),
        "termdict" => fuzzing::termdict(bytes),
        "postings" => fuzzing::postings(bytes),
        "lengths" => fuzzing::lengths(bytes),
        "store" => fuzzing::store(bytes),
        "vectors" => fuzzing::vectors(bytes),
        "graph" => fuzzing::graph(bytes),
        "deletes" => fuzzing::deletes(bytes),
        _ => fuzzing::all(bytes),
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip { at: usize, bit: u8 },
    Set { at: usize, value: u8 },
    Truncate { keep: usize },
    Insert { at: usize, bytes: Vec<u8> },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::Flip { at, bit }),
        (
            any::<usize>(),
            prop_oneof![
                Just(0u8),
                Just(0xff),
                Just(0x80),
                Just(32),
                Just(33),
                any::<u8>()
            ]
        )
            .prop_map(|(at, value)| Mutation::Set { at, value }),
        any::<usize>().prop_map(|keep| Mutation::Truncate { keep }),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
    ]
}

fn apply(body: &mut Vec<u8>, m: &Mutation) {
    if body.is_empty() {
        return;
    }
    match m {
        Mutation::Flip { at, bit } => {
            let at = at % body.len();
            body[at] ^= 1 << bit;
        }
        Mutation::Set { at, value } => {
            let at = at % body.len();
            body[at] = *value;
        }
        Mutation::Truncate { keep } => body.truncate(keep % body.len()),
        Mutation::Insert { at, bytes } => {
            let at = at % body.len();
            body.splice(at..at, bytes.iter().copied());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn mutated_real_bodies_never_panic(which in any::<usize>(), mutations in prop::collection::vec(mutation(), 1..4)) {
        thread_local! {
            static BODIES: Vec<(&'static str, Vec<u8>)> = corpus_bodies();
        }
        BODIES.with(|bodies| {
            let (kind, body) = &bodies[which % bodies.len()];
            let mut body = body.clone();
            for m in &mutations {
                apply(&mut body, m);
            }
            decode(kind, &body);
        });
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        fuzzing::all(&bytes);
    }
}

/// Found by `make fuzz` (store target): a crafted store whose block starts more than 2^31
/// documents before the one fetched made the fetch count the fields to skip as
/// `2 * (doc - first_doc)` in u32, which overflowed (a panic in debug builds, a wrong
/// count in release).
#[test]
fn fuzz_store_fetch_skipping_more_than_2_pow_31_records_is_an_error() {
    fuzzing::store(&[
        0, 0, 6, 168, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
    ]);
}

/// Graph headers at the edges of what the decoder accepts, each with a body far shorter
/// than it claims or with every count and neighbour at its bound: an error, never a
/// panic, an overflow or an allocation sized by the header.
#[test]
fn graph_headers_at_their_bounds_are_errors_or_values() {
    let header = |docs: u32, dim: u32, m: u32, layers: u32, entry: u32| -> Vec<u8> {
        [docs, dim, m, layers, entry]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect()
    };
    for (docs, m, layers, entry) in [
        (1 << 16, 128, 32, 0),
        (1 << 16, 2, 1, (1 << 16) - 1),
        (1, 2, 32, 0),
        (1, 128, 1, 1),
        (3, 2, 2, 2),
    ] {
        fuzzing::graph(&header(docs, 8, m, layers, entry));
    }
    // One document, m 2, two layers: layer 0 (count 0), then layer 1 of one node
    // linking to a document past the segment, with the count at its bound.
    let mut body = header(1, 8, 2, 2, 0);
    body.extend_from_slice(&[0; 4 * 5]);
    for v in [1u32, 0, 2, u32::MAX, u32::MAX] {
        body.extend_from_slice(&v.to_le_bytes());
    }
    fuzzing::graph(&body);
    // Every layer-0 count u32::MAX.
    let mut body = header(4, 8, 2, 1, 0);
    body.extend(std::iter::repeat_n(0xff, 4 * 4 * 5));
    fuzzing::graph(&body);
}

//! A reader of graph file bodies (`seg-N.hnsw`) for the tests, written from the layout in
//! docs/FORMAT.md and `vectors/graph.rs`'s module documentation, not with the engine's
//! code: where each layer's ids and records are, so that tests can check a built
//! graph's structure and damage chosen parts of it.
//!
//! ```text
//! docs u32 | dim u32 | m u32 | layers u32 | entry u32
//! layer 0    docs records of 1 + 2m u32s (count, neighbours, unused slots)
//! layer l    nodes u32 | nodes ascending ids | nodes records of 1 + m u32s
//! ```

// Each test crate that includes this module uses part of it.
#![allow(dead_code)]

pub const HEADER_LEN: usize = 20;

pub fn u32_at(body: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(body[at..at + 4].try_into().unwrap())
}

pub fn set_u32(body: &mut [u8], at: usize, value: u32) {
    body[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

/// One layer above 0: where its size, ids and records are, and its ids.
#[derive(Debug, Clone)]
pub struct Upper {
    /// Offset of the layer's `nodes` count.
    pub size_at: usize,
    pub ids_at: usize,
    pub records_at: usize,
    pub ids: Vec<u32>,
}

/// Where everything in a graph body is.
#[derive(Debug, Clone)]
pub struct Layout {
    pub docs: usize,
    pub dim: usize,
    pub m: usize,
    pub entry: u32,
    /// Layers 1 and up.
    pub upper: Vec<Upper>,
    /// Where the last layer ends (the body's length, in a sound body).
    pub end: usize,
}

impl Layout {
    /// Reads a sound body (panics on a damaged one: the tests damage bodies after
    /// reading them).
    pub fn parse(body: &[u8]) -> Layout {
        let docs = u32_at(body, 0) as usize;
        let dim = u32_at(body, 4) as usize;
        let m = u32_at(body, 8) as usize;
        let layers = u32_at(body, 12) as usize;
        let entry = u32_at(body, 16);
        let mut at = HEADER_LEN + 4 * docs * (1 + 2 * m);
        let mut upper = Vec::new();
        for _ in 1..layers {
            let size_at = at;
            let nodes = u32_at(body, at) as usize;
            let ids_at = at + 4;
            let ids = (0..nodes).map(|i| u32_at(body, ids_at + 4 * i)).collect();
            let records_at = ids_at + 4 * nodes;
            at = records_at + 4 * nodes * (1 + m);
            upper.push(Upper {
                size_at,
                ids_at,
                records_at,
                ids,
            });
        }
        Layout {
            docs,
            dim,
            m,
            entry,
            upper,
            end: at,
        }
    }

    pub fn layers(&self) -> usize {
        1 + self.upper.len()
    }

    /// The most neighbours a record of layer `l` holds.
    pub fn width(&self, l: usize) -> usize {
        if l == 0 { 2 * self.m } else { self.m }
    }

    /// The documents of layer `l`, ascending.
    pub fn nodes(&self, l: usize) -> Vec<u32> {
        match l {
            0 => (0..self.docs as u32).collect(),
            _ => self.upper[l - 1].ids.clone(),
        }
    }

    /// Where the record in slot `slot` of layer `l` starts (its count).
    pub fn record_at(&self, l: usize, slot: usize) -> usize {
        let (start, width) = match l {
            0 => (HEADER_LEN, 1 + 2 * self.m),
            _ => (self.upper[l - 1].records_at, 1 + self.m),
        };
        start + 4 * width * slot
    }

    /// The neighbours in slot `slot` of layer `l`.
    pub fn neighbours(&self, body: &[u8], l: usize, slot: usize) -> Vec<u32> {
        let at = self.record_at(l, slot);
        let count = u32_at(body, at) as usize;
        (0..count).map(|i| u32_at(body, at + 4 + 4 * i)).collect()
    }
}

//! The stored fields of a BEIR corpus at several block sizes: what a larger block saves
//! on disk, against what a hit must decompress (the block). Usage:
//! `store_blocks CORPUS_DIR` (reads `CORPUS_DIR/corpus.jsonl`; `_id` and `title`).

use std::io::BufRead;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: store_blocks CORPUS_DIR")?;
    let path = std::path::Path::new(&dir).join("corpus.jsonl");
    let file = std::io::BufReader::new(std::fs::File::open(&path)?);
    let mut records = Vec::new();
    for (n, line) in file.lines().enumerate() {
        let doc: serde_json::Value = serde_json::from_str(&line?)
            .map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?;
        let field = |name: &str| doc[name].as_str().unwrap_or("").to_string();
        records.push((field("_id"), field("title")));
    }
    println!("{} documents", records.len());
    println!("block target  blocks  records bytes  store bytes  records/store");
    for target in [1024, 2048, 4096, 8192, 16384, 32768] {
        let (blocks, raw, body) = heddle::bench_support::store_layout(&records, target);
        println!(
            "{:>8} B  {blocks:>8}  {raw:>13}  {body:>11}  {:>12.2}x",
            target,
            raw as f64 / body as f64
        );
    }
    Ok(())
}

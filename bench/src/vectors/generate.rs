//! `heddle-bench vectors-data`: writes a vector set made from a seed, in the binary form
//! both engines (and numpy) read, so that a 171k set needs no hours of encoding.

use std::path::PathBuf;

use anyhow::ensure;
use clap::{Args, ValueEnum};

use super::data::{Mixture, Vectors, noisy_copies};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// Noisy copies of real vectors (--from), cycling through them; the queries are
    /// --queries-from's, unchanged.
    Noisy,
    /// A clustered mixture of Gaussians on the unit sphere; the queries are further
    /// draws from it.
    Mixture,
}

/// Makes a set: OUT/base.bin and OUT/queries.bin.
#[derive(Debug, Clone, Args)]
pub struct DataArgs {
    /// What to make.
    #[arg(value_enum)]
    pub kind: Kind,
    /// The directory written (base.bin, queries.bin).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Documents in the set.
    #[arg(long, default_value_t = 171_332)]
    pub n: usize,
    /// Seeds every value drawn.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// noisy: the real vectors copied (JSONL embeddings or the binary form).
    #[arg(long, value_name = "FILE", required_if_eq("kind", "noisy"))]
    pub from: Option<PathBuf>,
    /// noisy: the query vectors, copied as they are.
    #[arg(long, value_name = "FILE", required_if_eq("kind", "noisy"))]
    pub queries_from: Option<PathBuf>,
    /// noisy: the expected norm of the noise added to each (unit) copy.
    #[arg(long, default_value_t = 0.5)]
    pub noise: f32,
    /// mixture: the dimension.
    #[arg(long, default_value_t = 384)]
    pub dim: usize,
    /// mixture: its components.
    #[arg(long, default_value_t = 1000)]
    pub clusters: usize,
    /// mixture: the expected norm of the noise around each unit centre.
    #[arg(long, default_value_t = 1.0)]
    pub spread: f32,
    /// mixture: query vectors drawn.
    #[arg(long, default_value_t = 1000)]
    pub queries: usize,
}

pub fn run(args: &DataArgs) -> anyhow::Result<()> {
    ensure!(args.n >= 1, "--n must be at least 1");
    let (docs, queries) = match args.kind {
        Kind::Noisy => {
            ensure!(
                args.noise.is_finite() && args.noise >= 0.0,
                "--noise {}: expected a number of at least 0",
                args.noise
            );
            let (Some(from), Some(queries_from)) = (&args.from, &args.queries_from) else {
                anyhow::bail!("noisy needs --from and --queries-from");
            };
            let source = Vectors::read(from)?;
            let queries = Vectors::read(queries_from)?;
            ensure!(
                source.dim == queries.dim,
                "{} has {} dimensions, {} has {}",
                from.display(),
                source.dim,
                queries_from.display(),
                queries.dim
            );
            (
                noisy_copies(&source, args.n, args.noise, args.seed),
                queries,
            )
        }
        Kind::Mixture => {
            ensure!(
                (1..=65_536).contains(&args.dim),
                "--dim {}: expected 1 to 65,536",
                args.dim
            );
            ensure!(args.queries >= 1, "--queries must be at least 1");
            ensure!(
                args.spread.is_finite() && args.spread >= 0.0,
                "--spread {}: expected a number of at least 0",
                args.spread
            );
            let m = Mixture::new(args.clusters, args.dim, args.spread, args.seed);
            (m.documents(args.n), m.queries(args.queries))
        }
    };
    docs.write(&args.out.join("base.bin"))?;
    queries.write(&args.out.join("queries.bin"))?;
    eprintln!(
        "vectors-data: wrote {} documents and {} queries of {} dimensions to {}",
        docs.len(),
        queries.len(),
        docs.dim,
        args.out.display()
    );
    Ok(())
}

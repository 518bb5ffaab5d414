//! `heddle-eval serve`: one index over HTTP, in the Elasticsearch subset of
//! [`crate::serve`], until SIGTERM or ctrl-c.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use tokio::signal::unix::{SignalKind, signal};

use super::ranking::bm25_flags;
use crate::serve::{HeddleService, Reloader, ServerConfig, bind, runtime, serve};

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The index to serve.
    #[arg(long, value_name = "DIR")]
    pub index: PathBuf,
    /// The index's name in paths (`POST /NAME/_search`) [default: the index directory's
    /// name].
    #[arg(long)]
    pub name: Option<String>,
    /// Address and port to listen on (port 0: any free port; the URL is printed).
    #[arg(long, default_value = "127.0.0.1:9200")]
    pub addr: SocketAddr,
    /// Allow an --addr that is not loopback: the server has no authentication and takes
    /// writes (`_bulk`), so reaching it from other machines must be asked for. Host names
    /// given (comma-separated) are accepted in a request's `Host` and `Origin` besides
    /// the listening address (and localhost on loopback); any other name is refused, so
    /// that a web page cannot reach the server by rebinding a name of its own to it.
    #[arg(long, value_name = "NAMES", num_args = 0..=1, default_missing_value = "")]
    pub allow_remote: Option<String>,
    /// Threads running searches and bulk writes; requests beyond them wait for one
    /// [default: the number of cores; at most 1024].
    #[arg(long, value_name = "N", value_parser = crate::cli::thread_count())]
    pub threads: Option<usize>,
    /// Largest request body accepted, in bytes; a larger one is refused with 413.
    #[arg(long, value_name = "BYTES", default_value_t = 10 << 20)]
    pub max_body: usize,
    /// How often to pick up commits made by other processes, in milliseconds (0: never;
    /// this server's own `_bulk` commits are seen at once).
    #[arg(long, value_name = "MS", default_value_t = 1_000)]
    pub reload_ms: u64,
    /// A client must send a request's headers (and then its body) within this many
    /// seconds, or its connection is closed (the body: 408).
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub client_timeout: f64,
    /// On SIGTERM or ctrl-c, how many seconds requests in flight may take to finish.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub grace: f64,
    /// BM25 term-frequency saturation, from 0 to 1000 (as `search --k1`).
    #[arg(long, default_value_t = heddle::Bm25Params::default().k1)]
    pub k1: f64,
    /// BM25 length normalisation, from 0 to 1 (as `search --b`).
    #[arg(long, default_value_t = heddle::Bm25Params::default().b)]
    pub b: f64,
}

pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    let bm25 = bm25_flags(args.k1, args.b)?;
    let seconds = |flag: &str, s: f64| -> anyhow::Result<Duration> {
        Duration::try_from_secs_f64(s)
            .ok()
            .filter(|d| !d.is_zero())
            .with_context(|| format!("{flag} {s}: a positive number of seconds"))
    };
    let mut config = ServerConfig::new(args.addr);
    config.allow_remote = args.allow_remote.is_some();
    config.allowed_hosts = match &args.allow_remote {
        None => Vec::new(),
        Some(names) => names
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|n| {
                if n.contains([':', '/', '@', ' ', '[', ']']) {
                    bail!("--allow-remote {n:?}: a host name without port or scheme");
                }
                Ok(n.to_string())
            })
            .collect::<anyhow::Result<_>>()?,
    };
    if let Some(t) = args.threads {
        config.search_threads = t;
    }
    config.max_body = args.max_body;
    config.header_timeout = seconds("--client-timeout", args.client_timeout)?;
    config.body_timeout = config.header_timeout;
    config.grace = seconds("--grace", args.grace)?;

    let index = heddle::Index::open(&args.index)
        .with_context(|| format!("opening {}", args.index.display()))?;
    let name = match &args.name {
        Some(n) => n.clone(),
        None => args
            .index
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .with_context(|| format!("naming {}: give --name", args.index.display()))?,
    };
    if name.is_empty() || name.starts_with('_') || name.contains(['/', '?', '#', ' ']) {
        bail!("index name {name:?}: a path segment that does not start with _ (give --name)");
    }
    let listener = bind(&config)?;
    let addr = listener.local_addr()?;
    let _reloader = match args.reload_ms {
        0 => None,
        ms => Some(Reloader::start(index.clone(), Duration::from_millis(ms))?),
    };
    let docs = index.num_docs();
    let service = Arc::new(HeddleService::new(index, bm25));
    let runtime = runtime(&config)?;
    let served = runtime.block_on(async {
        // Both handlers are in place before the URL is printed: whoever reads it may
        // signal at once.
        let mut term = signal(SignalKind::terminate()).context("handling SIGTERM")?;
        let mut int = signal(SignalKind::interrupt()).context("handling SIGINT")?;
        // Whoever started the server reads its URL here: one that cannot be written
        // (a full disk) is an error before the first request, not a panic.
        crate::outln!(
            "heddle-eval serve: http://{addr}/{name} ({docs} documents, {} search threads); \
             stop with SIGTERM or ctrl-c",
            config.search_threads
        );
        let shutdown = async move {
            let which = tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            };
            crate::note!(
                "heddle-eval serve: {which}: no new connections; finishing requests in flight"
            );
        };
        serve(listener, name, service, config, shutdown).await
    });
    // Dropping the runtime would wait without limit for a search or commit still running
    // on the blocking pool after the grace period: give it a second, then exit anyway.
    runtime.shutdown_timeout(Duration::from_secs(1));
    served?;
    crate::outln!("heddle-eval serve: stopped");
    Ok(())
}

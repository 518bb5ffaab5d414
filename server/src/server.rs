//! The listener: binding (loopback unless told otherwise), the accept loop on a
//! single-threaded tokio reactor, per-connection HTTP/1.1 with a header read timeout,
//! and a graceful shutdown that lets requests in flight finish.

use std::future::Future;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, bail};
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::sync::oneshot;

use crate::guard::Guard;
use crate::routes::{App, handle};
use crate::service::SearchService;

/// How a server listens and what it tolerates.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub addr: SocketAddr,
    /// Binding an address other than loopback must be asked for (`--allow-remote`).
    pub allow_remote: bool,
    /// Host names accepted in `Host` and `Origin` besides the listening address and, on
    /// loopback, `localhost` (`--allow-remote NAME,...`).
    pub allowed_hosts: Vec<String>,
    /// Threads that run searches and writes (`--threads`); more wait for one.
    pub search_threads: usize,
    /// Largest request body accepted, in bytes (`--max-body`).
    pub max_body: usize,
    /// A client must send a request's headers within this (slow clients are cut off).
    pub header_timeout: Duration,
    /// ... and its body within this after the headers.
    pub body_timeout: Duration,
    /// On shutdown, how long requests in flight may take to finish.
    pub grace: Duration,
}

impl ServerConfig {
    /// Defaults for `addr`: one search thread per core, 10 MiB bodies, 10 s for headers
    /// and for bodies, 30 s of grace.
    pub fn new(addr: SocketAddr) -> Self {
        ServerConfig {
            addr,
            allow_remote: false,
            allowed_hosts: Vec::new(),
            search_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            max_body: 10 << 20,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            grace: Duration::from_secs(30),
        }
    }
}

/// Binds the configured address, refusing a non-loopback one unless allowed: a search
/// server with a write endpoint and no authentication must not be exposed by accident.
pub fn bind(config: &ServerConfig) -> anyhow::Result<StdListener> {
    if !config.addr.ip().is_loopback() && !config.allow_remote {
        bail!(
            "--addr {} is not a loopback address: this server has no authentication and \
             takes writes, so listening beyond this machine needs --allow-remote",
            config.addr
        );
    }
    anyhow::ensure!(config.search_threads >= 1, "--threads must be at least 1");
    let listener =
        StdListener::bind(config.addr).with_context(|| format!("listening on {}", config.addr))?;
    listener
        .set_nonblocking(true)
        .context("making the listener non-blocking")?;
    Ok(listener)
}

/// The runtime every server runs on: one reactor thread (accepting, parsing and writing
/// are light) and a blocking pool of exactly `search_threads` for searches and writes.
pub fn runtime(config: &ServerConfig) -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .max_blocking_threads(config.search_threads)
        .thread_name("heddle-serve")
        .build()
        .context("starting the server's runtime")
}

/// Serves `service` as index `name` on `listener` until `shutdown` completes, then stops
/// accepting, lets every request in flight finish (for at most the grace period) and
/// returns. Must run inside [`runtime`].
pub async fn serve(
    listener: StdListener,
    name: String,
    service: Arc<dyn SearchService>,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let listening = listener.local_addr().context("reading the bound address")?;
    let listener = tokio::net::TcpListener::from_std(listener)
        .context("handing the listener to the reactor")?;
    let app = Arc::new(App {
        guard: Guard::new(listening, &config.allowed_hosts),
        name,
        service,
        max_body: config.max_body,
        body_timeout: config.body_timeout,
        writes: tokio::sync::Semaphore::new(1),
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(config.header_timeout);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // Out of file descriptors, or a connection reset before it was
                        // accepted: say so and keep serving the others.
                        note!("serve: accepting a connection: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                // Responses are small and written whole: Nagle would hold their last
                // segment for the client's delayed ACK.
                let _ = stream.set_nodelay(true);
                let app = app.clone();
                let conn = http.serve_connection(
                    TokioIo::new(stream),
                    service_fn(move |req| handle(app.clone(), req)),
                );
                let conn = graceful.watch(conn);
                // A connection's error (malformed request, header timeout, a client gone
                // mid-response) ends that connection only.
                tokio::spawn(async move {
                    let _ = conn.await;
                });
            }
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => Ok(()),
        () = tokio::time::sleep(config.grace) => {
            bail!("requests still in flight after {:?} of grace; stopping anyway", config.grace)
        }
    }
}

/// A server on a thread of its own, for tests and embedding: started on a bound port,
/// stopped (gracefully) by [`RunningServer::stop`] or when dropped.
pub struct RunningServer {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<anyhow::Result<()>>>,
}

impl RunningServer {
    /// Binds `config.addr` (port 0 picks a free port) and serves `service` as `name`.
    pub fn start(
        config: ServerConfig,
        name: &str,
        service: Arc<dyn SearchService>,
    ) -> anyhow::Result<RunningServer> {
        let listener = bind(&config)?;
        let addr = listener.local_addr().context("reading the bound address")?;
        let runtime = runtime(&config)?;
        let (stop, stopped) = oneshot::channel::<()>();
        let name = name.to_string();
        let thread = std::thread::Builder::new()
            .name("heddle-serve".into())
            .spawn(move || {
                runtime.block_on(serve(listener, name, service, config, async move {
                    let _ = stopped.await;
                }))
            })
            .context("starting the server thread")?;
        Ok(RunningServer {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, waits for requests in flight, and returns how the server ended.
    pub fn stop(mut self) -> anyhow::Result<()> {
        self.finish()
    }

    fn finish(&mut self) -> anyhow::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| anyhow::anyhow!("the server thread panicked"))?,
            None => Ok(()),
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

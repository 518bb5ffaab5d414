//! The HTTP backend's connections: one keep-alive connection per request that may be in
//! flight, opened before the first is measured and kept fresh by the client's thread, so
//! that a request takes one at once and never waits for one.
//!
//! A request checks out the connection idle longest (first in, first out: at a steady
//! rate every connection is used in turn, none sits idle long enough for the server to
//! close it) and gives it back when it has read the whole answer. One it finds closed or
//! idle too long is dropped and the next taken; only when none is left does the request
//! open one itself, and then its connection's setup is in its latency, and counted
//! ([`Lease::fresh`]). With as many connections as the in-flight cap, that happens only
//! after the server closed some, until the upkeep ([`Pool::keep`]) has replaced them.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;

/// A connection idle this long is never used: `serve` closes a connection idle for its
/// client timeout (10 s by default), and a request written into a connection as the
/// server closes it would fail.
const MAX_IDLE_AGE: Duration = Duration::from_secs(5);

/// The upkeep replaces a connection idle this long, before [`MAX_IDLE_AGE`] retires it.
const REFRESH_AGE: Duration = Duration::from_secs(4);

/// How often the upkeep runs.
const KEEP_EVERY: Duration = Duration::from_secs(1);

type Sender = SendRequest<Full<Bytes>>;

/// A set of keep-alive connections to one server, shared by the requests of a backend.
#[derive(Clone)]
pub(super) struct Pool(Arc<Inner>);

struct Inner {
    /// Connections the pool holds open, idle and leased together.
    size: usize,
    idle: Mutex<VecDeque<Idle>>,
    /// Connections leased to requests (or being opened for one).
    leased: AtomicUsize,
    /// Connections opened since the pool was made.
    opened: AtomicU64,
}

struct Idle {
    sender: Sender,
    since: Instant,
}

impl Idle {
    fn usable(&self) -> bool {
        !self.sender.is_closed() && self.since.elapsed() < MAX_IDLE_AGE
    }

    fn due_for_refresh(&self) -> bool {
        self.sender.is_closed() || self.since.elapsed() >= REFRESH_AGE
    }
}

/// A connection lent to one request; given back, or dropped (and no longer counted).
pub(super) struct Lease {
    pool: Pool,
    sender: Option<Sender>,
    /// This request opened the connection itself: its setup is in the request's time.
    pub fresh: bool,
}

impl Lease {
    pub fn sender(&mut self) -> &mut Sender {
        self.sender
            .as_mut()
            .expect("a lease holds its connection until dropped")
    }

    /// Closes the connection: it failed, or the server said it would close it.
    pub fn discard(&mut self) {
        self.sender = None;
    }

    /// Returns the connection, its answer read whole, for the next request.
    pub fn give_back(mut self) {
        if let Some(sender) = self.sender.take() {
            self.pool.check_in(sender);
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.pool.0.leased.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Pool {
    /// A pool that holds `size` connections once filled.
    pub fn new(size: usize) -> Pool {
        Pool(Arc::new(Inner {
            size,
            idle: Mutex::new(VecDeque::with_capacity(size)),
            leased: AtomicUsize::new(0),
            opened: AtomicU64::new(0),
        }))
    }

    pub fn opened(&self) -> u64 {
        self.0.opened.load(Ordering::Relaxed)
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, VecDeque<Idle>> {
        self.0.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Connections held, idle and leased.
    fn held(&self, idle: &VecDeque<Idle>) -> usize {
        idle.len() + self.0.leased.load(Ordering::Acquire)
    }

    fn lease(&self, sender: Option<Sender>, fresh: bool) -> Lease {
        self.0.leased.fetch_add(1, Ordering::AcqRel);
        Lease {
            pool: self.clone(),
            sender,
            fresh,
        }
    }

    /// The connection idle longest that is still usable, else a new one.
    pub async fn check_out(&self, addrs: &[SocketAddr]) -> anyhow::Result<Lease> {
        loop {
            let next = self.idle().pop_front();
            match next {
                Some(c) if c.usable() => return Ok(self.lease(Some(c.sender), false)),
                Some(_) => continue, // closed or idle too long: dropped
                None => break,
            }
        }
        // Counted as leased while it opens, so that the upkeep does not open another.
        let mut lease = self.lease(None, true);
        lease.sender = Some(self.connect(addrs).await?);
        Ok(lease)
    }

    fn check_in(&self, sender: Sender) {
        let mut idle = self.idle();
        // The lease being returned is still counted: more than the pool's size held means
        // a request and the upkeep both opened one, and this one is spare.
        if self.held(&idle) <= self.0.size {
            idle.push_back(Idle {
                sender,
                since: Instant::now(),
            });
        }
    }

    async fn connect(&self, addrs: &[SocketAddr]) -> anyhow::Result<Sender> {
        let stream = tokio::net::TcpStream::connect(addrs)
            .await
            .with_context(|| format!("connecting to {}", addrs[0]))?;
        // Requests are small and written whole: Nagle would hold their last segment for
        // the server's delayed ACK.
        stream.set_nodelay(true).context("setting TCP_NODELAY")?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .context("starting HTTP/1.1 on the connection")?;
        // The connection's own task reads and writes; it ends when the connection closes.
        tokio::spawn(async move {
            let _ = connection.await;
        });
        self.0.opened.fetch_add(1, Ordering::Relaxed);
        Ok(sender)
    }

    /// Puts a new connection in place of the stalest idle one (if a request has not taken
    /// it meanwhile), or beside the others if the pool holds fewer than its size.
    fn replace_stale(&self, sender: Sender) {
        let mut idle = self.idle();
        if let Some(i) = idle.iter().position(Idle::due_for_refresh) {
            idle.remove(i);
        }
        if self.held(&idle) < self.0.size {
            idle.push_back(Idle {
                sender,
                since: Instant::now(),
            });
        }
    }

    /// Opens connections until the pool holds its size.
    pub async fn fill(&self, addrs: &[SocketAddr]) -> anyhow::Result<()> {
        loop {
            let held = {
                let idle = self.idle();
                self.held(&idle)
            };
            if held >= self.0.size {
                break;
            }
            let sender = self.connect(addrs).await?;
            self.idle().push_back(Idle {
                sender,
                since: Instant::now(),
            });
        }
        Ok(())
    }

    /// The upkeep, every second until the client stops: each idle connection near
    /// [`MAX_IDLE_AGE`] (or closed by the server) is replaced by a new one, opened before
    /// the old one is dropped; connections lost to failures are opened again. So a
    /// request finds a fresh connection whatever the rate, and opening one is almost
    /// never in a measured latency. A failure to connect waits for the next round.
    pub async fn keep(&self, addrs: &[SocketAddr]) {
        loop {
            tokio::time::sleep(KEEP_EVERY).await;
            let stale = {
                let idle = self.idle();
                idle.iter().filter(|c| c.due_for_refresh()).count()
            };
            for _ in 0..stale {
                let Ok(sender) = self.connect(addrs).await else {
                    break;
                };
                self.replace_stale(sender);
            }
            let _ = self.fill(addrs).await;
        }
    }
}

//! The child-engine protocol: an engine in another process (Lucene in a JVM, or heddle
//! itself, for the protocol's own cost) answering requests as lines over its stdin and
//! stdout (docs/DECISIONS.md, "Lucene as a second peer").
//!
//! ```text
//! child → parent, once:  ready TAB engine TAB version TAB docs TAB open_ns
//! parent → child:        id TAB search TAB k TAB query
//!                        id TAB stats TAB term SP term …
//!                        id TAB memory
//! child → parent:        id TAB hits TAB service_ns TAB cpu_ns (TAB score SP doc-id)*
//!                        id TAB stats TAB doc_count TAB max_doc TAB total_tokens (TAB df)*
//!                        id TAB memory TAB heap_used TAB heap_committed TAB gc_count TAB gc_ms
//!                            TAB longest_gc_ms
//!                        id TAB error TAB message
//! ```
//!
//! A search's query is what the child's engine takes, fixed when the child is started:
//! the query's text (heddle-child; Lucene in native analysis, which runs its own
//! analyzer on it) or heddle's tokens of it, space-separated (Lucene in matched
//! analysis). Requests are answered in any order (the child runs as many at once as it
//! has searching threads) and matched by id. A query, a document id and a message escape
//! tab, newline, carriage return and backslash as `\t \n \r \\`. The parent closes the
//! child's stdin to stop it; the child finishes what it started and exits.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use heddle_eval::bench::loadgen::cpu::thread_cpu_ns;

/// A request from the parent.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// The top `k` for `query` (as the child's engine takes it: text, or tokens).
    Search { k: usize, query: String },
    /// The collection statistics BM25 reads, and each term's document frequency.
    Stats { terms: Vec<String> },
    /// The child's managed heap and garbage collections so far (a JVM's).
    Memory,
}

/// An answer from the child.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Hits {
        /// The child's own time on the request, from reading it to its answer.
        service_ns: u64,
        /// The searching thread's CPU time on it.
        cpu_ns: u64,
        /// Best first: (score, external id).
        hits: Vec<(f64, String)>,
    },
    Stats(ChildStats),
    Memory(ChildMemory),
    Error(String),
}

/// What a `stats` request returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildStats {
    /// Documents with at least one token (Lucene's `docCount`, its BM25's N).
    pub doc_count: u64,
    /// Every document, empty ones included.
    pub max_doc: u64,
    pub total_tokens: u64,
    /// In the order the terms were asked.
    pub df: Vec<u64>,
}

/// What a `memory` request returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChildMemory {
    pub heap_used: u64,
    pub heap_committed: u64,
    pub gc_count: u64,
    /// All collections' time together.
    pub gc_millis: u64,
    /// The longest single stop-the-world collection: the pause a request can meet.
    pub longest_gc_millis: u64,
}

/// The child's first line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ready {
    pub engine: String,
    pub version: String,
    pub docs: u64,
    /// The child's own time to open its index.
    pub open_ns: u64,
}

/// `\t \n \r \\` for tab, newline, carriage return and backslash.
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.contains(['\t', '\n', '\r', '\\']) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The inverse of [`escape`]; any other escaped character stands for itself.
pub fn unescape(s: &str) -> Cow<'_, str> {
    if !s.contains('\\') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(c) => out.push(c),
            None => out.push('\\'),
        }
    }
    Cow::Owned(out)
}

/// One request line, without its newline.
pub fn encode_request(id: u64, request: &Request) -> String {
    match request {
        Request::Search { k, query } => format!("{id}\tsearch\t{k}\t{}", escape(query)),
        Request::Stats { terms } => {
            let terms: Vec<Cow<'_, str>> = terms.iter().map(|t| escape(t)).collect();
            format!("{id}\tstats\t{}", terms.join(" "))
        }
        Request::Memory => format!("{id}\tmemory"),
    }
}

/// Reads a request line: its id (as written) and the request.
pub fn parse_request(line: &str) -> anyhow::Result<(&str, Request)> {
    let mut f = line.split('\t');
    let id = f
        .next()
        .filter(|s| !s.is_empty())
        .context("no request id")?;
    let op = f.next().context("no operation")?;
    let request = match op {
        "search" => {
            let k = f.next().context("search without k")?;
            let k = k
                .parse()
                .with_context(|| format!("k {k:?} is not a count"))?;
            let query = unescape(f.next().context("search without a query")?).into_owned();
            Request::Search { k, query }
        }
        "stats" => Request::Stats {
            terms: f
                .next()
                .unwrap_or("")
                .split(' ')
                .filter(|t| !t.is_empty())
                .map(|t| unescape(t).into_owned())
                .collect(),
        },
        "memory" => Request::Memory,
        other => bail!("unknown operation {other:?}"),
    };
    ensure!(f.next().is_none(), "too many fields in a {op} request");
    Ok((id, request))
}

/// One answer line, without its newline.
pub fn encode_reply(id: &str, reply: &Reply) -> String {
    match reply {
        Reply::Hits {
            service_ns,
            cpu_ns,
            hits,
        } => {
            let mut s = format!("{id}\thits\t{service_ns}\t{cpu_ns}");
            for (score, doc) in hits {
                s.push_str(&format!("\t{score} {}", escape(doc)));
            }
            s
        }
        Reply::Stats(st) => {
            let mut s = format!(
                "{id}\tstats\t{}\t{}\t{}",
                st.doc_count, st.max_doc, st.total_tokens
            );
            for df in &st.df {
                s.push_str(&format!("\t{df}"));
            }
            s
        }
        Reply::Memory(m) => format!(
            "{id}\tmemory\t{}\t{}\t{}\t{}\t{}",
            m.heap_used, m.heap_committed, m.gc_count, m.gc_millis, m.longest_gc_millis
        ),
        Reply::Error(message) => format!("{id}\terror\t{}", escape(message)),
    }
}

fn number(field: Option<&str>, what: &str) -> anyhow::Result<u64> {
    let f = field.with_context(|| format!("no {what}"))?;
    f.parse()
        .with_context(|| format!("{what} {f:?} is not a whole number"))
}

/// Reads an answer line: the id it answers and the answer. An id that reads but a body
/// that does not is returned as the id with the error, so the request is not left
/// waiting.
pub fn parse_reply(line: &str) -> Result<(u64, Reply), (Option<u64>, anyhow::Error)> {
    let mut f = line.split('\t');
    let id = match f.next().map(str::parse::<u64>) {
        Some(Ok(id)) => id,
        _ => return Err((None, anyhow::anyhow!("an answer without an id: {line:?}"))),
    };
    let mut body = || -> anyhow::Result<Reply> {
        let kind = f.next().context("no answer kind")?;
        Ok(match kind {
            "hits" => {
                let service_ns = number(f.next(), "service time")?;
                let cpu_ns = number(f.next(), "CPU time")?;
                let mut hits = Vec::new();
                for h in f.by_ref() {
                    let (score, doc) = h
                        .split_once(' ')
                        .with_context(|| format!("a hit without a score and an id: {h:?}"))?;
                    let score: f64 = score
                        .parse()
                        .with_context(|| format!("score {score:?} is not a number"))?;
                    hits.push((score, unescape(doc).into_owned()));
                }
                Reply::Hits {
                    service_ns,
                    cpu_ns,
                    hits,
                }
            }
            "stats" => {
                let doc_count = number(f.next(), "document count")?;
                let max_doc = number(f.next(), "document total")?;
                let total_tokens = number(f.next(), "token total")?;
                let df = f
                    .by_ref()
                    .map(|d| number(Some(d), "document frequency"))
                    .collect::<anyhow::Result<_>>()?;
                Reply::Stats(ChildStats {
                    doc_count,
                    max_doc,
                    total_tokens,
                    df,
                })
            }
            "memory" => Reply::Memory(ChildMemory {
                heap_used: number(f.next(), "heap used")?,
                heap_committed: number(f.next(), "heap committed")?,
                gc_count: number(f.next(), "collections")?,
                gc_millis: number(f.next(), "collection time")?,
                longest_gc_millis: number(f.next(), "longest collection")?,
            }),
            "error" => Reply::Error(unescape(f.next().unwrap_or("")).into_owned()),
            other => bail!("unknown answer kind {other:?}"),
        })
    };
    body().map(|r| (id, r)).map_err(|e| (Some(id), e))
}

/// Reads the child's first line.
pub fn parse_ready(line: &str) -> anyhow::Result<Ready> {
    let f: Vec<&str> = line.trim_end_matches(['\r', '\n']).split('\t').collect();
    ensure!(
        f.len() == 5 && f[0] == "ready",
        "expected `ready TAB engine TAB version TAB docs TAB open_ns`, found {line:?}"
    );
    Ok(Ready {
        engine: f[1].to_string(),
        version: f[2].to_string(),
        docs: number(Some(f[3]), "document count")?,
        open_ns: number(Some(f[4]), "open time")?,
    })
}

/// An engine a child process serves (the heddle child's side of the protocol).
pub trait ChildEngine: Send + Sync {
    fn search(&self, query: &str, k: usize) -> anyhow::Result<Vec<(f64, String)>>;
    fn stats(&self, terms: &[String]) -> anyhow::Result<ChildStats>;
}

/// Serves `engine` on `input`/`output` with `threads` searching threads until `input`
/// ends; every request started is answered before it returns.
pub fn serve(
    engine: &dyn ChildEngine,
    ready: &Ready,
    threads: usize,
    input: impl BufRead,
    output: impl Write + Send,
) -> anyhow::Result<()> {
    let output = Mutex::new(BufWriter::new(output));
    {
        let mut out = output.lock().expect("output poisoned");
        writeln!(
            out,
            "ready\t{}\t{}\t{}\t{}",
            ready.engine, ready.version, ready.docs, ready.open_ns
        )?;
        out.flush()?;
    }
    let (tx, rx) = sync_channel::<String>(threads.max(1) * 4);
    let rx = Mutex::new(rx);
    std::thread::scope(|scope| -> anyhow::Result<()> {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                loop {
                    let line = match rx.lock().expect("queue poisoned").recv() {
                        Ok(line) => line,
                        Err(_) => return,
                    };
                    let answer = answer(engine, &line);
                    let mut out = output.lock().expect("output poisoned");
                    if writeln!(out, "{answer}").and_then(|_| out.flush()).is_err() {
                        // The parent is gone: nobody reads the answers.
                        std::process::exit(3);
                    }
                }
            });
        }
        for line in input.lines() {
            let line = line.context("reading a request")?;
            if tx.send(line).is_err() {
                break;
            }
        }
        drop(tx);
        Ok(())
    })
}

fn answer(engine: &dyn ChildEngine, line: &str) -> String {
    let started = Instant::now();
    let cpu_start = thread_cpu_ns().unwrap_or(0);
    let (id, request) = match parse_request(line) {
        Ok(r) => r,
        Err(e) => {
            let id = line.split('\t').next().unwrap_or("");
            return encode_reply(id, &Reply::Error(format!("{e:#}")));
        }
    };
    let reply = match request {
        Request::Search { k, query } => match engine.search(&query, k) {
            Ok(hits) => Reply::Hits {
                service_ns: started.elapsed().as_nanos() as u64,
                cpu_ns: thread_cpu_ns().map_or(0, |c| c.saturating_sub(cpu_start)),
                hits,
            },
            Err(e) => Reply::Error(format!("{e:#}")),
        },
        Request::Stats { terms } => match engine.stats(&terms) {
            Ok(s) => Reply::Stats(s),
            Err(e) => Reply::Error(format!("{e:#}")),
        },
        Request::Memory => Reply::Error("this engine has no managed heap".to_string()),
    };
    encode_reply(id, &reply)
}

/// A search's hits (score, id) best first, the child's service time and CPU time, ns.
pub type Searched = (Vec<(f64, String)>, u64, u64);

type Pending = Arc<Mutex<HashMap<u64, SyncSender<anyhow::Result<Reply>>>>>;

/// The parent's end: a child process, its first line read, answering requests from any
/// number of threads at once (each waits for its own answer).
pub struct ChildProcess {
    name: String,
    child: Mutex<Child>,
    stdin: Mutex<Option<BufWriter<ChildStdin>>>,
    pending: Pending,
    next: AtomicU64,
    reader: Option<JoinHandle<()>>,
    pid: u32,
    pub ready: Ready,
    /// From spawning to the ready line.
    pub started_in: Duration,
}

impl ChildProcess {
    /// Starts `cmd` and waits for its ready line. Its stderr is this process's.
    pub fn spawn(name: &str, mut cmd: Command) -> anyhow::Result<ChildProcess> {
        let started = Instant::now();
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("{name}: starting {cmd:?}"))?;
        let pid = child.id();
        let stdout = child.stdout.take().context("no stdout")?;
        let stdin = child.stdin.take().context("no stdin")?;
        let mut out = BufReader::new(stdout);
        let mut first = String::new();
        out.read_line(&mut first)
            .with_context(|| format!("{name}: reading its ready line"))?;
        if first.is_empty() {
            let status = child.wait().ok();
            bail!("{name}: the child exited before it was ready ({status:?}); its stderr is above");
        }
        let ready = parse_ready(&first).with_context(|| format!("{name}: its first line"))?;
        let started_in = started.elapsed();
        let pending: Pending = Arc::new(Mutex::new(HashMap::new()));
        let reader = {
            let pending = pending.clone();
            let name = name.to_string();
            std::thread::Builder::new()
                .name(format!("{name}-answers"))
                .spawn(move || read_answers(&name, out, &pending))?
        };
        Ok(ChildProcess {
            name: name.to_string(),
            child: Mutex::new(child),
            stdin: Mutex::new(Some(BufWriter::new(stdin))),
            pending,
            next: AtomicU64::new(1),
            reader: Some(reader),
            pid,
            ready,
            started_in,
        })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Sends `request` and waits for its answer.
    pub fn request(&self, request: &Request) -> anyhow::Result<Reply> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx): (_, Receiver<anyhow::Result<Reply>>) = sync_channel(1);
        self.pending
            .lock()
            .expect("pending poisoned")
            .insert(id, tx);
        let line = encode_request(id, request);
        {
            let mut stdin = self.stdin.lock().expect("stdin poisoned");
            let w = stdin
                .as_mut()
                .with_context(|| format!("{}: already stopped", self.name))?;
            let sent = w
                .write_all(line.as_bytes())
                .and_then(|_| w.write_all(b"\n"))
                .and_then(|_| w.flush());
            if let Err(e) = sent {
                self.pending.lock().expect("pending poisoned").remove(&id);
                return Err(e).with_context(|| format!("{}: sending a request", self.name));
            }
        }
        rx.recv()
            .map_err(|_| anyhow::anyhow!("{}: the child stopped answering", self.name))?
    }

    /// Searches; the hits best first, with the child's own service and CPU time.
    pub fn search(&self, query: &str, k: usize) -> anyhow::Result<Searched> {
        match self.request(&Request::Search {
            k,
            query: query.to_string(),
        })? {
            Reply::Hits {
                service_ns,
                cpu_ns,
                hits,
            } => Ok((hits, service_ns, cpu_ns)),
            Reply::Error(e) => bail!("{}: {e}", self.name),
            other => bail!("{}: a search answered with {other:?}", self.name),
        }
    }

    pub fn stats(&self, terms: &[String]) -> anyhow::Result<ChildStats> {
        match self.request(&Request::Stats {
            terms: terms.to_vec(),
        })? {
            Reply::Stats(s) => {
                ensure!(
                    s.df.len() == terms.len(),
                    "{}: {} document frequencies for {} terms",
                    self.name,
                    s.df.len(),
                    terms.len()
                );
                Ok(s)
            }
            Reply::Error(e) => bail!("{}: {e}", self.name),
            other => bail!("{}: stats answered with {other:?}", self.name),
        }
    }

    /// The child's managed heap, if it has one.
    pub fn memory(&self) -> Option<ChildMemory> {
        match self.request(&Request::Memory) {
            Ok(Reply::Memory(m)) => Some(m),
            _ => None,
        }
    }

    /// Closes the child's stdin and waits for it to exit (killed after 30 s).
    pub fn stop(&self) -> anyhow::Result<()> {
        drop(self.stdin.lock().expect("stdin poisoned").take());
        let mut child = self.child.lock().expect("child poisoned");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = child.try_wait()? {
                ensure!(
                    status.success(),
                    "{}: the child exited with {status}",
                    self.name
                );
                return Ok(());
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                bail!("{}: the child did not exit within 30 s; killed", self.name);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            eprintln!("{e:#}");
        }
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
    }
}

fn read_answers(name: &str, out: impl BufRead, pending: &Pending) {
    for line in out.lines() {
        let Ok(line) = line else { break };
        let (id, reply) = match parse_reply(&line) {
            Ok((id, reply)) => (id, Ok(reply)),
            Err((Some(id), e)) => (id, Err(e.context(format!("{name}: its answer")))),
            Err((None, e)) => {
                eprintln!("{name}: {e:#}; giving up on the child");
                break;
            }
        };
        let waiter = pending.lock().expect("pending poisoned").remove(&id);
        match waiter {
            Some(tx) => {
                let _ = tx.send(reply);
            }
            None => eprintln!("{name}: an answer to request {id}, which nobody asked"),
        }
    }
    // The child is gone or unreadable: every request still waiting fails.
    pending.lock().expect("pending poisoned").clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_round_trips_every_special_character() {
        for s in [
            "plain",
            "a\tb",
            "line\nbreak\r",
            "back\\slash",
            "\\t literal",
            "",
        ] {
            assert_eq!(unescape(&escape(s)), s, "{s:?}");
            assert!(!escape(s).contains(['\t', '\n', '\r']), "{s:?}");
        }
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn requests_round_trip() {
        for r in [
            Request::Search {
                k: 10,
                query: "covid\tvaccine \\ trial".into(),
            },
            Request::Stats {
                terms: vec!["bat".into(), "viru".into()],
            },
            Request::Stats { terms: vec![] },
            Request::Memory,
        ] {
            let line = encode_request(42, &r);
            assert!(!line.contains('\n'));
            let (id, back) = parse_request(&line).unwrap();
            assert_eq!((id, back), ("42", r));
        }
        assert!(parse_request("7\tsearch\tten\tq").is_err());
        assert!(parse_request("7\tsearch\t10\tq\textra").is_err());
        assert!(parse_request("7\tfly").is_err());
        assert!(parse_request("").is_err());
    }

    #[test]
    fn replies_round_trip_and_a_bad_body_keeps_its_id() {
        for r in [
            Reply::Hits {
                service_ns: 1500,
                cpu_ns: 900,
                hits: vec![(2.5, "doc one".into()), (1.25, "d\t2".into())],
            },
            Reply::Hits {
                service_ns: 1,
                cpu_ns: 0,
                hits: vec![],
            },
            Reply::Stats(ChildStats {
                doc_count: 9,
                max_doc: 10,
                total_tokens: 100,
                df: vec![3, 1],
            }),
            Reply::Memory(ChildMemory {
                heap_used: 1,
                heap_committed: 2,
                gc_count: 3,
                gc_millis: 4,
                longest_gc_millis: 2,
            }),
            Reply::Error("boom\nsecond line".into()),
        ] {
            let line = encode_reply("5", &r);
            assert_eq!(parse_reply(&line).unwrap(), (5, r));
        }
        let (id, e) = parse_reply("8\thits\t10\t5\tnot-a-hit").unwrap_err();
        assert_eq!(id, Some(8));
        assert!(format!("{e:#}").contains("score"), "{e:#}");
        assert_eq!(parse_reply("x\thits").unwrap_err().0, None);
        // Lucene writes its float scores as Java prints them.
        let (_, r) = parse_reply("1\thits\t5\t4\t0.44444972 d1\t1.0E-5 d2").unwrap();
        let Reply::Hits { hits, .. } = r else {
            panic!()
        };
        assert_eq!(hits[1], (1.0e-5, "d2".to_string()));
    }

    #[test]
    fn the_ready_line_is_checked() {
        let r = parse_ready("ready\tlucene\t9.9.1\t3\t723791285\n").unwrap();
        assert_eq!((r.engine.as_str(), r.docs), ("lucene", 3));
        assert!(parse_ready("hello").is_err());
        assert!(parse_ready("ready\tlucene\t9.9.1\tthree\t1").is_err());
    }

    struct Echo;
    impl ChildEngine for Echo {
        fn search(&self, query: &str, k: usize) -> anyhow::Result<Vec<(f64, String)>> {
            ensure!(query != "fail", "asked to fail");
            Ok((0..k).map(|i| (i as f64, format!("{query}#{i}"))).collect())
        }
        fn stats(&self, terms: &[String]) -> anyhow::Result<ChildStats> {
            Ok(ChildStats {
                doc_count: 1,
                max_doc: 2,
                total_tokens: 3,
                df: terms.iter().map(|t| t.len() as u64).collect(),
            })
        }
    }

    #[test]
    fn the_server_answers_every_request_by_id() {
        let input = "1\tsearch\t2\ta b\n2\tstats\tab c\n3\tsearch\t1\tfail\nbad\n4\tmemory\n";
        let mut out = Vec::new();
        let ready = Ready {
            engine: "echo".into(),
            version: "0".into(),
            docs: 2,
            open_ns: 5,
        };
        serve(&Echo, &ready, 3, input.as_bytes(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut lines = text.lines();
        assert_eq!(parse_ready(lines.next().unwrap()).unwrap(), ready);
        let mut by_id: HashMap<String, String> = HashMap::new();
        for l in lines {
            by_id.insert(l.split('\t').next().unwrap().to_string(), l.to_string());
        }
        assert_eq!(by_id.len(), 5, "{text}");
        match parse_reply(&by_id["1"]).unwrap().1 {
            Reply::Hits { hits, .. } => assert_eq!(
                hits,
                vec![(0.0, "a b#0".to_string()), (1.0, "a b#1".to_string())]
            ),
            r => panic!("{r:?}"),
        }
        assert_eq!(
            parse_reply(&by_id["2"]).unwrap().1,
            Reply::Stats(ChildStats {
                doc_count: 1,
                max_doc: 2,
                total_tokens: 3,
                df: vec![2, 1]
            })
        );
        assert!(
            matches!(parse_reply(&by_id["3"]).unwrap().1, Reply::Error(e) if e.contains("asked to fail"))
        );
        assert!(by_id["bad"].starts_with("bad\terror\t"));
        assert!(matches!(
            parse_reply(&by_id["4"]).unwrap().1,
            Reply::Error(_)
        ));
    }
}

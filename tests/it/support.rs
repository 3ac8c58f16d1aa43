//! Shared helpers of the integration tests: test servers, feeds, and a data folder
//! with its configuration ([`Env`]).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use md5::{Digest, Md5};
use serde_json::Value;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `fixtures/feeds/*.xml`, sorted.
pub fn feed_fixtures() -> Vec<PathBuf> {
    let dir = root().join("fixtures/feeds");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    v.sort();
    v
}

/// One line of a `.expected` file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Expected {
    pub rule: String,
    pub severity: String,
    pub pos: Option<(u32, u32)>,
}

/// Parses `NAME.expected` beside `feed`.
pub fn expected(feed: &Path) -> Vec<Expected> {
    let path = feed.with_extension("expected");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut parts = l.split_whitespace();
            let rule = parts.next().expect("rule").to_string();
            let severity = parts
                .next()
                .unwrap_or_else(|| panic!("{}: no severity in `{l}`", path.display()))
                .to_string();
            let pos = parts.next().map(|p| {
                let (a, b) = p
                    .split_once(':')
                    .unwrap_or_else(|| panic!("{}: bad position `{p}`", path.display()));
                (a.parse().expect("line"), b.parse().expect("column"))
            });
            Expected {
                rule,
                severity,
                pos,
            }
        })
        .collect()
}

/// The `plikt` binary built for these tests, in the C locale (reports in English,
/// whatever the machine's locale; a test of the locale sets its own).
pub fn plikt() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_plikt"));
    c.env("LC_ALL", "C.UTF-8");
    c
}

/// How a [`Response`] body is sent.
#[derive(Debug, Clone)]
pub enum Body {
    /// All at once, with a correct Content-Length.
    Bytes(Vec<u8>),
    /// One byte every `every`, with a correct Content-Length (a slow drip).
    Drip { bytes: Vec<u8>, every: Duration },
    /// Content-Length says `declared`, but the connection closes after `bytes`.
    Truncated { bytes: Vec<u8>, declared: usize },
    /// Never ends (no Content-Length, chunks of zeros until the client gives up).
    Endless,
    /// `chunk` bytes every `every`, with a correct Content-Length (a large file that
    /// takes a while).
    Paced {
        bytes: Vec<u8>,
        chunk: usize,
        every: Duration,
    },
}

/// What a [`Server`] answers to one request.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Body,
}

impl Response {
    pub fn ok(body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            headers: vec![("Content-Type".into(), "application/rss+xml".into())],
            body: Body::Bytes(body.into()),
        }
    }
    pub fn file(body: impl Into<Vec<u8>>, mime: &str) -> Self {
        Self {
            status: 200,
            headers: vec![("Content-Type".into(), mime.into())],
            body: Body::Bytes(body.into()),
        }
    }
    pub fn status(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Body::Bytes(format!("status {status}").into_bytes()),
        }
    }
    pub fn redirect(location: &str) -> Self {
        Self::status(302).header("Location", location)
    }
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
    pub fn body(mut self, body: Body) -> Self {
        self.body = body;
        self
    }
}

/// One request a [`Server`] received.
#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    /// The request head as received (request line and headers).
    pub head: String,
}

impl Request {
    /// The value of a header (name case-insensitive).
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    }
}

type Handler = std::sync::Arc<dyn Fn(&Request) -> Response + Send + Sync>;

/// A real HTTP/1.1 server on 127.0.0.1 (optionally TLS with the test CA in
/// `fixtures/tls/`), a thread per connection, recording every request it received.
/// Stops when dropped.
pub struct Server {
    pub addr: std::net::SocketAddr,
    pub requests: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    received: std::sync::Arc<std::sync::Mutex<Vec<Request>>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    tls: bool,
}

impl Server {
    /// Fixed responses by path; 404 for anything else.
    pub fn start(routes: Vec<(&str, Response)>) -> Self {
        let routes: Vec<(String, Response)> = routes
            .into_iter()
            .map(|(p, r)| (p.to_string(), r))
            .collect();
        Self::with_handler(move |req| {
            routes
                .iter()
                .find(|(p, _)| *p == req.path)
                .map(|(_, r)| r.clone())
                .unwrap_or(Response::status(404))
        })
    }

    /// Every request answered by `handler`.
    pub fn with_handler(handler: impl Fn(&Request) -> Response + Send + Sync + 'static) -> Self {
        Self::spawn(std::sync::Arc::new(handler), None)
    }

    /// Over TLS, with the certificate in `fixtures/tls/server.pem` (127.0.0.1, localhost).
    pub fn https(handler: impl Fn(&Request) -> Response + Send + Sync + 'static) -> Self {
        Self::spawn(
            std::sync::Arc::new(handler),
            Some(std::sync::Arc::new(tls_server_config())),
        )
    }

    fn spawn(handler: Handler, tls: Option<std::sync::Arc<rustls::ServerConfig>>) -> Self {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let requests = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let is_tls = tls.is_some();
        let (req2, rec2, stop2) = (requests.clone(), received.clone(), stop.clone());
        std::thread::spawn(move || {
            let deadline = std::time::Instant::now() + Duration::from_secs(600);
            while !stop2.load(Ordering::Relaxed) && std::time::Instant::now() < deadline {
                let Ok((stream, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                };
                let (handler, req3, rec3, stop3, tls) = (
                    handler.clone(),
                    req2.clone(),
                    rec2.clone(),
                    stop2.clone(),
                    tls.clone(),
                );
                std::thread::spawn(move || {
                    stream.set_nonblocking(false).ok();
                    stream.set_read_timeout(Some(Duration::from_secs(10))).ok();
                    match tls {
                        Some(config) => {
                            let conn = rustls::ServerConnection::new(config).expect("tls");
                            let s = rustls::StreamOwned::new(conn, stream);
                            serve_connection(s, &handler, &req3, &rec3, &stop3);
                        }
                        None => serve_connection(stream, &handler, &req3, &rec3, &stop3),
                    }
                });
            }
        });
        Self {
            addr,
            requests,
            received,
            stop,
            tls: is_tls,
        }
    }

    pub fn url(&self, path: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}{path}", self.addr)
    }

    /// Every request received so far.
    pub fn received(&self) -> Vec<Request> {
        self.received.lock().expect("lock").clone()
    }

    /// Requests received for `path`.
    pub fn hits(&self, path: &str) -> Vec<Request> {
        self.received()
            .into_iter()
            .filter(|r| r.path == path)
            .collect()
    }
}

fn serve_connection<S: std::io::Read + std::io::Write>(
    stream: S,
    handler: &Handler,
    requests: &std::sync::Mutex<Vec<String>>,
    received: &std::sync::Mutex<Vec<Request>>,
    stop: &std::sync::atomic::AtomicBool,
) {
    use std::io::{BufRead, BufReader};
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    if head.is_empty() {
        return;
    }
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    let req = Request {
        path,
        head: head.clone(),
    };
    requests.lock().expect("lock").push(head);
    received.lock().expect("lock").push(req.clone());
    let resp = handler(&req);
    let out = reader.get_mut();
    let mut text = format!("HTTP/1.1 {} X\r\nConnection: close\r\n", resp.status);
    match &resp.body {
        Body::Bytes(b) | Body::Drip { bytes: b, .. } | Body::Paced { bytes: b, .. } => {
            text.push_str(&format!("Content-Length: {}\r\n", b.len()));
        }
        Body::Truncated { declared, .. } => {
            text.push_str(&format!("Content-Length: {declared}\r\n"));
        }
        Body::Endless => {}
    }
    for (k, v) in &resp.headers {
        text.push_str(&format!("{k}: {v}\r\n"));
    }
    text.push_str("\r\n");
    if out.write_all(text.as_bytes()).is_err() {
        return;
    }
    let _ = match &resp.body {
        Body::Bytes(b) | Body::Truncated { bytes: b, .. } => {
            out.write_all(b).and_then(|()| out.flush())
        }
        Body::Drip { bytes, every } => {
            for b in bytes {
                if stop.load(std::sync::atomic::Ordering::Relaxed)
                    || out.write_all(&[*b]).and_then(|()| out.flush()).is_err()
                {
                    break;
                }
                std::thread::sleep(*every);
            }
            Ok(())
        }
        Body::Paced {
            bytes,
            chunk,
            every,
        } => {
            for c in bytes.chunks((*chunk).max(1)) {
                if stop.load(std::sync::atomic::Ordering::Relaxed)
                    || out.write_all(c).and_then(|()| out.flush()).is_err()
                {
                    break;
                }
                std::thread::sleep(*every);
            }
            Ok(())
        }
        Body::Endless => {
            let chunk = vec![b'x'; 64 * 1024];
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && out.write_all(&chunk).is_ok()
            {
            }
            Ok(())
        }
    };
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A server whose routes are computed from its own base URL (a publisher whose feed
/// names its files by URL).
pub fn serve(routes: impl Fn(&str) -> Vec<(String, Response)> + Send + Sync + 'static) -> Server {
    let cell: std::sync::Arc<std::sync::OnceLock<Vec<(String, Response)>>> = Default::default();
    let c2 = cell.clone();
    let server = Server::with_handler(move |req: &Request| {
        c2.get()
            .and_then(|r| {
                r.iter()
                    .find(|(p, _)| *p == req.path)
                    .map(|(_, r)| r.clone())
            })
            .unwrap_or(Response::status(404))
    });
    let base = server.url("");
    let _ = cell.set(routes(&base));
    server
}

/// Reads a fixture feed.
pub fn fixture(name: &str) -> Vec<u8> {
    let p = root().join("fixtures/feeds").join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// One feed item for the tests' feeds.
#[derive(Debug, Clone)]
pub struct TestItem {
    pub guid: String,
    pub pub_date: String,
    pub link: String,
    /// (url, mime, bytes the feed's md5 and fileSize describe)
    pub contents: Vec<(String, String, Vec<u8>)>,
}

impl TestItem {
    pub fn new(guid: &str, pub_date: &str, link: &str) -> Self {
        Self {
            guid: guid.into(),
            pub_date: pub_date.into(),
            link: link.into(),
            contents: Vec::new(),
        }
    }
    pub fn content(mut self, url: &str, mime: &str, bytes: &[u8]) -> Self {
        self.contents
            .push((url.into(), mime.into(), bytes.to_vec()));
        self
    }
}

pub fn md5_hex(b: &[u8]) -> String {
    Md5::digest(b).iter().map(|b| format!("{b:02x}")).collect()
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;")
}

/// A feed that conforms to profile 2.4 (checked by `feeds_of_the_tests_conform`).
pub fn feed(items: &[TestItem]) -> String {
    let mut s = String::from(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <channel>
    <title>Testbladet</title>
    <link>https://www.testbladet.se/</link>
    <description>Testflöde</description>
"#,
    );
    for it in items {
        s.push_str(&format!(
            r#"    <item>
      <title>Artikel {guid}</title>
      <link>{link}</link>
      <guid isPermaLink="false">{guid}</guid>
      <pubDate>{date}</pubDate>
      <dcterms:identifier xsi:type="dcterms:uri">{link}</dcterms:identifier>
      <dcterms:publisher>http://id.kb.se/organisations/SE5567342190</dcterms:publisher>
      <dcterms:accessRights>gratis</dcterms:accessRights>
      <dcterms:license>https://creativecommons.org/licenses/by/4.0/</dcterms:license>
      <dcterms:format>text/html</dcterms:format>
"#,
            guid = esc(&it.guid),
            link = esc(&it.link),
            date = it.pub_date
        ));
        for (url, mime, bytes) in &it.contents {
            s.push_str(&format!(
                r#"      <media:content url="{}" type="{mime}" fileSize="{}"><media:hash algo="md5">{}</media:hash></media:content>
"#,
                esc(url),
                bytes.len(),
                md5_hex(bytes)
            ));
        }
        s.push_str("    </item>\n");
    }
    s.push_str("  </channel>\n</rss>\n");
    s
}

/// RFC 2822 date `minutes` after a fixed instant (items sorted newest first by callers).
pub fn date(minutes: i64) -> String {
    let t = chrono::DateTime::parse_from_rfc3339("2026-11-01T08:00:00+01:00").unwrap()
        + chrono::Duration::minutes(minutes);
    t.to_rfc2822()
}

/// The PostgreSQL server the tests run against a second time (`PLIKT_TEST_POSTGRES`,
/// a superuser's URL, set by `scripts/test` around a throwaway cluster from
/// `scripts/postgres`); `None`: the catalog is SQLite, plikt's default.
pub fn postgres_server() -> Option<String> {
    std::env::var("PLIKT_TEST_POSTGRES")
        .ok()
        .filter(|u| !u.is_empty())
}

/// A new, empty database on the test server for one test; its URL.
pub fn postgres_database(server: &str, name: &str) -> String {
    let db: String = format!("plikt_{name}_{}", std::process::id())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let mut c = postgres::Client::connect(server, postgres::NoTls)
        .unwrap_or_else(|e| panic!("PLIKT_TEST_POSTGRES={server}: {e}"));
    c.batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
        .unwrap();
    c.batch_execute(&format!("CREATE DATABASE {db}")).unwrap();
    let base = server.rsplit_once('/').map_or(server, |(b, _)| b);
    format!("{base}/{db}")
}

/// A data folder and configuration for one test (its catalog on the PostgreSQL test
/// server when there is one, [`postgres_server`]).
pub struct Env {
    pub dir: PathBuf,
    pub config: PathBuf,
    pub env: Vec<(String, String)>,
    /// The catalog's database, on PostgreSQL.
    pub postgres: Option<String>,
}

impl Env {
    /// `publisher` is the body of one `[[publisher]]` table after `id`/`name`/`schedule`;
    /// `http` the body of `[http]`.
    pub fn new(name: &str, publisher: &str, http: &str) -> Self {
        // A new folder of its own, kept (not a `TempDir`): `Drop` removes it only after
        // a test that passed, so a failing one can be looked into.
        let dir = tempfile::Builder::new()
            .prefix(&format!("plikt-it-{name}-"))
            .tempdir()
            .unwrap()
            .keep();
        let config = dir.join("plikt.toml");
        // Quick retries and timeouts unless the test sets its own.
        let defaults: String = [
            "retries = 2",
            "retry_base_ms = 20",
            "connect_timeout_secs = 5",
            "read_timeout_secs = 5",
            "total_timeout_secs = 30",
        ]
        .iter()
        .filter(|d| !http.contains(d.split(' ').next().unwrap()))
        .map(|d| format!("{d}\n"))
        .collect();
        let postgres = postgres_server().map(|s| postgres_database(&s, name));
        let catalog = postgres
            .as_ref()
            .map_or(String::new(), |url| format!("[catalog]\nurl = \"{url}\"\n"));
        let text = format!(
            "data_dir = \"data\"\ncontact = \"mailto:eplikt@kb.example\"\n{catalog}[http]\n{defaults}{http}\n[harvest]\nretry_backoff_secs = 0\nmax_failed_runs = 3\nshutdown_grace_secs = 2\nlease_secs = 3\n[[publisher]]\nid = \"test\"\nname = \"Testbladet AB\"\nschedule = \"0 0 3 * * *\"\n{publisher}\n"
        );
        std::fs::write(&config, text).unwrap();
        Self {
            dir,
            config,
            env: Vec::new(),
            postgres,
        }
    }

    /// An http publisher on loopback for `feed`.
    pub fn plain(name: &str, feed: &str, http: &str) -> Self {
        Self::new(
            name,
            &format!("feed = \"{feed}\"\nhttps_only = false\nallow_private = true"),
            http,
        )
    }

    /// An http publisher on loopback at `publisher`'s `/feed.xml`, fetched on two
    /// connections (so that few files are in flight when one fails).
    pub fn on_two_connections(name: &str, publisher: &Server) -> Self {
        Self::plain(
            name,
            &publisher.url("/feed.xml"),
            "max_connections = 2\nmax_connections_per_host = 2",
        )
    }

    pub fn with_env(mut self, k: &str, v: &str) -> Self {
        self.env.push((k.into(), v.into()));
        self
    }

    /// The catalog on SQLite in the data folder, whatever the run's backend (for a test
    /// of something else that would take more PostgreSQL connections than a shared
    /// test cluster has).
    pub fn on_sqlite(mut self) -> Self {
        if let Some(url) = self.postgres.take() {
            self.replace_in_config(&format!("[catalog]\nurl = \"{url}\"\n"), "");
        }
        self
    }

    /// Replaces `from` with `to` in the configuration file.
    pub fn replace_in_config(&self, from: &str, to: &str) {
        let text = std::fs::read_to_string(&self.config).unwrap();
        std::fs::write(&self.config, text.replace(from, to)).unwrap();
    }

    /// Appends TOML (a table such as `[blobs]`) to the configuration.
    pub fn with_config(self, toml: &str) -> Self {
        let text = std::fs::read_to_string(&self.config).unwrap();
        std::fs::write(&self.config, format!("{text}\n{toml}\n")).unwrap();
        self
    }

    /// `listen` on a free loopback port and the matching `base_url`, for
    /// [`Serving::start`]; returns the base URL.
    pub fn listen_on_free_port(&self) -> String {
        let base = self.listen_on_free_port_keeping_base();
        let listen = format!(
            "listen = \"{}\"",
            base.trim_start_matches("http://").trim_end_matches('/')
        );
        self.replace_in_config(&listen, &format!("{listen}\nbase_url = \"{base}\""));
        base
    }

    /// `listen` on a free loopback port, `base_url` left as it is (the collection's, as
    /// behind a load balancer); returns where it answers.
    pub fn listen_on_free_port_keeping_base(&self) -> String {
        let port = free_port();
        let cfg = std::fs::read_to_string(&self.config).unwrap().replace(
            "data_dir = \"data\"",
            &format!("data_dir = \"data\"\nlisten = \"127.0.0.1:{port}\""),
        );
        std::fs::write(&self.config, cfg).unwrap();
        format!("http://127.0.0.1:{port}/")
    }

    /// `plikt <args>` started in the background, killed when the test ends.
    pub fn spawn(&self, args: &[&str]) -> Running {
        let mut c = plikt();
        c.args(args)
            .arg("--config")
            .arg(&self.config)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(self.dir.join("spawned.log"))
                    .unwrap(),
            ));
        for (k, v) in &self.env {
            c.env(k, v);
        }
        Running(c.spawn().expect("start plikt"))
    }

    pub fn cmd(&self, args: &[&str]) -> Output {
        let mut c = plikt();
        c.args(args).arg("--config").arg(&self.config);
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c.env("RUST_LOG", "warn");
        c.output().expect("run plikt")
    }

    pub fn harvest(&self) -> Output {
        self.cmd(&["harvest"])
    }

    /// `plikt audit`: its exit code and what it printed.
    pub fn audit(&self) -> (Option<i32>, String) {
        let o = self.cmd(&["audit"]);
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).to_string(),
        )
    }

    pub fn status(&self) -> Value {
        let o = self.cmd(&["status", "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let v: Value = serde_json::from_slice(&o.stdout).expect("status JSON");
        v["publishers"][0].clone()
    }

    pub fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// Rows of a query on the catalog, every column as text (booleans as 0 and 1).
    pub fn sql(&self, q: &str) -> Vec<Vec<String>> {
        if let Some(url) = &self.postgres {
            let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
            return c
                .simple_query(q)
                .unwrap_or_else(|e| panic!("{q}: {e}"))
                .into_iter()
                .filter_map(|m| match m {
                    postgres::SimpleQueryMessage::Row(r) => Some(
                        (0..r.len())
                            .map(|i| match r.get(i) {
                                None => String::new(),
                                Some("t") => "1".into(),
                                Some("f") => "0".into(),
                                // bytea as PostgreSQL writes it in text: `\x` and hex.
                                Some(v) if v.starts_with("\\x") => {
                                    String::from_utf8_lossy(&hex::decode(&v[2..]).unwrap())
                                        .into_owned()
                                }
                                Some(v) => v.to_string(),
                            })
                            .collect(),
                    ),
                    _ => None,
                })
                .collect();
        }
        let c = rusqlite::Connection::open(self.data().join("catalog.sqlite")).unwrap();
        let mut stmt = c.prepare(q).unwrap();
        let n = stmt.column_count();
        stmt.query_map([], |r| {
            Ok((0..n)
                .map(|i| match r.get_ref(i).unwrap() {
                    rusqlite::types::ValueRef::Null => String::new(),
                    rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                    rusqlite::types::ValueRef::Real(v) => v.to_string(),
                    rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => {
                        String::from_utf8_lossy(t).into_owned()
                    }
                })
                .collect())
        })
        .unwrap()
        .map(Result::unwrap)
        .collect()
    }

    /// Everything the catalog holds, as bytes: the SQLite file and its write-ahead log,
    /// or PostgreSQL's `pg_dump` of the database.
    pub fn catalog_bytes(&self) -> Vec<u8> {
        if let Some(url) = &self.postgres {
            let o = Command::new("pg_dump")
                .arg("--dbname")
                .arg(url)
                .output()
                .expect("pg_dump (PostgreSQL's client, Debian's postgresql-client)");
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            return o.stdout;
        }
        let mut bytes = std::fs::read(self.data().join("catalog.sqlite")).unwrap();
        bytes.extend(std::fs::read(self.data().join("catalog.sqlite-wal")).unwrap_or_default());
        bytes
    }

    /// Runs statements on the catalog (SQL both backends take).
    pub fn execute(&self, statements: &str) {
        if let Some(url) = &self.postgres {
            let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
            c.batch_execute(statements)
                .unwrap_or_else(|e| panic!("{statements}: {e}"));
            return;
        }
        let c = rusqlite::Connection::open(self.data().join("catalog.sqlite")).unwrap();
        c.execute_batch(statements)
            .unwrap_or_else(|e| panic!("{statements}: {e}"));
    }

    /// Each publisher's tally (what `plikt status` and `/metrics` show: deposits,
    /// deposited versions, their files), kept as versions are deposited, equals a count of
    /// the catalog's rows.
    pub fn assert_tallies_match_a_recount(&self) {
        let kept = self.sql(
            "SELECT publisher, deposits, versions, files, restricted FROM tallies
             WHERE versions > 0 ORDER BY publisher",
        );
        let counted = self.sql(
            "SELECT d.publisher, count(DISTINCT d.id), count(DISTINCT v.id), count(f.id),
               count(DISTINCT CASE WHEN v.access = 'restricted' THEN v.id END)
             FROM deposits d JOIN versions v ON v.deposit_id = d.id
             LEFT JOIN files f ON f.version_id = v.id
             WHERE v.state = 'deposited' GROUP BY d.publisher ORDER BY d.publisher",
        );
        assert_eq!(
            kept, counted,
            "tallies (publisher, deposits, versions, files, restricted)"
        );
        // The store's blobs and bytes (migration 12): no row while there are none.
        let kept = self.sql("SELECT blobs, bytes FROM blob_tally");
        let counted =
            self.sql("SELECT count(*), CAST(sum(length) AS BIGINT) FROM blobs HAVING count(*) > 0");
        assert_eq!(kept, counted, "blob tally (blobs, bytes)");
    }

    pub fn one(&self, q: &str) -> String {
        self.sql(q)
            .first()
            .and_then(|r| r.first().cloned())
            .unwrap_or_default()
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The `<loc>` URLs of a Sitemap document (a list, an index, an archive), in order.
pub fn locs(doc: &str) -> Vec<String> {
    doc.split("<loc>")
        .skip(1)
        .filter_map(|l| l.split("</loc>").next())
        .map(str::to_string)
        .collect()
}

pub fn text(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A free port on 127.0.0.1 for `plikt serve`, chosen before the history is published
/// (the documents name `base_url`); `plikt serve` is then checked to be the one
/// answering on it.
///
/// The port is below the kernel's ephemeral range (`ip_local_port_range`), so no
/// outgoing connection of the busy tests (downloads, S3, PostgreSQL) can take it
/// between this check and plikt's own bind, or while a killed worker restarts on it;
/// it was one once, and the worker failed with "Address already in use". Ports
/// handed out stay reserved for the rest of the test process.
pub fn free_port() -> u16 {
    use std::sync::Mutex;
    static GIVEN: Mutex<std::collections::BTreeSet<u16>> =
        Mutex::new(std::collections::BTreeSet::new());
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768)
        .clamp(12000, 32768);
    let (first, span) = (10000u32, u32::from(low) - 10000);
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let start = (nanos ^ std::process::id().wrapping_mul(2_654_435_761)) % span;
    for k in 0..span {
        let port = (first + (start + k * 7919) % span) as u16;
        if !given.contains(&port) && std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            given.insert(port);
            return port;
        }
    }
    panic!("no free port on 127.0.0.1 between {first} and {low}")
}

/// Runs `plikt <args>` as if it were `when` (UTC, `YYYY-MM-DD hh:mm:ss`), under
/// Debian's libfaketime (real monotonic clock: timeouts stay real; [`at_time`]).
///
/// On PostgreSQL, whose clock is today's, the configuration's `[catalog]` allows any
/// offset (`max_clock_offset_secs`): plikt refuses a machine whose clock is further
/// from the database server's, and this one is days away on purpose.
pub fn plikt_at(env: &Env, when: &str, args: &[&str]) -> Output {
    let text = std::fs::read_to_string(&env.config).unwrap();
    if env.postgres.is_some() && !text.contains("max_clock_offset_secs") {
        std::fs::write(
            &env.config,
            text.replacen(
                "[catalog]\n",
                "[catalog]\nmax_clock_offset_secs = 1000000000\n",
                1,
            ),
        )
        .unwrap();
    }
    let mut c = Command::new(env!("CARGO_BIN_EXE_plikt"));
    at_time(&mut c, when);
    c.args(args)
        .arg("--config")
        .arg(&env.config)
        .env("RUST_LOG", "warn");
    for (k, v) in &env.env {
        c.env(k, v);
    }
    c.output().expect("run plikt under libfaketime")
}

/// Debian's libfaketime for threaded programs (plikt is one), wherever this machine's
/// architecture keeps it.
fn libfaketime() -> PathBuf {
    let found = std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("faketime/libfaketimeMT.so.1"))
        .find(|p| p.exists());
    found.expect("libfaketime is missing: run scripts/setup (it installs Debian's faketime)")
}

/// Runs `c` with its wall clock starting at `when` (UTC, `YYYY-MM-DD hh:mm:ss`) and
/// going on from there: Debian's libfaketime preloaded (`FAKETIME=@…`), the monotonic
/// clock real so that timeouts stay real. Not through Debian's `faketime` wrapper: it
/// makes a semaphore named by its process id with O_EXCL, so a wrapper killed earlier
/// whose id came round again made a later run fail at once ("sem_open: File exists").
pub fn at_time(c: &mut Command, when: &str) {
    c.env("LD_PRELOAD", libfaketime())
        .env("FAKETIME", format!("@{when}"))
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .env("TZ", "UTC");
}

/// Runs `c` with the wall clock off by what the file `clock` says (Debian's
/// libfaketime, the file read at every look at the clock; the monotonic clock real, so
/// that timeouts stay real).
pub fn off_clock(c: &mut Command, clock: &Path) {
    c.env("LD_PRELOAD", libfaketime())
        .env("FAKETIME_TIMESTAMP_FILE", clock)
        .env("FAKETIME_NO_CACHE", "1")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
}

/// `plikt serve` of `env` on its `listen`, stopped when dropped; panics unless it
/// answers there.
pub struct Serving {
    child: Child,
    /// Its `base_url`.
    pub base: String,
}

impl Serving {
    pub fn start(env: &Env, base: &str) -> Self {
        Self::start_with(env, &env.config, base, "serve.log", |_| {})
    }

    /// `plikt serve` of `env` with the configuration file `config`, answering at
    /// `base`, its log in `log` of `env`'s folder, its command changed by `setup`.
    pub fn start_with(
        env: &Env,
        config: &Path,
        base: &str,
        log: &str,
        setup: impl FnOnce(&mut Command),
    ) -> Self {
        let log = env.dir.join(log);
        let mut cmd = plikt();
        cmd.args(["serve", "--config"])
            .arg(config)
            .env("RUST_LOG", "info,plikt=info")
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&log)
                    .unwrap(),
            ));
        for (k, v) in &env.env {
            cmd.env(k, v);
        }
        setup(&mut cmd);
        let mut child = cmd.spawn().expect("start plikt serve");
        let health = format!("{base}healthz");
        for _ in 0..200 {
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "plikt serve exited ({status}) before answering on {base}:\n{}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
            if get(&health, None).0 == 200 {
                return Self {
                    child,
                    base: base.to_string(),
                };
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        panic!("plikt serve does not answer on {base} after 10 s");
    }
}

impl Serving {
    /// Stops it as an operator does (SIGTERM): it finishes what is in flight.
    pub fn stop(mut self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        for _ in 0..300 {
            if self.child.try_wait().unwrap().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("plikt serve did not stop within 15 s of SIGTERM");
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A child process killed when the test ends, passed or failed (a failed assertion must
/// not leave a `plikt run` or a sample publisher behind).
pub struct Running(pub Child);

impl std::ops::Deref for Running {
    type Target = Child;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Running {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A GET over loopback: (status, headers in lower case, body).
pub fn get(url: &str, auth: Option<&str>) -> (u16, String, Vec<u8>) {
    let auth: Vec<(&str, &str)> = auth.map(|a| ("Authorization", a)).into_iter().collect();
    get_with(url, &auth)
}

/// A GET over loopback with these request headers (`Range`, `Authorization` …):
/// (status, headers in lower case, body).
pub fn get_with(url: &str, headers: &[(&str, &str)]) -> (u16, String, Vec<u8>) {
    let rest = url.strip_prefix("http://").expect("http URL");
    let (host, path) = rest.split_once('/').expect("a path");
    let extra: String = headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    exchange(
        host,
        format!("GET /{path} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n")
            .as_bytes(),
    )
}

/// `request`, as raw bytes, to `host` (`127.0.0.1:port`), and its answer until the
/// server closes: (status, head in lower case, body); status 0 when no answer came.
pub fn exchange(host: &str, request: &[u8]) -> (u16, String, Vec<u8>) {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(host) else {
        return (0, String::new(), Vec::new());
    };
    if s.write_all(request).is_err() {
        return (0, String::new(), Vec::new());
    }
    let mut resp = Vec::new();
    let _ = s.read_to_end(&mut resp);
    let Some(at) = memchr::memmem::find(&resp, b"\r\n\r\n") else {
        return (0, String::new(), Vec::new());
    };
    let head = String::from_utf8_lossy(&resp[..at]).to_lowercase();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head, resp[at + 4..].to_vec())
}

/// Writes a secret file as a deposit team must: mode 600 (plikt refuses one others may
/// read).
pub fn private_file(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// A POST over loopback: (status, headers in lower case, body).
pub fn post(url: &str, content_type: &str, body: &[u8]) -> (u16, String, Vec<u8>) {
    let rest = url.strip_prefix("http://").expect("http URL");
    let (host, path) = rest.split_once('/').expect("a path");
    let mut request = format!(
        "POST /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    exchange(host, &request)
}

/// The Python of the project's virtualenv (scripts/setup makes it).
pub fn python() -> PathBuf {
    let p = root().join(".venv/bin/python");
    assert!(p.exists(), "{} is missing: run scripts/setup", p.display());
    p
}

/// The access key the tests' Garage creates (`GK` + 24 hex digits) and its secret.
pub const GARAGE_KEY_ID: &str = "GK5a1e7b0c0ffee0123456789a";
pub const GARAGE_SECRET: &str = "6b1d0c5f2e3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c";

/// A real S3 server for the tests: Garage 2.5.0 (issue 17 §2), single node, on free
/// loopback ports, in a folder of its own; it creates its layout, key and bucket
/// `plikt` itself. Killed (and its folder removed) when dropped. A missing Garage is a
/// failure that names `scripts/setup`, never a skipped test.
pub struct Garage {
    child: Option<Child>,
    pub dir: PathBuf,
    pub port: u16,
    rpc_port: u16,
}

impl Garage {
    /// The binary `scripts/setup` builds once and caches by version.
    pub fn binary() -> PathBuf {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default();
        let p = home.join(".cache/plikt/garage-2.5.0/bin/garage");
        assert!(
            p.exists(),
            "Garage 2.5.0 is missing at {}: run scripts/setup (it builds it once, about 8 minutes, and caches it by version)",
            p.display()
        );
        p
    }

    pub fn start(name: &str) -> Self {
        // Kept like an `Env`'s folder: `Drop` removes it only after a test that passed.
        let dir = tempfile::Builder::new()
            .prefix(&format!("plikt-garage-{name}-"))
            .tempdir()
            .unwrap()
            .keep();
        let (port, rpc_port) = (free_port(), free_port());
        let conf = format!(
            "metadata_dir = \"{d}/meta\"\ndata_dir = \"{d}/data\"\ndb_engine = \"lmdb\"\nreplication_factor = 1\nrpc_bind_addr = \"127.0.0.1:{rpc_port}\"\nrpc_public_addr = \"127.0.0.1:{rpc_port}\"\nrpc_secret = \"{secret}\"\n[s3_api]\ns3_region = \"garage\"\napi_bind_addr = \"127.0.0.1:{port}\"\nroot_domain = \".s3.garage.localhost\"\n",
            d = dir.display(),
            secret = "5e".repeat(32)
        );
        std::fs::write(dir.join("garage.toml"), conf).unwrap();
        let mut g = Self {
            child: None,
            dir,
            port,
            rpc_port,
        };
        g.run();
        g
    }

    fn run(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("garage.log"))
            .unwrap();
        let mut child = Command::new(Self::binary())
            .arg("-c")
            .arg(self.dir.join("garage.toml"))
            .args(["server", "--single-node", "--default-bucket"])
            .env("GARAGE_DEFAULT_ACCESS_KEY", GARAGE_KEY_ID)
            .env("GARAGE_DEFAULT_SECRET_KEY", GARAGE_SECRET)
            .env("GARAGE_DEFAULT_BUCKET", "plikt")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .spawn()
            .expect("start garage");
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "garage exited ({status}) before listening on port {} (rpc {}):\n{}",
                    self.port,
                    self.rpc_port,
                    std::fs::read_to_string(self.dir.join("garage.log")).unwrap_or_default()
                );
            }
            assert!(
                std::time::Instant::now() < deadline,
                "garage does not listen on {} after 30 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        self.child = Some(child);
    }

    /// Kills it (SIGKILL): the object store is gone until [`Garage::restart`].
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it again on the same ports and folders (what it stored is still there).
    pub fn restart(&mut self) {
        self.stop();
        self.run();
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `env` with a `[blobs]` table on this Garage under `prefix` (plus `extra` keys)
    /// and the credentials in its environment.
    pub fn configure(&self, env: Env, prefix: &str, extra: &str) -> Env {
        self.configure_at(&self.endpoint(), env, prefix, extra)
    }

    /// [`Garage::configure`], reaching it through `proxy`.
    pub fn configure_through(&self, proxy: &Proxy, env: Env, prefix: &str, extra: &str) -> Env {
        self.configure_at(&proxy.endpoint(), env, prefix, extra)
    }

    /// [`Garage::configure`], reaching it at `endpoint`.
    pub fn configure_at(&self, endpoint: &str, env: Env, prefix: &str, extra: &str) -> Env {
        env.with_config(&format!(
            "[blobs]\ns3_endpoint = \"{endpoint}\"\nbucket = \"plikt\"\nregion = \"garage\"\nprefix = \"{prefix}\"\naccess_key_id_env = \"PLIKT_TEST_S3_KEY_ID\"\nsecret_access_key_file = \"s3-secret\"\n{extra}"
        ))
        .with_secret_file("s3-secret", GARAGE_SECRET)
        .with_env("PLIKT_TEST_S3_KEY_ID", GARAGE_KEY_ID)
    }

    /// A client of the bucket, for what happens behind plikt's back.
    pub fn client(&self) -> object_store::aws::AmazonS3 {
        object_store::aws::AmazonS3Builder::new()
            .with_endpoint(self.endpoint())
            .with_bucket_name("plikt")
            .with_region("garage")
            .with_access_key_id(GARAGE_KEY_ID)
            .with_secret_access_key(GARAGE_SECRET)
            .with_allow_http(true)
            .build()
            .unwrap()
    }
}

impl Drop for Garage {
    fn drop(&mut self) {
        self.stop();
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

impl Env {
    /// Writes `secret` to `name` beside the configuration (for a `…_file` key).
    pub fn with_secret_file(self, name: &str, secret: &str) -> Self {
        private_file(&self.dir.join(name), &format!("{secret}\n"));
        self
    }

    /// The configuration as plikt reads it, with this environment's variables.
    pub fn loaded(&self) -> plikt::config::Config {
        let text = std::fs::read_to_string(&self.config).unwrap();
        plikt::config::Config::parse(&text, &self.config, &self.dir, &|k| {
            self.env
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
        })
        .unwrap()
    }

    /// The blob store of this configuration, as plikt opens it.
    pub fn blobs(&self) -> plikt::store::Blobs {
        let c = self.loaded();
        plikt::store::Blobs::open(&c.data_dir, &c.blobs).unwrap()
    }
}

/// The TLS server side of `fixtures/tls/server.pem` (127.0.0.1, localhost; signed by
/// `fixtures/tls/ca.pem`).
pub fn tls_server_config() -> rustls::ServerConfig {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let dir = root().join("fixtures/tls");
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(dir.join("server.pem"))
        .expect("server.pem")
        .map(|c| c.expect("certificate"))
        .collect();
    let key = PrivateKeyDer::from_pem_file(dir.join("server.key")).expect("server.key");
    rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("protocol versions")
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .expect("server certificate")
}

/// TLS in front of a plain server on loopback (an object store behind an https
/// endpoint, as deposits run one): each connection's TLS is ended here
/// ([`tls_server_config`]) and its bytes copied to and from the server. Stops when
/// dropped.
pub struct TlsFront {
    pub port: u16,
    _runtime: tokio::runtime::Runtime,
}

impl TlsFront {
    pub fn start(upstream_port: u16) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(tls_server_config()));
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind 127.0.0.1");
        let port = listener.local_addr().unwrap().port();
        runtime.spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    // A client that refuses the certificate ends the handshake here.
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let Ok(mut upstream) =
                        tokio::net::TcpStream::connect(("127.0.0.1", upstream_port)).await
                    else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut upstream).await;
                });
            }
        });
        Self {
            port,
            _runtime: runtime,
        }
    }
}

/// An HTTP/1.1 proxy on loopback in front of another server (an object store): records
/// every request head it forwards and, when asked, flips one byte in the body of each
/// PUT on its way (a corruption in transit, which the object store must refuse) or
/// holds each PUT a while before sending it on (a slow object store). Stops when
/// dropped.
pub struct Proxy {
    pub addr: std::net::SocketAddr,
    heads: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    corrupt: std::sync::Arc<std::sync::atomic::AtomicBool>,
    hold_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Proxy {
    pub fn start(upstream_port: u16) -> Self {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let heads = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let corrupt = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let hold_ms = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (h2, c2, d2, s2) = (
            heads.clone(),
            corrupt.clone(),
            hold_ms.clone(),
            stop.clone(),
        );
        std::thread::spawn(move || {
            let deadline = std::time::Instant::now() + Duration::from_secs(600);
            while !s2.load(Ordering::Relaxed) && std::time::Instant::now() < deadline {
                let Ok((client, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                };
                let (h3, c3, d3) = (h2.clone(), c2.clone(), d2.clone());
                std::thread::spawn(move || {
                    let _ = proxy_connection(client, upstream_port, &h3, &c3, &d3);
                });
            }
        });
        Self {
            addr,
            heads,
            corrupt,
            hold_ms,
            stop,
        }
    }

    /// Hold each PUT this long before sending it on, from now on (zero: not at all).
    pub fn hold_puts(&self, d: Duration) {
        self.hold_ms
            .store(d.as_millis() as u64, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The request heads forwarded so far.
    pub fn heads(&self) -> Vec<String> {
        self.heads.lock().expect("lock").clone()
    }

    /// Flip a byte in the body of each PUT from now on (or stop doing so).
    pub fn corrupt_puts(&self, on: bool) {
        self.corrupt.store(on, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// One client connection: requests are read head and body (Content-Length) and sent
/// on; answers are copied back as they come.
fn proxy_connection(
    client: std::net::TcpStream,
    upstream_port: u16,
    heads: &std::sync::Mutex<Vec<String>>,
    corrupt: &std::sync::atomic::AtomicBool,
    hold_ms: &std::sync::atomic::AtomicU64,
) -> std::io::Result<()> {
    use std::io::{BufRead, BufReader, Read, Write};
    client.set_nonblocking(false)?;
    let upstream = std::net::TcpStream::connect(("127.0.0.1", upstream_port))?;
    let (mut back_from, mut back_to) = (upstream.try_clone()?, client.try_clone()?);
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut back_from, &mut back_to);
        let _ = back_to.shutdown(std::net::Shutdown::Both);
    });
    let mut to = upstream;
    let mut from = BufReader::new(client);
    loop {
        let mut head = String::new();
        loop {
            let mut line = String::new();
            if from.read_line(&mut line)? == 0 {
                let _ = to.shutdown(std::net::Shutdown::Write);
                return Ok(());
            }
            head.push_str(&line);
            if line == "\r\n" {
                break;
            }
        }
        let length: usize = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse().ok())?
            })
            .unwrap_or(0);
        let mut body = vec![0u8; length];
        from.read_exact(&mut body)?;
        if length > 0
            && head.starts_with("PUT ")
            && corrupt.load(std::sync::atomic::Ordering::Relaxed)
        {
            body[length / 2] ^= 0x20;
        }
        heads.lock().expect("lock").push(head.clone());
        let hold = hold_ms.load(std::sync::atomic::Ordering::Relaxed);
        if hold > 0 && head.starts_with("PUT ") {
            std::thread::sleep(Duration::from_millis(hold));
        }
        to.write_all(head.as_bytes())?;
        to.write_all(&body)?;
    }
}

/// A PostgreSQL cluster of this test's own (`scripts/postgres`), which it may restart
/// without disturbing the other tests; stopped and removed when dropped.
pub struct OwnPostgres {
    pub dir: String,
    pub url: String,
}

impl OwnPostgres {
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// A cluster that takes TCP connections only over TLS, with a password or a client
    /// certificate as its roles ask (`scripts/postgres start --tls`: `dir/ca.pem`,
    /// `dir/other-ca.pem`, `dir/password`, the clients' certificates; the URL's host is
    /// `localhost`, the one name its certificate has).
    pub fn start_tls() -> Self {
        Self::start_with(&["--tls"])
    }

    fn start_with(options: &[&str]) -> Self {
        let o = Command::new(root().join("scripts/postgres"))
            .arg("start")
            .args(options)
            .output()
            .unwrap();
        assert!(o.status.success(), "scripts/postgres start: {}", text(&o));
        let line = String::from_utf8(o.stdout).unwrap();
        let (dir, url) = line.trim().split_once(' ').expect("DIR URL");
        Self {
            dir: dir.into(),
            url: url.into(),
        }
    }

    pub fn script(&self, command: &str) -> Output {
        Command::new(root().join("scripts/postgres"))
            .args([command, &self.dir])
            .output()
            .unwrap()
    }
}

/// `env`'s catalog on a new database of `pg`, whatever the run's backend.
pub fn own_catalog(env: &mut Env, pg: &OwnPostgres, name: &str) {
    let url = postgres_database(&pg.url, name);
    let cfg = std::fs::read_to_string(&env.config).unwrap();
    let cfg = match &env.postgres {
        Some(shared) => cfg.replace(shared.as_str(), &url),
        None => format!("{cfg}\n[catalog]\nurl = \"{url}\"\n"),
    };
    std::fs::write(&env.config, cfg).unwrap();
    env.postgres = Some(url);
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let _ = self.script("stop");
    }
}

/// A tmpfs of `size` (mount's `size=`, such as `2m`) mounted at `dir`, made if
/// missing, and owned by the user the tests run as: a real filesystem that fills up.
/// Unmounted when dropped. Mounting needs root: as root directly, otherwise through
/// `sudo -n` (as `scripts/setup` installs packages).
pub struct Tmpfs {
    dir: PathBuf,
}

/// `program`, as root: directly when the tests run as root, else through `sudo -n`.
pub fn as_root(program: &str) -> Command {
    let uid = std::fs::metadata("/proc/self").map_or(0, |m| {
        use std::os::unix::fs::MetadataExt;
        m.uid()
    });
    if uid == 0 {
        Command::new(program)
    } else {
        let mut c = Command::new("sudo");
        c.args(["-n", program]);
        c
    }
}

/// Runs `program` with `args` as root ([`as_root`]); fails the test, saying `needs`
/// besides root, unless it succeeds.
pub fn run_as_root(program: &str, args: &[&std::ffi::OsStr], needs: &str) {
    let o = as_root(program).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "{program} {args:?} (the test needs root, or sudo without a password; {needs}): {}",
        text(&o)
    );
}

impl Tmpfs {
    pub fn mount(dir: &Path, size: &str) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        let owner = std::fs::metadata(dir).unwrap();
        let (uid, gid) = {
            use std::os::unix::fs::MetadataExt;
            (owner.uid(), owner.gid())
        };
        let options = format!("size={size},uid={uid},gid={gid},mode=0755");
        run_as_root(
            "mount",
            &[
                "-t".as_ref(),
                "tmpfs".as_ref(),
                "-o".as_ref(),
                options.as_ref(),
                "tmpfs".as_ref(),
                dir.as_os_str(),
            ],
            "a kernel that lets it mount tmpfs",
        );
        Self { dir: dir.into() }
    }

    /// Makes room: the same filesystem, now `size`.
    pub fn resize(&self, size: &str) {
        let options = format!("remount,size={size}");
        run_as_root(
            "mount",
            &["-o".as_ref(), options.as_ref(), self.dir.as_os_str()],
            "a kernel that lets it mount tmpfs",
        );
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = as_root("umount").arg("-l").arg(&self.dir).status();
    }
}

/// A publisher on loopback whose feed has `items` items, newest first: `a-<i>`, its
/// link page `/a-<i>.html` and its file `/a-<i>.bin` of `size` bytes of [`noise`].
pub fn noise_publisher(items: usize, size: usize) -> Server {
    noise_publisher_paced(items, size, None)
}

/// How many of [`noise_publisher`]'s files (`/a-<i>.bin`) `server` was asked for.
pub fn files_fetched(server: &Server) -> usize {
    server
        .received()
        .iter()
        .filter(|r| r.path.ends_with(".bin"))
        .count()
}

/// As [`noise_publisher`], each file sent in four pieces `pace` apart when given (so that
/// a harvest takes a while).
pub fn noise_publisher_paced(items: usize, size: usize, pace: Option<Duration>) -> Server {
    serve(move |base| {
        let feed_items: Vec<TestItem> = (0..items)
            .map(|i| {
                TestItem::new(
                    &format!("a-{i}"),
                    &date(100 - i as i64),
                    &format!("{base}/a-{i}.html"),
                )
                .content(
                    &format!("{base}/a-{i}.bin"),
                    "application/octet-stream",
                    &noise(size, i as u64 + 1),
                )
            })
            .collect();
        let mut routes = vec![("/feed.xml".to_string(), Response::ok(feed(&feed_items)))];
        for i in 0..items {
            routes.push((
                format!("/a-{i}.html"),
                Response::file(
                    b"<!DOCTYPE html><html><body>Artikel</body></html>".to_vec(),
                    "text/html",
                ),
            ));
            let file = Response::file(noise(size, i as u64 + 1), "application/octet-stream");
            routes.push((
                format!("/a-{i}.bin"),
                match pace {
                    None => file,
                    Some(every) => file.body(Body::Paced {
                        bytes: noise(size, i as u64 + 1),
                        chunk: size.div_ceil(4).max(1),
                        every,
                    }),
                },
            ));
        }
        routes
    })
}

/// Bytes that do not compress and do not repeat (xorshift).
pub fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Another worker's publish, as far as the lock goes: plikt's publish lock on the
/// PostgreSQL catalog at `url`, taken through the library as a worker takes it, and held
/// until the returned connection is dropped.
pub fn hold_publish_lock(url: &str) -> plikt::store::Catalog {
    let catalog = plikt::store::Catalog::open(&plikt::store::Location::Postgres {
        url: url.into(),
        password: None,
        tls: Default::default(),
        client_certificate: None,
    })
    .unwrap();
    assert!(
        catalog
            .lock_publishing(&|| false, Duration::from_millis(200))
            .unwrap()
    );
    catalog
}

/// `child`'s exit status, which must come within `within` (`what` names what it was
/// doing, for the failure's message).
pub fn wait_for_exit(child: &mut Child, within: Duration, what: &str) -> std::process::ExitStatus {
    let started = std::time::Instant::now();
    loop {
        if let Some(e) = child.try_wait().unwrap() {
            return e;
        }
        assert!(
            started.elapsed() < within,
            "{what}: no exit within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `plikt audit`'s line for the dump package `rel` (below `www/`) in its output `out`,
/// and the files (below the data folder: `www/…`) it says to remove for a publish to
/// write the package again.
pub fn package_advice(out: &str, rel: &str) -> (String, Vec<String>) {
    let line = out
        .lines()
        .find(|l| l.starts_with(&format!("package: www/{rel}: listed")))
        .unwrap_or_else(|| panic!("no line for {rel}: {out}"));
    let files = line
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|f| f.starts_with("www/"))
        .map(str::to_string)
        .collect();
    (line.to_string(), files)
}

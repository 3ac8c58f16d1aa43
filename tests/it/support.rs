//! Shared helpers of the integration tests.

use std::path::{Path, PathBuf};

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

/// The `plikt` binary built for these tests.
pub fn plikt() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_plikt"))
}

/// How a [`Response`] body is sent.
#[derive(Debug, Clone)]
pub enum Body {
    /// All at once, with a correct Content-Length.
    Bytes(Vec<u8>),
    /// One byte every `every`, with a correct Content-Length (a slow drip).
    Drip {
        bytes: Vec<u8>,
        every: std::time::Duration,
    },
    /// Content-Length says `declared`, but the connection closes after `bytes`.
    Truncated { bytes: Vec<u8>, declared: usize },
    /// Never ends (no Content-Length, chunks of zeros until the client gives up).
    Endless,
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
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let dir = root().join("fixtures/tls");
        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_file_iter(dir.join("server.pem"))
                .expect("server.pem")
                .map(|c| c.expect("certificate"))
                .collect();
        let key = PrivateKeyDer::from_pem_file(dir.join("server.key")).expect("server.key");
        let config = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("server certificate");
        Self::spawn(
            std::sync::Arc::new(handler),
            Some(std::sync::Arc::new(config)),
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
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
            while !stop2.load(Ordering::Relaxed) && std::time::Instant::now() < deadline {
                let Ok((stream, _)) = listener.accept() else {
                    std::thread::sleep(std::time::Duration::from_millis(2));
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
                    stream
                        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
                        .ok();
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
        Body::Bytes(b) | Body::Drip { bytes: b, .. } => {
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

/// Reads a fixture feed.
pub fn fixture(name: &str) -> Vec<u8> {
    let p = root().join("fixtures/feeds").join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

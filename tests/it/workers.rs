//! Several workers (issue 17 §3, §4): `plikt run` processes sharing one PostgreSQL
//! catalog and one object store (a real Garage) take the publishers' runs by lease;
//! SIGKILL at random instants loses nothing and deposits nothing twice. With SQLite,
//! plikt's default, a second worker on the same data folder is refused.

use std::time::{Duration, Instant};

use crate::support::{
    Env, Garage, OwnPostgres, Response, Running, Server, TestItem, date, feed, noise, own_catalog,
    text,
};

// The first is `Env`'s publisher `test`.
const PUBLISHERS: [&str; 3] = ["test", "beta", "gamma"];
const ITEMS: usize = 300;
const KILLS: usize = 20;

/// Deterministic bytes of one file of one publisher, 0.5–3.5 KiB.
fn file(p: usize, i: usize) -> Vec<u8> {
    let seed = ((p * 10_000 + i) as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    noise(512 + (seed % 3000) as usize, seed)
}

fn the_feed(base: &str, p: usize) -> String {
    let items: Vec<TestItem> = (0..ITEMS)
        .map(|i| {
            TestItem::new(
                &format!("{}-{i}", PUBLISHERS[p]),
                &date(1000 - i as i64),
                &format!("{base}/{p}/page/{i}.html"),
            )
            .content(
                &format!("{base}/{p}/file/{i}.bin"),
                "application/octet-stream",
                &file(p, i),
            )
        })
        .collect();
    feed(&items)
}

/// The three publishers' server: feeds at `/<p>/feed.xml`, each file 30 ms late so a
/// harvest lasts long enough to be killed many times.
fn publishers() -> Server {
    let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| {
        let mut parts = r.path.trim_start_matches('/').splitn(3, '/');
        let (Some(p), Some(kind)) = (parts.next(), parts.next()) else {
            return Response::status(404);
        };
        let Ok(p) = p.parse::<usize>() else {
            return Response::status(404);
        };
        if kind == "feed.xml" {
            return Response::ok(the_feed(b2.get().unwrap(), p));
        }
        std::thread::sleep(Duration::from_millis(30));
        let name = parts.next().unwrap_or("");
        match kind {
            "page" => Response::file(format!("<html><body>{name}</body></html>"), "text/html"),
            "file" => {
                let i: usize = name.trim_end_matches(".bin").parse().unwrap_or(0);
                Response::file(file(p, i), "application/octet-stream")
            }
            _ => Response::status(404),
        }
    });
    let _ = base.set(server.url(""));
    server
}

/// The three publishers' server ([`publishers`]) and a test environment `name` that
/// harvests them ([`configure`]), four requests at once at most.
fn three_publishers(name: &str) -> (Server, Env) {
    let server = publishers();
    let env = Env::plain(
        name,
        &server.url("/0/feed.xml"),
        "max_connections = 4\nmax_connections_per_host = 4",
    );
    configure(&env, &server);
    (server, env)
}

/// The configuration of the test: three publishers harvested every second, short
/// leases, on `env`'s catalog.
fn configure(env: &Env, server: &Server) {
    let mut cfg = std::fs::read_to_string(&env.config)
        .unwrap()
        .replace("lease_secs = 3\n", "lease_secs = 3\npoll_secs = 1\n")
        .replace("schedule = \"0 0 3 * * *\"", "schedule = \"*/5 * * * * *\"");
    for (p, id) in PUBLISHERS.iter().enumerate().skip(1) {
        cfg.push_str(&format!(
            "\n[[publisher]]\nid = \"{id}\"\nname = \"Förlag {id}\"\nschedule = \"*/5 * * * * *\"\nfeed = \"{}\"\nhttps_only = false\nallow_private = true\n",
            server.url(&format!("/{p}/feed.xml"))
        ));
    }
    std::fs::write(&env.config, cfg).unwrap();
}

/// Worker `n`: `plikt run` on its own configuration file (the same but for `listen`).
fn worker(env: &Env, n: usize) -> Running {
    worker_with(env, n, None, "")
}

/// Worker `n` as [`worker`], on a machine whose clock is off by what the file `clock`
/// says (libfaketime's `+600`, read again at every look at the clock; `None`: the real
/// clock), with `catalog` added to its `[catalog]`.
fn worker_with(env: &Env, n: usize, clock: Option<&std::path::Path>, catalog: &str) -> Running {
    let config = env.dir.join(format!("worker-{n}.toml"));
    let port = crate::support::free_port();
    std::fs::write(
        &config,
        std::fs::read_to_string(&env.config)
            .unwrap()
            .replace(
                "data_dir = \"data\"",
                &format!("data_dir = \"data\"\nlisten = \"127.0.0.1:{port}\""),
            )
            .replace("[catalog]\n", &format!("[catalog]\n{catalog}")),
    )
    .unwrap();
    let mut c = crate::support::plikt();
    if let Some(clock) = clock {
        crate::support::off_clock(&mut c, clock);
    }
    c.args(["run", "--config"])
        .arg(&config)
        // PLIKT_TEST_WORKER_LOG=info shows what each worker did (kept on failure).
        .env(
            "RUST_LOG",
            std::env::var("PLIKT_TEST_WORKER_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::from(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(env.dir.join(format!("worker-{n}.log")))
                .unwrap(),
        ));
    for (k, v) in &env.env {
        c.env(k, v);
    }
    Running(c.spawn().expect("start plikt run"))
}

/// Which of `workers` holds the lease of a publisher whose run is in progress, looking
/// for `within` (a worker is named `host:pid:tag` in the leases).
fn worker_in_a_run(env: &Env, workers: &[Running], within: Duration) -> usize {
    let started = Instant::now();
    loop {
        let held = env.sql(
            "SELECT l.worker FROM leases l JOIN runs r ON r.publisher = l.publisher
             WHERE r.outcome = 'running' AND l.worker IS NOT NULL",
        );
        for row in held {
            let pid = row[0].split(':').nth(1).unwrap_or("");
            if let Some(n) = workers.iter().position(|w| w.id().to_string() == pid) {
                return n;
            }
        }
        assert!(
            started.elapsed() < within,
            "no worker in a run within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn workers_share_the_harvest_and_sigkill_at_random_instants_loses_nothing() {
    let (server, env) = three_publishers("workers");
    if env.postgres.is_none() {
        // SQLite, the default: one process per data folder, as the README says.
        let mut first = worker(&env, 0);
        std::thread::sleep(Duration::from_millis(1500));
        let o = env.cmd(&["run"]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains("another plikt process"), "{}", text(&o));
        assert!(
            first.try_wait().unwrap().is_none(),
            "the first worker stopped"
        );
        return;
    }
    let garage = Garage::start("workers");
    let env = garage.configure(env, "w/", "");
    let seed = std::env::var("PLIKT_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        })
        | 1;
    eprintln!("workers test seed {seed} (replay: PLIKT_CRASH_SEED={seed})");
    let mut x = seed;
    let mut next = move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let mut workers: Vec<Running> = (0..3).map(|n| worker(&env, n)).collect();
    // 20 kills of a random worker at random instants, each restarted at once.
    let mut kills = 0;
    let started = Instant::now();
    while kills < KILLS {
        std::thread::sleep(Duration::from_millis(200 + next(800)));
        let mut n = next(3) as usize;
        // The last kill hits a worker in the middle of a run (the first one found within
        // 30 s), so that a dead worker's run is always there to be taken over: random
        // instants alone can all fall between runs (a worker publishing, or starting).
        if kills == KILLS - 1 {
            n = worker_in_a_run(&env, &workers, Duration::from_secs(30));
        }
        let w = &mut workers[n];
        assert!(
            w.try_wait().unwrap().is_none(),
            "worker {n} stopped by itself: {}",
            std::fs::read_to_string(env.dir.join(format!("worker-{n}.log"))).unwrap_or_default()
        );
        w.kill().unwrap(); // SIGKILL
        w.wait().unwrap();
        kills += 1;
        workers[n] = worker(&env, n);
    }
    let during = deposited(&env);
    eprintln!(
        "{KILLS} kills in {:?}; {during} of {} versions deposited by then",
        started.elapsed(),
        ITEMS * PUBLISHERS.len()
    );
    assert!(
        during < ITEMS * PUBLISHERS.len(),
        "the harvest ended before the kills did: nothing was tested"
    );
    // The survivors finish the harvest: expired leases are taken over.
    let deadline = Instant::now() + Duration::from_secs(180);
    while deposited(&env) < ITEMS * PUBLISHERS.len() {
        assert!(
            Instant::now() < deadline,
            "not all deposited within 180 s after the kills: {} of {}",
            deposited(&env),
            ITEMS * PUBLISHERS.len()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    stop(&mut workers);

    assert_exactly_once(&env);
    // Dead workers' runs were taken over (closed as interrupted), and the runs of one
    // publisher never overlapped.
    assert!(
        env.one("SELECT count(*) FROM runs WHERE message LIKE '%cut short%'")
            .parse::<u32>()
            .unwrap()
            >= 1,
        "no run was taken over"
    );
    for p in PUBLISHERS {
        let runs = env.sql(&format!(
            "SELECT started_at, ended_at FROM runs WHERE publisher = '{p}' ORDER BY id"
        ));
        for w in runs.windows(2) {
            assert!(w[1][0] >= w[0][1], "runs of {p} overlap: {w:?}");
        }
    }
    // plikt audit re-reads every object from the object store: clean.
    let o = env.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(" 0 missing, 0 corrupt"),
        "{}",
        text(&o)
    );
    // An unchanged re-harvest makes one request per feed and nothing else.
    let before = server.received().len();
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let after: Vec<String> = server.received()[before..]
        .iter()
        .map(|r| r.path.clone())
        .collect();
    let mut want: Vec<String> = (0..PUBLISHERS.len())
        .map(|p| format!("/{p}/feed.xml"))
        .collect();
    let mut got = after.clone();
    got.sort();
    want.sort();
    assert_eq!(got, want, "requests of an unchanged re-harvest");
}

/// Every version of the three publishers deposited exactly once, with all its files;
/// the journal has one entry per version; no run is left `running`.
fn assert_exactly_once(env: &Env) {
    assert_eq!(
        env.one("SELECT count(*) FROM runs WHERE outcome = 'running'"),
        "0"
    );
    // Every version deposited exactly once; the journal has no duplicate.
    let total = ITEMS * PUBLISHERS.len();
    assert_eq!(env.one("SELECT count(*) FROM versions"), total.to_string());
    assert_eq!(
        env.one("SELECT count(*) FROM versions WHERE state != 'deposited'"),
        "0"
    );
    assert_eq!(env.one("SELECT count(*) FROM changes"), total.to_string());
    assert_eq!(
        env.one("SELECT count(DISTINCT version_id) FROM changes"),
        total.to_string()
    );
    for p in PUBLISHERS {
        assert_eq!(
            env.one(&format!(
                "SELECT count(*) FROM changes WHERE publisher = '{p}'"
            )),
            ITEMS.to_string(),
            "{p}"
        );
    }
    assert_eq!(
        env.one("SELECT count(*) FROM files WHERE state != 'stored'"),
        "0"
    );
    // The numbers status and /metrics show, kept through every kill, are a recount's.
    env.assert_tallies_match_a_recount();
}

fn deposited(env: &Env) -> usize {
    env.one("SELECT count(*) FROM versions WHERE state = 'deposited'")
        .parse()
        .unwrap_or(0)
}

/// SIGTERM to every worker; each exits 0.
fn stop(workers: &mut [Running]) {
    for w in workers.iter() {
        std::process::Command::new("kill")
            .args(["-TERM", &w.id().to_string()])
            .status()
            .unwrap();
    }
    for w in workers.iter_mut() {
        assert_eq!(
            w.wait().unwrap().code(),
            Some(0),
            "a worker's exit on SIGTERM"
        );
    }
}

#[test]
fn postgresql_restarted_mid_harvest_the_workers_reconnect_and_go_on() {
    let pg = OwnPostgres::start();
    let (_server, mut env) = three_publishers("workers-pg-restart");
    // This test's catalog is on its own cluster, whatever the run's backend.
    own_catalog(&mut env, &pg, "restart");
    let garage = Garage::start("workers-pg-restart");
    let env = garage.configure(env, "r/", "");
    // The catalog's schema, before anything reads it.
    let o = env.cmd(&["status"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let mut workers: Vec<Running> = (0..2).map(|n| worker(&env, n)).collect();
    let total = ITEMS * PUBLISHERS.len();
    let deadline = Instant::now() + Duration::from_secs(120);
    while deposited(&env) < 150 {
        assert!(Instant::now() < deadline, "nothing deposited within 120 s");
        std::thread::sleep(Duration::from_millis(200));
    }
    // Stopped at once, as a crash or a failover would, and started again.
    let o = pg.script("restart");
    assert!(o.status.success(), "scripts/postgres restart: {}", text(&o));
    let at_restart = deposited(&env);
    eprintln!("PostgreSQL restarted with {at_restart} of {total} versions deposited");
    assert!(
        at_restart < total,
        "the harvest ended before the restart: nothing was tested"
    );
    let deadline = Instant::now() + Duration::from_secs(180);
    while deposited(&env) < total {
        for (n, w) in workers.iter_mut().enumerate() {
            assert!(
                w.try_wait().unwrap().is_none(),
                "worker {n} stopped after the restart: {}",
                std::fs::read_to_string(env.dir.join(format!("worker-{n}.log")))
                    .unwrap_or_default()
            );
        }
        assert!(
            Instant::now() < deadline,
            "not all deposited within 180 s of the restart: {} of {total}",
            deposited(&env)
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    stop(&mut workers);
    assert_exactly_once(&env);
    // The restart cut runs short (their end could not be recorded); later runs
    // closed them and completed their work.
    let cut: u32 = env
        .one("SELECT count(*) FROM runs WHERE message LIKE '%cut short%' OR outcome = 'failed'")
        .parse()
        .unwrap();
    assert!(cut >= 1, "the restart cut no run short: nothing was tested");
    let o = env.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// A worker and a server started while PostgreSQL is down (as during `pg_ctl restart`)
/// wait for it and go on once it is back (issue 35 §5: a worker started 0.3 s before a
/// restart exited 1). Each place they meet the catalog at start is passed: the store,
/// the server's state, the deliveries, the schedule.
#[test]
fn a_worker_started_while_postgresql_is_down_waits_for_it_and_deposits() {
    let pg = OwnPostgres::start();
    let (_server, mut env) = three_publishers("workers-pg-down");
    own_catalog(&mut env, &pg, "down");
    let o = env.cmd(&["status"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = pg.script("halt");
    assert!(o.status.success(), "scripts/postgres halt: {}", text(&o));
    let mut workers = vec![worker(&env, 0)];
    // The server's own listen address (the worker's configuration has its own).
    let base = env.listen_on_free_port_keeping_base();
    let mut server = env.spawn(&["serve"]);
    let log = |name: &str| std::fs::read_to_string(env.dir.join(name)).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !(log("worker-0.log").contains("the catalog does not answer")
        && log("spawned.log").contains("the catalog does not answer"))
    {
        assert!(
            Instant::now() < deadline,
            "no wait logged: {}",
            log("worker-0.log")
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        workers[0].try_wait().unwrap().is_none(),
        "the worker exited: {}",
        log("worker-0.log")
    );
    assert!(
        server.try_wait().unwrap().is_none(),
        "the server exited: {}",
        log("spawned.log")
    );
    let o = pg.script("resume");
    assert!(o.status.success(), "scripts/postgres resume: {}", text(&o));
    let total = ITEMS * PUBLISHERS.len();
    let deadline = Instant::now() + Duration::from_secs(180);
    while deposited(&env) < total {
        assert!(
            workers[0].try_wait().unwrap().is_none(),
            "the worker exited: {}",
            log("worker-0.log")
        );
        assert!(
            Instant::now() < deadline,
            "{} of {total} deposited",
            deposited(&env)
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    // The server serves what the worker published.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, _, body) =
            crate::support::get(&format!("{base}resourcesync/test/resourcelist.xml"), None);
        if status == 200 && String::from_utf8_lossy(&body).matches("<url>").count() >= ITEMS {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "serve: {status} {}",
            String::from_utf8_lossy(&body)
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    stop(&mut workers);
    stop(std::slice::from_mut(&mut server));
    assert_exactly_once(&env);
}

/// Two publishers on one host (`/0/`, `/1/`, `items` items each with a file), every
/// request but the feeds' answered `delay` late; the requests in flight to the host now
/// and at the most, and two workers' environment (max_connections_per_host = 2, one run
/// per worker, runs every 2 s) on a PostgreSQL cluster and a Garage of the test's own.
struct OneHost {
    env: Env,
    now: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    peak: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    _server: Server,
    _garage: Garage,
    _pg: OwnPostgres,
}

impl OneHost {
    fn start(name: &str, items: i64, delay: Duration) -> Self {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let pg = OwnPostgres::start();
        let (now, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (n2, p2) = (now.clone(), peak.clone());
        let base: Arc<std::sync::OnceLock<String>> = Default::default();
        let b2 = base.clone();
        let server = Server::with_handler(move |r| {
            let mut parts = r.path.trim_start_matches('/').splitn(3, '/');
            let (Some(Ok(p)), Some(kind)) = (parts.next().map(str::parse::<usize>), parts.next())
            else {
                return Response::status(404);
            };
            if kind == "feed.xml" {
                let items: Vec<TestItem> = (0..items)
                    .map(|i| {
                        TestItem::new(
                            &format!("h{p}-{i}"),
                            &date(1000 - i),
                            &format!("{}/{p}/page/{i}.html", b2.get().unwrap()),
                        )
                        .content(
                            &format!("{}/{p}/file/{i}.bin", b2.get().unwrap()),
                            "application/octet-stream",
                            &file(p, i as usize),
                        )
                    })
                    .collect();
                return Response::ok(feed(&items));
            }
            let in_flight = n2.fetch_add(1, Ordering::SeqCst) + 1;
            p2.fetch_max(in_flight, Ordering::SeqCst);
            std::thread::sleep(delay);
            n2.fetch_sub(1, Ordering::SeqCst);
            match kind {
                "file" => {
                    let i: usize = parts
                        .next()
                        .and_then(|n| n.trim_end_matches(".bin").parse().ok())
                        .unwrap_or(0);
                    Response::file(file(p, i), "application/octet-stream")
                }
                _ => Response::file(format!("<html><body>{}</body></html>", r.path), "text/html"),
            }
        });
        let _ = base.set(server.url(""));
        let mut env = Env::plain(
            name,
            &server.url("/0/feed.xml"),
            "max_connections = 8\nmax_connections_per_host = 2",
        );
        own_catalog(&mut env, &pg, &name.replace('-', "_"));
        let cfg = std::fs::read_to_string(&env.config)
            .unwrap()
            .replace(
                "lease_secs = 3\n",
                "lease_secs = 3\npoll_secs = 1\nruns_per_worker = 1\n",
            )
            .replace("schedule = \"0 0 3 * * *\"", "schedule = \"*/2 * * * * *\"")
            + &format!(
                "\n[[publisher]]\nid = \"andra\"\nname = \"Andra\"\nschedule = \"*/2 * * * * *\"\nfeed = \"{}\"\nhttps_only = false\nallow_private = true\n",
                server.url("/1/feed.xml")
            );
        std::fs::write(&env.config, cfg).unwrap();
        let garage = Garage::start(name);
        let env = garage.configure(env, "h/", "");
        let o = env.cmd(&["status"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        Self {
            env,
            now,
            peak,
            _server: server,
            _garage: garage,
            _pg: pg,
        }
    }

    fn peak(&self) -> usize {
        self.peak.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Waits until `n` versions are deposited, within `within`.
    fn deposited(&self, n: usize, within: Duration) {
        let deadline = Instant::now() + within;
        while deposited(&self.env) < n {
            assert!(
                Instant::now() < deadline,
                "not all deposited within {within:?}: {}",
                deposited(&self.env)
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

#[test]
fn workers_keep_the_per_host_limit_together() {
    // Two publishers on one host, two workers each harvesting one of them at the same
    // time: together they stay within max_connections_per_host = 2 (each alone keeps
    // to 2, 4 in all; a worker that took the same slot again for each request — a
    // PostgreSQL session is granted a lock it holds — would make it 4 too).
    let host = OneHost::start("workers-hosts", 40, Duration::from_millis(60));
    let env = &host.env;
    let mut workers: Vec<Running> = (0..2).map(|n| worker(env, n)).collect();
    host.deposited(80, Duration::from_secs(120));
    stop(&mut workers);
    eprintln!("peak requests at once to the host: {}", host.peak());
    // Both publishers were harvested, each run by one worker at a time, at once.
    let runs = env.sql(
        "SELECT a.id FROM runs a JOIN runs b ON a.publisher < b.publisher
         WHERE a.started_at < b.ended_at AND b.started_at < a.ended_at AND a.deposited > 0 AND b.deposited > 0",
    );
    assert!(
        !runs.is_empty(),
        "the two publishers' runs never overlapped: nothing was tested"
    );
    assert!(
        host.peak() <= 2,
        "{} requests at once to one host, over max_connections_per_host = 2",
        host.peak()
    );
}

#[test]
fn a_worker_whose_slot_session_ended_takes_its_host_slots_again() {
    // A worker streaming to a host holds its slots for as long as requests follow each
    // other, without asking PostgreSQL. When its session ends (idle_session_timeout,
    // pg_terminate_backend) the server releases them, and another worker takes them:
    // both then sent max_connections_per_host requests at once. Now a worker asks every
    // second whether its connection still holds what it counts on.
    let host = OneHost::start("workers-slots", 80, Duration::from_millis(100));
    let env = &host.env;
    let slot_sessions = || {
        env.sql(
            "SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
             AND objsubid = 2",
        )
    };
    // Worker 0 alone first: its slots are the only ones taken.
    let mut workers = vec![worker(env, 0)];
    let deadline = Instant::now() + Duration::from_secs(30);
    let first = loop {
        let s = slot_sessions();
        if !s.is_empty() && host.now.load(std::sync::atomic::Ordering::SeqCst) > 0 {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "worker 0 took no host slot in 30 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(first.len(), 1, "{first:?}");
    workers.push(worker(env, 1));
    std::thread::sleep(Duration::from_secs(2));
    // Worker 0's slot session ends; worker 1 may take the slots.
    let ended = env.sql(&format!("SELECT pg_terminate_backend({})", first[0][0]));
    assert_eq!(ended.len(), 1);
    // Once worker 0 has noticed (within a second) and the requests it had under way
    // on the lost slots (100 ms each) have ended, the host never sees more than 2.
    let log = || std::fs::read_to_string(env.dir.join("worker-0.log")).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !log().contains("no longer holds this worker's host slots") {
        assert!(
            Instant::now() < deadline,
            "worker 0 did not notice within 10 s: {}",
            log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    host.peak.store(
        host.now.load(std::sync::atomic::Ordering::SeqCst),
        std::sync::atomic::Ordering::SeqCst,
    );
    std::thread::sleep(Duration::from_secs(4));
    assert!(
        deposited(env) < 160,
        "the harvest ended before the slots were checked: nothing was tested"
    );
    let peak = host.peak();
    host.deposited(160, Duration::from_secs(120));
    stop(&mut workers);
    assert!(
        peak <= 2,
        "{peak} requests at once to one host after worker 0's slot session ended"
    );
}

#[test]
fn a_worker_on_a_machine_whose_clock_is_off_takes_no_live_run_over() {
    // A second machine's clock ten minutes ahead (libfaketime). Leases were times of
    // each worker's own clock: by this one's, every lease of a live worker had expired,
    // and it closed their runs as cut short and took them over (two runs of one
    // publisher at once). Leases are now read from PostgreSQL's clock, and a machine
    // further from it than `[catalog] max_clock_offset_secs` (2 s) neither starts nor
    // claims runs while it is off (deposit times order the Change Lists).
    let (_server, env) = three_publishers("workers-clock");
    let env = env.with_env(
        "PLIKT_TEST_OPS_TOKEN",
        "ops-secret-0123456789abcdef0123456789",
    );
    let cfg = std::fs::read_to_string(&env.config).unwrap();
    std::fs::write(
        &env.config,
        format!("{cfg}\n[[operator]]\nid = \"ops\"\ntoken_env = \"PLIKT_TEST_OPS_TOKEN\"\n"),
    )
    .unwrap();
    let clock = env.dir.join("clock");
    std::fs::write(&clock, "+600\n").unwrap();
    if env.postgres.is_none() {
        // SQLite: one machine, one clock: nothing to disagree with.
        let mut c = crate::support::plikt();
        crate::support::off_clock(&mut c, &clock);
        let o = c
            .args(["harvest", "--config"])
            .arg(&env.config)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        return;
    }
    let garage = Garage::start("workers-clock");
    let env = garage.configure(env, "k/", "");
    let log = |n: usize| {
        std::fs::read_to_string(env.dir.join(format!("worker-{n}.log"))).unwrap_or_default()
    };
    // Ten minutes ahead, `plikt run`, `harvest` and `publish` do not start, and say why.
    for command in ["run", "harvest", "publish"] {
        let mut c = crate::support::plikt();
        crate::support::off_clock(&mut c, &clock);
        c.envs(env.env.iter().map(|(k, v)| (k, v)));
        let o = c
            .args([command, "--config"])
            .arg(&env.config)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{command}: {}", text(&o));
        let said = text(&o);
        assert!(
            said.contains("clock is 600.0 s ahead")
                && said.contains("ahead of the catalog's")
                && said.contains("max_clock_offset_secs = 2")
                && said.contains("chrony"),
            "{command}: {said}"
        );
    }
    assert_eq!(env.one("SELECT count(*) FROM runs"), "0");
    // Worker 0 (the right clock) harvests the three publishers. Worker 1, ten minutes
    // ahead with the check turned off, runs beside it for longer than two leases: it
    // takes none of worker 0's live runs over.
    let mut workers = vec![worker(&env, 0)];
    assert_eq!(worker_in_a_run(&env, &workers, Duration::from_secs(30)), 0);
    workers.push(worker_with(
        &env,
        1,
        Some(&clock),
        "max_clock_offset_secs = 100000\n",
    ));
    std::thread::sleep(Duration::from_secs(7));
    assert!(
        deposited(&env) < ITEMS * PUBLISHERS.len(),
        "worker 0's runs ended before worker 1 had been beside them for 7 s: nothing was tested"
    );
    assert!(
        !log(1).contains("taking the run over"),
        "worker 1 took a live run over: {}",
        log(1)
    );
    assert_eq!(
        env.one("SELECT count(*) FROM runs WHERE message LIKE '%cut short%'"),
        "0"
    );
    let mut w1 = workers.pop().unwrap();
    stop(std::slice::from_mut(&mut w1));
    // Worker 2 starts with the right clock; then its clock jumps ten minutes ahead: it
    // says so and claims no run (its leases run out as its runs end) until its clock
    // is right again.
    std::fs::write(&clock, "+0\n").unwrap();
    workers.push(worker_with(&env, 2, Some(&clock), ""));
    std::thread::sleep(Duration::from_secs(2));
    std::fs::write(&clock, "+600\n").unwrap();
    let pid = workers[1].id().to_string();
    let holds = || {
        env.sql("SELECT worker FROM leases WHERE worker IS NOT NULL")
            .iter()
            .any(|row| row[0].split(':').nth(1) == Some(pid.as_str()))
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !log(2).contains("claims no runs until its clock agrees") || holds() {
        assert!(
            Instant::now() < deadline,
            "worker 2 did not stop claiming within 60 s of its clock going off: {}",
            log(2)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(log(2).contains("ahead of the catalog's"), "{}", log(2));
    // Its /metrics says how far, as a monitoring system reads it.
    let listen = std::fs::read_to_string(env.dir.join("worker-2.toml"))
        .unwrap()
        .lines()
        .find_map(|l| {
            l.strip_prefix("listen = \"")
                .map(|l| l.trim_end_matches('"').to_owned())
        })
        .unwrap();
    let (code, head, body) = crate::support::get(
        &format!("http://{listen}/metrics"),
        Some("Bearer ops-secret-0123456789abcdef0123456789"),
    );
    assert_eq!(code, 200, "{head}");
    let body = String::from_utf8(body).unwrap();
    let offset: f64 = body
        .lines()
        .find_map(|l| l.strip_prefix("plikt_clock_offset_seconds "))
        .unwrap_or_else(|| panic!("no plikt_clock_offset_seconds in {body}"))
        .parse()
        .unwrap();
    assert!((-601.0..=-599.0).contains(&offset), "{offset}");
    // Runs fall due every 5 s; for 6 s all go to worker 0.
    let until = Instant::now() + Duration::from_secs(6);
    while Instant::now() < until {
        assert!(!holds(), "worker 2 claimed a run with its clock off");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Its clock right again and worker 0 stopped, worker 2 claims the runs.
    std::fs::write(&clock, "+0\n").unwrap();
    stop(&mut workers[..1]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !holds() {
        assert!(
            Instant::now() < deadline,
            "worker 2 did not claim again within 30 s of its clock coming right: {}",
            log(2)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let deadline = Instant::now() + Duration::from_secs(180);
    while deposited(&env) < ITEMS * PUBLISHERS.len() {
        assert!(
            Instant::now() < deadline,
            "not all deposited within 180 s: {}",
            deposited(&env)
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    stop(&mut workers[1..]);
    assert_exactly_once(&env);
    // Nobody died, so no run was cut short. (The runs' own start and end times are
    // the workers' clocks: worker 2's may end ten minutes late, so they are not
    // compared here.)
    assert_eq!(
        env.one("SELECT count(*) FROM runs WHERE message LIKE '%cut short%'"),
        "0"
    );
}

//! `plikt harvest` against real HTTP servers on 127.0.0.1 (issue 3 §6): one test per
//! case, each asserting what was recorded (catalog), what the run reported (exit
//! status, output) and what the server received.

use std::time::Duration;

use serde_json::Value;

use crate::support::{
    Body, Env, OwnPostgres, Response, Running, Server, TestItem, Tmpfs, date, feed, files_fetched,
    get, hold_publish_lock, md5_hex, noise, noise_publisher, own_catalog, plikt, root, serve, text,
    wait_for_exit,
};

/// A publisher with one item: `/feed.xml`, its link page `/a-1.html`, and `/a-1.pdf`
/// (the feed declares [`PDF`]) answered by `pdf`.
fn one_file_publisher(pdf: Response) -> Server {
    serve(move |base| {
        vec![
            ("/feed.xml".into(), Response::ok(one_file_feed(base, PDF))),
            ("/a-1.html".into(), Response::file(HTML, "text/html")),
            ("/a-1.pdf".into(), pdf.clone()),
        ]
    })
}

fn one_file_feed(base: &str, file: &[u8]) -> String {
    feed(&[
        TestItem::new("a-1", &date(0), &format!("{base}/a-1.html")).content(
            &format!("{base}/a-1.pdf"),
            "application/pdf",
            file,
        ),
    ])
}

const PDF: &[u8] =
    b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";
const HTML: &[u8] = b"<!DOCTYPE html><html><body>Artikel</body></html>";

#[test]
fn feeds_of_the_tests_conform_to_the_profile() {
    let f = one_file_feed("https://www.testbladet.se", PDF);
    let report =
        plikt::profile::validate(f.as_bytes(), &plikt::profile::Options::default()).unwrap();
    assert!(report.valid(), "{:?}", report.findings);
    assert_eq!(
        report
            .findings
            .iter()
            .filter(|f| f.severity != plikt::profile::Severity::Info)
            .count(),
        0,
        "{:?}",
        report.findings
    );
}

#[test]
fn a_feed_is_harvested_and_an_unchanged_feed_costs_one_request() {
    let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| match r.path.as_str() {
        "/feed.xml" if r.header("if-none-match").as_deref() == Some("\"v1\"") => {
            Response::status(304)
        }
        "/feed.xml" => Response::ok(one_file_feed(b2.get().unwrap(), PDF)).header("ETag", "\"v1\""),
        "/a-1.html" => Response::file(HTML, "text/html"),
        "/a-1.pdf" => Response::file(PDF, "application/pdf"),
        _ => Response::status(404),
    });
    let _ = base.set(server.url(""));
    let env = Env::plain("basic", &server.url("/feed.xml"), "");
    // Before the first harvest: nothing yet, and asking creates no data folder.
    let before = env.status();
    assert_eq!(before["deposits"].as_u64(), Some(0));
    assert!(before["last_run"].is_null());
    assert!(!env.data().exists());
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("test: ok"),
        "{}",
        text(&o)
    );
    let s = env.status();
    assert_eq!(
        (
            s["deposits"].as_u64(),
            s["versions"].as_u64(),
            s["files"].as_u64()
        ),
        (Some(1), Some(1), Some(2))
    );
    assert_eq!(s["last_run"]["outcome"], "ok");
    assert!(
        s["next_run"].as_str().is_some_and(|t| t.ends_with('Z')),
        "{s}"
    );
    // The user agent names plikt, its version and the contact from the config.
    let ua = server.received()[0].header("user-agent").unwrap();
    assert!(
        ua.starts_with("plikt/") && ua.contains("mailto:eplikt@kb.example"),
        "{ua}"
    );
    // Files are requested without content coding.
    let pdf = &server.hits("/a-1.pdf")[0];
    assert_eq!(pdf.header("accept-encoding").as_deref(), Some("identity"));
    // Stored bytes are the served bytes, content-addressed, with their provenance.
    let sha = env.one("SELECT sha256 FROM files WHERE url LIKE '%.pdf'");
    let blob = env.data().join("blobs").join(&sha[..2]).join(&sha);
    assert_eq!(std::fs::read(blob).unwrap(), PDF);
    assert_eq!(
        env.sql("SELECT http_status, content_type, md5, length FROM files WHERE url LIKE '%.pdf'"),
        vec![vec![
            "200".to_string(),
            "application/pdf".into(),
            md5_hex(PDF),
            PDF.len().to_string()
        ]]
    );
    assert_eq!(
        env.sql("SELECT change FROM changes"),
        vec![vec!["created".to_string()]]
    );

    let before = server.received().len();
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let after = server.received();
    assert_eq!(
        after.len(),
        before + 1,
        "re-harvest made more than one request"
    );
    assert_eq!(
        after[before].header("if-none-match").as_deref(),
        Some("\"v1\"")
    );
    assert_eq!(env.status()["last_run"]["outcome"], "not-modified");
}

#[test]
fn newer_pubdate_is_a_new_version_and_same_pubdate_changed_content_warns() {
    let version = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(1));
    let v2 = version.clone();
    let server_cell: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let base_cell = server_cell.clone();
    let server = Server::with_handler(move |r| {
        let base = base_cell.get().cloned().unwrap_or_default();
        let v = v2.load(std::sync::atomic::Ordering::SeqCst);
        let pdf = format!("%PDF-1.4 version {v}\n").into_bytes();
        match r.path.as_str() {
            "/feed.xml" => {
                let minutes = if v >= 2 { 60 } else { 0 };
                let mut item = TestItem::new("a-1", &date(minutes), &format!("{base}/a-1.html"))
                    .content(&format!("{base}/a-1.pdf"), "application/pdf", &pdf);
                if v == 3 {
                    item.link = format!("{base}/a-1.html?changed");
                }
                Response::ok(feed(&[item]))
            }
            "/a-1.html" | "/a-1.html?changed" => Response::file(HTML, "text/html"),
            "/a-1.pdf" => Response::file(pdf, "application/pdf"),
            _ => Response::status(404),
        }
    });
    let _ = server_cell.set(server.url(""));
    let env = Env::plain("versions", &server.url("/feed.xml"), "");
    assert_eq!(env.harvest().status.code(), Some(0));
    version.store(2, std::sync::atomic::Ordering::SeqCst);
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = env.status();
    assert_eq!(
        (s["deposits"].as_u64(), s["versions"].as_u64()),
        (Some(1), Some(2)),
        "{s}"
    );
    assert_eq!(
        env.sql("SELECT change FROM changes ORDER BY seq"),
        vec![vec!["created".to_string()], vec!["updated".to_string()]]
    );
    // Nothing deposited is overwritten: both PDFs are stored.
    assert_eq!(
        env.one("SELECT count(DISTINCT sha256) FROM files WHERE url LIKE '%.pdf'"),
        "2"
    );
    version.store(3, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(env.harvest().status.code(), Some(0));
    let s = env.status();
    assert_eq!(
        s["versions"].as_u64(),
        Some(2),
        "same pubDate must not make a version"
    );
    let warned = s["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["rule"] == "H-VERSION" && f["severity"] == "warning");
    assert!(warned, "{s}");
    // One deposit with two versions, each with its two files.
    assert_eq!(
        (s["deposits"].as_u64(), s["files"].as_u64()),
        (Some(1), Some(4)),
        "{s}"
    );
    env.assert_tallies_match_a_recount();
}

#[test]
fn wrong_md5_is_recorded_and_nothing_is_deposited() {
    let server = serve(|base| {
        let feed = feed(&[
            TestItem::new("a-1", &date(0), &format!("{base}/a-1.html")).content(
                &format!("{base}/a-1.pdf"),
                "application/pdf",
                b"what the feed says",
            ),
        ]);
        vec![
            ("/feed.xml".into(), Response::ok(feed)),
            ("/a-1.html".into(), Response::file(HTML, "text/html")),
            ("/a-1.pdf".into(), Response::file(PDF, "application/pdf")),
        ]
    });
    let env = Env::plain("md5", &server.url("/feed.xml"), "");
    let o = env.harvest();
    assert_eq!(
        o.status.code(),
        Some(0),
        "items that fail do not fail the run: {}",
        text(&o)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("publisher test, item a-1,")
            && err.contains("/a-1.pdf")
            && err.contains("H-MD5"),
        "{err}"
    );
    let s = env.status();
    assert_eq!(
        (s["deposits"].as_u64(), s["pending"].as_u64()),
        (Some(0), Some(1)),
        "{s}"
    );
    let item = &s["items"][0];
    assert_eq!(item["guid"], "a-1");
    assert!(item["reason"].as_str().unwrap().contains("MD5"), "{item}");
    assert!(
        s["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "H-MD5" && f["severity"] == "error")
    );
    assert_eq!(
        server.hits("/a-1.pdf").len(),
        1,
        "a hash mismatch is not retried within the run"
    );
    // The wrong bytes are not in the store.
    assert_eq!(
        env.one(&format!(
            "SELECT count(*) FROM blobs WHERE md5 = '{}'",
            md5_hex(PDF)
        )),
        "0"
    );
    assert!(env.sql("SELECT * FROM changes").is_empty());
}

/// A harvest of `env` whose blob store takes no file: its output says each of `said`,
/// and that the run downloads no more files.
fn harvest_into_a_store_taking_none(env: &Env, said: &[&str]) {
    let o = env.harvest();
    let out = text(&o);
    for s in said.iter().chain(&["this run downloads no more files"]) {
        assert!(out.contains(s), "{out}");
    }
}

/// Once the blob store takes files again: the next harvest deposits all `items`
/// versions, and `plikt audit` is clean.
fn deposits_all_once_it_takes_files_again(env: &Env, items: usize) {
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        env.one("SELECT count(*) FROM versions WHERE state = 'deposited'"),
        items.to_string()
    );
    let o = env.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// The data folder's filesystem fills up mid-harvest (a real tmpfs of 2 MiB; the
/// feed's files are 15 MiB): each failure says the disk is full and what to do, and the
/// run stops downloading, so the files left stay pending, unattempted (fetching every
/// one only to throw it away cost the publisher 30 downloads at every run while the
/// disk was full). Once there is room the next run deposits every version: nothing
/// lost, `plikt audit` clean. With SQLite the catalog is on the full disk too; in the
/// PostgreSQL pass only the blob store is.
#[test]
fn a_full_disk_stops_the_runs_downloads_says_what_to_do_and_loses_nothing() {
    const ITEMS: usize = 30;
    let publisher = noise_publisher(ITEMS, 512 << 10);
    let env = Env::on_two_connections("disk-full", &publisher);
    let disk = Tmpfs::mount(&env.data(), "2m");
    let bins = || files_fetched(&publisher);
    harvest_into_a_store_taking_none(
        &env,
        &[
            "No space left on device",
            "is full (or plikt's user is over its quota there): free space or grow it",
        ],
    );
    // What fitted, and the files in flight when the first failed (two connections).
    let fetched = bins();
    eprintln!("{fetched} of {ITEMS} files downloaded onto a full disk");
    assert!(
        fetched <= 12,
        "{fetched} of {ITEMS} files downloaded onto a full disk"
    );
    disk.resize("64m");
    deposits_all_once_it_takes_files_again(&env, ITEMS);
    assert!(
        bins() <= ITEMS + fetched,
        "{} downloads in all: each file at most once more than it fitted",
        bins()
    );
}

/// A blob folder plikt may not write into (here made immutable with `chattr +i`, which
/// stops root too: the folder of a restore owned by someone else, or a filesystem gone
/// read-only, fail alike): the files download into `tmp/`, but the batch that moves them
/// into place fails, each of its files fails with what to do, and the run starts no more
/// downloads (before, the whole run failed there). Once the folder is writable again the
/// next run deposits every version, and `plikt audit` is clean.
#[test]
fn a_blob_folder_that_takes_no_file_fails_its_batch_and_stops_the_downloads() {
    const ITEMS: usize = 60;
    // 64 KiB in four pieces 40 ms apart: 60 files on two connections take ~5 s, and the
    // first batch is moved into place within ~1 s.
    let publisher =
        crate::support::noise_publisher_paced(ITEMS, 64 << 10, Some(Duration::from_millis(40)));
    let env = Env::on_two_connections("blobs-immutable", &publisher);
    let blobs = env.data().join("blobs");
    std::fs::create_dir_all(&blobs).unwrap();
    /// The folder made immutable (`chattr +i`, as root); writable again when dropped, so
    /// that a failing test leaves no folder nobody can remove.
    struct Immutable(std::path::PathBuf);
    impl Immutable {
        fn make(folder: &std::path::Path) -> Self {
            crate::support::run_as_root(
                "chattr",
                &["+i".as_ref(), folder.as_os_str()],
                "$TMPDIR on a filesystem that takes chattr +i, such as ext4",
            );
            Self(folder.to_path_buf())
        }
    }
    impl Drop for Immutable {
        fn drop(&mut self) {
            let _ = crate::support::as_root("chattr")
                .arg("-i")
                .arg(&self.0)
                .status();
        }
    }
    let immutable = Immutable::make(&blobs);
    harvest_into_a_store_taking_none(
        &env,
        &[
            "Operation not permitted",
            "an immutable or append-only attribute (`lsattr -d` shows it",
        ],
    );
    let fetched = files_fetched(&publisher);
    eprintln!("{fetched} of {ITEMS} files downloaded into a folder that takes none");
    assert!(fetched < ITEMS, "{fetched} of {ITEMS} files downloaded");
    drop(immutable);
    deposits_all_once_it_takes_files_again(&env, ITEMS);
}

#[test]
fn a_failing_version_is_retried_and_then_stays_failed() {
    let server = one_file_publisher(Response::status(404));
    let env = Env::plain("giveup", &server.url("/feed.xml"), "");
    for run in 1..=4 {
        assert_eq!(env.harvest().status.code(), Some(0));
        let s = env.status();
        let state = s["items"][0]["state"].as_str().unwrap().to_string();
        assert_eq!(
            state,
            if run < 3 { "pending" } else { "failed" },
            "run {run}: {s}"
        );
    }
    // max_failed_runs = 3: three attempts, then no more requests.
    assert_eq!(server.hits("/a-1.pdf").len(), 3);
    let s = env.status();
    assert_eq!(s["failed"].as_u64(), Some(1));
    assert_eq!(
        (
            s["deposits"].as_u64(),
            s["versions"].as_u64(),
            s["pending"].as_u64()
        ),
        (Some(0), Some(0), Some(0)),
        "{s}"
    );
    assert!(
        s["items"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("HTTP 404"),
        "{s}"
    );
}

#[test]
fn not_found_fails_the_file_without_retries() {
    let server = one_file_publisher(Response::status(404));
    let env = Env::plain("404", &server.url("/feed.xml"), "");
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("HTTP 404"),
        "{}",
        text(&o)
    );
    assert_eq!(server.hits("/a-1.pdf").len(), 1);
    let s = env.status();
    assert!(
        s["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "H-FETCH" && f["url"].as_str().unwrap().ends_with("/a-1.pdf")),
        "{s}"
    );
    assert_eq!(
        env.one("SELECT state FROM files WHERE url LIKE '%.pdf'"),
        "failed"
    );
    assert_eq!(
        env.one("SELECT state FROM files WHERE url LIKE '%.html'"),
        "stored"
    );
}

#[test]
fn server_error_then_success_is_retried_within_the_run() {
    let count = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let c2 = count.clone();
    let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| match r.path.as_str() {
        "/feed.xml" => Response::ok(one_file_feed(b2.get().unwrap(), PDF)),
        "/a-1.html" => Response::file(HTML, "text/html"),
        "/a-1.pdf" if c2.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 => {
            Response::status(500)
        }
        "/a-1.pdf" => Response::file(PDF, "application/pdf"),
        _ => Response::status(404),
    });
    let _ = base.set(server.url(""));
    let env = Env::plain("500", &server.url("/feed.xml"), "");
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(server.hits("/a-1.pdf").len(), 2);
    assert_eq!(env.status()["deposits"].as_u64(), Some(1));
}

#[test]
fn long_retry_after_postpones_the_item_to_a_later_run() {
    let server = serve(|base| {
        vec![
            ("/feed.xml".into(), Response::ok(one_file_feed(base, PDF))),
            ("/a-1.html".into(), Response::file(HTML, "text/html")),
            (
                "/a-1.pdf".into(),
                Response::status(503).header("Retry-After", "3600"),
            ),
        ]
    });
    let env = Env::plain("503", &server.url("/feed.xml"), "max_retry_after_secs = 30");
    let started = std::time::Instant::now();
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the run waited for Retry-After"
    );
    assert_eq!(server.hits("/a-1.pdf").len(), 1);
    let s = env.status();
    let item = &s["items"][0];
    assert_eq!(item["state"], "pending");
    let next =
        chrono::DateTime::parse_from_rfc3339(item["next_attempt_at"].as_str().unwrap()).unwrap();
    let wait = next.signed_duration_since(chrono::Utc::now()).num_seconds();
    assert!((3000..=3600).contains(&wait), "postponed by {wait} s");
    assert_eq!(
        item["attempts"].as_u64(),
        Some(0),
        "a postponement is not a failed attempt"
    );
    // The next run does not ask again before the time.
    env.harvest();
    assert_eq!(server.hits("/a-1.pdf").len(), 1);
}

#[test]
fn truncated_body_is_retried_and_recorded() {
    let server = serve(|base| {
        vec![
            ("/feed.xml".into(), Response::ok(one_file_feed(base, PDF))),
            ("/a-1.html".into(), Response::file(HTML, "text/html")),
            (
                "/a-1.pdf".into(),
                Response::file(&PDF[..10], "application/pdf").body(Body::Truncated {
                    bytes: PDF[..10].to_vec(),
                    declared: PDF.len(),
                }),
            ),
        ]
    });
    let env = Env::plain("truncated", &server.url("/feed.xml"), "");
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(server.hits("/a-1.pdf").len(), 3, "retries = 2");
    let reason = env.one("SELECT error FROM files WHERE url LIKE '%.pdf'");
    assert!(reason.contains("truncated"), "{reason}");
    assert_eq!(
        env.one("SELECT count(*) FROM blobs"),
        "1",
        "only the HTML page is stored"
    );
    assert_eq!(
        std::fs::read_dir(env.data().join("tmp")).unwrap().count(),
        0,
        "no partial file left"
    );
}

#[test]
fn a_slow_drip_is_abandoned() {
    let server = serve(|base| {
        vec![
            ("/feed.xml".into(), Response::ok(one_file_feed(base, PDF))),
            ("/a-1.html".into(), Response::file(HTML, "text/html")),
            (
                "/a-1.pdf".into(),
                Response::file(PDF, "application/pdf").body(Body::Drip {
                    bytes: PDF.to_vec(),
                    every: Duration::from_millis(300),
                }),
            ),
        ]
    });
    let env = Env::plain(
        "drip",
        &server.url("/feed.xml"),
        "retries = 0\nmin_bytes_per_sec = 100\nmin_speed_window_secs = 2",
    );
    let started = std::time::Instant::now();
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(started.elapsed() < Duration::from_secs(15));
    let reason = env.one("SELECT error FROM files WHERE url LIKE '%.pdf'");
    assert!(
        reason.contains("below the minimum of 100 bytes/s"),
        "{reason}"
    );
}

#[test]
fn an_endless_body_stops_at_the_size_limit() {
    let server = serve(|base| {
        vec![
            ("/feed.xml".into(), Response::ok(one_file_feed(base, PDF))),
            ("/a-1.html".into(), Response::file(HTML, "text/html")),
            (
                "/a-1.pdf".into(),
                Response::file(PDF, "application/pdf").body(Body::Endless),
            ),
        ]
    });
    let env = Env::plain(
        "endless",
        &server.url("/feed.xml"),
        "retries = 0\nmax_file_bytes = 1048576",
    );
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let reason = env.one("SELECT error FROM files WHERE url LIKE '%.pdf'");
    assert!(
        reason.contains("larger than the limit of 1048576 bytes"),
        "{reason}"
    );
    assert_eq!(
        std::fs::read_dir(env.data().join("tmp")).unwrap().count(),
        0
    );
}

/// While a feed is downloaded and validated it is held in a temporary file that has no
/// name, so a plikt killed at that moment leaves nothing in the temporary directory. (A
/// named spool file, removed when plikt was done with it, outlived every SIGKILL: the
/// kill tests had left hundreds in /tmp.)
#[test]
fn a_harvest_killed_while_the_feed_downloads_leaves_no_temporary_file() {
    let server = serve(|base| {
        let feed = one_file_feed(base, PDF).into_bytes();
        vec![
            (
                "/feed.xml".into(),
                Response::ok(feed.clone()).body(Body::Paced {
                    bytes: feed,
                    chunk: 64,
                    every: Duration::from_millis(200),
                }),
            ),
            ("/a-1.html".into(), Response::file(HTML, "text/html")),
            ("/a-1.pdf".into(), Response::file(PDF, "application/pdf")),
        ]
    });
    let env = Env::plain("spool", &server.url("/feed.xml"), "min_bytes_per_sec = 1");
    let tmp = env.dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let env = env.with_env("TMPDIR", tmp.to_str().unwrap());
    let listed = || -> Vec<String> {
        std::fs::read_dir(&tmp)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    let mut running = env.spawn(&["harvest"]);
    let started = std::time::Instant::now();
    while server.hits("/feed.xml").is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "plikt never asked for the feed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // A few of the feed's chunks have arrived and been written to the spool file.
    std::thread::sleep(Duration::from_millis(700));
    assert!(
        running.0.try_wait().unwrap().is_none(),
        "the harvest ended before the feed was downloaded"
    );
    assert_eq!(listed(), Vec::<String>::new(), "while the feed downloads");
    running.0.kill().unwrap();
    running.0.wait().unwrap();
    assert_eq!(listed(), Vec::<String>::new(), "after SIGKILL");
}

#[test]
fn a_redirect_loop_fails_clearly() {
    let server = serve(|base| {
        vec![
            ("/feed.xml".into(), Response::ok(one_file_feed(base, PDF))),
            ("/a-1.html".into(), Response::file(HTML, "text/html")),
            ("/a-1.pdf".into(), Response::redirect("/b.pdf")),
            (
                "/b.pdf".into(),
                Response::redirect(&format!("{base}/a-1.pdf")),
            ),
        ]
    });
    let env = Env::plain("loop", &server.url("/feed.xml"), "retries = 0");
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let reason = env.one("SELECT error FROM files WHERE url LIKE '%a-1.pdf'");
    assert!(reason.contains("redirect loop"), "{reason}");
    assert_eq!(server.hits("/a-1.pdf").len(), 1);
    assert_eq!(server.hits("/b.pdf").len(), 1);
}

fn auth_header(user: &str, password: &str) -> String {
    plikt::server::basic_auth(user, password)
}

#[test]
fn credentials_open_the_feed_and_never_reach_another_origin() {
    let other = Server::with_handler(|r| match r.path.as_str() {
        "/hop1.pdf" => Response::redirect("/hop2.pdf"),
        "/hop2.pdf" => Response::file(PDF, "application/pdf"),
        _ => Response::status(404),
    });
    let other_base = other.url("");
    let expected = auth_header("kb-harvest", "s3cret-Passw0rd");
    let exp2 = expected.clone();
    let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let origin = Server::with_handler(move |r| {
        if r.header("authorization").as_deref() != Some(exp2.as_str()) {
            return Response::status(401).header("WWW-Authenticate", "Basic realm=\"eplikt\"");
        }
        match r.path.as_str() {
            "/feed.xml" => Response::ok(one_file_feed(b2.get().unwrap(), PDF)),
            "/a-1.html" => Response::file(HTML, "text/html"),
            "/a-1.pdf" => Response::redirect(&format!("{other_base}/hop1.pdf")),
            _ => Response::status(404),
        }
    });
    let _ = base.set(origin.url(""));
    let feed = origin.url("/feed.xml");

    // Without credentials: 401, the run could not be carried out.
    let env = Env::plain("auth-none", &feed, "retries = 0");
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("HTTP 401"),
        "{}",
        text(&o)
    );
    assert_eq!(env.status()["last_run"]["outcome"], "failed");

    // With credentials from the environment: 200, everything deposited.
    let env = Env::new(
        "auth",
        &format!("feed = \"{feed}\"\nhttps_only = false\nallow_private = true\n[publisher.auth]\nusername = \"kb-harvest\"\npassword_env = \"TEST_FEED_PASSWORD\""),
        "retries = 0",
    )
    .with_env("TEST_FEED_PASSWORD", "s3cret-Passw0rd");
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(env.status()["deposits"].as_u64(), Some(1), "{}", text(&o));
    assert!(
        origin
            .hits("/feed.xml")
            .iter()
            .any(|r| r.header("authorization").as_deref() == Some(expected.as_str()))
    );
    // The other origin got both hops, and never the credentials.
    assert_eq!(other.hits("/hop1.pdf").len(), 1);
    assert_eq!(other.hits("/hop2.pdf").len(), 1);
    for r in other.received() {
        assert!(
            r.header("authorization").is_none(),
            "credentials leaked to {}: {}",
            r.path,
            r.head
        );
    }
    // The final URL after the hops is recorded.
    assert!(
        env.one("SELECT final_url FROM files WHERE url LIKE '%a-1.pdf'")
            .ends_with("/hop2.pdf")
    );
    // The password is nowhere: not in output, status, or the catalog.
    let all = format!(
        "{}{}",
        text(&o),
        env.cmd(&["status", "--format", "json"])
            .stdout
            .iter()
            .map(|&b| b as char)
            .collect::<String>()
    );
    assert!(!all.contains("s3cret-Passw0rd"));
    let catalog = env.catalog_bytes();
    assert!(memchr::memmem::find(&catalog, b"s3cret-Passw0rd").is_none());
    assert!(memchr::memmem::find(&catalog, b"Testbladet").is_some());
}

#[test]
fn https_with_a_test_ca_and_no_downgrade_to_http() {
    let plain = Server::with_handler(|_| Response::file(PDF, "application/pdf"));
    let plain_url = plain.url("/a-1.pdf");
    let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let tls = Server::https(move |r| match r.path.as_str() {
        "/feed.xml" => Response::ok(one_file_feed(b2.get().unwrap(), PDF)),
        "/a-1.html" => Response::file(HTML, "text/html"),
        "/a-1.pdf" => Response::redirect(&plain_url),
        _ => Response::status(404),
    });
    let _ = base.set(tls.url(""));
    let ca = root().join("fixtures/tls/ca.pem");
    let env = Env::new(
        "https",
        &format!("feed = \"{}\"\nallow_private = true", tls.url("/feed.xml")),
        &format!(
            "retries = 0\nextra_root_certificates = [\"{}\"]",
            ca.display()
        ),
    );
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        env.one("SELECT state FROM files WHERE url LIKE '%.html'"),
        "stored",
        "{}",
        text(&o)
    );
    let reason = env.one("SELECT error FROM files WHERE url LIKE '%.pdf'");
    assert!(reason.contains("leaves https"), "{reason}");
    assert!(plain.received().is_empty(), "the http server was contacted");

    // Without the test CA the certificate is not trusted: verification is never off.
    let env = Env::new(
        "https-untrusted",
        &format!("feed = \"{}\"\nallow_private = true", tls.url("/feed.xml")),
        "retries = 0",
    );
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .to_lowercase()
            .contains("certificate"),
        "{}",
        text(&o)
    );
}

#[test]
fn private_targets_are_refused_unless_allowed() {
    let server = Server::with_handler(|_| Response::ok("<rss/>"));
    for host in ["127.0.0.1", "localhost"] {
        let url = server.url("/feed.xml").replace("127.0.0.1", host);
        let env = Env::new(
            "ssrf",
            &format!("feed = \"{url}\"\nhttps_only = false"),
            "retries = 0",
        );
        let o = env.harvest();
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("allow_private = false"), "{err}");
    }
    assert!(server.received().is_empty());
}

#[test]
fn a_gzip_bomb_feed_is_capped() {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![b' '; 1 << 20];
    enc.write_all(b"<?xml version=\"1.0\"?><rss version=\"2.0\"><channel>")
        .unwrap();
    for _ in 0..256 {
        enc.write_all(&zeros).unwrap();
    }
    let bomb = enc.finish().unwrap();
    assert!(bomb.len() < 1 << 20, "{} bytes compressed", bomb.len());
    let server = Server::start(vec![(
        "/feed.xml",
        Response::ok(bomb).header("Content-Encoding", "gzip"),
    )]);
    let env = Env::plain(
        "gzip",
        &server.url("/feed.xml"),
        "retries = 0\nmax_feed_bytes = 8388608",
    );
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("larger than the limit of 8388608 bytes"),
        "{}",
        text(&o)
    );
    let accept = server.received()[0]
        .header("accept-encoding")
        .unwrap_or_default();
    assert!(accept.contains("gzip"), "{accept}");
}

#[test]
fn a_hostile_content_disposition_name_is_made_safe() {
    let tmp = tempfile::Builder::new()
        .prefix("plikt-pwned-")
        .tempdir()
        .unwrap();
    let victim = tmp.path().join("plikt-pwned");
    let name = format!("../../../../../../..{}", victim.display());
    let server = serve(move |base| {
        vec![
            ("/feed.xml".into(), Response::ok(one_file_feed(base, PDF))),
            ("/a-1.html".into(), Response::file(HTML, "text/html")),
            (
                "/a-1.pdf".into(),
                Response::file(PDF, "application/pdf").header(
                    "Content-Disposition",
                    &format!("attachment; filename=\"{name}\""),
                ),
            ),
        ]
    });
    let env = Env::plain("disposition", &server.url("/feed.xml"), "");
    assert_eq!(env.harvest().status.code(), Some(0));
    assert!(!victim.exists());
    let recorded = env.one("SELECT filename FROM files WHERE url LIKE '%.pdf'");
    assert_eq!(recorded, victim.file_name().unwrap().to_str().unwrap());
    assert_eq!(env.status()["deposits"].as_u64(), Some(1));
}

#[test]
fn a_feed_malformed_halfway_harvests_nothing() {
    let server = serve(|base| {
        let items: Vec<TestItem> = (0..3)
            .map(|i| TestItem::new(&format!("a-{i}"), &date(10 - i), &format!("{base}/a.html")))
            .collect();
        let mut feed = feed(&items);
        let cut = feed.rfind("<item>").unwrap() + 40;
        feed.truncate(cut);
        vec![
            ("/feed.xml".into(), Response::ok(feed)),
            ("/a.html".into(), Response::file(HTML, "text/html")),
        ]
    });
    let env = Env::plain("malformed", &server.url("/feed.xml"), "");
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("G-XML"),
        "{}",
        text(&o)
    );
    assert_eq!(env.one("SELECT count(*) FROM versions"), "0");
    assert_eq!(env.one("SELECT count(*) FROM deposits"), "0");
    assert_eq!(
        server.received().len(),
        1,
        "no file of the items before the error was fetched"
    );
    assert_eq!(
        env.sql("SELECT rule FROM findings"),
        vec![vec!["G-XML".to_string()]]
    );
    assert_eq!(env.status()["last_run"]["outcome"], "failed");
}

#[test]
fn an_html_maintenance_page_is_not_a_feed() {
    let page = "<!DOCTYPE html>\n<html><head><title>Underhåll</title></head><body><p>Vi är strax tillbaka.<br></p></body></html>";
    let server = Server::start(vec![(
        "/feed.xml",
        Response::file(page, "text/html; charset=utf-8"),
    )]);
    let env = Env::plain("maintenance", &server.url("/feed.xml"), "");
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("HTML page") && err.contains("/feed.xml"),
        "{err}"
    );
    assert_eq!(env.one("SELECT count(*) FROM versions"), "0");
    // The ETag of a failed read is not kept: the next run reads the feed again.
    assert_eq!(env.one("SELECT coalesce(etag, '') FROM publishers"), "");
}

#[test]
fn unidentifiable_items_are_rejected_and_the_rest_collected() {
    let server = serve(|base| {
        let mut f = feed(&[
            TestItem::new("dup", &date(5), &format!("{base}/a.html")),
            TestItem::new("dup", &date(4), &format!("{base}/a.html")),
            TestItem::new("no-date", &date(3), &format!("{base}/a.html")),
            TestItem::new("good", &date(2), &format!("{base}/a.html")),
        ]);
        f = f.replacen(
            &format!("<pubDate>{}</pubDate>", date(3)),
            "<pubDate>22/11/2026</pubDate>",
            1,
        );
        vec![
            ("/feed.xml".into(), Response::ok(f)),
            ("/a.html".into(), Response::file(HTML, "text/html")),
        ]
    });
    let env = Env::plain("rejected", &server.url("/feed.xml"), "");
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = env.status();
    assert_eq!(s["deposits"].as_u64(), Some(1));
    assert_eq!(s["failed"].as_u64(), Some(3), "{s}");
    let rejected: Vec<(String, String)> = env
        .sql("SELECT coalesce(guid, ''), reason FROM rejections ORDER BY item")
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    assert_eq!(rejected.len(), 3);
    assert!(rejected[0].1.contains("more than once") && rejected[1].1.contains("more than once"));
    assert_eq!(rejected[2].0, "no-date");
    assert!(rejected[2].1.contains("R103"), "{rejected:?}");
}

#[test]
fn a_non_conforming_item_is_collected_and_marked() {
    let server = serve(|base| {
        let f = feed(&[TestItem::new("a-1", &date(0), &format!("{base}/a.html"))]).replace(
            "<dcterms:accessRights>gratis</dcterms:accessRights>",
            "<dcterms:accessRights>free</dcterms:accessRights>",
        );
        vec![
            ("/feed.xml".into(), Response::ok(f)),
            ("/a.html".into(), Response::file(HTML, "text/html")),
        ]
    });
    let env = Env::plain("nonconforming", &server.url("/feed.xml"), "");
    assert_eq!(env.harvest().status.code(), Some(0));
    assert_eq!(
        env.sql("SELECT state, conforming, access FROM versions"),
        vec![vec![
            "deposited".to_string(),
            "0".into(),
            "restricted".into()
        ]]
    );
    let findings = env.one("SELECT findings FROM versions");
    assert!(findings.contains("R107"), "{findings}");
    let s = env.status();
    assert!(
        s["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "R107" && f["line"].as_u64().is_some()),
        "{s}"
    );
}

#[test]
fn harvest_time_checks_warn_about_size_type_drm_and_publisher() {
    let encrypted =
        b"%PDF-1.4\n1 0 obj << >> endobj\ntrailer << /Root 1 0 R /Encrypt 2 0 R >>\n%%EOF\n";
    let server = serve(move |base| {
        let f = feed(&[
            TestItem::new("a-1", &date(0), &format!("{base}/a.html")).content(
                &format!("{base}/a.pdf"),
                "application/pdf",
                encrypted,
            ),
        ])
        .replace(
            &format!("fileSize=\"{}\"", encrypted.len()),
            "fileSize=\"99\"",
        );
        vec![
            (
                "/feed.xml".into(),
                Response::ok(f).header("Content-Type", "application/rss+xml"),
            ),
            ("/a.html".into(), Response::file(HTML, "text/html")),
            (
                "/a.pdf".into(),
                Response::file(encrypted.to_vec(), "application/octet-stream"),
            ),
        ]
    });
    let env = Env::new(
        "checks",
        &format!(
            "feed = \"{}\"\nhttps_only = false\nallow_private = true\norganisations = [\"SE5560041815\"]",
            server.url("/feed.xml")
        ),
        "",
    );
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let rules: Vec<Vec<String>> =
        env.sql("SELECT rule, severity FROM findings WHERE rule LIKE 'H-%' ORDER BY rule");
    let rules: Vec<(String, String)> = rules
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    for want in [
        ("H-DRM", "error"),
        ("H-MIME", "warning"),
        ("H-PUBLISHER", "warning"),
        ("H-SIZE", "warning"),
    ] {
        assert!(
            rules.contains(&(want.0.to_string(), want.1.to_string())),
            "{want:?} not in {rules:?}"
        );
    }
    // The encrypted PDF is kept (legal deposit loses nothing), but its version is
    // non-conforming and so restricted, with the H-DRM finding among its own.
    assert_eq!(
        env.sql("SELECT state, conforming, access FROM versions"),
        vec![vec![
            "deposited".to_string(),
            "0".into(),
            "restricted".into()
        ]]
    );
    assert!(env.one("SELECT findings FROM versions").contains("H-DRM"));
    // It was restricted when it was deposited, in the same transaction: its tally
    // counts it so, and the publish puts it in the restricted set only.
    env.assert_tallies_match_a_recount();
    assert_eq!(env.one("SELECT restricted FROM tallies"), "1");
    let o = env.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let www = env.data().join("www/resourcesync/test");
    let listed = |set: &str| {
        let list = www.join(set).join("resourcelist.xml");
        std::fs::read_to_string(&list).unwrap_or_else(|e| panic!("{}: {e}", list.display()))
    };
    assert!(
        listed("restricted").contains("a.pdf"),
        "{}",
        listed("restricted")
    );
    assert!(!listed("").contains("a.pdf"), "{}", listed(""));
}

#[test]
fn unknown_keys_and_secrets_in_the_config_are_refused() {
    let env = Env::new(
        "config",
        "feed = \"https://a.example/f.xml\"\ncolour = \"blue\"",
        "",
    );
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("colour") && err.contains("plikt.toml:"),
        "{err}"
    );
}

/// What an operator sees when a password was typed into a URL of the configuration
/// (one that does not parse, one that is not PostgreSQL): the error names the key and
/// the line, never the password.
#[test]
fn a_password_typed_into_a_url_is_not_printed() {
    let env = Env::plain("config-url", "http://127.0.0.1:9/feed.xml", "");
    for url in [
        "postgres://plikt:hunter2/x@127.0.0.1:99999/plikt",
        "mysql://plikt:hunter2@127.0.0.1/plikt",
    ] {
        let config = env.dir.join("url.toml");
        std::fs::write(&config, format!("[catalog]\nurl = \"{url}\"\n")).unwrap();
        let o = plikt()
            .args(["status", "--config"])
            .arg(&config)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let out = text(&o);
        assert!(out.contains("url.toml"), "{out}");
        assert!(!out.contains("hunter2"), "{out}");
    }
}

#[test]
fn the_example_configuration_loads() {
    let path = root().join("plikt.example.toml");
    let c = plikt::config::Config::parse(
        &std::fs::read_to_string(&path).unwrap(),
        &path,
        &root(),
        &|v| {
            matches!(v, "DAGENSBOK_PASSWORD" | "LIBRIS_TOKEN")
                .then(|| "x-32-characters-at-the-very-least".to_string())
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(!c.publishers.is_empty());
    assert!(c.blobs.s3.is_none(), "the example keeps the local folder");
    // Its [harvest] table shows the built-in defaults, the workers' keys too.
    let d = plikt::config::HarvestConfig::default();
    assert_eq!(
        (
            c.harvest.lease_secs,
            c.harvest.poll_secs,
            c.harvest.runs_per_worker
        ),
        (d.lease_secs, d.poll_secs, d.runs_per_worker)
    );
    // Its commented [blobs] block loads when uncommented, and shows the defaults.
    let text = std::fs::read_to_string(&path).unwrap();
    let blobs: String = text
        .lines()
        .skip_while(|l| *l != "# [blobs]")
        .take_while(|l| l.starts_with("# "))
        .map(|l| format!("{}\n", &l[2..]))
        .collect();
    assert!(blobs.contains("s3_endpoint"), "{blobs}");
    let with = plikt::config::Config::parse(&format!("{text}\n{blobs}"), &path, &root(), &|v| {
        matches!(
            v,
            "DAGENSBOK_PASSWORD" | "LIBRIS_TOKEN" | "PLIKT_S3_KEY_ID" | "PLIKT_S3_SECRET"
        )
        .then(|| "x-32-characters-at-the-very-least".to_string())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let s3 = with.blobs.s3.unwrap().unwrap();
    let defaults = plikt::config::Config::parse(
        &format!(
            "{text}\n[blobs]\ns3_endpoint = \"https://s3.kb.example\"\nbucket = \"plikt\"\nregion = \"garage\"\nprefix = \"kb/\"\naccess_key_id_env = \"K\"\nsecret_access_key_env = \"S\"\n"
        ),
        &path,
        &root(),
        &|_| Some("x-32-characters-at-the-very-least".to_string()),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(defaults.blobs.s3.unwrap().unwrap(), s3);
    // Its [http] table shows the built-in defaults, which live in one place.
    let defaults = plikt::fetch::Policy::default();
    assert_eq!(defaults.clone().with_http(&c.http), defaults);
    let sample = root().join("plikt.sample.toml");
    plikt::config::Config::parse(
        &std::fs::read_to_string(&sample).unwrap(),
        &sample,
        &root(),
        &|_| Some("x".into()),
    )
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn audit_finds_corrupt_and_missing_blobs() {
    let server = one_file_publisher(Response::file(PDF, "application/pdf"));
    let env = Env::plain("audit", &server.url("/feed.xml"), "");
    assert_eq!(env.harvest().status.code(), Some(0));
    let o = env.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("checked 2 blobs"));
    let blob = |sha: &str| env.data().join("blobs").join(&sha[..2]).join(sha);
    let pdf = blob(&env.one("SELECT sha256 FROM files WHERE url LIKE '%.pdf'"));
    let mut bytes = std::fs::read(&pdf).unwrap();
    bytes[3] ^= 1;
    std::fs::write(&pdf, bytes).unwrap();
    std::fs::remove_file(blob(
        &env.one("SELECT sha256 FROM files WHERE url LIKE '%.html'"),
    ))
    .unwrap();
    let o = env.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("1 missing, 1 corrupt"), "{out}");
}

/// The numbers `/metrics`, `plikt status` and the dashboard show come from tallies kept
/// as versions and blobs are recorded (migrations 11 and 12). An operator's hand edit,
/// a restore of part of the catalog or a bug could make them drift from the rows:
/// `plikt audit` finds that and says how to mend it, and `plikt audit --recount` mends it.
#[test]
fn audit_finds_tallies_that_differ_from_the_rows_and_recount_sets_them() {
    let server = one_file_publisher(Response::file(PDF, "application/pdf"));
    let env = Env::plain("audit-tally", &server.url("/feed.xml"), "");
    assert_eq!(env.harvest().status.code(), Some(0));
    env.assert_tallies_match_a_recount();
    let o = env.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("0 wrong tallies"),
        "{}",
        text(&o)
    );
    let blobs = env.one("SELECT count(*) FROM blobs");
    let bytes = env.one("SELECT sum(length) FROM blobs");
    env.sql("UPDATE tallies SET files = files + 5 WHERE publisher = 'test'");
    env.sql("UPDATE blob_tally SET blobs = blobs - 1, bytes = 7");
    let o = env.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("2 wrong tallies"), "{out}");
    assert!(
        out.contains(&format!(
            "wrong tally: blobs: tally {} blobs, 7 bytes; rows {blobs} blobs, {bytes} bytes (plikt audit --recount sets it from the rows)",
            blobs.parse::<i64>().unwrap() - 1
        )),
        "{out}"
    );
    assert!(
        out.contains("wrong tally: publisher test: tally 1 deposits, 1 versions (0 restricted), 7 files; rows 1 deposits, 1 versions (0 restricted), 2 files"),
        "{out}"
    );
    let o = env.cmd(&["audit", "--recount"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("0 wrong tallies"), "{out}");
    assert!(
        out.contains(
            "recounted: publisher test: tally 1 deposits, 1 versions (0 restricted), 7 files"
        ),
        "{out}"
    );
    env.assert_tallies_match_a_recount();
    let o = env.cmd(&["audit", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["tallies"], serde_json::json!([]), "{report}");
}

/// SIGTERM to `plikt run`; its exit status, which must come within 15 s (`when` says
/// what it was doing, for the failure's message).
fn stop_with_sigterm(service: &mut std::process::Child, when: &str) -> std::process::ExitStatus {
    std::process::Command::new("kill")
        .args(["-TERM", &service.id().to_string()])
        .status()
        .unwrap();
    wait_for_exit(
        service,
        Duration::from_secs(15),
        &format!("plikt run did not stop on SIGTERM {when}"),
    )
}

/// A publisher of `items` items, `<prefix>-<i>`, each a page at `/page/<i>.html`
/// answered `pace` late (a harvest that lasts), its feed at `/feed.xml`.
fn pages_publisher(prefix: &'static str, items: usize, pace: Duration) -> Server {
    let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| {
        if r.path == "/feed.xml" {
            let base = b2.get().unwrap();
            let items: Vec<TestItem> = (0..items)
                .map(|i| {
                    TestItem::new(
                        &format!("{prefix}-{i}"),
                        &date(1000 - i as i64),
                        &format!("{base}/page/{i}.html"),
                    )
                })
                .collect();
            return Response::ok(feed(&items));
        }
        std::thread::sleep(pace);
        Response::file(format!("<html><body>{}</body></html>", r.path), "text/html")
    });
    let _ = base.set(server.url(""));
    server
}

/// `plikt audit --recount` run again and again while a harvest deposits: each recount
/// waits for the deposit in progress (the journal's lock), so no deposit is counted twice
/// or missed, and the tallies end as a count of the rows.
#[test]
fn recounting_while_a_harvest_deposits_counts_every_deposit_once() {
    const ITEMS: usize = 60;
    let server = pages_publisher("r", ITEMS, Duration::from_millis(40));
    let env = Env::plain("recount", &server.url("/feed.xml"), "");
    let mut harvest = env.spawn(&["harvest"]);
    let mut recounts = 0;
    let exit = loop {
        let o = env.cmd(&["audit", "--recount"]);
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", text(&o));
        recounts += 1;
        if let Some(e) = harvest.try_wait().unwrap() {
            break e;
        }
    };
    assert!(exit.success(), "harvest: {exit:?}");
    assert!(recounts >= 3, "only {recounts} recounts during the harvest");
    assert_eq!(
        env.one("SELECT count(*) FROM versions WHERE state = 'deposited'"),
        ITEMS.to_string()
    );
    env.assert_tallies_match_a_recount();
    let o = env.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// `plikt run` stops on SIGTERM within its grace period also while it publishes: the
/// publish (here a first one, writing a Resource Dump package per file) stops between
/// packages, and the next publish writes the rest.
#[test]
fn sigterm_during_a_publish_stops_the_service_and_the_next_publish_completes_it() {
    const ITEMS: usize = 300;
    let server = pages_publisher("p", ITEMS, Duration::ZERO);
    let env = Env::plain("publish-stop", &server.url("/feed.xml"), "").with_env("RUST_LOG", "info");
    env.replace_in_config(
        "[harvest]\n",
        "[resourcesync]\ndump_package_bytes = 1\n[harvest]\n",
    );
    env.listen_on_free_port();
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let dumps = env.data().join("www/resourcesync/test/resourcedump");
    let packages = || {
        std::fs::read_dir(&dumps).map_or(0, |d| {
            d.filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".zip"))
            })
            .count()
        })
    };
    // The service publishes what the catalog holds when it starts.
    let mut service = env.spawn(&["run"]);
    let started = std::time::Instant::now();
    while packages() == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no dump package after 60 s"
        );
        assert!(service.try_wait().unwrap().is_none(), "plikt run exited");
        std::thread::sleep(Duration::from_millis(5));
    }
    let exit = stop_with_sigterm(&mut service, "while publishing");
    assert!(exit.success(), "{exit:?}");
    let log = std::fs::read_to_string(env.dir.join("spawned.log")).unwrap();
    assert!(log.contains("publishing stopped on shutdown"), "{log}");
    let at_stop = packages();
    // The next publish writes what the stopped one did not.
    let o = env.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let all = packages();
    assert!(
        at_stop < all,
        "the publish was not stopped: {at_stop} of {all} packages written"
    );
    assert!(all >= ITEMS, "{all} packages for {ITEMS} files");
}

/// A worker asked to stop while it waits for another publish (here the data folder's
/// publish lock, held by this test as a `plikt publish` would hold it) stops at once,
/// not when that publish ends, which can be minutes later (the first publish of a day).
#[test]
fn sigterm_while_waiting_for_another_publish_stops_the_service() {
    let server = pages_publisher("w", 1, Duration::ZERO);
    let env = Env::plain("publish-wait", &server.url("/feed.xml"), "").with_env("RUST_LOG", "info");
    env.listen_on_free_port();
    let www = env.data().join("www");
    std::fs::create_dir_all(&www).unwrap();
    let held = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(www.join(".publish.lock"))
        .unwrap();
    held.lock().unwrap();
    // The service publishes what the catalog holds when it starts: it waits for the lock.
    stops_while_it_waits_for_the_publish_lock(&env, "while waiting for another publish");
    drop(held);
}

/// The same among workers on one PostgreSQL catalog: while another worker's publish holds
/// the publish lock (here another session holds plikt's advisory lock for publishing), a
/// worker asked to stop leaves the queue of waiters and stops at once.
#[test]
fn sigterm_while_waiting_for_another_workers_publish_stops_the_service() {
    let server = pages_publisher("v", 1, Duration::ZERO);
    let pg = OwnPostgres::start();
    let mut env =
        Env::plain("publish-wait-pg", &server.url("/feed.xml"), "").with_env("RUST_LOG", "info");
    own_catalog(&mut env, &pg, "publishwait");
    env.listen_on_free_port();
    let holder = hold_publish_lock(env.postgres.as_deref().unwrap());
    stops_while_it_waits_for_the_publish_lock(&env, "while waiting for another worker's publish");
    drop(holder);
}

/// Starts `plikt run` in `env` while another holds the publish lock: its first publish
/// waits, and SIGTERM (`when`: what it waits for, for the failure's message) stops it at
/// once, exit 0, saying the publish stopped.
fn stops_while_it_waits_for_the_publish_lock(env: &Env, when: &str) {
    let mut service = env.spawn(&["run"]);
    let log = || std::fs::read_to_string(env.dir.join("spawned.log")).unwrap_or_default();
    let started = std::time::Instant::now();
    while !log().contains("plikt run started") {
        assert!(started.elapsed() < Duration::from_secs(30), "{}", log());
        assert!(service.try_wait().unwrap().is_none(), "{}", log());
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(700));
    assert!(
        !log().contains("published"),
        "published under a held lock: {}",
        log()
    );
    let exit = stop_with_sigterm(&mut service, when);
    assert!(exit.success(), "{exit:?}");
    assert!(
        log().contains("publishing stopped on shutdown"),
        "{}",
        log()
    );
}

#[test]
fn a_second_writer_on_the_same_data_folder_is_refused() {
    let tmp = tempfile::Builder::new()
        .prefix("plikt-it-locked-")
        .tempdir()
        .unwrap();
    let data = tmp.path().join("data");
    let store = plikt::store::Store::open_at(
        &data,
        &plikt::config::BlobsConfig::default(),
        &plikt::store::Location::Sqlite(data.join("catalog.sqlite")),
        plikt::store::Mode::Write,
    )
    .unwrap();
    let env = Env::plain("lock", "http://127.0.0.1:9/feed.xml", "");
    std::fs::write(
        &env.config,
        std::fs::read_to_string(&env.config).unwrap().replace(
            "data_dir = \"data\"",
            &format!("data_dir = \"{}\"", store.dir().display()),
        ),
    )
    .unwrap();
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("locked by another plikt"),
        "{}",
        text(&o)
    );
}

#[test]
fn the_service_runs_on_schedule_serves_status_and_stops_on_sigterm() {
    let server = one_file_publisher(Response::file(PDF, "application/pdf"));
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let env = Env::plain("service", &server.url("/feed.xml"), "");
    let cfg = std::fs::read_to_string(&env.config)
        .unwrap()
        .replace("schedule = \"0 0 3 * * *\"", "schedule = \"*/2 * * * * *\"")
        .replace(
            "data_dir = \"data\"",
            &format!("data_dir = \"data\"\nlisten = \"127.0.0.1:{port}\""),
        );
    let cfg = format!("{cfg}\n[[operator]]\nid = \"ops\"\ntoken_env = \"PLIKT_TEST_OPS_TOKEN\"\n");
    std::fs::write(&env.config, cfg).unwrap();
    let mut child = Running(
        plikt()
            .args(["run", "--config"])
            .arg(&env.config)
            .env("RUST_LOG", "info")
            .env(
                "PLIKT_TEST_OPS_TOKEN",
                "ops-secret-1-0123456789abcdef012345678",
            )
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // Wait for at least three scheduled runs, reading /status over HTTP.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let status = loop {
        assert!(
            std::time::Instant::now() < deadline,
            "no three runs within 30 s"
        );
        std::thread::sleep(Duration::from_millis(300));
        let (code, _, body) = get(
            &format!("http://127.0.0.1:{port}/status"),
            Some("Bearer ops-secret-1-0123456789abcdef012345678"),
        );
        if code != 200 {
            continue;
        }
        let Ok(v) = serde_json::from_slice::<Value>(&body) else {
            continue;
        };
        if v["publishers"][0]["last_run"]["id"].as_u64().unwrap_or(0) >= 3 {
            break v;
        }
    };
    assert_eq!(
        status["publishers"][0]["deposits"].as_u64(),
        Some(1),
        "{status}"
    );
    // /status, /metrics and the dashboard are the deposit team's: nobody else sees them.
    for path in ["status", "metrics", "dashboard"] {
        let url = format!("http://127.0.0.1:{port}/{path}");
        assert_eq!(get(&url, None).0, 401, "{path} without credentials");
        assert_eq!(
            get(&url, Some("Bearer wrong")).0,
            401,
            "{path} with a wrong token"
        );
    }
    // The dashboard lists the publisher with what the catalog holds, and draws the
    // day's deposits (an SVG chart with its numbers beside it).
    let (code, head, page) = get(
        &format!("http://127.0.0.1:{port}/dashboard"),
        Some("Bearer ops-secret-1-0123456789abcdef012345678"),
    );
    assert_eq!(code, 200);
    assert!(head.contains("text/html"), "{head}");
    let page = String::from_utf8(page).unwrap();
    assert!(
        page.contains("<code>test</code><br>Testbladet AB"),
        "{page}"
    );
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    assert!(
        page.contains(&format!(
            "<tr><td>{today}</td><td class=\"num\">1</td></tr>"
        )),
        "no deposit today in the chart's numbers: {page}"
    );
    assert!(page.contains("<svg class=\"chart\""), "{page}");
    let (code, head, metrics) = get(
        &format!("http://127.0.0.1:{port}/metrics"),
        Some("Bearer ops-secret-1-0123456789abcdef012345678"),
    );
    assert_eq!(code, 200);
    assert!(head.contains("application/openmetrics-text"), "{head}");
    let metrics = String::from_utf8(metrics).unwrap();
    // The file and the item's own record, as the catalog holds them.
    let files: f64 = env.one("SELECT count(*) FROM files").parse().unwrap();
    let value = |line: &str| -> f64 {
        metrics
            .lines()
            .find(|l| l.starts_with(line))
            .unwrap_or_else(|| panic!("no {line} in {metrics}"))
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(
        value("plikt_runs_total{publisher=\"test\",outcome=\"ok\"}") >= 1.0,
        "{metrics}"
    );
    assert_eq!(value("plikt_files{publisher=\"test\"}"), files, "{metrics}");
    assert_eq!(
        value("plikt_files_stored_total{publisher=\"test\"}"),
        files,
        "{metrics}"
    );
    assert_eq!(
        value("plikt_versions_deposited_total{publisher=\"test\"}"),
        1.0,
        "{metrics}"
    );
    assert!(
        value("plikt_fetch_duration_seconds_count{kind=\"feed\"}") >= 3.0,
        "{metrics}"
    );
    // The store's blobs and bytes, from their tally (migration 12), as the rows say.
    let blobs: f64 = env.one("SELECT count(*) FROM blobs").parse().unwrap();
    let bytes: f64 = env.one("SELECT sum(length) FROM blobs").parse().unwrap();
    assert!(blobs >= 1.0);
    assert_eq!(value("plikt_store_blobs "), blobs, "{metrics}");
    assert_eq!(value("plikt_store_bytes "), bytes, "{metrics}");
    assert!(metrics.ends_with("# EOF\n"), "{metrics}");
    assert!(!metrics.contains("ops-secret-1-0123456789abcdef012345678"));
    let exit = stop_with_sigterm(&mut child, "");
    assert_eq!(exit.code(), Some(0));
    // Runs of one publisher never overlap.
    let runs = env.sql("SELECT started_at, ended_at FROM runs ORDER BY id");
    for w in runs.windows(2) {
        assert!(w[1][0] >= w[0][1], "runs overlap: {runs:?}");
    }
    assert_eq!(
        env.one("SELECT count(*) FROM runs WHERE outcome = 'running'"),
        "0"
    );
}

#[test]
fn sigterm_abandons_files_in_flight_cleanly() {
    let slow = vec![b'x'; 1000];
    let server = serve(move |base| {
        vec![
            ("/feed.xml".into(), Response::ok(one_file_feed(base, &slow))),
            ("/a-1.html".into(), Response::file(HTML, "text/html")),
            (
                "/a-1.pdf".into(),
                Response::file(PDF, "application/pdf").body(Body::Drip {
                    bytes: vec![b'x'; 1000],
                    every: Duration::from_millis(100),
                }),
            ),
        ]
    });
    let env = Env::plain(
        "sigterm",
        &server.url("/feed.xml"),
        "min_bytes_per_sec = 0\nread_timeout_secs = 30",
    );
    let child = plikt()
        .args(["harvest", "--config"])
        .arg(&env.config)
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let started = std::time::Instant::now();
    let o = child.wait_with_output().unwrap();
    // shutdown_grace_secs = 2: the dripping file is abandoned after the grace period.
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = env.status();
    assert_eq!(s["last_run"]["outcome"], "interrupted", "{s}");
    assert_eq!(
        s["pending"].as_u64(),
        Some(1),
        "the version waits for the next run"
    );
    assert_eq!(
        env.one("SELECT attempts FROM versions"),
        "0",
        "an abandoned file is not a failed attempt"
    );
    assert_eq!(
        std::fs::read_dir(env.data().join("tmp")).unwrap().count(),
        0
    );
}

#[test]
fn concurrency_per_host_is_limited() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let now = std::sync::Arc::new(AtomicUsize::new(0));
    let peak = std::sync::Arc::new(AtomicUsize::new(0));
    let (n2, p2) = (now.clone(), peak.clone());
    let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| {
        let b = b2.get().unwrap();
        if r.path == "/feed.xml" {
            let items: Vec<TestItem> = (0..12)
                .map(|i| {
                    TestItem::new(&format!("i{i}"), &date(100 - i), &format!("{b}/p/{i}.html"))
                })
                .collect();
            return Response::ok(feed(&items));
        }
        let in_flight = n2.fetch_add(1, Ordering::SeqCst) + 1;
        p2.fetch_max(in_flight, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(100));
        n2.fetch_sub(1, Ordering::SeqCst);
        Response::file(HTML, "text/html")
    });
    let _ = base.set(server.url(""));
    let env = Env::plain(
        "concurrency",
        &server.url("/feed.xml"),
        "max_connections = 8\nmax_connections_per_host = 3",
    );
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(env.status()["deposits"].as_u64(), Some(12));
    let peak = peak.load(Ordering::SeqCst);
    assert!(
        (2..=3).contains(&peak),
        "peak {peak} concurrent requests to one host, limit 3"
    );
}

#[test]
fn findings_of_old_runs_are_pruned_but_versions_keep_theirs() {
    let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| match r.path.as_str() {
        "/feed.xml" => Response::ok(
            feed(&[TestItem::new(
                "a-1",
                &date(0),
                &format!("{}/a.html", b2.get().unwrap()),
            )])
            .replace(">gratis<", ">free<"),
        ),
        _ => Response::file(HTML, "text/html"),
    });
    let _ = base.set(server.url(""));
    let env = Env::plain("prune", &server.url("/feed.xml"), "");
    let cfg = std::fs::read_to_string(&env.config)
        .unwrap()
        .replace("[harvest]\n", "[harvest]\nfindings_retention_runs = 2\n");
    std::fs::write(&env.config, cfg).unwrap();
    for _ in 0..4 {
        assert_eq!(env.harvest().status.code(), Some(0));
    }
    assert_eq!(env.one("SELECT count(DISTINCT run_id) FROM findings"), "2");
    assert_eq!(env.one("SELECT min(run_id) FROM findings"), "3");
    assert!(env.one("SELECT findings FROM versions").contains("R107"));
}

#[test]
fn a_well_formed_feed_that_is_not_rss_stops_the_run() {
    let page =
        "<html xmlns=\"http://www.w3.org/1999/xhtml\"><body><p>Underhåll pågår</p></body></html>";
    let server = Server::start(vec![(
        "/feed.xml",
        Response::file(page, "application/xhtml+xml"),
    )]);
    let env = Env::plain("not-rss", &server.url("/feed.xml"), "");
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("G-RSS"),
        "{}",
        text(&o)
    );
    assert_eq!(
        env.sql("SELECT rule FROM findings"),
        vec![vec!["G-RSS".to_string()]]
    );
    assert_eq!(env.one("SELECT count(*) FROM versions"), "0");
}

#[test]
fn coverage_and_pagination_are_checked_on_every_feed_read() {
    let generation = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(1));
    let g2 = generation.clone();
    let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| {
        let b = b2.get().unwrap();
        match r.path.as_str() {
            "/feed.xml" if g2.load(std::sync::atomic::Ordering::SeqCst) == 1 => Response::ok(feed(
                &[TestItem::new("old", &date(0), &format!("{b}/a.html"))],
            )),
            "/feed.xml" => {
                // Everything in the feed is newer than the last harvest, and the feed
                // points at a second page.
                let now = chrono::Utc::now().to_rfc2822();
                let f = feed(&[TestItem::new("new", &now, &format!("{b}/a.html"))]).replace(
                    "<title>Testbladet</title>",
                    &format!("<title>Testbladet</title><atom:link xmlns:atom=\"http://www.w3.org/2005/Atom\" rel=\"next\" href=\"{b}/feed.xml?page=2\"/>"),
                );
                Response::ok(f)
            }
            _ => Response::file(HTML, "text/html"),
        }
    });
    let _ = base.set(server.url(""));
    let env = Env::plain("coverage", &server.url("/feed.xml"), "");
    assert_eq!(env.harvest().status.code(), Some(0));
    assert_eq!(
        env.one("SELECT count(*) FROM findings WHERE rule IN ('H-COVERAGE', 'H-PAGINATION')"),
        "0"
    );
    std::thread::sleep(Duration::from_millis(1100));
    generation.store(2, std::sync::atomic::Ordering::SeqCst);
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let rules = env.sql(
        "SELECT rule, severity FROM findings WHERE run_id = 2 AND rule LIKE 'H-%' ORDER BY rule",
    );
    assert_eq!(
        rules,
        vec![
            vec!["H-COVERAGE".to_string(), "warning".into()],
            vec!["H-PAGINATION".to_string(), "warning".into()]
        ],
        "{}",
        text(&o)
    );
    assert_eq!(env.status()["deposits"].as_u64(), Some(2));
}

#[test]
fn the_bundled_sample_publishers_are_harvested_completely() {
    let mut server = Running(
        std::process::Command::new(env!("CARGO_BIN_EXE_plikt-sample-publisher"))
            .args(["--listen", "127.0.0.1:0", "--dir"])
            .arg(root().join("fixtures/publishers"))
            .env("PLIKT_SAMPLE_PASSWORD", "sample-test-password")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stderr.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .unwrap_or_else(|| panic!("no address in `{line}`"))
        .to_string();
    let tmp = tempfile::Builder::new()
        .prefix("plikt-it-samples-")
        .tempdir()
        .unwrap();
    let config = tmp.path().join("plikt.toml");
    std::fs::write(
        &config,
        std::fs::read_to_string(root().join("plikt.sample.toml"))
            .unwrap()
            .replace("127.0.0.1:8081", &addr),
    )
    .unwrap();
    let run = |args: &[&str]| {
        plikt()
            .args(args)
            .arg("--config")
            .arg(&config)
            .env("PLIKT_SAMPLE_PASSWORD", "sample-test-password")
            .env("RUST_LOG", "warn")
            .output()
            .unwrap()
    };
    let o = run(&["harvest"]);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let s = run(&["status", "--format", "json"]);
    let v: Value = serde_json::from_slice(&s.stdout).unwrap();
    let counts: Vec<(String, u64, u64, u64)> = v["publishers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["id"].as_str().unwrap().to_string(),
                p["deposits"].as_u64().unwrap(),
                p["files"].as_u64().unwrap(),
                p["failed"].as_u64().unwrap(),
            )
        })
        .collect();
    // dagbladet: 5 articles, 5 link pages + 22 media:content (18 of them in 6 media:groups,
    // only one per group with isDefault); bokforlaget (Basic auth): 4 books with PDF + EPUB;
    // podden: 4 episodes with audio.
    assert_eq!(
        counts,
        vec![
            ("dagbladet".to_string(), 5, 27, 0),
            ("bokforlaget".to_string(), 4, 12, 0),
            ("podden".to_string(), 4, 10, 0)
        ],
        "{}",
        text(&o)
    );
    for p in v["publishers"].as_array().unwrap() {
        assert_eq!(p["findings"].as_array().unwrap().len(), 0, "{p}");
    }
    let audit = run(&["audit"]);
    assert_eq!(audit.status.code(), Some(0), "{}", text(&audit));
}

/// Rows PostgreSQL has read from `deposits` and `versions`, their heaps and indexes, in
/// this test's database; read again until the counters stand still, because a backend
/// reports its counts when its client (the plikt that just exited) has gone.
fn catalog_rows_read(env: &Env) -> u64 {
    let read = || -> u64 {
        env.one(
            "SELECT (SELECT coalesce(sum(seq_tup_read + coalesce(idx_tup_fetch, 0)), 0)
                     FROM pg_stat_user_tables WHERE relname IN ('deposits', 'versions', 'files', 'blobs'))
                  + (SELECT coalesce(sum(idx_tup_read), 0)
                     FROM pg_stat_user_indexes WHERE relname IN ('deposits', 'versions', 'files', 'blobs'))",
        )
        .parse()
        .unwrap()
    };
    let mut last = read();
    for _ in 0..25 {
        std::thread::sleep(Duration::from_millis(200));
        let now = read();
        if now == last {
            return now;
        }
        last = now;
    }
    last
}

/// The catalog's work for a harvest grows with the feed, not with its square, whatever
/// the planner's statistics say (here about 40 rows read per item; before migration 10,
/// 3,000 per item of 1,500). PostgreSQL plans with statistics that autovacuum brings
/// up to date a minute or more after a large harvest; until then, or after an `ANALYZE`
/// that saw no pending version and no deposit of the next publisher, the queries that
/// find a run's due files were planned for a row or two and read every pending version
/// (or every deposit of the publisher) once per version: an unchanged re-harvest of
/// 10,000 items took 5–7 s instead of 0.3 s, the next publisher's harvest of 10,000 new
/// items 30 s instead of 10 s (BENCHMARKS.md, "The planner's statistics"). On SQLite,
/// which plans without such statistics, the same steps are checked for what they deposit.
#[test]
fn a_large_harvest_costs_the_catalog_rows_in_proportion_to_the_feed_on_stale_statistics() {
    const N: usize = 1500;
    let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let body = |i: usize| format!("file {i}").into_bytes();
    let items = move |base: &str, feed: &str| -> Vec<TestItem> {
        (0..N)
            .map(|i| {
                TestItem::new(
                    &format!("{feed}-{i}"),
                    &date(-(i as i64)),
                    &format!("{base}/{feed}/{i}.html"),
                )
                .content(
                    &format!("{base}/{feed}/{i}.bin"),
                    "application/octet-stream",
                    &body(i),
                )
            })
            .collect()
    };
    let server = Server::with_handler(move |r| {
        let b = b2.get().unwrap();
        match r.path.as_str() {
            "/a.xml" => Response::ok(feed(&items(b, "a"))),
            "/b.xml" => Response::ok(feed(&items(b, "b"))),
            p if p.ends_with(".bin") => {
                let i: usize = p
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .trim_end_matches(".bin")
                    .parse()
                    .unwrap();
                Response::file(body(i), "application/octet-stream")
            }
            _ => Response::file(HTML, "text/html"),
        }
    });
    let _ = base.set(server.url(""));
    let env = Env::plain("stale-statistics", &server.url("/a.xml"), "").with_config(&format!(
        "[[publisher]]\nid = \"b\"\nname = \"B\"\nschedule = \"0 0 3 * * *\"\nfeed = \"{}\"\nhttps_only = false\nallow_private = true",
        server.url("/b.xml")
    ));
    let harvest = |publisher: &str| {
        let o = env.cmd(&["harvest", "--publisher", publisher]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    };
    let deposited = |publisher: &str| {
        env.one(&format!(
            "SELECT count(*) FROM versions v JOIN deposits d ON d.id = v.deposit_id
             WHERE d.publisher = '{publisher}' AND v.state = 'deposited'"
        ))
    };
    harvest("test");
    assert_eq!(deposited("test"), N.to_string());
    let pg = env.postgres.is_some();
    // Right after the first harvest, before autovacuum has analyzed the new rows: the
    // unchanged feed again.
    let before = if pg { catalog_rows_read(&env) } else { 0 };
    harvest("test");
    if pg {
        let read = catalog_rows_read(&env) - before;
        assert!(
            read < 200 * N as u64,
            "the re-harvest of {N} unchanged items read {read} rows of deposits, versions, files and blobs"
        );
    }
    // Statistics that say every version is deposited and every deposit is the first
    // publisher's; then the second publisher's first harvest.
    env.execute("ANALYZE");
    let before = if pg { catalog_rows_read(&env) } else { 0 };
    harvest("b");
    assert_eq!(deposited("b"), N.to_string());
    if pg {
        let read = catalog_rows_read(&env) - before;
        assert!(
            read < 200 * N as u64,
            "the harvest of {N} new items read {read} rows of deposits, versions, files and blobs"
        );
    }
}

/// `plikt run` publishes after its runs (runs that end during a publish share the next
/// one): what a scheduled run deposits is in the documents it serves a few seconds later,
/// without a `plikt publish`; runs that find nothing new do not publish.
#[test]
fn plikt_run_publishes_what_its_runs_deposit_and_not_after_runs_that_do_not() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let items = std::sync::Arc::new(AtomicUsize::new(1));
    let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let (n, b2) = (items.clone(), base.clone());
    let server = Server::with_handler(move |r| match r.path.as_str() {
        "/feed.xml" => {
            let base = b2.get().unwrap();
            let list: Vec<TestItem> = (1..=n.load(Ordering::SeqCst))
                .rev()
                .map(|i| {
                    TestItem::new(
                        &format!("i-{i}"),
                        &date(i as i64),
                        &format!("{base}/i-{i}.html"),
                    )
                })
                .collect();
            Response::ok(feed(&list))
        }
        p => Response::file(format!("<html>{p}</html>"), "text/html"),
    });
    let _ = base.set(server.url(""));
    let env =
        Env::plain("run-publishes", &server.url("/feed.xml"), "").with_env("RUST_LOG", "info");
    env.replace_in_config("schedule = \"0 0 3 * * *\"", "schedule = \"*/2 * * * * *\"");
    let url = format!(
        "{}resourcesync/test/changelist.xml",
        env.listen_on_free_port()
    );
    let mut service = env.spawn(&["run"]);
    // A deposited item is two entries: its page and its metadata record.
    let served_entries = |want: usize| {
        let started = std::time::Instant::now();
        loop {
            let (status, _, body) = get(&url, None);
            let entries = String::from_utf8_lossy(&body).matches("<url>").count();
            if status == 200 && entries == want {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "{url}: {status}, {entries} entries, not {want}, after 30 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    served_entries(2);
    items.store(3, Ordering::SeqCst);
    served_entries(6);
    // Runs of an unchanged feed deposit nothing and publish nothing.
    let log = env.dir.join("spawned.log");
    let read = || std::fs::read_to_string(&log).unwrap_or_default();
    let runs_after = |n: usize| {
        let started = std::time::Instant::now();
        loop {
            let l = read();
            if l.matches("scheduled run ended").count() >= n {
                return l.matches("published sets=").count();
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "fewer than {n} runs ended: {l}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let ended = read().matches("scheduled run ended").count();
    let published = runs_after(ended + 1);
    assert!(
        published >= 2,
        "the deposits were not published: {}",
        read()
    );
    assert_eq!(
        runs_after(ended + 4),
        published,
        "runs that deposited nothing published: {}",
        read()
    );
    served_entries(6);
    assert!(stop_with_sigterm(&mut service, "after the runs").success());
}

/// A publish that failed is made again at the next run's end, though that run deposits
/// nothing (a minute's wait for the once-a-minute publish is not needed): the folder the
/// documents go to is a file while the item deposits, then put right.
#[test]
fn plikt_run_publishes_again_after_a_failed_publish_at_the_next_run() {
    let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| match r.path.as_str() {
        "/feed.xml" => {
            let link = format!("{}/i-1.html", b2.get().unwrap());
            Response::ok(feed(&[TestItem::new("i-1", &date(1), &link)]))
        }
        p => Response::file(format!("<html>{p}</html>"), "text/html"),
    });
    let _ = base.set(server.url(""));
    let env =
        Env::plain("run-publish-fails", &server.url("/feed.xml"), "").with_env("RUST_LOG", "info");
    env.replace_in_config("schedule = \"0 0 3 * * *\"", "schedule = \"*/2 * * * * *\"");
    let url = format!(
        "{}resourcesync/test/changelist.xml",
        env.listen_on_free_port()
    );
    let www = env.dir.join("data/www");
    std::fs::create_dir_all(env.dir.join("data")).unwrap();
    std::fs::write(&www, b"not a folder").unwrap();
    let mut service = env.spawn(&["run"]);
    let log = env.dir.join("spawned.log");
    let read = || std::fs::read_to_string(&log).unwrap_or_default();
    let wait_for = |what: &str, done: &dyn Fn() -> bool| {
        let started = std::time::Instant::now();
        while !done() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "{what} after 30 s: {}",
                read()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    // The item deposits and its publish fails.
    wait_for("no publish after the deposit failed", &|| {
        let l = read();
        l.contains("deposited=1") && l.matches("publishing failed").count() >= 2
    });
    std::fs::remove_file(&www).unwrap();
    // Well within the minute of the once-a-minute publish.
    let started = std::time::Instant::now();
    wait_for("the documents were not written", &|| {
        let (status, _, body) = get(&url, None);
        status == 200 && String::from_utf8_lossy(&body).matches("<url>").count() == 2
    });
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(stop_with_sigterm(&mut service, "after the runs").success());
}

/// `plikt status` says which worker is harvesting a publisher now and until when its
/// lease holds; once a killed worker's lease has run out, it says so and that the next
/// worker to look takes the run over (before, it showed a run "(running)" and the lease's
/// expiry as the next run, for a worker that was dead).
#[test]
fn status_names_the_worker_harvesting_now_and_a_killed_workers_lease() {
    let slow = noise(64 << 10, 7);
    let s2 = slow.clone();
    let publisher = serve(move |base| {
        let items = [
            TestItem::new("w-1", &date(0), &format!("{base}/w-1.html")).content(
                &format!("{base}/w-1.bin"),
                "application/octet-stream",
                &s2,
            ),
        ];
        vec![
            ("/feed.xml".into(), Response::ok(feed(&items))),
            (
                "/w-1.html".into(),
                Response::file(b"<html><body>w</body></html>".to_vec(), "text/html"),
            ),
            // About 16 s: the run holds its lease all along.
            (
                "/w-1.bin".into(),
                Response::file(Vec::new(), "application/octet-stream").body(Body::Paced {
                    bytes: s2.clone(),
                    chunk: 2 << 10,
                    every: Duration::from_millis(500),
                }),
            ),
        ]
    });
    let env = Env::plain("status-worker", &publisher.url("/feed.xml"), "").with_env(
        "PLIKT_TEST_OPS_TOKEN",
        "ops-secret-0123456789abcdef0123456789",
    );
    env.replace_in_config("schedule = \"0 0 3 * * *\"", "schedule = \"* * * * * *\"");
    let cfg = std::fs::read_to_string(&env.config).unwrap();
    std::fs::write(
        &env.config,
        format!("{cfg}\n[[operator]]\nid = \"ops\"\ntoken_env = \"PLIKT_TEST_OPS_TOKEN\"\n"),
    )
    .unwrap();
    let base = env.listen_on_free_port();
    // What a monitoring system reads from the worker's /status.
    let over_http = || {
        let (code, head, body) = get(
            &format!("{base}status"),
            Some("Bearer ops-secret-0123456789abcdef0123456789"),
        );
        assert_eq!(code, 200, "{head}");
        let v: Value = serde_json::from_slice(&body).unwrap();
        v["publishers"][0]["harvesting"].clone()
    };
    let mut run = env.spawn(&["run"]);
    let harvesting = || env.status()["harvesting"].clone();
    let started = std::time::Instant::now();
    while !harvesting().is_object() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no worker harvesting after 30 s: {}",
            env.status()
        );
        assert!(run.try_wait().unwrap().is_none(), "plikt run exited");
        std::thread::sleep(Duration::from_millis(100));
    }
    let h = harvesting();
    let worker = h["worker"].as_str().unwrap().to_string();
    assert!(worker.contains(&run.id().to_string()), "{h}");
    assert_eq!(h["expired"], false, "{h}");
    let h = over_http();
    assert_eq!(h["worker"], worker.as_str(), "{h}");
    assert_eq!(h["expired"], false, "{h}");
    let o = env.cmd(&["status"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(&format!("harvesting now, by worker {worker} (lease until ")),
        "{out}"
    );
    // Killed: its lease (3 s here) runs out and is not renewed.
    run.kill().unwrap();
    run.wait().unwrap();
    std::thread::sleep(Duration::from_secs(4));
    let h = harvesting();
    assert_eq!(h["worker"], worker.as_str(), "{h}");
    assert_eq!(h["expired"], true, "{h}");
    // What the killed run staged is on its row.
    let counts = env.status()["last_run"].clone();
    assert_eq!(counts["items"], 1, "{counts}");
    assert_eq!(counts["new_versions"], 1, "{counts}");
    let o = env.cmd(&["status"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(&format!(
            "harvesting stopped: the lease of worker {worker} ran out at "
        )) && out.contains("the next worker to look takes the run over"),
        "{out}"
    );
    drop(slow);
}

//! ResourceSync as a Destination meets it: over HTTP, after several days of history
//! (issue 14). Harvests and publishes run on earlier days under Debian's libfaketime,
//! so closed Change Lists, Change Dumps, archives and snapshots exist; then `plikt
//! serve` answers on loopback and the Destination crawler (`tests/destination/
//! crawl.py`) follows every URL every document names, in the public sets and, with
//! and without credentials, in the restricted ones. The reference client `resync`
//! 2.0.1 syncs the same history.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::support::{
    Env, Response, Server, Serving, TestItem, date, feed, free_port, get, get_with, locs, plikt_at,
    python, root, text,
};

/// The token of the `[[destination]]` `libris` that may see the restricted set.
pub const TOKEN: &str = "t0ken-for-libris-0123456789abcdef01";

/// A publisher whose feed changes with `generation`: `a` (a PDF that changes in every
/// generation), `r` (restricted; changes in generation 3), `b` from generation 2, `c`
/// from 3.
pub fn changing_publisher(generation: Arc<AtomicU32>) -> Server {
    let base: Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| {
        let b = b2.get().expect("base set");
        let g = generation.load(Ordering::SeqCst);
        let path = r.path.trim_start_matches('/');
        if path == "feed.xml" {
            return Response::ok(changing_feed(b, g));
        }
        match path.strip_suffix(".pdf") {
            Some(name) => Response::file(pdf(name, version_of(name, g)), "application/pdf"),
            None => Response::file(format!("<html>{path}</html>"), "text/html"),
        }
    });
    let _ = base.set(server.url(""));
    server
}

/// The bytes of version `v` of item `name`'s PDF.
fn pdf(name: &str, v: u32) -> Vec<u8> {
    format!("%PDF-1.4 {name} version {v}\n").into_bytes()
}

/// The version of item `name` in generation `g` (0: not in the feed yet).
fn version_of(name: &str, g: u32) -> u32 {
    match name {
        "a" => g,
        "b" if g >= 2 => 1,
        "c" if g >= 3 => 1,
        "r" if g >= 3 => 2,
        "r" => 1,
        _ => 0,
    }
}

/// The feed of generation `g`, newest first; `r` (the last item) is restricted.
fn changing_feed(b: &str, g: u32) -> String {
    let items: Vec<TestItem> = [("c", 300), ("b", 200), ("a", 100), ("r", 10)]
        .into_iter()
        .filter_map(|(name, minutes)| {
            let v = version_of(name, g);
            // Each version has a later pubDate.
            (v > 0).then(|| {
                TestItem::new(
                    name,
                    &date(minutes + i64::from(v)),
                    &format!("{b}/{name}.html"),
                )
                .content(
                    &format!("{b}/{name}.pdf"),
                    "application/pdf",
                    &pdf(name, v),
                )
            })
        })
        .collect();
    let f = feed(&items);
    let at = f.rfind(">gratis<").expect("an item");
    format!("{}>restricted<{}", &f[..at], &f[at + 8..])
}

/// The environment of a Destination test: a publisher, the `[[destination]]` with
/// its token, `listen` and `base_url` on a free port, and `extra` configuration.
pub fn destination_env(name: &str, feed_url: &str, extra: &str) -> (Env, String) {
    let env = Env::plain(name, feed_url, "").with_env("TEST_DEST_TOKEN", TOKEN);
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}/");
    let cfg = std::fs::read_to_string(&env.config).unwrap().replace(
        "data_dir = \"data\"",
        &format!("data_dir = \"data\"\nlisten = \"127.0.0.1:{port}\"\nbase_url = \"{base}\""),
    ) + &format!(
        "\n[[destination]]\nid = \"libris\"\ntoken_env = \"TEST_DEST_TOKEN\"\n{extra}\n"
    );
    std::fs::write(&env.config, cfg).unwrap();
    (env, base)
}

/// Runs the Destination crawler against `base`; panics with its findings unless it
/// finds nothing wrong. Returns its JSON summary.
pub fn crawl(env: &Env, base: &str, auth: Option<&str>, sets: &[&str]) -> serde_json::Value {
    let out = env.dir.join(format!("crawl-{}.json", auth.is_some()));
    let mut c = Command::new(python());
    c.arg(root().join("tests/destination/crawl.py"))
        .arg(base)
        .arg("--quiet")
        .arg("--json")
        .arg(&out);
    if let Some(a) = auth {
        c.arg("--auth").arg(a);
    }
    for s in sets {
        c.arg("--expect-set").arg(s);
    }
    let o = c.output().expect("run crawl.py");
    assert_eq!(
        o.status.code(),
        Some(0),
        "the Destination crawler found problems (auth: {}):\n{}",
        auth.is_some(),
        text(&o)
    );
    serde_json::from_slice(&std::fs::read(&out).unwrap()).expect("crawler summary")
}

/// The UTC day `n` days before today, `YYYY-MM-DD`.
pub fn day(n: i64) -> String {
    (chrono::Utc::now() - chrono::Duration::days(n))
        .format("%Y-%m-%d")
        .to_string()
}

/// Four days of history: day −4 the first harvest; day −3 `a` changes and `b` comes;
/// day −2 `c` comes, and `a` changes twice (two harvests); day −1 a publish without
/// changes. Each harvest is followed by a publish.
pub fn four_days(env: &Env, generation: &AtomicU32) {
    let step = |g: u32, when: String| {
        generation.store(g, Ordering::SeqCst);
        for args in [&["harvest"][..], &["publish"][..]] {
            let o = plikt_at(env, &when, args);
            assert_eq!(o.status.code(), Some(0), "{args:?} at {when}: {}", text(&o));
        }
    };
    step(1, format!("{} 10:00:00", day(4)));
    step(2, format!("{} 10:00:00", day(3)));
    step(3, format!("{} 09:00:00", day(2)));
    step(4, format!("{} 15:00:00", day(2)));
    let o = plikt_at(env, &format!("{} 12:00:00", day(1)), &["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// A Destination polling a Change List (RFC 9110 §13.1.2, §8.8): each document carries an
/// `ETag` and `Last-Modified`; asked again with `If-None-Match` it is `304 Not Modified`
/// without a body, until a publish that records a change rewrites it.
#[test]
fn a_destination_polling_a_change_list_gets_304_until_a_publish_changes_it() {
    let generation = Arc::new(AtomicU32::new(1));
    let publisher = changing_publisher(generation.clone());
    let (env, base) = destination_env("poll", &publisher.url("/feed.xml"), "");
    let round = || {
        for args in [&["harvest"][..], &["publish"][..]] {
            let o = env.cmd(args);
            assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o));
        }
    };
    round();
    let _serving = Serving::start(&env, &base);
    // The Source Description differs with the credentials: caches are told so.
    let (status, head, _) = get(&format!("{base}.well-known/resourcesync"), None);
    assert_eq!(status, 200, "{head}");
    assert!(head.contains("vary: authorization"), "{head}");
    let (status, _, body) = get(&format!("{base}resourcesync/test/capabilitylist.xml"), None);
    assert_eq!(status, 200);
    let capabilities = String::from_utf8(body).unwrap();
    let changelist = locs(&capabilities)
        .into_iter()
        .find(|l| l.contains("changelist"))
        .unwrap_or_else(|| panic!("no Change List in {capabilities}"));
    let etag_of = |head: &str| {
        head.lines()
            .find_map(|l| l.strip_prefix("etag: "))
            .unwrap_or_else(|| panic!("no ETag: {head}"))
            .to_string()
    };
    let (status, head, first) = get(&changelist, None);
    assert_eq!(status, 200, "{head}");
    assert!(head.contains("last-modified: "), "{head}");
    let etag = etag_of(&head);
    let (status, head, body) = get_with(&changelist, &[("If-None-Match", &etag)]);
    assert_eq!(status, 304, "{head}");
    assert!(body.is_empty());
    assert_eq!(etag_of(&head), etag);
    // Another tag, or none: the document itself.
    let (status, _, body) = get_with(&changelist, &[("If-None-Match", "\"other\"")]);
    assert_eq!((status, &body), (200, &first));

    // A change is harvested and published: the Change List is new, and so is its tag.
    generation.store(2, Ordering::SeqCst);
    round();
    let (status, head, body) = get_with(&changelist, &[("If-None-Match", &etag)]);
    assert_eq!(status, 200, "{head}");
    assert_ne!(etag_of(&head), etag);
    assert_ne!(body, first);
}

/// Twenty years of history (Archives §3.1, a yearly archiving scheme): once a set's
/// archived documents span two years, each archive is an index over a part per year;
/// a Destination crawls them with no dead link; and the next day's publish leaves the
/// past year's parts, and every other document it does not change, as they were, so a
/// Destination polling them gets 304 Not Modified and what a daily publish writes
/// stays the size of a year.
#[test]
fn archives_are_a_part_per_year_and_a_past_year_is_not_written_again() {
    use chrono::Datelike;
    let generation = Arc::new(AtomicU32::new(1));
    let publisher = changing_publisher(generation.clone());
    let (env, base) = destination_env("years", &publisher.url("/feed.xml"), "");
    // Late December of one year, New Year's Day of the next (each a harvest and a
    // publish), then the first publishes of January 2nd and 3rd.
    let year = chrono::Utc::now().year() + 1;
    let last = year - 1;
    let at = |when: String, args: &[&str]| {
        let o = plikt_at(&env, &when, args);
        assert_eq!(o.status.code(), Some(0), "{args:?} at {when}: {}", text(&o));
    };
    for (g, when) in [
        (1, format!("{last}-12-30 10:00:00")),
        (2, format!("{year}-01-01 10:00:00")),
    ] {
        generation.store(g, Ordering::SeqCst);
        at(when.clone(), &["harvest"]);
        at(when, &["publish"]);
    }
    at(format!("{year}-01-02 01:00:00"), &["publish"]);
    let _serving = Serving::start(&env, &base);
    let set = format!("{base}resourcesync/test/");
    let fetch = |url: &str| {
        let (status, head, body) = get(url, None);
        assert_eq!(status, 200, "{url}: {head}");
        String::from_utf8(body).unwrap()
    };
    let etag_of = |url: &str| {
        let (status, head, _) = get(url, None);
        assert_eq!(status, 200, "{url}: {head}");
        head.lines()
            .find_map(|l| l.strip_prefix("etag: "))
            .unwrap_or_else(|| panic!("no ETag: {head}"))
            .to_string()
    };
    // Closed Change Lists and Change Dumps of Dec 30, Dec 31 and Jan 1; snapshots of
    // Dec 30 and Jan 1 (the one of Jan 2 is live).
    let archived = [
        (
            "changelist",
            vec![format!("{last}-12-30"), format!("{last}-12-31")],
            vec![format!("{year}-01-01")],
        ),
        (
            "changedump",
            vec![format!("{last}-12-30"), format!("{last}-12-31")],
            vec![format!("{year}-01-01")],
        ),
        (
            "resourcelist",
            vec![format!("{last}-12-30")],
            vec![format!("{year}-01-01")],
        ),
    ];
    for (kind, old, new) in &archived {
        let index = fetch(&format!("{set}{kind}-archive.xml"));
        assert!(index.contains("<sitemapindex"), "{kind}: {index}");
        assert_eq!(index.matches("<sitemap>").count(), 2, "{kind}: {index}");
        for (y, days) in [(last, old), (year, new)] {
            let part_url = format!("{set}{kind}-archive/{y}.xml");
            assert!(index.contains(&format!("<loc>{part_url}</loc>")), "{index}");
            let part = fetch(&part_url);
            assert_eq!(
                part.matches("<url>").count(),
                days.len(),
                "{part_url}: {part}"
            );
            for d in days {
                assert!(
                    part.contains(&format!("{kind}/{d}.xml")),
                    "{part_url}: {part}"
                );
            }
        }
    }
    crawl(&env, &base, None, &["test"]);
    // What the next day leaves as it was: the past year's parts, the Capability List.
    let unchanged: Vec<String> = archived
        .iter()
        .map(|(kind, _, _)| format!("{set}{kind}-archive/{last}.xml"))
        .chain([format!("{set}capabilitylist.xml")])
        .collect();
    let tags: Vec<String> = unchanged.iter().map(|u| etag_of(u)).collect();
    let this_year = format!("{set}changelist-archive/{year}.xml");
    let this_year_tag = etag_of(&this_year);
    at(format!("{year}-01-03 01:00:00"), &["publish"]);
    for (url, tag) in unchanged.iter().zip(&tags) {
        let (status, head, _) = get_with(url, &[("If-None-Match", tag)]);
        assert_eq!(status, 304, "{url} was written again: {head}");
    }
    let (status, head, body) = get_with(&this_year, &[("If-None-Match", &this_year_tag)]);
    assert_eq!(status, 200, "{this_year}: {head}");
    let part = String::from_utf8(body).unwrap();
    assert!(
        part.contains(&format!("changelist/{year}-01-02.xml")),
        "{part}"
    );
    crawl(&env, &base, None, &["test"]);
}

#[test]
fn a_destination_crawling_several_days_of_history_meets_no_dead_link() {
    let generation = Arc::new(AtomicU32::new(1));
    let publisher = changing_publisher(generation.clone());
    let (env, base) = destination_env("crawl", &publisher.url("/feed.xml"), "");
    four_days(&env, &generation);
    // Today: the history is published once more, then served.
    let o = env.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let _serving = Serving::start(&env, &base);

    // Issue 14's 404: a closed day's Change Dump package, at the URL the documents give.
    let (status, head, _) = get(
        &format!("{base}resourcesync/test/changedump/{}.zip", day(2)),
        None,
    );
    assert_eq!(status, 200, "{head}");
    assert!(head.contains("content-type: application/zip"), "{head}");

    let public = crawl(&env, &base, None, &["test"]);
    let full = crawl(
        &env,
        &base,
        Some(&format!("Bearer {TOKEN}")),
        &["test", "test/restricted"],
    );
    eprintln!("public crawl: {public}\ncrawl with credentials: {full}");
    // What the crawls met: every kind of document, on several days.
    let count = |v: &serde_json::Value, k: &str| v["documents"][k].as_u64().unwrap_or(0);
    for (k, at_least) in [
        ("resourcelist", 4),
        ("resourcelist-archive", 1),
        ("resourcedump", 4),
        ("resourcedump-archive", 1),
        ("changelist", 5),
        ("changelist-archive", 1),
        ("changedump", 5),
        ("changedump-archive", 1),
        ("change-notification", 1),
    ] {
        assert!(
            count(&public, k) >= at_least,
            "{k}: {} documents, expected at least {at_least}: {public}",
            count(&public, k)
        );
    }
    assert!(count(&full, "capabilitylist") >= 2, "{full}");
    assert!(
        full["packages"].as_u64() > public["packages"].as_u64(),
        "{full}\n{public}"
    );

    // The archives, as a Destination reads them: three earlier Resource Lists (days
    // −4, −3, −2; day −1 changed nothing), closed lists and dumps of every day from −4.
    let www = env.data().join("www/resourcesync/test");
    let archive = std::fs::read_to_string(www.join("resourcelist-archive.xml")).unwrap();
    for d in [4, 3, 2] {
        assert!(
            archive.contains(&format!("resourcelist/{}.xml", day(d))),
            "{archive}"
        );
    }
    assert!(!archive.contains(&day(1)), "{archive}");
    let dumps = std::fs::read_to_string(www.join("changedump-archive.xml")).unwrap();
    for d in [4, 3, 2, 1] {
        assert!(
            dumps.contains(&format!("changedump/{}.xml", day(d))),
            "{dumps}"
        );
    }
    // Day −2's Change Dump holds `a` twice (changed twice that day), at two paths.
    let manifest = String::from_utf8(
        get(
            &format!("{base}resourcesync/test/changedump/{}-manifest.xml", day(2)),
            None,
        )
        .2,
    )
    .unwrap();
    let a_pdf = manifest
        .split("<url>")
        .filter(|e| e.contains("/a.pdf\""))
        .count();
    assert_eq!(a_pdf, 2, "{manifest}");
}

/// `resync-sync` with `args`, as if it were `when` (libfaketime: its last sync time is
/// what it compares change times with); its output.
fn resync_at(env: &Env, when: Option<&str>, args: &[&str]) -> String {
    let bin = root().join(".venv/bin/resync-sync");
    assert!(
        bin.exists(),
        "{} is missing: run scripts/setup",
        bin.display()
    );
    let mut c = Command::new(&bin);
    if let Some(t) = when {
        crate::support::at_time(&mut c, t);
    }
    let o = c
        .args(args)
        .current_dir(&env.dir)
        .output()
        .expect("run resync-sync");
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Every file below `dir` equals what `base` serves at the same path.
fn mirror_is_current(dir: &Path, base: &str) -> usize {
    fn walk(root: &Path, dir: &Path, base: &str, n: &mut usize) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, base, n);
            } else if !p.file_name().unwrap().to_string_lossy().starts_with('.') {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().to_string();
                let (status, head, body) = get(&format!("{base}{rel}"), None);
                assert_eq!(status, 200, "{rel}: {head}");
                assert!(
                    body == std::fs::read(&p).unwrap(),
                    "{rel} differs from the Source"
                );
                *n += 1;
            }
        }
    }
    let mut n = 0;
    walk(dir, &dir.join("d"), base, &mut n);
    n
}

#[test]
fn resync_syncs_day_by_day_and_audits_over_several_days() {
    let generation = Arc::new(AtomicU32::new(1));
    let publisher = changing_publisher(generation.clone());
    let (env, base) = destination_env("resync-days", &publisher.url("/feed.xml"), "");
    let dest = env.dir.join("dest");
    let mapping = format!("{base}={}", dest.display());
    let cap = format!("{base}resourcesync/test/capabilitylist.xml");
    let changes = format!("{base}resourcesync/test/changelist.xml");
    let mut serving = None;
    // Each day: a harvest and a publish, then the Destination syncs (a baseline on the
    // first day, then the day's Change List).
    // What a publish killed while it wrote a package leaves (`.<name>.<pid>.tmp`, the pid
    // of no living process): the next publish that writes the set removes it.
    let stray = env
        .data()
        .join("www/resourcesync/test/resourcedump/.0123456789abcdef.zip.4194304.tmp");
    for (n, (g, d)) in [(1, 4), (2, 3), (3, 2), (4, 1)].into_iter().enumerate() {
        if n == 1 {
            assert!(stray.parent().unwrap().is_dir());
            std::fs::write(&stray, b"half a package").unwrap();
        }
        generation.store(g, Ordering::SeqCst);
        let when = format!("{} 10:00:00", day(d));
        for args in [&["harvest"][..], &["publish"][..]] {
            let o = plikt_at(&env, &when, args);
            assert_eq!(o.status.code(), Some(0), "{args:?} at {when}: {}", text(&o));
        }
        let serving = serving.get_or_insert_with(|| Serving::start(&env, &base));
        let sync = format!("{} 11:00:00", day(d));
        let out = if n == 0 {
            resync_at(
                &env,
                Some(&sync),
                &["--baseline", "--capabilitylist", &cap, &mapping],
            )
        } else {
            resync_at(
                &env,
                Some(&sync),
                &["--incremental", "--changelist-uri", &changes, &mapping],
            )
        };
        // (resync 2.0.1 warns that it does not know `change-notification`; its
        // `Ignoring file` line on the first day is about the mirror not existing yet.)
        let done = if n == 0 {
            "Status:          SYNCED"
        } else {
            "Status: CHANGES APPLIED"
        };
        assert!(
            out.contains(done) && !out.contains("Traceback"),
            "day -{d}: {out}"
        );
        // After each day's sync the mirror is the Source's current public state.
        let files = mirror_is_current(&dest, &serving.base);
        // Public items that day: a, then b, then c (each a record, a page and a PDF).
        assert_eq!(files, 3 * [1, 2, 3, 3][n], "day -{d}");
    }
    assert!(!stray.exists(), "a dead process's temporary file stayed");
    // Today: the audit finds the mirror in sync, over the whole history.
    assert_eq!(env.cmd(&["publish"]).status.code(), Some(0));
    let out = resync_at(&env, None, &["--audit", "--capabilitylist", &cap, &mapping]);
    assert_in_sync(&out);
    // And a fresh baseline today equals the mirror kept day by day.
    let fresh = env.dir.join("fresh");
    let out = resync_at(
        &env,
        None,
        &[
            "--baseline",
            "--capabilitylist",
            &cap,
            &format!("{base}={}", fresh.display()),
        ],
    );
    assert!(out.contains("SYNCED (same=0, created=9,"), "{out}");
    assert_eq!(mirror_is_current(&fresh, &base), 9);
}

/// `resync-sync --audit`'s verdict is "IN SYNC" (its other verdict, "NOT IN SYNC",
/// contains those words too).
fn assert_in_sync(out: &str) {
    let status = out
        .lines()
        .find(|l| l.starts_with("Status:"))
        .unwrap_or_else(|| panic!("no status: {out}"));
    assert!(
        status.contains("IN SYNC") && !status.contains("NOT IN SYNC"),
        "{out}"
    );
}

/// Each `<url>`'s `<loc>` and `<lastmod>` in a Sitemap document.
fn lastmods(doc: &str) -> Vec<(String, String)> {
    doc.split("<url>")
        .skip(1)
        .map(|u| {
            let between = |open: &str, close: &str| {
                let from = u
                    .find(open)
                    .map(|i| i + open.len())
                    .unwrap_or_else(|| panic!("{u}"));
                u[from..from + u[from..].find(close).unwrap()].to_string()
            };
            (
                between("<loc>", "</loc>"),
                between("<lastmod>", "</lastmod>"),
            )
        })
        .collect()
}

/// A resource has one `lastmod`, the instant its version was deposited, in the Resource
/// List and the Change List alike: a Destination that applied the Change List audits in
/// sync. Here a version's page is stored seconds before its slow PDF, and so before the
/// version is deposited; the lists once gave the page the time it was stored, and
/// `resync --audit` found the mirror out of sync although every byte matched.
#[test]
fn a_destination_that_applied_the_change_list_audits_in_sync_against_the_resource_list() {
    let generation = Arc::new(AtomicU32::new(1));
    let g2 = generation.clone();
    let base: Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let slow = pdf("s", 1).repeat(2000);
    let publisher = Server::with_handler(move |r| {
        let b = b2.get().expect("base set");
        let path = r.path.trim_start_matches('/');
        if path == "feed.xml" {
            let mut items = vec![
                TestItem::new("a", &date(100), &format!("{b}/a.html")).content(
                    &format!("{b}/a.pdf"),
                    "application/pdf",
                    &pdf("a", 1),
                ),
            ];
            if g2.load(Ordering::SeqCst) >= 2 {
                items.insert(
                    0,
                    TestItem::new("s", &date(200), &format!("{b}/s.html")).content(
                        &format!("{b}/s.pdf"),
                        "application/pdf",
                        &slow,
                    ),
                );
            }
            return Response::ok(feed(&items));
        }
        match path {
            "a.pdf" => Response::file(pdf("a", 1), "application/pdf"),
            // About 2.5 s: the page is stored long before.
            "s.pdf" => {
                Response::file(Vec::new(), "application/pdf").body(crate::support::Body::Paced {
                    bytes: slow.clone(),
                    chunk: slow.len() / 10 + 1,
                    every: std::time::Duration::from_millis(250),
                })
            }
            _ => Response::file(format!("<html>{path}</html>"), "text/html"),
        }
    });
    let _ = base.set(publisher.url(""));
    let (env, base) = destination_env("lastmod", &publisher.url("/feed.xml"), "");
    let dest = env.dir.join("dest");
    let mapping = format!("{base}={}", dest.display());
    let cap = format!("{base}resourcesync/test/capabilitylist.xml");
    let changes = format!("{base}resourcesync/test/changelist.xml");
    let step = || {
        for args in [&["harvest"][..], &["publish"][..]] {
            let o = env.cmd(args);
            assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o));
        }
    };
    step();
    let serving = Serving::start(&env, &base);
    let out = resync_at(
        &env,
        None,
        &["--baseline", "--capabilitylist", &cap, &mapping],
    );
    assert!(out.contains("Status:          SYNCED"), "{out}");
    generation.store(2, Ordering::SeqCst);
    step();
    let stored: Vec<String> = env
        .sql("SELECT f.fetched_at FROM files f JOIN versions v ON v.id = f.version_id JOIN deposits d ON d.id = v.deposit_id WHERE d.guid = 's' ORDER BY f.fetched_at")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(stored.len(), 2);
    assert!(
        stored[0][..19] != stored[1][..19],
        "the page and the PDF were stored within one second: {stored:?}"
    );
    let out = resync_at(
        &env,
        None,
        &["--incremental", "--changelist-uri", &changes, &mapping],
    );
    assert!(out.contains("Status: CHANGES APPLIED"), "{out}");
    let out = resync_at(&env, None, &["--audit", "--capabilitylist", &cap, &mapping]);
    assert_in_sync(&out);
    // The same instant in both lists, for every resource the Change List names.
    let (_, _, list) = get(&format!("{base}resourcesync/test/resourcelist.xml"), None);
    let (_, _, change_list) = get(&changes, None);
    let listed: std::collections::HashMap<String, String> =
        lastmods(&String::from_utf8(list).unwrap())
            .into_iter()
            .collect();
    let changed = lastmods(&String::from_utf8(change_list).unwrap());
    assert!(changed.len() >= 3, "{changed:?}");
    for (loc, at) in &changed {
        assert_eq!(listed.get(loc), Some(at), "{loc}");
    }
    serving.stop();
}

#[test]
fn snapshots_past_their_retention_leave_the_archive_and_then_the_disk() {
    let generation = Arc::new(AtomicU32::new(1));
    let publisher = changing_publisher(generation.clone());
    let (env, base) = destination_env(
        "retention",
        &publisher.url("/feed.xml"),
        "[resourcesync]\nsnapshot_retention_days = 2\n",
    );
    four_days(&env, &generation);
    let o = env.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let www = env.data().join("www/resourcesync/test");
    for kind in ["resourcelist", "resourcedump"] {
        let archive = std::fs::read_to_string(www.join(format!("{kind}-archive.xml"))).unwrap();
        // Days -4 and -3 are past the retention: neither listed nor kept; day -2 is both.
        for d in [4, 3] {
            assert!(!archive.contains(&day(d)), "{kind}: {archive}");
            assert!(
                !www.join(format!("{kind}/{}.xml", day(d))).exists(),
                "{kind} day -{d}"
            );
            assert!(
                !www.join(format!("{kind}/.{}.meta", day(d))).exists(),
                "{kind} day -{d}"
            );
        }
        assert!(
            archive.contains(&format!("{kind}/{}.xml", day(2))),
            "{kind}: {archive}"
        );
        assert!(www.join(format!("{kind}/{}.xml", day(2))).exists());
    }
    // Every package left is one a kept Resource Dump lists.
    let listed: String = std::fs::read_dir(www.join("resourcedump"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "xml")
                && !p.to_string_lossy().ends_with("-manifest.xml")
        })
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    for e in std::fs::read_dir(www.join("resourcedump")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        if name.ends_with(".zip") {
            assert!(
                listed.contains(&format!("resourcedump/{name}</loc>")),
                "{name} is kept but listed nowhere"
            );
        }
    }
    // And what the archives list resolves: no dead link.
    let _serving = Serving::start(&env, &base);
    crawl(
        &env,
        &base,
        Some(&format!("Bearer {TOKEN}")),
        &["test", "test/restricted"],
    );
}

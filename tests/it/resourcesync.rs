//! The collection republished as a ResourceSync Source and synced by the reference
//! Destination, the Python `resync` 2.0.1 client (installed into .venv by
//! scripts/setup): baseline, incremental after a further harvest, audit. resync exits 0
//! even after fatal errors and never compares digests, so the tests judge by its output
//! and by comparing the synced files with plikt's blobs byte for byte.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use crate::support::{Env, TestItem, date, feed, plikt_at, text};
use crate::support::{Response, Server, Serving, free_port, root};

/// `plikt serve` on a free port (`listen` and `base_url` set in the configuration),
/// stopped when dropped; the test fails unless it answers there.
fn serve(env: &Env) -> Serving {
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}/");
    let cfg = std::fs::read_to_string(&env.config).unwrap().replace(
        "data_dir = \"data\"",
        &format!("data_dir = \"data\"\nlisten = \"127.0.0.1:{port}\"\nbase_url = \"{base}\""),
    );
    std::fs::write(&env.config, cfg).unwrap();
    Serving::start(env, &base)
}

fn resync(dir: &Path, args: &[&str]) -> String {
    let bin = root().join(".venv/bin/resync-sync");
    assert!(
        bin.exists(),
        "{} is missing: run scripts/setup (it installs resync==2.0.1)",
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

fn get(url: &str) -> (String, Vec<u8>) {
    get_with(url, "")
}

/// GET with extra header lines (each ending in CRLF); (head, body).
fn get_with(url: &str, headers: &str) -> (String, Vec<u8>) {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let mut s = std::net::TcpStream::connect(host).unwrap();
    write!(
        s,
        "GET /{path} HTTP/1.1\r\nHost: {host}\r\n{headers}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut resp = Vec::new();
    s.read_to_end(&mut resp).unwrap();
    let at = memchr::memmem::find(&resp, b"\r\n\r\n").unwrap();
    (
        String::from_utf8_lossy(&resp[..at]).to_string(),
        resp[at + 4..].to_vec(),
    )
}

/// Every file below `dir`, as (path relative to `dir`, bytes).
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else if !p.file_name().unwrap().to_str().unwrap().starts_with('.') {
                let rel = p.strip_prefix(base).unwrap().to_string_lossy().to_string();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    if dir.exists() {
        walk(dir, dir, &mut out);
    }
    out.sort();
    out
}

/// The synced files must be plikt's current public files, byte for byte.
fn assert_mirror(env: &Env, dest: &Path, expected: usize) {
    let synced = files(&dest.join("d"));
    assert_eq!(
        synced.len(),
        expected,
        "{:?}",
        synced.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for (rel, bytes) in synced {
        let parts: Vec<&str> = rel.split('/').collect();
        let (deposit, key) = (parts[1], parts[2]);
        if key == "metadata.xml" {
            // The deposit's record: the current version's, as plikt wrote it.
            let version = env.one(&format!(
                "SELECT id FROM versions WHERE deposit_id = {deposit} AND state = 'deposited' ORDER BY pub_date DESC LIMIT 1"
            ));
            let metadata = env.one(&format!(
                "SELECT metadata FROM versions WHERE id = {version}"
            ));
            let record = plikt::resourcesync::record_bytes(&metadata).unwrap();
            assert!(
                record == bytes,
                "{rel} differs from the record of version {version}"
            );
            let text = String::from_utf8(bytes).unwrap();
            assert!(text.contains("<dcterms:title>"), "{text}");
            continue;
        }
        let rows = env.sql(&format!(
            "SELECT f.url, f.sha256 FROM files f JOIN versions v ON v.id = f.version_id
             WHERE v.deposit_id = {deposit} AND v.state = 'deposited' ORDER BY v.pub_date DESC"
        ));
        let sha = rows
            .iter()
            .find(|r| plikt::resourcesync::url_key(&r[0]) == key)
            .map(|r| r[1].clone())
            .unwrap_or_else(|| panic!("no stored file for {rel}"));
        let blob = std::fs::read(env.data().join("blobs").join(&sha[..2]).join(&sha)).unwrap();
        assert!(blob == bytes, "{rel} differs from blob {sha}");
    }
}

#[test]
fn resync_baseline_incremental_and_audit_against_plikt_serve() {
    let generation = Arc::new(AtomicU32::new(1));
    let g2 = generation.clone();
    let base: Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| {
        let b = b2.get().unwrap();
        let g = g2.load(Ordering::SeqCst);
        let pdf = |i: u32| {
            format!(
                "%PDF-1.4 item {i} generation {}\n",
                if i == 1 { g } else { 1 }
            )
            .into_bytes()
        };
        match r.path.as_str() {
            "/feed.xml" => {
                let mut items = vec![
                    TestItem::new(
                        "item-1",
                        &date(if g >= 2 { 60 } else { 10 }),
                        &format!("{b}/1.html"),
                    )
                    .content(&format!("{b}/1.pdf"), "application/pdf", &pdf(1)),
                    TestItem::new("item-2", &date(5), &format!("{b}/2.html")).content(
                        &format!("{b}/2.pdf"),
                        "application/pdf",
                        &pdf(2),
                    ),
                ];
                if g >= 2 {
                    items.insert(
                        0,
                        TestItem::new("item-3", &date(90), &format!("{b}/3.html")).content(
                            &format!("{b}/3.pdf"),
                            "application/pdf",
                            &pdf(3),
                        ),
                    );
                }
                Response::ok(feed(&items))
            }
            p if p.ends_with(".html") => Response::file(format!("<html>{p}</html>"), "text/html"),
            p if p.ends_with(".pdf") => {
                let i: u32 = p[1..p.len() - 4].parse().unwrap();
                Response::file(pdf(i), "application/pdf")
            }
            _ => Response::status(404),
        }
    });
    let _ = base.set(server.url(""));
    let env = Env::plain("resync", &server.url("/feed.xml"), "");
    let srv = serve(&env);
    let cap = format!("{}resourcesync/test/capabilitylist.xml", srv.base);
    let mapping = format!("{}={}", srv.base, env.dir.join("dest").display());
    let dest = env.dir.join("dest");

    // Baseline.
    assert_eq!(env.harvest().status.code(), Some(0));
    let o = env.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = resync(
        &env.dir,
        &["--baseline", "--capabilitylist", &cap, &mapping],
    );
    assert!(
        out.contains("SYNCED (same=0, created=6, updated=0, deleted=0)"),
        "{out}"
    );
    // 2 deposits: their records and 4 files.
    assert_mirror(&env, &dest, 6);

    // item-1's PDF, served (and kept in plikt serve's memory: server::cache).
    let (_, rl) = get(&format!("{}resourcesync/test/resourcelist.xml", srv.base));
    let pdf1 = loc_of(&String::from_utf8(rl).unwrap(), "/1.pdf\"");
    let (head1, gen1) = get(&pdf1);
    assert_eq!(gen1, b"%PDF-1.4 item 1 generation 1\n", "{head1}");

    // A further harvest: item-1 updated (newer pubDate, new PDF), item-3 new.
    std::thread::sleep(Duration::from_millis(1100));
    generation.store(2, Ordering::SeqCst);
    assert_eq!(env.harvest().status.code(), Some(0));
    // Served at once, before any publish: the new version, never the one kept from
    // before the harvest (another process's commit empties the cache).
    let (head2, gen2) = get(&pdf1);
    assert_eq!(gen2, b"%PDF-1.4 item 1 generation 2\n", "{head2}");
    let etag = |h: &str| {
        h.to_lowercase()
            .split("etag: ")
            .nth(1)
            .map(|e| e[..66].to_string())
    };
    assert_ne!(etag(&head1), etag(&head2), "{head1}\n{head2}");
    assert_eq!(env.cmd(&["publish"]).status.code(), Some(0));
    // resync 2.0.1 reads no capability list in incremental mode: name the Change List.
    let changes = format!("{}resourcesync/test/changelist.xml", srv.base);
    let out = resync(
        &env.dir,
        &["--incremental", "--changelist-uri", &changes, &mapping],
    );
    assert!(
        !out.contains("Traceback") && !out.to_lowercase().contains("error"),
        "{out}"
    );
    assert_mirror(&env, &dest, 9);

    // Audit: in sync.
    let out = resync(&env.dir, &["--audit", "--capabilitylist", &cap, &mapping]);
    assert!(out.contains("IN SYNC"), "{out}");

    // What resync does not check: the documents' own links and attributes.
    let (_, sd) = get(&format!("{}.well-known/resourcesync", srv.base));
    let sd = String::from_utf8(sd).unwrap();
    assert!(
        sd.contains("capability=\"description\"") && sd.contains(&cap),
        "{sd}"
    );
    let (_, rl) = get(&format!("{}resourcesync/test/resourcelist.xml", srv.base));
    let rl = String::from_utf8(rl).unwrap();
    assert!(
        rl.contains(&format!("<rs:ln rel=\"up\" href=\"{cap}\"/>")),
        "{rl}"
    );
    assert!(
        rl.contains("capability=\"resourcelist\" at=\"") && rl.contains("completed=\""),
        "{rl}"
    );
    assert!(
        rl.contains("rel=\"via\"") && rl.contains("sha-256:"),
        "{rl}"
    );
    let (_, cl) = get(&format!("{}resourcesync/test/changelist.xml", srv.base));
    let cl = String::from_utf8(cl).unwrap();
    assert!(cl.contains("capability=\"changelist\" from=\""), "{cl}");
    assert!(cl.contains("change=\"updated\" datetime=\""), "{cl}");
    // Change List entries in forward chronological order.
    let times: Vec<&str> = cl
        .split("<lastmod>")
        .skip(1)
        .map(|s| s.split('<').next().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    // A resource: headers and the resourcesync link (§6.3.3).
    // Metadata records (§14.5): listed with `describes` and `profile`; files link them.
    assert!(
        rl.contains("metadata.xml</loc>") && rl.contains("rel=\"describes\""),
        "{rl}"
    );
    assert!(
        rl.contains("rel=\"profile\" href=\"http://purl.org/dc/terms/\""),
        "{rl}"
    );
    assert!(
        rl.contains("rel=\"describedby\"") && rl.contains("rel=\"collection\""),
        "{rl}"
    );
    let loc = crate::support::locs(&rl)
        .into_iter()
        .find(|l| !l.ends_with("metadata.xml"))
        .unwrap();
    let (head, body) = get(&loc);
    let head = head.to_lowercase();
    assert!(
        head.contains(&format!("content-length: {}", body.len())),
        "{head}"
    );
    assert!(
        head.contains("etag: \"") && head.contains("last-modified: "),
        "{head}"
    );
    assert!(
        head.contains(&format!(
            "link: <{}>; rel=\"resourcesync\"",
            cap.to_lowercase()
        )),
        "{head}"
    );
    // Ranges, conditional GET, robots.txt.
    let ranged = get_with(&loc, "Range: bytes=2-5\r\n");
    assert!(ranged.0.starts_with("HTTP/1.1 206"), "{}", ranged.0);
    assert_eq!(ranged.1, body[2..6]);
    assert!(
        ranged
            .0
            .to_lowercase()
            .contains(&format!("content-range: bytes 2-5/{}", body.len()))
    );
    let beyond = get_with(&loc, &format!("Range: bytes={}-\r\n", body.len()));
    assert!(beyond.0.starts_with("HTTP/1.1 416"), "{}", beyond.0);
    let etag = head
        .split("etag: ")
        .nth(1)
        .unwrap()
        .split("\r\n")
        .next()
        .unwrap()
        .to_string();
    let cached = get_with(&loc, &format!("If-None-Match: {etag}\r\n"));
    assert!(cached.0.starts_with("HTTP/1.1 304"), "{}", cached.0);
    let (_, robots) = get(&format!("{}robots.txt", srv.base));
    let robots = String::from_utf8(robots).unwrap();
    assert!(
        robots.contains(&format!(
            "Sitemap: {}resourcesync/test/resourcelist.xml",
            srv.base
        )),
        "{robots}"
    );
    // Every version stays retrievable at its memento URL: the first PDF of item-1,
    // listed in the Change List's first entries, still has its old bytes.
    let first_pdf_memento = cl
        .split("<url>")
        .find(|u| u.contains("change=\"created\"") && u.contains("/1.pdf\""))
        .and_then(|u| u.split("rel=\"memento\" href=\"").nth(1))
        .and_then(|u| u.split('"').next())
        .unwrap_or_else(|| panic!("no memento for the first 1.pdf in {cl}"))
        .to_string();
    let (head, old) = get(&first_pdf_memento);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(old, b"%PDF-1.4 item 1 generation 1\n");
    let current = loc_of(&rl, "/1.pdf\"");
    assert_eq!(get(&current).1, b"%PDF-1.4 item 1 generation 2\n");
    // Unknown resources are 404 without internals.
    let (head, body) = get(&format!("{}d/test/999/0000000000000000", srv.base));
    assert!(head.starts_with("HTTP/1.1 404"), "{head}");
    assert_eq!(body, b"not found\n");
}

#[test]
fn restricted_sets_are_served_only_to_authenticated_destinations() {
    let base: Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| {
        let b = b2.get().unwrap();
        match r.path.as_str() {
            "/feed.xml" => {
                let f = feed(&[
                    TestItem::new("open", &date(3), &format!("{b}/open.html")),
                    TestItem::new("closed", &date(2), &format!("{b}/closed.html")),
                    TestItem::new("broken", &date(1), &format!("{b}/broken.html")),
                ]);
                // Item 2 restricted; item 3's accessRights invalid (non-conforming).
                let f = f
                    .replacen(">gratis<", ">GRATIS_OPEN<", 1)
                    .replacen(">gratis<", ">restricted<", 1)
                    .replacen(">gratis<", ">free<", 1)
                    .replace(">GRATIS_OPEN<", ">gratis<");
                Response::ok(f)
            }
            p => Response::file(format!("<html>{p}</html>"), "text/html"),
        }
    });
    let _ = base.set(server.url(""));
    let env = Env::plain("restricted-set", &server.url("/feed.xml"), "")
        .with_env("TEST_DEST_TOKEN", "t0ken-for-libris-0123456789abcdef01");
    let cfg = std::fs::read_to_string(&env.config).unwrap()
        + "\n[[destination]]\nid = \"libris\"\ntoken_env = \"TEST_DEST_TOKEN\"\n";
    std::fs::write(&env.config, cfg).unwrap();
    let srv = serve(&env);
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(env.status()["deposits"].as_u64(), Some(3));
    let o = env.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    // The public set: only the open item; nothing restricted is named.
    let www = env.data().join("www");
    let public = [
        std::fs::read_to_string(www.join(".well-known/resourcesync")).unwrap(),
        std::fs::read_to_string(www.join("resourcesync/test/resourcelist.xml")).unwrap(),
        std::fs::read_to_string(www.join("resourcesync/test/changelist.xml")).unwrap(),
    ]
    .concat();
    assert!(public.contains("/open.html"), "{public}");
    for hidden in ["closed.html", "broken.html", "restricted"] {
        assert!(!public.contains(hidden), "{hidden} in {public}");
    }
    let restricted =
        std::fs::read_to_string(www.join("resourcesync/test/restricted/resourcelist.xml")).unwrap();
    // Two items: their records and their link pages.
    assert_eq!(restricted.matches("<url>").count(), 4, "{restricted}");

    let restricted_cap = format!(
        "{}resourcesync/test/restricted/capabilitylist.xml",
        srv.base
    );
    let bearer = "Authorization: Bearer t0ken-for-libris-0123456789abcdef01\r\n";
    // Without (or with wrong) credentials: 401, for documents and resources alike.
    for h in [
        "",
        "Authorization: Bearer wrong\r\n",
        "Authorization: Basic bGlicmlzOnQwa2Vu\r\n",
    ] {
        let (head, _) = get_with(&restricted_cap, h);
        assert!(head.starts_with("HTTP/1.1 401"), "{h}: {head}");
    }
    let (head, _) = get_with(&restricted_cap, bearer);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let closed = crate::support::locs(&restricted).remove(0);
    // A restricted resource answers as one that does not exist (no oracle).
    assert!(get(&closed).0.starts_with("HTTP/1.1 404"));
    let (head, body) = get_with(&closed, bearer);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        String::from_utf8_lossy(&body).contains("/closed.html")
            || String::from_utf8_lossy(&body).contains("/broken.html")
    );
    // The Source Description names the restricted sets only to an authenticated client.
    let (_, anonymous) = get(&format!("{}.well-known/resourcesync", srv.base));
    let (_, full) = get_with(&format!("{}.well-known/resourcesync", srv.base), bearer);
    assert!(!String::from_utf8_lossy(&anonymous).contains("restricted"));
    assert!(String::from_utf8_lossy(&full).contains(&restricted_cap));

    // resync syncs the restricted set with the token.
    let mapping = format!("{}={}", srv.base, env.dir.join("dest").display());
    let out = resync(
        &env.dir,
        &[
            "--baseline",
            "--access-token",
            "t0ken-for-libris-0123456789abcdef01",
            "--capabilitylist",
            &restricted_cap,
            &mapping,
        ],
    );
    assert!(
        out.contains("SYNCED (same=0, created=4, updated=0, deleted=0)"),
        "{out}"
    );
}

#[test]
fn change_lists_rotate_daily_and_closed_lists_stay_reachable() {
    let (_server, env) = one_item_harvested("rotation");
    let srv = serve(&env);
    // A version deposited two days ago (written straight into the catalog: the
    // journal only ever gets the current time).
    let two_days_ago = chrono::Utc::now() - chrono::Duration::days(2);
    let at = two_days_ago.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let day = two_days_ago.format("%Y-%m-%d").to_string();
    env.execute(&format!(
        "INSERT INTO versions (deposit_id, pub_date, pub_date_raw, item_hash, metadata, findings,
           conforming, access, state, found_run, found_at, deposited_at)
         SELECT deposit_id, '2020-01-01T00:00:00.000Z', 'x', 'h', '{{}}', '[]', 1, 'gratis',
           'deposited', found_run, '{at}', '{at}' FROM versions LIMIT 1;
         INSERT INTO files (version_id, ord, role, url, state, sha256, length, md5, fetched_at)
         SELECT (SELECT max(id) FROM versions), 0, 'content', 'http://old.example/x.pdf', 'stored',
           sha256, length, md5, '{at}' FROM files WHERE state = 'stored' LIMIT 1;
         INSERT INTO changes (version_id, deposit_id, publisher, change, at)
         SELECT id, deposit_id, 'test', 'updated', '{at}' FROM versions WHERE id = (SELECT max(id) FROM versions);"
    ));
    assert_eq!(env.cmd(&["publish"]).status.code(), Some(0));
    let dir = env.data().join("www/resourcesync/test");
    let old = dir.join(format!("changelist/{day}.xml"));
    let closed = std::fs::read_to_string(&old).unwrap();
    assert!(closed.contains("until=\""), "{closed}");
    assert!(closed.contains("http://old.example/x.pdf"), "{closed}");
    assert!(
        !closed.contains("/a.html"),
        "today's change in a closed list: {closed}"
    );
    let open = std::fs::read_to_string(dir.join("changelist.xml")).unwrap();
    assert!(
        open.contains("/a.html") && !open.contains("until=") && !open.contains("old.example"),
        "{open}"
    );
    let archive = std::fs::read_to_string(dir.join("changelist-archive.xml")).unwrap();
    assert!(
        archive.contains("capability=\"changelist-archive\""),
        "{archive}"
    );
    // Every closed day, yesterday included, is reachable from the archive.
    assert_eq!(archive.matches("<url>").count(), 2, "{archive}");
    assert!(archive.contains(&format!("changelist/{day}.xml")));
    let cap = std::fs::read_to_string(dir.join("capabilitylist.xml")).unwrap();
    assert!(cap.contains("changelist-archive.xml"), "{cap}");
    // The closed list is served where the archive says.
    let closed_url = format!("{}resourcesync/test/changelist/{day}.xml", srv.base);
    assert!(archive.contains(&closed_url), "{archive}");
    let (head, body) = get(&closed_url);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(String::from_utf8(body).unwrap(), closed);
    // The closed day has a Change Dump package; the empty day (yesterday) none.
    let changedump = std::fs::read_to_string(dir.join("changedump.xml")).unwrap();
    assert!(
        changedump.contains("capability=\"changedump\" from=\""),
        "{changedump}"
    );
    assert_eq!(changedump.matches("<url>").count(), 1, "{changedump}");
    let zip = dir.join(format!("changedump/{day}.zip"));
    let t = Command::new("unzip")
        .arg("-t")
        .arg(&zip)
        .output()
        .expect("unzip: run scripts/setup");
    assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stdout));
    let manifest =
        std::fs::read_to_string(dir.join(format!("changedump/{day}-manifest.xml"))).unwrap();
    assert!(
        manifest.contains("capability=\"changedump-manifest\" from=\"")
            && manifest.contains("until=\""),
        "{manifest}"
    );
    assert!(
        manifest.contains("change=\"updated\"") && manifest.contains("path=\"/d/test/"),
        "{manifest}"
    );
    let inside = Command::new("unzip")
        .arg("-p")
        .arg(&zip)
        .arg("manifest.xml")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&inside.stdout), manifest);
    // Closed lists and their dumps are never rewritten.
    std::fs::write(
        &old,
        closed.replace("http://old.example", "http://kept.example"),
    )
    .unwrap();
    let o = env.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("0 dump packages written"),
        "{}",
        text(&o)
    );
    assert!(
        std::fs::read_to_string(&old)
            .unwrap()
            .contains("kept.example")
    );
}

#[test]
fn published_documents_validate_against_the_projects_schemas() {
    let base: Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| match r.path.as_str() {
        "/feed.xml" => {
            let b = b2.get().unwrap();
            Response::ok(
                feed(&[
                    TestItem::new("a", &date(2), &format!("{b}/a.html")).content(
                        &format!("{b}/a.pdf"),
                        "application/pdf",
                        b"%PDF-1.4 a\n",
                    ),
                    TestItem::new("b", &date(1), &format!("{b}/b.html?x=1&y=2")),
                ])
                .replacen(">gratis<", ">restricted<", 1),
            )
        }
        p if p.ends_with(".pdf") => Response::file(&b"%PDF-1.4 a\n"[..], "application/pdf"),
        p => Response::file(format!("<html>{p}</html>"), "text/html"),
    });
    let _ = base.set(server.url(""));
    let env = Env::plain("schemas", &server.url("/feed.xml"), "");
    assert_eq!(env.harvest().status.code(), Some(0));
    assert_eq!(env.cmd(&["publish"]).status.code(), Some(0));
    let schema = root().join("schemas/sitemap-resourcesync.xsd");
    let xmllint = |file: &Path| {
        Command::new("xmllint")
            .arg("--noout")
            .arg("--schema")
            .arg(&schema)
            .arg(file)
            .output()
            .unwrap_or_else(|e| {
                panic!("xmllint ({e}): run scripts/setup, it installs libxml2-utils")
            })
    };
    let www = env.data().join("www");
    let docs = files(&www);
    assert!(
        docs.len() >= 10,
        "{:?}",
        docs.iter().map(|d| &d.0).collect::<Vec<_>>()
    );
    // Metadata records (made from the catalog when served) are DCMI Terms records, not
    // Sitemaps: well-formed is checked.
    let versions = env.sql("SELECT id, metadata FROM versions WHERE state = 'deposited'");
    assert!(!versions.is_empty());
    for v in versions {
        let record = env.dir.join(format!("record-{}.xml", v[0]));
        std::fs::write(&record, plikt::resourcesync::record_bytes(&v[1]).unwrap()).unwrap();
        let o = Command::new("xmllint")
            .arg("--noout")
            .arg(&record)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "record of version {}: {}",
            v[0],
            String::from_utf8_lossy(&o.stderr)
        );
    }
    for (rel, _) in docs.iter().filter(|(rel, _)| !rel.ends_with(".zip")) {
        let o = xmllint(&www.join(rel));
        assert!(
            o.status.success(),
            "{rel}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // The check can fail: a time without `Z` and an unknown capability are rejected.
    let rl = std::fs::read_to_string(www.join("resourcesync/test/resourcelist.xml")).unwrap();
    let bad = env.dir.join("bad.xml");
    std::fs::write(&bad, rl.replacen("Z\"", "+01:00\"", 1)).unwrap();
    assert!(!xmllint(&bad).status.success());
    std::fs::write(&bad, rl.replace("\"resourcelist\"", "\"resource-list\"")).unwrap();
    assert!(!xmllint(&bad).status.success());
}

/// Adds `extra` stored files to the deposited version (same blob, other URLs).
fn add_files(env: &Env, extra: u64) {
    env.execute(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {extra})
         INSERT INTO files (version_id, ord, role, url, state, sha256, length, md5, fetched_at, content_type)
         SELECT f.version_id, n.i, 'content', 'http://p.example/f/' || n.i, 'stored', f.sha256, f.length,
                f.md5, f.fetched_at, 'text/html'
         FROM n, (SELECT * FROM files LIMIT 1) f;"
    ));
}

#[test]
fn snapshots_share_unchanged_parts_and_retention_relinks_them() {
    let (_server, env) = one_item_harvested("parts-days");
    add_files(&env, plikt::resourcesync::PART_ENTRIES + 9);
    let dir = env.data().join("www/resourcesync/test");
    let day = |n: i64| {
        (chrono::Utc::now() - chrono::Duration::days(n))
            .format("%Y-%m-%d")
            .to_string()
    };
    let publish_on = |n: i64| {
        let o = plikt_at(&env, &format!("{} 12:00:00", day(n)), &["publish"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    };
    publish_on(3);
    let first = listed(&dir, &format!("resourcelist/{}.xml", day(3)));
    assert_eq!(first.len(), 2);
    // Two days later one new deposit: the first part is shared, not written again.
    add_deposit(
        &env,
        "late",
        "http://p.example/late",
        "2026-11-22T00:00:00.000Z",
    );
    publish_on(1);
    let second = listed(&dir, &format!("resourcelist/{}.xml", day(1)));
    assert_eq!(second[0], first[0]);
    assert_ne!(second[1], first[1]);
    // Both snapshots are there, and what each lists exists.
    for p in first.iter().chain(&second) {
        assert!(p.exists(), "{}", p.display());
    }
    let shared = std::fs::read_to_string(&first[0]).unwrap();
    assert!(
        shared.contains(&format!("resourcelist/{}.xml\"", day(3))),
        "{shared}"
    );
    // Keep one day: day -3's snapshot leaves the archive and the disk, with the part
    // only it listed; the shared part now links day -1's index.
    let cfg = std::fs::read_to_string(&env.config).unwrap();
    std::fs::write(
        &env.config,
        format!("{cfg}\n[resourcesync]\nsnapshot_retention_days = 1\n"),
    )
    .unwrap();
    assert_eq!(env.cmd(&["publish"]).status.code(), Some(0));
    assert!(!dir.join(format!("resourcelist/{}.xml", day(3))).exists());
    assert!(
        !first[1].exists(),
        "a part only an expired snapshot listed was kept"
    );
    let archive = std::fs::read_to_string(dir.join("resourcelist-archive.xml")).unwrap();
    assert!(
        !archive.contains(&day(3)) && archive.contains(&day(1)),
        "{archive}"
    );
    let relinked = std::fs::read_to_string(&first[0]).unwrap();
    assert!(
        relinked.contains(&format!(
            "rel=\"index\" href=\"http://127.0.0.1:8080/resourcesync/test/resourcelist/{}.xml\"",
            day(1)
        )),
        "{}",
        &relinked[..600]
    );
}

#[test]
fn a_large_resource_list_is_split_under_an_index() {
    let (_server, env) = one_item_harvested("index");
    // 20,009 more stored files in the deposited version (same blob, other URLs).
    add_files(&env, plikt::resourcesync::PART_ENTRIES + 9);
    let o = env.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let dir = env.data().join("www/resourcesync/test");
    let index = std::fs::read_to_string(dir.join("resourcelist.xml")).unwrap();
    assert!(
        index.contains("<sitemapindex"),
        "{}",
        &index[..500.min(index.len())]
    );
    assert_eq!(index.matches("<sitemap>").count(), 2, "{index}");
    // The live index is a copy of today's snapshot, over parts named by their content.
    let day = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let parts = listed(&dir, "resourcelist.xml");
    assert_eq!(parts.len(), 2, "{parts:?}");
    for p in &parts {
        let name = p.file_name().unwrap().to_str().unwrap();
        assert!(
            name.len() == 20
                && name.ends_with(".xml")
                && p.parent().unwrap().ends_with("resourcelist"),
            "{name}"
        );
    }
    assert_eq!(
        std::fs::read(dir.join(format!("resourcelist/{day}.xml"))).unwrap(),
        index.as_bytes()
    );
    let part1 = std::fs::read_to_string(&parts[0]).unwrap();
    let part2 = std::fs::read_to_string(&parts[1]).unwrap();
    // The deposit's record comes before its first file, once.
    assert_eq!(
        part1.matches("<url>").count() as u64,
        plikt::resourcesync::PART_ENTRIES + 1
    );
    assert_eq!(part2.matches("<url>").count(), 10);
    assert_eq!(
        index.matches("metadata.xml").count()
            + part1.matches("metadata.xml</loc>").count()
            + part2.matches("metadata.xml</loc>").count(),
        1
    );
    for part in [&part1, &part2] {
        assert!(part.contains(&format!(
            "rel=\"index\" href=\"http://127.0.0.1:8080/resourcesync/test/resourcelist/{day}.xml\""
        )));
        assert!(part.contains("rel=\"up\""));
    }
    for doc in [
        dir.join("resourcelist.xml"),
        parts[0].clone(),
        parts[1].clone(),
    ] {
        let doc = doc.display().to_string();
        let o = Command::new("xmllint")
            .arg("--noout")
            .arg("--schema")
            .arg(root().join("schemas/sitemap-resourcesync.xsd"))
            .arg(&doc)
            .output()
            .expect("xmllint: run scripts/setup");
        assert!(
            o.status.success(),
            "{doc}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // The Resource Dump: packages of at most PART_ENTRIES files (a manifest is a Sitemap
    // document: at most 50,000 entries), however small the files.
    let packages: Vec<_> = listed(&dir, "resourcedump.xml")
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "zip"))
        .collect();
    assert_eq!(packages.len(), 2, "{packages:?}");
    let m1 = package_manifest(&packages[0]);
    let m2 = package_manifest(&packages[1]);
    assert_eq!(
        m1.matches("<url>").count() as u64,
        plikt::resourcesync::PART_ENTRIES + 1
    );
    assert_eq!(m2.matches("<url>").count(), 10);
    let dump = std::fs::read_to_string(dir.join("resourcedump.xml")).unwrap();
    assert_eq!(dump.matches("<url>").count(), 2, "{dump}");
    let (part1_path, part2_path) = (parts[0].clone(), parts[1].clone());
    // Publishing again with nothing changed rewrites no part.
    let before = std::fs::metadata(&part1_path).unwrap().modified().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(env.cmd(&["publish"]).status.code(), Some(0));
    let after = std::fs::metadata(&part1_path).unwrap().modified().unwrap();
    assert_eq!(before, after, "an unchanged Resource List was rewritten");
    // One more file in a new deposit (the end of the list): only the last part is new;
    // the first is listed again, not rewritten, and the replaced one is gone.
    add_deposit(
        &env,
        "late",
        "http://p.example/late",
        "2026-11-22T00:00:00.000Z",
    );
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(env.cmd(&["publish"]).status.code(), Some(0));
    let after = std::fs::metadata(&part1_path).unwrap().modified().unwrap();
    assert_eq!(before, after, "part 1 did not change but was rewritten");
    let now_parts = listed(&dir, "resourcelist.xml");
    assert_eq!(now_parts[0], part1_path);
    assert_ne!(now_parts[1], part2_path, "part 2 changed but kept its name");
    assert!(!part2_path.exists(), "a part no snapshot lists was kept");
    assert!(
        std::fs::read_to_string(&now_parts[1])
            .unwrap()
            .contains("p.example/late")
    );
    let part2_path = now_parts[1].clone();
    // Back under the limit (the large deposit's new version is restricted: it leaves
    // the public set): one document again, and the parts are gone.
    env.execute(
        "INSERT INTO versions (deposit_id, pub_date, pub_date_raw, item_hash, metadata, findings,
           conforming, access, state, found_run, found_at, deposited_at)
         SELECT deposit_id, '2030-01-01T00:00:00.000Z', 'x', 'h', '{}', '[]', 1, 'restricted',
           'deposited', found_run, found_at, found_at FROM versions ORDER BY id LIMIT 1;
         INSERT INTO files (version_id, ord, role, url, state, sha256, length, md5, fetched_at)
         SELECT (SELECT max(id) FROM versions), 0, 'link', url, 'stored', sha256, length, md5,
           fetched_at FROM files ORDER BY id LIMIT 1;
         INSERT INTO changes (version_id, deposit_id, publisher, change, at)
         SELECT id, deposit_id, 'test', 'updated', found_at FROM versions ORDER BY id DESC LIMIT 1;",
    );
    assert_eq!(env.cmd(&["publish"]).status.code(), Some(0));
    let single = std::fs::read_to_string(dir.join("resourcelist.xml")).unwrap();
    assert!(
        single.contains("<urlset") && single.matches("<url>").count() == 2,
        "{single}"
    );
    // The day's snapshot is the single list again; its parts are gone.
    assert_eq!(
        std::fs::read_to_string(dir.join(format!("resourcelist/{day}.xml"))).unwrap(),
        single
    );
    assert!(!part1_path.exists() && !part2_path.exists());
}

#[test]
fn resource_dumps_are_zip_packages_with_matching_manifests() {
    let base: Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| {
        let b = b2.get().unwrap();
        match r.path.as_str() {
            "/feed.xml" => Response::ok(feed(&[
                TestItem::new("a", &date(3), &format!("{b}/a.html")).content(
                    &format!("{b}/a.pdf"),
                    "application/pdf",
                    &[b'a'; 3000],
                ),
                TestItem::new("b", &date(2), &format!("{b}/b.html")).content(
                    &format!("{b}/b.pdf"),
                    "application/pdf",
                    &[b'b'; 3000],
                ),
            ])),
            "/a.pdf" => Response::file(vec![b'a'; 3000], "application/pdf"),
            "/b.pdf" => Response::file(vec![b'b'; 3000], "application/pdf"),
            p => Response::file(format!("<html>{p}</html>"), "text/html"),
        }
    });
    let _ = base.set(server.url(""));
    let env = Env::plain("dump", &server.url("/feed.xml"), "");
    let cfg = std::fs::read_to_string(&env.config).unwrap().replace(
        "[harvest]\n",
        "[resourcesync]\ndump_package_bytes = 9000\n[harvest]\n",
    );
    std::fs::write(&env.config, cfg).unwrap();
    assert_eq!(env.harvest().status.code(), Some(0));
    let o = env.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("2 dump packages written"),
        "{}",
        text(&o)
    );
    let dir = env.data().join("www/resourcesync/test");
    let dump = std::fs::read_to_string(dir.join("resourcedump.xml")).unwrap();
    assert!(
        dump.contains("capability=\"resourcedump\" at=\"") && dump.contains("completed=\""),
        "{dump}"
    );
    assert_eq!(dump.matches("<url>").count(), 2, "{dump}");
    let cap = std::fs::read_to_string(dir.join("capabilitylist.xml")).unwrap();
    assert!(cap.contains("resourcedump.xml"));
    let mut synced = 0;
    let packages: Vec<_> = listed(&dir, "resourcedump.xml")
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "zip"))
        .collect();
    assert_eq!(packages.len(), 2, "{packages:?}");
    for (n, zip) in packages.iter().enumerate() {
        let stem = zip.file_stem().unwrap().to_str().unwrap();
        let t = Command::new("unzip")
            .arg("-t")
            .arg(zip)
            .output()
            .expect("unzip: run scripts/setup");
        assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stdout));
        let bytes = std::fs::read(zip).unwrap();
        // Listed with its own length and hash, and a contents link to the manifest copy.
        assert!(
            dump.contains(&format!("length=\"{}\"", bytes.len())),
            "{dump}"
        );
        assert!(
            dump.contains(&format!("md5:{}", crate::support::md5_hex(&bytes))),
            "{dump}"
        );
        assert!(dump.contains(&format!("rel=\"contents\" href=\"http://127.0.0.1:8080/resourcesync/test/resourcedump/{stem}-manifest.xml\"")));
        let out = env.dir.join(format!("unzipped-{n}"));
        let x = Command::new("unzip")
            .arg("-q")
            .arg(zip)
            .arg("-d")
            .arg(&out)
            .output()
            .unwrap();
        assert!(x.status.success());
        let inside = std::fs::read_to_string(out.join("manifest.xml")).unwrap();
        let copy =
            std::fs::read_to_string(dir.join(format!("resourcedump/{stem}-manifest.xml"))).unwrap();
        assert_eq!(inside, copy);
        assert!(
            inside.contains("capability=\"resourcedump-manifest\""),
            "{inside}"
        );
        // Every manifest path (leading `/`) is a file in the package with the stated length.
        for entry in inside.split("<url>").skip(1) {
            let path = entry
                .split("path=\"/")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            let length: usize = entry
                .split("length=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert_eq!(
                std::fs::read(out.join(path)).unwrap().len(),
                length,
                "{path}"
            );
            synced += 1;
        }
    }
    // 2 deposits: 4 files and 2 metadata records.
    assert_eq!(synced, 6);
    // Nothing changed: nothing is rewritten.
    let o = env.cmd(&["publish"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("0 dump packages written"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_large_change_list_is_split_under_an_index() {
    let (_server, env) = one_item_harvested("cl-index");
    // A version two days ago with PART_ENTRIES + 5 files, journalled that day.
    let two_days_ago = chrono::Utc::now() - chrono::Duration::days(2);
    let at = two_days_ago.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let day = two_days_ago.format("%Y-%m-%d").to_string();
    let n = plikt::resourcesync::PART_ENTRIES + 5;
    env.execute(&format!(
        "INSERT INTO versions (deposit_id, pub_date, pub_date_raw, item_hash, metadata, findings,
           conforming, access, state, found_run, found_at, deposited_at)
         SELECT deposit_id, '2020-01-01T00:00:00.000Z', 'x', 'h', '{{}}', '[]', 1, 'gratis',
           'deposited', found_run, '{at}', '{at}' FROM versions LIMIT 1;
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {n})
         INSERT INTO files (version_id, ord, role, url, state, sha256, length, md5, fetched_at)
         SELECT (SELECT max(id) FROM versions), n.i, 'content', 'http://old.example/' || n.i, 'stored',
           f.sha256, f.length, f.md5, '{at}' FROM n, (SELECT * FROM files WHERE state = 'stored' LIMIT 1) f;
         INSERT INTO changes (version_id, deposit_id, publisher, change, at)
         SELECT id, deposit_id, 'test', 'updated', '{at}' FROM versions WHERE id = (SELECT max(id) FROM versions);"
    ));
    let o = env.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let dir = env.data().join("www/resourcesync/test/changelist");
    let index = std::fs::read_to_string(dir.join(format!("{day}.xml"))).unwrap();
    assert!(
        index.contains("<sitemapindex") && index.contains("capability=\"changelist\""),
        "{index}"
    );
    assert!(index.contains("until=\""), "{index}");
    assert_eq!(index.matches("<sitemap>").count(), 2, "{index}");
    let part1 = std::fs::read_to_string(dir.join(format!("{day}-part-00001.xml"))).unwrap();
    let part2 = std::fs::read_to_string(dir.join(format!("{day}-part-00002.xml"))).unwrap();
    // The version's record is listed once, before its first file.
    assert_eq!(
        part1.matches("<url>").count() as u64,
        plikt::resourcesync::PART_ENTRIES + 1
    );
    assert_eq!(part2.matches("<url>").count(), 5);
    for part in [&part1, &part2] {
        assert!(part.contains(&format!(
            "rel=\"index\" href=\"http://127.0.0.1:8080/resourcesync/test/changelist/{day}.xml\""
        )));
    }
    // The day's Change Dump comes in parts too, each manifest within the limit, both
    // listed with the day's from and until.
    let dumps = env.data().join("www/resourcesync/test/changedump");
    let m1 = package_manifest(&dumps.join(format!("{day}-part-00001.zip")));
    let m2 = package_manifest(&dumps.join(format!("{day}-part-00002.zip")));
    assert_eq!(
        m1.matches("<url>").count() as u64,
        plikt::resourcesync::PART_ENTRIES + 1
    );
    assert_eq!(m2.matches("<url>").count(), 5);
    for m in [&m1, &m2] {
        assert!(m.contains("capability=\"changedump-manifest\""), "{m}");
        assert!(m.contains("until=\""), "{m}");
    }
    let change_dump =
        std::fs::read_to_string(env.data().join("www/resourcesync/test/changedump.xml")).unwrap();
    for n in [1, 2] {
        assert!(
            change_dump.contains(&format!("changedump/{day}-part-0000{n}.zip</loc>")),
            "{change_dump}"
        );
    }
    assert!(!dumps.join(format!("{day}.zip")).exists());
    // Closed days are packed once.
    let again = env.cmd(&["publish"]);
    assert!(
        String::from_utf8_lossy(&again.stdout).contains(" 0 dump packages written"),
        "{}",
        text(&again)
    );
    assert_eq!(
        std::fs::read_to_string(env.data().join("www/resourcesync/test/changedump.xml")).unwrap(),
        change_dump
    );
    for doc in [
        format!("{day}.xml"),
        format!("{day}-part-00001.xml"),
        format!("{day}-part-00002.xml"),
    ] {
        let o = Command::new("xmllint")
            .arg("--noout")
            .arg("--schema")
            .arg(root().join("schemas/sitemap-resourcesync.xsd"))
            .arg(dir.join(&doc))
            .output()
            .expect("xmllint: run scripts/setup");
        assert!(
            o.status.success(),
            "{doc}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// A dump package's manifest: the copy inside the ZIP (`unzip -p`), after checking the
/// package with `unzip -t` and that the copy beside it is byte for byte the same.
/// The files (in the set folder `dir` of publisher `test`) that a document of the set
/// lists in its `<loc>`s, in order.
fn listed(dir: &Path, doc: &str) -> Vec<std::path::PathBuf> {
    let text = std::fs::read_to_string(dir.join(doc)).unwrap();
    crate::support::locs(&text)
        .iter()
        .map(|url| {
            let rel = url.split_once("/resourcesync/test/").unwrap().1;
            dir.join(rel)
        })
        .collect()
}

fn package_manifest(zip: &Path) -> String {
    let t = Command::new("unzip")
        .arg("-tq")
        .arg(zip)
        .output()
        .expect("unzip: run scripts/setup");
    assert!(t.status.success(), "{}: {}", zip.display(), text(&t));
    let inside = Command::new("unzip")
        .arg("-p")
        .arg(zip)
        .arg("manifest.xml")
        .output()
        .expect("unzip: run scripts/setup");
    assert!(inside.status.success(), "{}", zip.display());
    let beside = zip.with_file_name(format!(
        "{}-manifest.xml",
        zip.file_stem().unwrap().to_str().unwrap()
    ));
    assert_eq!(
        std::fs::read(&beside).unwrap(),
        inside.stdout,
        "{}",
        beside.display()
    );
    String::from_utf8(inside.stdout).unwrap()
}

/// A publisher with one item, `a` (its link page), served on loopback.
pub fn one_item_publisher() -> Server {
    let base: Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| match r.path.as_str() {
        "/feed.xml" => Response::ok(feed(&[TestItem::new(
            "a",
            &date(0),
            &format!("{}/a.html", b2.get().unwrap()),
        )])),
        p => Response::file(format!("<html>{p}</html>"), "text/html"),
    });
    let _ = base.set(server.url(""));
    server
}

/// [`one_item_publisher`], harvested once.
fn one_item_harvested(name: &str) -> (Server, Env) {
    let server = one_item_publisher();
    let env = Env::plain(name, &server.url("/feed.xml"), "");
    assert_eq!(env.harvest().status.code(), Some(0));
    (server, env)
}

/// Adds a deposit with one deposited version of one stored file at `url` (the blob of
/// the first stored file), its change journalled as created at `at`.
pub fn add_deposit(env: &Env, guid: &str, url: &str, at: &str) {
    env.execute(&format!(
        "INSERT INTO deposits (publisher, guid, created_at) VALUES ('test', '{guid}', '{at}');
         INSERT INTO versions (deposit_id, pub_date, pub_date_raw, item_hash, metadata, findings,
           conforming, access, state, found_run, found_at, deposited_at)
         SELECT (SELECT max(id) FROM deposits), '{at}', 'x', 'h', '{{\"guid\": \"{guid}\"}}', '[]', 1,
           'gratis', 'deposited', found_run, '{at}', '{at}' FROM versions LIMIT 1;
         INSERT INTO files (version_id, ord, role, url, state, sha256, length, md5, fetched_at, content_type)
         SELECT (SELECT max(id) FROM versions), 0, 'content', '{url}', 'stored',
           sha256, length, md5, '{at}', 'text/html' FROM files WHERE state = 'stored' LIMIT 1;
         INSERT INTO changes (version_id, deposit_id, publisher, change, at)
         SELECT max(id), max(deposit_id), 'test', 'created', '{at}' FROM versions;"
    ));
}

/// The time of the first journalled change, moved by `seconds`.
pub fn first_change_moved(env: &Env, seconds: i64) -> String {
    let at = env.one("SELECT at FROM changes ORDER BY seq LIMIT 1");
    let t = chrono::DateTime::parse_from_rfc3339(&at).unwrap() + chrono::Duration::seconds(seconds);
    t.to_utc()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// `plikt audit` with the local folder reads every dump package its dumps list again
/// (issue 17 §4: every object re-read): a Resource Dump package of the live snapshot and
/// a Change Dump package that hold other bytes, or are gone, are named with what to
/// remove; doing exactly that and publishing writes each again byte for byte (its
/// manifest's times kept), so every snapshot that lists it, past days' too, keeps its
/// hash, and a Destination is served what the lists say. A package only a past
/// snapshot lists gets the advice to restore it from a backup, and restored it is clean.
#[test]
fn the_data_folders_dump_packages_are_audited_and_written_again_byte_for_byte_as_advised() {
    // An item harvested and published yesterday, deposits of the day before and of 40
    // days back written into the catalog (closed days with a Change Dump package each,
    // the older past the 31 days the live Change Dump lists), and one today:
    // today's snapshot packs the three deposits under another name than yesterday's, so
    // yesterday's package is listed by yesterday's snapshot only.
    let server = one_item_publisher();
    let env = Env::plain("package-audit", &server.url("/feed.xml"), "");
    let now = chrono::Utc::now();
    let ago = |days: i64| now - chrono::Duration::days(days);
    let stamp =
        |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let yesterday = ago(1).format("%Y-%m-%d").to_string();
    let o = plikt_at(&env, &format!("{yesterday} 12:00:00"), &["harvest"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let url = env.one("SELECT url FROM files LIMIT 1");
    add_deposit(&env, "old", &format!("{url}?old"), &stamp(ago(2)));
    add_deposit(&env, "older", &format!("{url}?older"), &stamp(ago(40)));
    let o = plikt_at(&env, &format!("{yesterday} 12:05:00"), &["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Every publish from here on runs at noon today, whenever the test runs (one that
    // crossed midnight would otherwise close today and pack it).
    let today = now.format("%Y-%m-%d").to_string();
    let publish = || plikt_at(&env, &format!("{today} 12:00:00"), &["publish"]);
    add_deposit(
        &env,
        "b",
        &format!("{url}?b"),
        &format!("{today}T11:00:00.000Z"),
    );
    let o = publish();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // The deposits written into the catalog by hand are counted in.
    env.cmd(&["audit", "--recount"]);
    let dir = env.data().join("www/resourcesync/test");
    let zips = |doc: &str| -> Vec<std::path::PathBuf> {
        listed(&dir, doc)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "zip"))
            .collect()
    };
    let [live] = &zips("resourcedump.xml")[..] else {
        panic!("not one package today: {:?}", zips("resourcedump.xml"));
    };
    let [past] = &zips(&format!("resourcedump/{yesterday}.xml"))[..] else {
        panic!("not one package yesterday");
    };
    assert_ne!(live, past, "yesterday's package is today's too");
    // The closed days': the day before yesterday's and yesterday's in the live Change
    // Dump, the 40th day back's in its own.
    let days = zips("changedump.xml");
    assert_eq!(days.len(), 2, "{days:?}");
    let changes = &days[0];
    let [oldest] = &zips(&format!("changedump/{}.xml", ago(40).format("%Y-%m-%d")))[..] else {
        panic!("not one package 40 days back");
    };
    let originals: Vec<(std::path::PathBuf, Vec<u8>)> = [live, past, oldest]
        .into_iter()
        .chain(&days)
        .map(|p| (p.clone(), std::fs::read(p).unwrap()))
        .collect();
    let clean = || {
        let (code, out) = env.audit();
        assert_eq!(code, Some(0), "{out}");
        assert!(
            out.contains("checked 5 dump packages in data_dir/www: 0 missing or other bytes"),
            "{out}"
        );
    };
    clean();
    // Below `www/`.
    let rel = |p: &Path| {
        p.strip_prefix(env.data().join("www"))
            .unwrap()
            .to_string_lossy()
            .to_string()
    };
    let line_of = |out: &str, p: &Path| crate::support::package_advice(out, &rel(p)).0;
    let damage = |p: &Path| {
        let mut bad = std::fs::read(p).unwrap();
        let at = bad.len() / 2;
        bad[at] ^= 0x20;
        std::fs::write(p, &bad).unwrap();
    };
    // As the audit says: the files it names removed, then a publish; the package is
    // then byte for byte what it was, and the audit is clean.
    let as_advised = |p: &Path, wrong: &str, named: usize| {
        let (code, out) = env.audit();
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains("1 missing or other bytes"), "{out}");
        let (line, files) = crate::support::package_advice(&out, &rel(p));
        assert!(line.contains(wrong), "{line}");
        assert!(line.contains("byte for byte as listed"), "{line}");
        assert_eq!(files.len(), named, "{line}");
        for f in files {
            std::fs::remove_file(env.data().join(f)).unwrap();
        }
        let o = publish();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let (_, original) = originals.iter().find(|(o, _)| o == p).unwrap();
        assert!(
            std::fs::read(p).unwrap() == *original,
            "{} was written again with other bytes",
            rel(p)
        );
        clean();
    };
    // Other bytes, then gone outright: the live snapshot's package and the Change
    // Dumps' (the oldest one's only once the mark of the last day packed is gone too).
    for p in [live, changes, oldest] {
        damage(p);
        as_advised(p, "and the file holds", 3);
        std::fs::remove_file(p).unwrap();
        as_advised(p, "and the file is missing", 2);
    }
    let (code, out) = {
        damage(oldest);
        env.audit()
    };
    assert_eq!(code, Some(1), "{out}");
    assert!(
        line_of(&out, oldest).contains("changedump/.closed`"),
        "{out}"
    );
    std::fs::remove_file(oldest).unwrap();
    std::fs::remove_file(dir.join(".published")).unwrap();
    let o = publish();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        !oldest.exists(),
        "the oldest day was packed again without its mark removed"
    );
    as_advised(oldest, "and the file is missing", 2);
    // A Change Dump package's sidecar gone: the day is packed again, sidecar and all.
    let stem = changes.file_stem().unwrap().to_string_lossy().to_string();
    std::fs::remove_file(changes.with_file_name(format!(".{stem}.meta"))).unwrap();
    as_advised(changes, "is gone", 3);
    // Listed by yesterday's snapshot only: plikt cannot write it again; restored from
    // a backup, it is as listed.
    damage(past);
    let (code, out) = env.audit();
    assert_eq!(code, Some(1), "{out}");
    let line = line_of(&out, past);
    assert!(
        line.contains(&format!(
            "only the Resource Dump snapshots of {yesterday} list it"
        )) && line.contains("restore it from a backup of data_dir/www"),
        "{line}"
    );
    let (_, original) = originals.iter().find(|(o, _)| o == past).unwrap();
    std::fs::write(past, original).unwrap();
    clean();
    // A Destination is served each package as it was listed.
    let srv = serve(&env);
    for (p, bytes) in &originals {
        let url = format!("{}{}", srv.base, rel(p));
        let (head, body) = get(&url);
        assert!(head.starts_with("HTTP/1.1 200"), "{url}: {head}");
        assert!(body == *bytes, "{url} is served with other bytes");
    }
}

#[test]
fn publishing_without_dumps_writes_the_lists_and_leaves_the_dumps_as_they_were() {
    let (_server, env) = one_item_harvested("nodumps");
    let dir = env.data().join("www/resourcesync/test");
    let o = env.cmd(&["publish", "--no-dumps"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("0 dump packages written"), "{}", text(&o));
    assert!(dir.join("resourcelist.xml").exists());
    assert!(dir.join("changelist.xml").exists());
    assert!(!dir.join("resourcedump.xml").exists());
    assert!(!dir.join("changedump.xml").exists());
    // A plain publish writes them.
    assert_eq!(env.cmd(&["publish"]).status.code(), Some(0));
    let dump = std::fs::read(dir.join("resourcedump.xml")).unwrap();
    let first_package = listed(&dir, "resourcedump.xml").remove(0);
    let package = std::fs::read(&first_package).unwrap();
    // A new deposit, published without dumps: in the lists, not in the dump.
    let at = first_change_moved(&env, 1);
    add_deposit(&env, "later", "http://p.example/later", &at);
    let o = env.cmd(&["publish", "--no-dumps"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for list in ["resourcelist.xml", "changelist.xml"] {
        let doc = std::fs::read_to_string(dir.join(list)).unwrap();
        assert!(doc.contains("p.example/later"), "{list}: {doc}");
    }
    assert_eq!(std::fs::read(dir.join("resourcedump.xml")).unwrap(), dump);
    assert_eq!(std::fs::read(&first_package).unwrap(), package);
    // The next plain publish brings the dump up to date: a new package (named by its
    // content) with the new deposit.
    assert_eq!(env.cmd(&["publish"]).status.code(), Some(0));
    assert_ne!(std::fs::read(dir.join("resourcedump.xml")).unwrap(), dump);
    let manifest = package_manifest(&listed(&dir, "resourcedump.xml").remove(0));
    assert!(manifest.contains("p.example/later"), "{manifest}");
}

#[test]
fn change_list_entries_are_in_forward_chronological_order() {
    // §12: a change journalled later but dated earlier (a clock step, or a change
    // committed late) is listed before the later ones.
    let (_server, env) = one_item_harvested("chrono");
    let at = first_change_moved(&env, -1);
    add_deposit(&env, "earlier", "http://p.example/earlier", &at);
    let o = env.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let list =
        std::fs::read_to_string(env.data().join("www/resourcesync/test/changelist.xml")).unwrap();
    let times: Vec<&str> = list
        .split("<lastmod>")
        .skip(1)
        .map(|s| s.split('<').next().unwrap())
        .collect();
    assert_eq!(times.len(), 4, "{list}");
    assert!(times.is_sorted(), "{times:?}\n{list}");
    let earlier = list.find("p.example/earlier").expect("listed");
    let harvested = list.find("/a.html").expect("listed");
    assert!(earlier < harvested, "{list}");
}

/// The `<loc>` of the first `<url>` of `list` that contains `needle`.
fn loc_of(list: &str, needle: &str) -> String {
    list.split("<url>")
        .find(|u| u.contains(needle))
        .and_then(|u| u.split("<loc>").nth(1))
        .and_then(|u| u.split('<').next())
        .unwrap_or_else(|| panic!("no <url> with {needle} in {list}"))
        .to_string()
}

/// `published N sets (U unchanged since the last publish): …` of a `plikt publish`.
fn sets_and_unchanged(o: &std::process::Output) -> (u64, u64) {
    assert_eq!(o.status.code(), Some(0), "{}", text(o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let n = |after: &str, before: &str| -> u64 {
        out.split_once(after)
            .and_then(|(_, rest)| rest.split_once(before))
            .and_then(|(n, _)| n.parse().ok())
            .unwrap_or_else(|| panic!("no `{after}N{before}` in {out}"))
    };
    (n("published ", " sets"), n("sets (", " unchanged"))
}

#[test]
fn a_publish_rewrites_the_sets_that_changed_and_every_set_when_a_day_closes() {
    // A publish follows every run of every publisher; it leaves alone the sets that
    // nothing changed since it last wrote them, so that its cost follows the changes
    // (BENCHMARKS "A publish after one publisher's run").
    let (_server, env) = one_item_harvested("unchanged-sets");
    let env = env.with_config(
        "[[publisher]]\nid = \"other\"\nname = \"Andra AB\"\nfeed = \"http://127.0.0.1:9/feed.xml\"\nhttps_only = false\nallow_private = true\nschedule = \"0 0 3 * * *\"",
    );
    let dir = env.data().join("www/resourcesync/test");
    assert_eq!(sets_and_unchanged(&env.cmd(&["publish"])), (4, 0));
    assert_eq!(sets_and_unchanged(&env.cmd(&["publish"])), (4, 4));
    // A change of `test`'s public set: its two sets are written again (the restricted
    // one shares the publisher's journal position), `other`'s are not.
    let at = first_change_moved(&env, 1);
    add_deposit(&env, "later", "http://p.example/later", &at);
    assert_eq!(sets_and_unchanged(&env.cmd(&["publish"])), (4, 2));
    for doc in ["changelist.xml", "resourcelist.xml"] {
        let text = std::fs::read_to_string(dir.join(doc)).unwrap();
        assert!(text.contains("p.example/later"), "{doc}: {text}");
    }
    // The next UTC day: today's changes go into a closed Change List, listed in the
    // archive; every set is written again, then left alone until the next change.
    let today = chrono::Utc::now().date_naive();
    let tomorrow = today.succ_opt().unwrap();
    let when = format!("{tomorrow} 01:00:00");
    assert_eq!(
        sets_and_unchanged(&plikt_at(&env, &when, &["publish"])),
        (4, 0)
    );
    let closed = std::fs::read_to_string(dir.join(format!("changelist/{today}.xml"))).unwrap();
    assert!(closed.contains("p.example/later"), "{closed}");
    let archive = std::fs::read_to_string(dir.join("changelist-archive.xml")).unwrap();
    assert!(
        archive.contains(&format!("changelist/{today}.xml")),
        "{archive}"
    );
    let open = std::fs::read_to_string(dir.join("changelist.xml")).unwrap();
    assert!(!open.contains("p.example/later"), "{open}");
    let other = std::fs::read_to_string(
        env.data()
            .join("www/resourcesync/other/changelist-archive.xml"),
    )
    .unwrap();
    assert!(
        !other.contains("<url>"),
        "no change, no closed day: {other}"
    );
    assert_eq!(
        sets_and_unchanged(&plikt_at(&env, &when, &["publish"])),
        (4, 4)
    );
    // The day after: the days closed before are not looked at again, yet both are in
    // the archives, and the live Change Dump still lists the package of today's changes.
    let after = tomorrow.succ_opt().unwrap();
    assert_eq!(
        sets_and_unchanged(&plikt_at(&env, &format!("{after} 01:00:00"), &["publish"])),
        (4, 0)
    );
    for kind in ["changelist", "changedump"] {
        let archive = std::fs::read_to_string(dir.join(format!("{kind}-archive.xml"))).unwrap();
        assert_eq!(archive.matches("<url>").count(), 2, "{archive}");
        for day in [today, tomorrow] {
            assert!(archive.contains(&format!("{kind}/{day}.xml")), "{archive}");
        }
    }
    let live = std::fs::read_to_string(dir.join("changedump.xml")).unwrap();
    assert!(live.contains(&format!("changedump/{today}.zip")), "{live}");
}

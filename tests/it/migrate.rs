//! Moving up (issue 17 §5): `plikt migrate` copies a SQLite catalog and its blob folder
//! into PostgreSQL (a cluster of the test's own) and a real Garage, survives SIGKILL and
//! goes on where it stopped, and refuses to call a damaged copy a success.

use std::time::Duration;

use object_store::ObjectStore;

use crate::support::{
    Env, Garage, OwnPostgres, Response, Server, Serving, TestItem, date, feed, own_catalog, text,
};

// Enough files (two an item) that a copy lasts a few seconds, to be killed in the middle.
const ITEMS: usize = 1500;

fn file(i: usize) -> Vec<u8> {
    format!("innehåll {i} ").repeat(40 + i % 50).into_bytes()
}

#[test]
fn migrate_copies_resumes_after_sigkill_verifies_and_the_copy_works() {
    let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| {
        let base = b2.get().unwrap();
        if r.path == "/feed.xml" {
            let items: Vec<TestItem> = (0..ITEMS)
                .map(|i| {
                    TestItem::new(
                        &format!("m-{i}"),
                        &date(1000 - i as i64),
                        &format!("{base}/page/{i}.html"),
                    )
                    .content(
                        &format!("{base}/file/{i}.txt"),
                        "text/plain",
                        &file(i),
                    )
                })
                .collect();
            return Response::ok(feed(&items));
        }
        if let Some(i) = r
            .path
            .strip_prefix("/file/")
            .and_then(|p| p.strip_suffix(".txt"))
        {
            return Response::file(file(i.parse().unwrap()), "text/plain");
        }
        Response::file(format!("<html><body>{}</body></html>", r.path), "text/html")
    });
    let _ = base.set(server.url(""));

    // The source: SQLite and the local folder, plikt's default.
    let source = Env::plain("migrate-source", &server.url("/feed.xml"), "");
    if let Some(url) = &source.postgres {
        let cfg = std::fs::read_to_string(&source.config)
            .unwrap()
            .replace(&format!("[catalog]\nurl = \"{url}\"\n"), "");
        std::fs::write(&source.config, cfg).unwrap();
    }
    let o = source.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Its published documents: what Destinations have seen, archives included.
    let o = source.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let sqlite = |q: &str| -> String {
        let c = rusqlite::Connection::open(source.data().join("catalog.sqlite")).unwrap();
        c.query_row(q, [], |r| r.get::<_, i64>(0))
            .unwrap()
            .to_string()
    };
    assert_eq!(
        sqlite("SELECT count(*) FROM versions WHERE state = 'deposited'"),
        ITEMS.to_string()
    );

    // The target: PostgreSQL and Garage.
    let pg = OwnPostgres::start();
    let mut target = Env::plain("migrate-target", &server.url("/feed.xml"), "");
    own_catalog(&mut target, &pg, "migrate");
    let garage = Garage::start("migrate");
    let target = garage.configure(target, "kb/", "");
    let from = source.data();
    let migrate = |env: &Env| {
        let mut c = crate::support::plikt();
        c.args(["migrate", "--config"])
            .arg(&env.config)
            .arg("--from")
            .arg(&from);
        for (k, v) in &env.env {
            c.env(k, v);
        }
        c
    };

    // Killed while it copies, then run again: it goes on and succeeds.
    let mut child = migrate(&target)
        .stdout(std::process::Stdio::from(
            std::fs::File::create(target.dir.join("migrate-1.out")).unwrap(),
        ))
        .stderr(std::process::Stdio::from(
            std::fs::File::create(target.dir.join("migrate-1.log")).unwrap(),
        ))
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let ended = child.try_wait().unwrap();
    let killed = ended.is_none();
    child.kill().ok();
    child.wait().unwrap();
    assert!(
        killed,
        "migrate ended within 700 ms ({ended:?}): the interruption was not tested: {}{}",
        std::fs::read_to_string(target.dir.join("migrate-1.out")).unwrap_or_default(),
        std::fs::read_to_string(target.dir.join("migrate-1.log")).unwrap_or_default()
    );
    let o = migrate(&target).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("verified: every row count"), "{out}");
    assert!(out.contains(&format!("versions: {ITEMS} rows")), "{out}");
    // The collection's identity moved with it (the object store knows it by that).
    let source_id: String = rusqlite::Connection::open(source.data().join("catalog.sqlite"))
        .unwrap()
        .query_row("SELECT id FROM catalog_identity", [], |r| r.get(0))
        .unwrap();
    assert_eq!(source_id.len(), 32, "{source_id}");
    assert_eq!(target.one("SELECT id FROM catalog_identity"), source_id);
    // The numbers status shows moved with the rows.
    target.assert_tallies_match_a_recount();
    assert_eq!(
        target.status()["deposits"].as_u64(),
        Some(ITEMS as u64),
        "{out}"
    );
    // The published documents moved too: every one of the source's is in the object
    // store with its length, where every node serves it from.
    assert!(out.contains("documents: "), "{out}");
    let stored: std::collections::BTreeMap<String, u64> =
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async {
                use futures_util::TryStreamExt;
                garage
                    .client()
                    .list(Some(&object_store::path::Path::from("kb/www")))
                    .map_ok(|o| (o.location.to_string(), o.size))
                    .try_collect()
                    .await
                    .unwrap()
            });
    let www = from.join("www");
    let (mut documents, mut packages) = (0, 0);
    for e in walk(&www) {
        let rel = e.strip_prefix(&www).unwrap().to_string_lossy().into_owned();
        let name = e.file_name().unwrap().to_string_lossy().into_owned();
        if name == ".publish.lock" || name.ends_with(".tmp") {
            continue;
        }
        let len = std::fs::metadata(&e).unwrap().len();
        assert_eq!(
            stored.get(&format!("kb/www/{rel}")),
            Some(&len),
            "{rel}: {stored:?}"
        );
        documents += 1;
        // The new folder keeps a stub of each dump package, which the object store has.
        if rel.ends_with(".zip") {
            packages += 1;
            let here = std::fs::read_to_string(target.data().join("www").join(&rel)).unwrap();
            assert!(
                here.starts_with("plikt: a dump package kept in the object store only")
                    && here.contains(&format!("\nlength: {len}\n")),
                "{rel}: {here}"
            );
        }
    }
    assert!(documents > 5, "{documents}");
    assert!(packages > 0, "no dump package moved");

    // The copy is the collection: counts, the journal, an audit that re-reads every
    // object, and a re-harvest of the unchanged feed deposits nothing new.
    for q in [
        "SELECT count(*) FROM versions",
        "SELECT count(*) FROM files",
        "SELECT count(*) FROM changes",
        "SELECT count(*) FROM blobs",
        "SELECT count(*) FROM runs",
    ] {
        assert_eq!(target.one(q), sqlite(q), "{q}");
    }
    let o = target.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(" 0 missing, 0 corrupt"),
        "{}",
        text(&o)
    );
    let o = target.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(" 0 new versions"),
        "{}",
        text(&o)
    );
    assert_eq!(
        target.one("SELECT count(*) FROM versions"),
        ITEMS.to_string()
    );
    // New ids come after the copied ones.
    let runs: i64 = target.one("SELECT max(id) FROM runs").parse().unwrap();
    let copied: i64 = sqlite("SELECT max(id) FROM runs").parse().unwrap();
    assert_eq!(runs, copied + 1);

    // The small files went into packs as a harvest puts them: one PUT for hundreds.
    assert_eq!(
        target.one("SELECT count(*) FROM blobs WHERE pack IS NULL"),
        "0"
    );
    let packs: usize = target
        .one("SELECT count(DISTINCT pack) FROM blobs")
        .parse()
        .unwrap();
    assert!((1..=ITEMS / 100).contains(&packs), "{packs} packs");

    // A pack damaged behind plikt's back: migrate does not call the copy a success.
    let (sha, pack) = {
        let row = target.sql("SELECT sha256, pack FROM blobs ORDER BY sha256 LIMIT 1");
        (row[0][0].clone(), row[0][1].clone())
    };
    let client = garage.client();
    let key = object_store::path::Path::from(format!("kb/packs/{}/{pack}", &pack[..2]));
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(client.put(&key, bytes::Bytes::from_static(b"not the bytes").into()))
        .unwrap();
    let o = migrate(&target).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(&format!("DIFFERS: blob {sha}")), "{out}");

    // The same folder as source and target is refused.
    let o = source.cmd(&["migrate", "--from", source.data().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("the target is the source"),
        "{}",
        text(&o)
    );
}

/// Every file below `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `plikt migrate` with the configuration that keeps its data folder (`data_dir` the
/// folder `--from` names, `[catalog]` and `[blobs]` added): the folder's published
/// documents go to the object store too, so `plikt serve` answers from it at once; and a
/// folder a `plikt run` is writing to is refused, not copied from under it.
#[test]
fn migrate_in_place_sends_the_documents_and_refuses_a_folder_in_use() {
    let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let server = Server::with_handler(move |r| {
        let base = b2.get().unwrap();
        if r.path == "/feed.xml" {
            let items: Vec<TestItem> = (0..20)
                .map(|i| {
                    TestItem::new(&format!("p-{i}"), &date(100 - i), &format!("{base}/p/{i}"))
                        .content(
                            &format!("{base}/f/{i}.txt"),
                            "text/plain",
                            &file(i as usize),
                        )
                })
                .collect();
            return Response::ok(feed(&items));
        }
        match r
            .path
            .strip_prefix("/f/")
            .and_then(|p| p.strip_suffix(".txt"))
        {
            Some(i) => Response::file(file(i.parse().unwrap()), "text/plain"),
            None => Response::file(format!("<html><body>{}</body></html>", r.path), "text/html"),
        }
    });
    let _ = base.set(server.url(""));
    let source = Env::plain("migrate-in-place", &server.url("/feed.xml"), "");
    if let Some(url) = &source.postgres {
        source.replace_in_config(&format!("[catalog]\nurl = \"{url}\"\n"), "");
    }
    let served = source.listen_on_free_port();
    let o = source.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = source.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    // The same folder under a configuration that moves up.
    let pg = OwnPostgres::start();
    let mut moved = Env {
        dir: source.dir.clone(),
        config: source.dir.join("moved.toml"),
        env: Vec::new(),
        postgres: None,
    };
    std::fs::copy(&source.config, &moved.config).unwrap();
    own_catalog(&mut moved, &pg, "in_place");
    let garage = Garage::start("migrate-in-place");
    let moved = garage.configure(moved, "kb/", "");
    let migrate = || moved.cmd(&["migrate", "--from", source.data().to_str().unwrap()]);

    // While `plikt run` writes to the folder, migrate refuses it and copies nothing.
    let mut run = source.spawn(&["run"]);
    let lock = source.data().join("lock");
    let held = (0..200).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        std::fs::File::open(&lock)
            .is_ok_and(|f| matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock)))
    });
    assert!(held, "plikt run never took {}", lock.display());
    let o = migrate();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("locked by another plikt process"),
        "{}",
        text(&o)
    );
    // Refused before the target was touched: not even its tables were made.
    assert_eq!(
        moved.one("SELECT count(*) FROM information_schema.tables WHERE table_name = 'versions'"),
        "0"
    );
    run.kill().unwrap();
    run.wait().unwrap();

    // Stopped: the copy, and the folder's documents in the object store.
    let o = migrate();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let sent: u64 = out
        .split("documents: 0 copied into ")
        .nth(1)
        .and_then(|rest| rest.split(", ").nth(1))
        .and_then(|n| n.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no documents line: {out}"));
    assert!(sent > 5, "{out}");
    // Served from the object store, as by any node: the Source Description, and a dump
    // package whole (the folder now keeps a stub of it).
    let serving = Serving::start(&moved, &served);
    let (status, _, body) = crate::support::get(&format!("{served}.well-known/resourcesync"), None);
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let www = source.data().join("www");
    let package = walk(&www)
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "zip"))
        .expect("a dump package");
    let rel = package
        .strip_prefix(&www)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let stub = std::fs::read_to_string(&package).unwrap();
    assert!(
        stub.starts_with("plikt: a dump package kept in the object store only"),
        "{stub}"
    );
    let (status, _, body) = crate::support::get(&format!("{served}{rel}"), None);
    assert_eq!(status, 200, "{rel}");
    assert!(body.starts_with(b"PK"), "{rel} is not served whole");
    assert!(
        stub.contains(&format!("\nlength: {}\n", body.len())),
        "{stub}"
    );
    serving.stop();
    let o = moved.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

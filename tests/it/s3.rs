//! Blobs on an S3-compatible object store (issue 17 §2), against a real one: Garage
//! 2.5.0 on loopback ([`Garage`]), never a mock. A harvest, the Destination's downloads,
//! dump packages, `plikt audit`, an object store that goes away, a crash mid-upload.

use std::time::{Duration, Instant};

use object_store::ObjectStore;
use object_store::path::Path as Key;
use sha2::Digest;

use crate::support::{
    Body, Env, Garage, OwnPostgres, Proxy, Response, Server, Serving, TestItem, TlsFront, date,
    feed, free_port, get, get_with, hold_publish_lock, locs, noise, noise_publisher, own_catalog,
    root, serve, text, wait_for_exit,
};

const HTML: &[u8] = b"<!DOCTYPE html><html><body>Artikel</body></html>";
const PDF: &[u8] =
    b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";

/// An EPUB with a DRM licence (`META-INF/rights.xml`): H-DRM reads its ZIP directory
/// back from the object store.
fn epub_with_drm() -> Vec<u8> {
    use std::io::Write;
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    z.start_file("mimetype", stored).unwrap();
    z.write_all(b"application/epub+zip").unwrap();
    z.start_file("META-INF/rights.xml", stored).unwrap();
    z.write_all(b"<rights/>").unwrap();
    z.start_file("OEBPS/chapter.xhtml", stored).unwrap();
    // Past one part (the tests use 5 MiB): uploaded in parts, read back by ranges.
    z.write_all(&noise((6 << 20) - 4096, 9)).unwrap();
    z.finish().unwrap().into_inner()
}

/// Objects under `prefix` in the bucket: (key, size).
fn objects(garage: &Garage, prefix: &str) -> Vec<(String, u64)> {
    let client = garage.client();
    let prefix = Key::from(prefix);
    runtime().block_on(async move {
        use futures_util::TryStreamExt;
        let mut v: Vec<(String, u64)> = client
            .list(Some(&prefix))
            .map_ok(|o| (o.location.to_string(), o.size))
            .try_collect()
            .await
            .unwrap();
        v.sort();
        v
    })
}

/// The SHA-256 kept with the object `key` as its metadata, as a HEAD gives it.
fn sha256_kept(garage: &Garage, key: &str) -> Option<String> {
    let (client, key) = (garage.client(), Key::from(key));
    let options = object_store::GetOptions {
        head: true,
        ..Default::default()
    };
    let got = runtime()
        .block_on(async move { client.get_opts(&key, options).await })
        .unwrap();
    got.attributes
        .get(&object_store::Attribute::Metadata("sha256".into()))
        .map(|v| v.to_string())
}

/// Puts `bytes` at `key` with `sha256` kept as its metadata, as plikt puts a package
/// (and as `rclone copy` keeps it).
fn put_with_sha256(garage: &Garage, key: &str, bytes: Vec<u8>, sha256: &str) {
    let mut attributes = object_store::Attributes::new();
    attributes.insert(
        object_store::Attribute::Metadata("sha256".into()),
        sha256.to_string().into(),
    );
    let options = object_store::PutOptions {
        attributes,
        ..Default::default()
    };
    runtime()
        .block_on(
            garage
                .client()
                .put_opts(&Key::from(key), bytes.into(), options),
        )
        .unwrap();
}

/// Another worker of `a`'s deployment: a folder of its own, `a`'s configuration, object
/// store credentials and catalog.
fn worker_like(a: &Env, name: &str, feed: &str) -> Env {
    let mut w = Env::plain(name, feed, "");
    std::fs::write(&w.config, std::fs::read_to_string(&a.config).unwrap()).unwrap();
    std::fs::copy(a.dir.join("s3-secret"), w.dir.join("s3-secret")).unwrap();
    w.env = a.env.clone();
    w.postgres = a.postgres.clone();
    w
}

/// The object `key` of the bucket, whole.
fn object(garage: &Garage, key: &str) -> Vec<u8> {
    let (client, key) = (garage.client(), Key::from(key));
    runtime()
        .block_on(async move { client.get(&key).await.unwrap().bytes().await })
        .unwrap()
        .to_vec()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn url_key(url: &str) -> String {
    hex::encode(sha2::Sha256::digest(url.as_bytes()))[..16].to_string()
}

#[test]
fn s3_harvest_streams_parts_stores_identical_bytes_once_serves_ranges_packs_and_audits() {
    let garage = Garage::start("harvest");
    // 12 MiB and a bit: three parts of 5 MiB, the last one short.
    let big = noise((12 << 20) + 123, 1);
    let epub = epub_with_drm();
    let (b2, e2) = (big.clone(), epub.clone());
    let publisher = serve(move |base| {
        let items = [
            TestItem::new("a-1", &date(4), &format!("{base}/a-1.html")).content(
                &format!("{base}/big.bin"),
                "application/octet-stream",
                &b2,
            ),
            // The same PDF under two URLs, and the same link page four times.
            TestItem::new("a-2", &date(3), &format!("{base}/a-2.html")).content(
                &format!("{base}/same-1.pdf"),
                "application/pdf",
                PDF,
            ),
            TestItem::new("a-3", &date(2), &format!("{base}/a-3.html")).content(
                &format!("{base}/same-2.pdf"),
                "application/pdf",
                PDF,
            ),
            TestItem::new("a-4", &date(1), &format!("{base}/a-4.html")).content(
                &format!("{base}/book.epub"),
                "application/epub+zip",
                &e2,
            ),
        ];
        let mut routes = vec![("/feed.xml".to_string(), Response::ok(feed(&items)))];
        for p in ["/a-1.html", "/a-2.html", "/a-3.html", "/a-4.html"] {
            routes.push((p.into(), Response::file(HTML, "text/html")));
        }
        routes.push((
            "/big.bin".into(),
            Response::file(b2.clone(), "application/octet-stream"),
        ));
        routes.push(("/same-1.pdf".into(), Response::file(PDF, "application/pdf")));
        routes.push(("/same-2.pdf".into(), Response::file(PDF, "application/pdf")));
        routes.push((
            "/book.epub".into(),
            Response::file(e2.clone(), "application/epub+zip"),
        ));
        routes
    });
    let env = Env::plain("s3-harvest", &publisher.url("/feed.xml"), "");
    let base = env.listen_on_free_port();
    let proxy = Proxy::start(garage.port);
    let env = garage.configure_through(&proxy, env, "kb/", "part_size_mib = 5");
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        env.one("SELECT count(*) FROM versions WHERE state = 'deposited'"),
        "4"
    );
    // Eight files, four distinct contents: four blobs; the two larger than 1 MiB each an
    // object of its own, the two small ones (the PDF, the link page) in packs (issue 17
    // §6), each once; nothing temporary.
    assert_eq!(
        env.one("SELECT count(*) FROM files WHERE state = 'stored'"),
        "8"
    );
    assert_eq!(env.one("SELECT count(*) FROM blobs"), "4");
    assert_eq!(
        env.one("SELECT count(*) FROM blobs WHERE pack IS NOT NULL"),
        "2"
    );
    let stored = objects(&garage, "kb/blobs");
    assert_eq!(stored.len(), 2, "{stored:?}");
    let packs = objects(&garage, "kb/packs");
    assert!(!packs.is_empty() && packs.len() <= 2, "{packs:?}");
    assert_eq!(
        packs.iter().map(|(_, n)| n).sum::<u64>(),
        (HTML.len() + PDF.len()) as u64,
        "{packs:?}"
    );
    let big_sha = hex::encode(sha2::Sha256::digest(&big));
    let big_key = format!("kb/blobs/{}/{big_sha}", &big_sha[..2]);
    assert!(
        stored.contains(&(big_key.clone(), big.len() as u64)),
        "{stored:?}"
    );
    assert_eq!(objects(&garage, "kb/tmp"), Vec::new());
    assert_eq!(env.blobs().leftovers().unwrap(), Vec::<String>::new());
    // What went over the wire: the two files past one part in parts (the large file in
    // three, the EPUB in two), each part with the SHA-256 of its body signed for the
    // server to check (`x-amz-content-sha256`), into temporary objects then copied to
    // their names; the six small files (two PDFs, four link pages) as the packs' PUTs,
    // with their `x-amz-checksum-sha256`: none to a name of its own.
    let heads = proxy.heads();
    let parts: Vec<&String> = heads.iter().filter(|h| h.contains("partNumber=")).collect();
    assert_eq!(parts.len(), 3 + 2, "{heads:#?}");
    let signed_digest = |h: &str| {
        h.to_ascii_lowercase().lines().any(|l| {
            l.strip_prefix("x-amz-content-sha256: ")
                .is_some_and(|v| v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()))
        })
    };
    assert!(parts.iter().all(|h| signed_digest(h)), "{parts:#?}");
    // The multipart uploads declare no checksum algorithm: an object uploaded in parts
    // with one is copied byte by byte (Garage reads, hashes and writes it all again);
    // without one, by reference.
    let creates: Vec<&String> = heads
        .iter()
        .filter(|h| h.lines().next().unwrap().contains("?uploads"))
        .collect();
    assert_eq!(creates.len(), 2, "{heads:#?}");
    assert!(
        creates
            .iter()
            .all(|h| !h.to_ascii_lowercase().contains("x-amz-checksum-algorithm")),
        "{creates:#?}"
    );
    // PUTs with a body (a CopyObject is a PUT too, without one).
    let puts: Vec<&String> = heads
        .iter()
        .filter(|h| h.lines().next().unwrap().starts_with("PUT /plikt/kb/"))
        .filter(|h| !h.to_ascii_lowercase().contains("x-amz-copy-source:"))
        .filter(|h| !h.starts_with("PUT /plikt/kb/catalog-id "))
        .collect();
    // And once, the prefix's catalog (`<prefix>catalog-id`).
    assert_eq!(
        heads
            .iter()
            .filter(|h| h.starts_with("PUT /plikt/kb/catalog-id "))
            .count(),
        1,
        "{heads:#?}"
    );
    let direct: Vec<&&String> = puts
        .iter()
        .filter(|h| h.starts_with("PUT /plikt/kb/blobs/"))
        .collect();
    assert_eq!(direct.len(), 0, "{heads:#?}");
    assert_eq!(puts.len(), 3 + 2 + packs.len(), "{heads:#?}");
    assert!(
        puts.iter()
            .filter(|h| !h.contains("partNumber="))
            .all(|h| h.to_ascii_lowercase().contains("x-amz-checksum-sha256: ")),
        "{puts:#?}"
    );
    let copies = heads
        .iter()
        .filter(|h| h.to_ascii_lowercase().contains("x-amz-copy-source:"))
        .count();
    assert_eq!(copies, 2, "{heads:#?}");
    // H-DRM read the EPUB's directory back from the object store, in two ranged GETs of
    // its 6 MiB: the window with the directory at the end, and the one at the start
    // with `META-INF/rights.xml`.
    let reads: Vec<&String> = heads
        .iter()
        .filter(|h| h.starts_with("GET /plikt/kb/tmp/"))
        .collect();
    assert_eq!(reads.len(), 2, "{reads:#?}");
    let findings = env.one(
        "SELECT v.findings FROM versions v JOIN deposits d ON d.id = v.deposit_id WHERE d.guid = 'a-4'",
    );
    assert!(
        findings.contains("H-DRM") && findings.contains("rights.xml"),
        "{findings}"
    );

    // A Destination downloads the large file from `plikt serve`, whole and in a range.
    let serving = Serving::start(&env, &base);
    let deposit = env.one("SELECT id FROM deposits WHERE guid = 'a-1'");
    let url = format!(
        "{base}d/test/{deposit}/{}",
        url_key(&publisher.url("/big.bin"))
    );
    let (status, head, body) = get_with(&url, &[]);
    assert_eq!(status, 200, "{head}");
    assert!(body == big, "the whole file differs ({} bytes)", body.len());
    let (from, to) = (5_242_000usize, 10_485_999usize);
    let (status, head, body) = get_with(&url, &[("Range", &format!("bytes={from}-{to}"))]);
    assert_eq!(status, 206, "{head}");
    assert!(
        head.contains(&format!("content-range: bytes {from}-{to}/{}", big.len())),
        "{head}"
    );
    assert!(
        body == big[from..=to],
        "the range differs ({} bytes)",
        body.len()
    );
    let (status, _, body) = get_with(&url, &[("Range", "bytes=-10")]);
    assert_eq!((status, &body[..]), (206, &big[big.len() - 10..]));
    // And a small file, from its pack: whole and in a range.
    let deposit = env.one("SELECT id FROM deposits WHERE guid = 'a-3'");
    let url = format!(
        "{base}d/test/{deposit}/{}",
        url_key(&publisher.url("/same-2.pdf"))
    );
    let before = proxy.heads().len();
    let (status, head, body) = get_with(&url, &[]);
    assert_eq!((status, &body[..]), (200, PDF), "{head}");
    let (status, _, body) = get_with(&url, &[("Range", "bytes=3-9")]);
    assert_eq!((status, &body[..]), (206, &PDF[3..=9]));
    // Asked for again, the pack was read whole: the requests after it cost none.
    for _ in 0..3 {
        let (status, _, body) = get_with(&url, &[("Range", "bytes=-5")]);
        assert_eq!((status, &body[..]), (206, &PDF[PDF.len() - 5..]));
    }
    let pack_gets: Vec<String> = proxy.heads()[before..]
        .iter()
        .filter(|h| h.starts_with("GET ") && h.contains("/kb/packs/"))
        .cloned()
        .collect();
    assert_eq!(pack_gets.len(), 2, "{pack_gets:#?}");
    assert!(
        pack_gets[0]
            .to_ascii_lowercase()
            .contains("\nrange: bytes=")
            && !pack_gets[1].to_ascii_lowercase().contains("\nrange:"),
        "a range, then the whole pack: {pack_gets:#?}"
    );
    serving.stop();

    // Dump packages read the blobs from the object store.
    let before = proxy.heads().len();
    let o = env.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let pack_gets = proxy.heads()[before..]
        .iter()
        .filter(|h| h.starts_with("GET ") && h.contains("/kb/packs/"))
        .count();
    // The packages are in the object store (the folder keeps stubs of them).
    let mut packed = Vec::new();
    let mut multipart = false;
    for (key, _) in objects(&garage, "kb/www/resourcesync/test/resourcedump") {
        if key.ends_with(".zip") {
            let bytes = object(&garage, &key);
            // Its SHA-256 kept with it, also when it went up in parts (past 8 MiB).
            assert_eq!(
                sha256_kept(&garage, &key),
                Some(hex::encode(sha2::Sha256::digest(&bytes))),
                "{key}"
            );
            multipart |= bytes.len() > 8 << 20;
            let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
            for i in 0..z.len() {
                let mut f = z.by_index(i).unwrap();
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut f, &mut bytes).unwrap();
                packed.push((f.name().to_string(), bytes));
            }
        }
    }
    assert!(multipart, "no package went up in parts");
    for (what, bytes) in [("the large file", &big[..]), ("the PDF", PDF)] {
        assert!(
            packed.iter().any(|(_, b)| *b == bytes),
            "no package holds {what}: {:?}",
            packed.iter().map(|(n, _)| n).collect::<Vec<_>>()
        );
    }
    // The small files come from their pack: read whole once the second file in a row
    // comes from it (in each package), not a request per file (the Resource Dump's
    // alone were more requests than this whole publish made).
    let small = packed
        .iter()
        .filter(|(_, b)| *b == PDF || *b == HTML)
        .count();
    assert!(small >= 4, "{small} small files in the Resource Dump");
    assert!(
        pack_gets < small,
        "{pack_gets} GETs of packs for the dumps, {small} small files in the Resource Dump"
    );

    // `plikt audit` re-reads every object; then an object is replaced behind plikt's back.
    let o = env.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&format!(
            "checked 4 blobs ({} bytes)",
            big.len() + HTML.len() + PDF.len() + epub.len()
        )),
        "{}",
        text(&o)
    );
    // The PDF's pack, one byte of the PDF changed (the same length): the PDF is
    // corrupt, the other blob of the pack (if any) is not.
    let pdf_sha = hex::encode(sha2::Sha256::digest(PDF));
    let row = env.sql(&format!(
        "SELECT pack, pack_offset FROM blobs WHERE sha256 = '{pdf_sha}'"
    ));
    let (pack, offset): (String, usize) = (row[0][0].clone(), row[0][1].parse().unwrap());
    // The pack is named by its files' SHA-256s in their order in it.
    let members = env.sql(&format!(
        "SELECT sha256 FROM blobs WHERE pack = '{pack}' ORDER BY pack_offset"
    ));
    let toc: String = members.iter().map(|r| format!("{}\n", r[0])).collect();
    assert_eq!(
        pack,
        format!(
            "{}.pack",
            hex::encode(sha2::Sha256::digest(format!("plikt pack\n{toc}")))
        )
    );
    let pack_key = Key::from(format!("kb/packs/{}/{pack}", &pack[..2]));
    let client = garage.client();
    let mut bytes = runtime()
        .block_on(async { client.get(&pack_key).await.unwrap().bytes().await })
        .unwrap()
        .to_vec();
    assert_eq!(&bytes[offset..offset + PDF.len()], PDF);
    bytes[offset + 5] ^= 0x20;
    runtime()
        .block_on(client.put(&pack_key, bytes.into()))
        .unwrap();
    let o = env.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("0 missing, 1 corrupt"), "{out}");
    assert!(
        out.contains(&format!(
            "corrupt: s3://plikt/{pack_key} (bytes {offset}–{})",
            offset + PDF.len() - 1
        )),
        "{out}"
    );
}

/// Issue 17 §2: each upload is verified by its digest on the server. A proxy flips one
/// byte of every PUT body on its way to Garage, which recomputes the body's SHA-256 and
/// refuses it: a single PUT's `x-amz-checksum-sha256` and a part's signed
/// `x-amz-content-sha256` (the file is past one part) both catch it. Nothing is stored,
/// the files stay pending, and once the corruption stops the next run stores them.
#[test]
fn s3_an_upload_corrupted_in_transit_is_refused_and_retried() {
    let garage = Garage::start("corrupt");
    let big = noise(6 << 20, 2);
    let b2 = big.clone();
    let publisher = serve(move |base| {
        let items = [
            TestItem::new("c-1", &date(0), &format!("{base}/c-1.html")).content(
                &format!("{base}/c-1.bin"),
                "application/octet-stream",
                &b2,
            ),
        ];
        vec![
            ("/feed.xml".into(), Response::ok(feed(&items))),
            ("/c-1.html".into(), Response::file(HTML, "text/html")),
            (
                "/c-1.bin".into(),
                Response::file(b2.clone(), "application/octet-stream"),
            ),
        ]
    });
    let proxy = Proxy::start(garage.port);
    let env = Env::plain("s3-corrupt", &publisher.url("/feed.xml"), "");
    let env = garage.configure_through(&proxy, env, "kb/", "part_size_mib = 5");
    proxy.corrupt_puts(true);
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(env.one("SELECT state FROM versions"), "pending");
    assert_eq!(env.one("SELECT count(*) FROM blobs"), "0");
    let errors = env.sql("SELECT error FROM files ORDER BY ord");
    for e in &errors {
        let e = &e[0];
        assert!(
            e.contains("InvalidDigest") && e.contains("checksum") && e.contains("bucket `plikt`"),
            "{e}"
        );
    }
    assert_eq!(objects(&garage, "kb/blobs"), Vec::new());
    // Both kinds of upload were refused: the page's single PUT and the file's first part.
    let heads = proxy.heads();
    assert!(
        heads.iter().any(|h| h.contains("partNumber=1")),
        "{heads:#?}"
    );
    proxy.corrupt_puts(false);
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(env.one("SELECT state FROM versions"), "deposited");
    let o = env.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// An object store behind an `https` endpoint, as deposits run one, whose certificate
/// comes from the deposit's own authority (`fixtures/tls/ca.pem`): until that authority
/// is named in `[blobs] extra_root_certificates` nothing is stored (the files stay
/// pending, and the error says which key to set); with it a harvest stores every file (a
/// large one in parts) and `plikt audit` reads each back over TLS.
#[test]
fn s3_over_https_trusts_the_deposits_own_authority_once_it_is_named() {
    let garage = Garage::start("https");
    let front = TlsFront::start(garage.port);
    let big = noise(6 << 20, 4);
    let b2 = big.clone();
    let publisher = serve(move |base| {
        let items = [
            TestItem::new("h-2", &date(1), &format!("{base}/h-2.html")).content(
                &format!("{base}/h-2.pdf"),
                "application/pdf",
                PDF,
            ),
            TestItem::new("h-1", &date(0), &format!("{base}/h-1.html")).content(
                &format!("{base}/h-1.bin"),
                "application/octet-stream",
                &b2,
            ),
        ];
        vec![
            ("/feed.xml".into(), Response::ok(feed(&items))),
            ("/h-1.html".into(), Response::file(HTML, "text/html")),
            ("/h-2.html".into(), Response::file(HTML, "text/html")),
            ("/h-2.pdf".into(), Response::file(PDF, "application/pdf")),
            (
                "/h-1.bin".into(),
                Response::file(b2.clone(), "application/octet-stream"),
            ),
        ]
    });
    let env = Env::plain("s3-https", &publisher.url("/feed.xml"), "");
    let env = garage.configure_at(
        &format!("https://localhost:{}", front.port),
        env,
        "kb/",
        "part_size_mib = 5\nretry_timeout_secs = 1",
    );
    // Without the deposit's authority: a setting to change, not an outage to wait out.
    // The harvest stops at its start (exit 2) and says what to name; nothing is fetched.
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("certificate") && err.contains("extra_root_certificates"),
        "{err}"
    );
    assert!(publisher.received().is_empty(), "the publisher was asked");
    assert_eq!(objects(&garage, "kb/"), Vec::new());

    // The [blobs] table is the configuration's last.
    let env = env.with_config(&format!(
        "extra_root_certificates = [\"{}\"]",
        root().join("fixtures/tls/ca.pem").display()
    ));
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        env.one("SELECT count(*) FROM versions WHERE state = 'deposited'"),
        "2"
    );
    let big_key = format!(
        "kb/blobs/{0}/{1}",
        &hex::encode(sha2::Sha256::digest(&big))[..2],
        hex::encode(sha2::Sha256::digest(&big))
    );
    assert!(
        objects(&garage, "kb/blobs")
            .iter()
            .any(|(k, size)| *k == big_key && *size == big.len() as u64),
        "{:?}",
        objects(&garage, "kb/")
    );
    let o = env.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// Issue 17 §4: the object store goes away in the middle of a harvest and stays away for
/// 30 s. Its files stay pending with an error that names the endpoint, the bucket and
/// what to do; no version is deposited without all its files; the next run after it
/// returns completes the harvest.
#[test]
fn s3_an_object_store_gone_for_30_s_mid_harvest_leaves_files_pending_until_it_returns() {
    let mut garage = Garage::start("outage");
    let slow = noise(3 << 20, 3);
    let s2 = slow.clone();
    let publisher = serve(move |base| {
        let first = [TestItem::new("o-1", &date(0), &format!("{base}/o-1.html"))];
        let second = [
            TestItem::new("o-3", &date(3), &format!("{base}/o-3.html")).content(
                &format!("{base}/o-3.bin"),
                "application/octet-stream",
                &s2,
            ),
            TestItem::new("o-2", &date(2), &format!("{base}/o-2.html")),
            first[0].clone(),
        ];
        let mut routes = vec![
            ("/feed.xml".to_string(), Response::ok(feed(&first))),
            ("/feed2.xml".to_string(), Response::ok(feed(&second))),
            (
                "/o-3.bin".into(),
                Response::file(Vec::new(), "application/octet-stream").body(Body::Paced {
                    bytes: s2.clone(),
                    chunk: 64 << 10,
                    every: Duration::from_millis(40),
                }),
            ),
        ];
        for p in ["/o-1.html", "/o-2.html", "/o-3.html"] {
            routes.push((p.into(), Response::file(HTML, "text/html")));
        }
        routes
    });
    let env = Env::plain("s3-outage", &publisher.url("/feed.xml"), "");
    let base = env.listen_on_free_port();
    let env = garage.configure(env, "", "retry_timeout_secs = 2\ntimeout_secs = 5");
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let deposited = || env.one("SELECT count(*) FROM versions WHERE state = 'deposited'");
    assert_eq!(deposited(), "1");
    // What a Destination reads: a document and a resource, from the object store.
    let o = env.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let serving = Serving::start(&env, &base);
    let document = format!("{base}resourcesync/test/capabilitylist.xml");
    let (status, _, list) = get(&format!("{base}resourcesync/test/resourcelist.xml"), None);
    assert_eq!(status, 200);
    let list = String::from_utf8(list).unwrap();
    let resource = locs(&list)
        .into_iter()
        .find(|l| l.contains("/d/test/") && !l.ends_with('/') && !l.ends_with(".xml"))
        .unwrap_or_else(|| panic!("no resource in {list}"));
    for url in [&document, &resource] {
        assert_eq!(get(url, None).0, 200, "{url}");
    }
    // The feed grows; while its slow file streams, the object store is killed.
    env.replace_in_config("/feed.xml", "/feed2.xml");
    let mut run = env.spawn(&["harvest"]);
    std::thread::sleep(Duration::from_millis(1200));
    garage.stop();
    let down = Instant::now();
    let status = wait(&mut run, Duration::from_secs(60));
    assert_eq!(status, Some(0), "{}", log(&env));
    // o-3's page may be stored and its file is not: o-3 is not deposited.
    let o3 =
        "(SELECT v.id FROM versions v JOIN deposits d ON d.id = v.deposit_id WHERE d.guid = 'o-3')";
    assert_eq!(
        env.one(&format!("SELECT state FROM versions WHERE id = {o3}")),
        "pending"
    );
    let error = env.one(&format!(
        "SELECT error FROM files WHERE version_id = {o3} AND url LIKE '%.bin'"
    ));
    assert!(
        error.contains(&garage.endpoint())
            && error.contains("bucket `plikt`")
            && error.contains("check that the object store is running"),
        "{error}"
    );
    // o-2 (a page only) may have been stored before the kill. While the object store is
    // away, each run retries and leaves the files pending again: more runs than
    // max_failed_runs (3), and none counts against o-3, whose publisher served every
    // byte (it would be given up for good otherwise).
    let before = deposited();
    for _ in 0..4 {
        let o = env.harvest();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        assert_eq!(deposited(), before);
        assert_eq!(
            env.one(&format!("SELECT state FROM versions WHERE id = {o3}")),
            "pending"
        );
    }
    assert_eq!(
        env.one(&format!("SELECT attempts FROM versions WHERE id = {o3}")),
        "0"
    );
    // Counted apart, for the backoff of its retries: the run the store died in, and four.
    assert_eq!(
        env.one(&format!(
            "SELECT store_failures FROM versions WHERE id = {o3}"
        )),
        "5"
    );
    assert_eq!(
        env.one("SELECT count(*) FROM versions v WHERE state = 'deposited' AND EXISTS (SELECT 1 FROM files f WHERE f.version_id = v.id AND f.state != 'stored')"),
        "0"
    );
    // A Destination meanwhile is told to come back (503 with Retry-After, RFC 9110
    // §15.6.4), not that the document or resource is broken (500).
    for url in [&document, &resource] {
        let (status, head, body) = get(url, None);
        assert_eq!(status, 503, "{url}: {head}");
        assert!(head.contains("retry-after: "), "{head}");
        assert!(
            String::from_utf8_lossy(&body).contains("the object store cannot be reached"),
            "{}",
            String::from_utf8_lossy(&body)
        );
    }
    std::thread::sleep(Duration::from_secs(30).saturating_sub(down.elapsed()));
    garage.restart();
    for url in [&document, &resource] {
        assert_eq!(
            get(url, None).0,
            200,
            "{url} after the object store returned"
        );
    }
    serving.stop();
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(deposited(), "3");
    assert_eq!(env.status()["pending"], 0);
    let o = env.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// Waits for a spawned plikt to exit; its status code.
fn wait(run: &mut crate::support::Running, limit: Duration) -> Option<i32> {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if let Some(s) = run.try_wait().unwrap() {
            return s.code();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("plikt did not exit within {limit:?}");
}

fn log(env: &Env) -> String {
    std::fs::read_to_string(env.dir.join("spawned.log")).unwrap_or_default()
}

/// Waits until the bucket holds an unfinished multipart upload (a large file in flight).
fn upload_in_flight(env: &Env) -> Vec<String> {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let l = env.blobs().leftovers().unwrap();
        if l.iter().any(|l| l.contains("unfinished multipart upload")) {
            return l;
        }
        assert!(
            Instant::now() < until,
            "no upload in flight after 30 s: {l:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Issue 17 §2: a process killed with SIGKILL in the middle of an upload leaves an
/// unfinished multipart upload; the next harvest start removes it once it is older than
/// `stale_upload_secs`, and never touches a live worker's upload in flight.
#[test]
fn s3_a_crash_mid_upload_leaves_no_orphan_after_cleanup_and_a_live_upload_survives_a_sweep() {
    let garage = Garage::start("crash");
    let (one, two) = (noise(12 << 20, 4), noise(12 << 20, 5));
    let (o2, t2) = (one.clone(), two.clone());
    let publisher = serve(move |base| {
        let x1 = TestItem::new("x-1", &date(1), &format!("{base}/x.html")).content(
            &format!("{base}/x-1.bin"),
            "application/octet-stream",
            &o2,
        );
        let x2 = TestItem::new("x-2", &date(2), &format!("{base}/x.html")).content(
            &format!("{base}/x-2.bin"),
            "application/octet-stream",
            &t2,
        );
        let paced = |b: &Vec<u8>| {
            Response::file(Vec::new(), "application/octet-stream").body(Body::Paced {
                bytes: b.clone(),
                chunk: 64 << 10,
                every: Duration::from_millis(20),
            })
        };
        vec![
            (
                "/feed.xml".into(),
                Response::ok(feed(std::slice::from_ref(&x1))),
            ),
            ("/feed2.xml".into(), Response::ok(feed(&[x2, x1]))),
            (
                "/tiny.xml".into(),
                Response::ok(feed(&[TestItem::new(
                    "t-1",
                    &date(0),
                    &format!("{base}/x.html"),
                )])),
            ),
            ("/x.html".into(), Response::file(HTML, "text/html")),
            ("/x-1.bin".into(), paced(&o2)),
            ("/x-2.bin".into(), paced(&t2)),
        ]
    });
    // Two workers of one deployment: one catalog on PostgreSQL (whatever the run's
    // backend: two processes share an object store's prefix only so) and one bucket.
    let pg = OwnPostgres::start();
    let mut env = Env::plain("s3-crash", &publisher.url("/feed.xml"), "");
    own_catalog(&mut env, &pg, "crash");
    let env = garage.configure(env, "kb/", "part_size_mib = 5\nstale_upload_secs = 3");
    // The other worker, with the default threshold, harvests another publisher.
    let mut other = Env::plain("s3-crash-other", &publisher.url("/tiny.xml"), "");
    let shared = env.postgres.clone().unwrap();
    match other.postgres.take() {
        Some(own) => other.replace_in_config(&own, &shared),
        None => other = other.with_config(&format!("[catalog]\nurl = \"{shared}\"")),
    }
    other.postgres = Some(shared);
    other.replace_in_config("id = \"test\"", "id = \"other\"");
    let other = garage.configure(other, "kb/", "");
    let deposited = || {
        env.one("SELECT count(*) FROM versions v JOIN deposits d ON d.id = v.deposit_id WHERE d.publisher = 'test' AND v.state = 'deposited'")
    };

    // 1. While this worker's upload is in flight, the other starts and sweeps: the live
    //    upload is younger than its threshold and survives; the file is deposited.
    let mut run = env.spawn(&["harvest"]);
    let before = upload_in_flight(&env);
    let o = other.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        env.blobs()
            .leftovers()
            .unwrap()
            .iter()
            .any(|l| before.contains(l)),
        "the other worker's sweep removed a live upload"
    );
    assert_eq!(
        wait(&mut run, Duration::from_secs(60)),
        Some(0),
        "{}",
        log(&env)
    );
    assert_eq!(deposited(), "1");

    // 2. Killed mid-upload: its multipart upload is left behind.
    env.replace_in_config("/feed.xml", "/feed2.xml");
    let mut run = env.spawn(&["harvest"]);
    upload_in_flight(&env);
    run.kill().unwrap();
    run.wait().unwrap();
    let left = env.blobs().leftovers().unwrap();
    assert!(
        left.iter()
            .any(|l| l.contains("unfinished multipart upload")),
        "{left:?}"
    );
    // 3. Past the threshold, the next harvest's start removes it, then completes.
    std::thread::sleep(Duration::from_secs(4));
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(deposited(), "2");
    assert_eq!(env.blobs().leftovers().unwrap(), Vec::<String>::new());
    assert_eq!(objects(&garage, "kb/tmp"), Vec::new());
    let o = env.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("0 unreferenced"), "{out}");
}

/// `[blobs]` credentials come from the environment or a file, like publishers' passwords:
/// a missing one stops the commands that open the store (exit 2, naming the variable),
/// not `plikt status`; the secret appears in no output, even in debug logs of failures.
#[test]
fn s3_credentials_come_from_the_environment_or_a_file_and_are_never_shown() {
    let publisher = serve(|base| {
        let items = [TestItem::new("k-1", &date(0), &format!("{base}/k-1.html"))];
        vec![
            ("/feed.xml".into(), Response::ok(feed(&items))),
            ("/k-1.html".into(), Response::file(HTML, "text/html")),
        ]
    });
    // An endpoint where nothing listens: every request fails at once.
    let nothing = free_port();
    let env = Env::plain("s3-credentials", &publisher.url("/feed.xml"), "").with_config(&format!(
        "[blobs]\ns3_endpoint = \"http://127.0.0.1:{nothing}\"\nbucket = \"plikt\"\nregion = \"garage\"\naccess_key_id_env = \"PLIKT_TEST_S3_KEY_ID\"\nsecret_access_key_file = \"s3-secret\"\nretry_timeout_secs = 1\n"
    ));
    let env = env.with_secret_file("s3-secret", crate::support::GARAGE_SECRET);
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("`PLIKT_TEST_S3_KEY_ID` is not set"), "{err}");
    assert_eq!(env.cmd(&["status"]).status.code(), Some(0));
    let env = env.with_env("PLIKT_TEST_S3_KEY_ID", crate::support::GARAGE_KEY_ID);
    let mut c = crate::support::plikt();
    c.args(["harvest", "--config"])
        .arg(&env.config)
        .env("RUST_LOG", "debug");
    for (k, v) in &env.env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(env.one("SELECT state FROM versions"), "pending");
    let error = env.one("SELECT error FROM files");
    assert!(
        error.contains(&format!(
            "object store http://127.0.0.1:{nothing}/, bucket `plikt`"
        )),
        "{error}"
    );
    let all = format!(
        "{}{}{error}",
        text(&o),
        env.one("SELECT last_error FROM versions")
    );
    assert!(
        !all.contains(crate::support::GARAGE_SECRET),
        "the secret was shown"
    );
}

/// An object store that refuses plikt's requests (a wrong secret, a bucket that does not
/// exist, another region) stops `plikt harvest` and `plikt serve` at their start with exit
/// 2 and what to check: before, the harvest downloaded every file and threw it away
/// (exit 0), and `plikt serve` answered every Destination 503 for good. Nothing is asked
/// of the publisher, and the secret is never shown.
#[test]
fn s3_an_object_store_that_refuses_plikt_stops_harvest_and_serve_at_their_start() {
    let garage = Garage::start("refused");
    let publisher = serve(|base| {
        let items = [TestItem::new("r-1", &date(0), &format!("{base}/r-1.html"))];
        vec![
            ("/feed.xml".into(), Response::ok(feed(&items))),
            ("/r-1.html".into(), Response::file(HTML, "text/html")),
        ]
    });
    let env = Env::plain("s3-refused", &publisher.url("/feed.xml"), "");
    env.listen_on_free_port();
    let env = garage
        .configure(env, "kb/", "")
        .with_env("WRONG_SECRET", &"0".repeat(64));
    for (right, wrong, why) in [
        (
            "secret_access_key_file = \"s3-secret\"",
            "secret_access_key_env = \"WRONG_SECRET\"",
            "403 Forbidden",
        ),
        ("bucket = \"plikt\"", "bucket = \"nosuch\"", "NoSuchBucket"),
        (
            "region = \"garage\"",
            "region = \"eu-north-1\"",
            "AuthorizationHeaderMalformed",
        ),
    ] {
        env.replace_in_config(right, wrong);
        for args in [&["harvest"][..], &["serve"][..]] {
            let mut c = crate::support::plikt();
            c.args(args)
                .arg("--config")
                .arg(&env.config)
                .env("RUST_LOG", "debug");
            for (k, v) in &env.env {
                c.env(k, v);
            }
            let o = c.output().unwrap();
            let all = text(&o);
            assert_eq!(o.status.code(), Some(2), "{wrong}, {args:?}: {all}");
            assert!(
                all.contains("the object store refused plikt's request")
                    && all.contains(why)
                    && all.contains("check that [blobs] bucket"),
                "{wrong}, {args:?}: {all}"
            );
            assert!(
                !all.contains(crate::support::GARAGE_SECRET),
                "the secret was shown"
            );
            assert!(!all.contains("change notification failed"), "{all}");
        }
        assert!(
            publisher.received().is_empty(),
            "{wrong}: the publisher was asked"
        );
        env.replace_in_config(wrong, right);
    }
    // Set right, the same harvest deposits.
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(env.one("SELECT state FROM versions"), "deposited");
}

/// Two catalogs given one bucket and prefix (a staging deployment pointed at
/// production's) would overwrite each other's published documents: the prefix names its
/// catalog (`<prefix>catalog-id`), and a harvest or `plikt serve` of another catalog is
/// refused with what to do. Under a prefix of its own, the second deployment works.
#[test]
fn s3_a_second_catalog_on_the_same_prefix_is_refused() {
    let garage = Garage::start("two-catalogs");
    let publisher = serve(|base| {
        let items = [TestItem::new("t-1", &date(0), &format!("{base}/t-1.html"))];
        vec![
            ("/feed.xml".into(), Response::ok(feed(&items))),
            ("/t-1.html".into(), Response::file(HTML, "text/html")),
        ]
    });
    let production = garage.configure(
        Env::plain("s3-production", &publisher.url("/feed.xml"), ""),
        "kb/",
        "",
    );
    let o = production.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let claimed = object(&garage, "kb/catalog-id");
    // Its own catalog: another database on PostgreSQL, another data folder on SQLite.
    let staging = Env::plain("s3-staging", &publisher.url("/feed.xml"), "");
    staging.listen_on_free_port();
    let staging = garage.configure(staging, "kb/", "");
    let o = production.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let published = objects(&garage, "kb/www");
    let asked = publisher.received().len();
    for args in [&["harvest"][..], &["serve"][..], &["publish"][..]] {
        let o = staging.cmd(args);
        let all = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {all}");
        assert!(
            all.contains("s3://plikt/kb/catalog-id says this bucket and prefix hold the collection of catalog")
                && all.contains("give this deployment a [blobs] prefix (or bucket) of its own"),
            "{args:?}: {all}"
        );
    }
    assert_eq!(
        publisher.received().len(),
        asked,
        "staging asked the publisher"
    );
    assert_eq!(object(&garage, "kb/catalog-id"), claimed);
    assert_eq!(
        objects(&garage, "kb/www"),
        published,
        "staging wrote production's documents"
    );
    // Production goes on as before; staging under its own prefix works.
    let o = production.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    staging.replace_in_config("prefix = \"kb/\"", "prefix = \"staging/\"");
    let o = staging.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(staging.one("SELECT state FROM versions"), "deposited");
}

/// Blobs the object store lost (a pack of small files and a large file's object,
/// removed behind plikt's back): `plikt audit` names them, and `plikt audit --refetch`
/// fetches them again from the publisher, stores those with the recorded bytes (the
/// small ones in a new pack), and the next audit is clean. A publisher that serves other
/// bytes now is reported, and nothing of it is stored.
#[test]
fn s3_blobs_the_object_store_lost_are_fetched_again_from_the_publisher() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let garage = Garage::start("refetch");
    let big = noise(2 << 20, 9);
    let changed = std::sync::Arc::new(AtomicBool::new(false));
    let (b2, c2) = (big.clone(), changed.clone());
    let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let base2 = base.clone();
    let publisher = Server::with_handler(move |r| {
        let base = base2.get().unwrap();
        match r.path.as_str() {
            "/feed.xml" => Response::ok(feed(&[
                TestItem::new("f-1", &date(1), &format!("{base}/f-1.html")).content(
                    &format!("{base}/f-1.bin"),
                    "application/octet-stream",
                    &b2,
                ),
                TestItem::new("f-2", &date(0), &format!("{base}/f-2.html")),
            ])),
            "/f-1.bin" if c2.load(Ordering::SeqCst) => {
                Response::file(noise(2 << 20, 10), "application/octet-stream")
            }
            "/f-1.bin" => Response::file(b2.clone(), "application/octet-stream"),
            "/f-2.html" => Response::file(b"<html><body>f-2</body></html>".to_vec(), "text/html"),
            _ => Response::file(HTML, "text/html"),
        }
    });
    let _ = base.set(publisher.url(""));
    let env = garage.configure(
        Env::plain("s3-refetch", &publisher.url("/feed.xml"), ""),
        "kb/",
        "",
    );
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Lost: every pack and the large file's object.
    let big_sha = hex::encode(sha2::Sha256::digest(&big));
    let big_key = format!("kb/blobs/{}/{big_sha}", &big_sha[..2]);
    let packs: Vec<String> = objects(&garage, "kb/packs")
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert!(!packs.is_empty());
    let client = garage.client();
    for key in packs.iter().chain([&big_key]) {
        runtime()
            .block_on(client.delete(&Key::from(key.as_str())))
            .unwrap();
    }
    let o = env.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(" 3 missing, 0 corrupt"), "{out}");
    let asked = publisher.received().len();
    let o = env.cmd(&["audit", "--refetch"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(&format!("fetched again: blob {big_sha} from "))
            && out.contains("fetched again and stored 3 of 3 missing or damaged blobs"),
        "{out}"
    );
    // Three files asked again, not the feed.
    assert_eq!(publisher.received().len(), asked + 3);
    let o = env.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains(" 0 missing, 0 corrupt"));
    assert!(
        objects(&garage, "kb/blobs")
            .iter()
            .any(|(k, _)| *k == big_key)
    );

    // Lost again, while the publisher serves other bytes: reported, nothing stored.
    changed.store(true, Ordering::SeqCst);
    runtime()
        .block_on(client.delete(&Key::from(big_key.as_str())))
        .unwrap();
    let o = env.cmd(&["audit", "--refetch"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    // (The feed's media:hash catches it first: H-MD5.)
    assert!(
        out.contains(&format!("not fetched again: blob {big_sha}: "))
            && out.contains("but media:hash says")
            && out.contains("fetched again and stored 0 of 1"),
        "{out}"
    );
    assert!(
        !objects(&garage, "kb/blobs")
            .iter()
            .any(|(k, _)| *k == big_key)
    );
    assert_eq!(objects(&garage, "kb/tmp"), Vec::new());
}

/// The documents of `www` (not the publisher's own state files or temporaries), by
/// path relative to it.
fn documents(www: &std::path::Path) -> Vec<String> {
    fn walk(dir: &std::path::Path, root: &std::path::Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, root, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                if !name.starts_with('.') || rel.starts_with(".well-known/") {
                    out.push(rel);
                }
            }
        }
    }
    let mut out = Vec::new();
    if www.exists() {
        walk(www, www, &mut out);
    }
    out.sort();
    out
}

/// The package a stub in a worker's folder stands for: its length and SHA-256 (`None`:
/// the file is no stub). Dump packages are kept in the object store only.
fn stub(path: &std::path::Path) -> Option<(u64, String)> {
    let text = String::from_utf8(std::fs::read(path).ok()?).ok()?;
    if !text.starts_with("plikt: a dump package kept in the object store only") {
        return None;
    }
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::to_string)
    };
    Some((field("length: ")?.parse().ok()?, field("sha256: ")?))
}

/// `body`, served, is the document `rel` of `www` as published: the file's bytes, or,
/// for a package the folder keeps a stub of, the bytes the stub names.
fn assert_published(www: &std::path::Path, rel: &str, body: &[u8]) {
    let path = www.join(rel);
    match stub(&path) {
        Some((length, sha256)) => {
            assert_eq!(body.len() as u64, length, "{rel}: length");
            assert_eq!(hex::encode(sha2::Sha256::digest(body)), sha256, "{rel}");
        }
        None => assert_eq!(body, std::fs::read(&path).unwrap(), "{rel}"),
    }
}

/// Node A (its own PostgreSQL catalog and Garage bucket) has harvested three items and
/// published; node B has the same configuration and a new, empty folder. The servers
/// live as long as the value.
struct TwoNodes {
    garage: Garage,
    _pg: OwnPostgres,
    _publisher: Server,
    a: Env,
    b: Env,
    /// A's documents, by path relative to its `www`.
    published: Vec<String>,
}

impl TwoNodes {
    fn start(name: &str) -> Self {
        Self::start_with(name, 3, "")
    }

    /// [`TwoNodes::start`] with `items` in the feed and `toml` added to the
    /// configuration.
    fn start_with(name: &str, items: i64, toml: &str) -> Self {
        let garage = Garage::start(name);
        let pg = OwnPostgres::start();
        let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
        let b2 = base.clone();
        let publisher = Server::with_handler(move |r| {
            if r.path == "/feed.xml" {
                let base = b2.get().unwrap();
                let items: Vec<TestItem> = (1..=items)
                    .map(|i| {
                        TestItem::new(&format!("n-{i}"), &date(i), &format!("{base}/n-{i}.html"))
                    })
                    .collect();
                return Response::ok(feed(&items));
            }
            Response::file(HTML, "text/html")
        });
        let _ = base.set(publisher.url(""));
        let mut a = Env::plain(&format!("{name}-a"), &publisher.url("/feed.xml"), "");
        own_catalog(&mut a, &pg, name);
        let a = garage.configure(a.with_config(toml), "kb/", "");
        let o = a.harvest();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let o = a.cmd(&["publish"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let published = documents(&a.data().join("www"));
        assert!(published.len() > 10, "{published:?}");
        let b = worker_like(&a, &format!("{name}-b"), &publisher.url("/feed.xml"));
        Self {
            garage,
            _pg: pg,
            _publisher: publisher,
            a,
            b,
            published,
        }
    }
}

/// A new worker's first publish copies the whole published tree from the object store;
/// it does so before it waits for the publish lock among workers, so that the other
/// workers' publishes do not wait for the copy. Here the lock is held by another
/// connection all along: node B's folder fills with node A's documents anyway, and its
/// publish ends once the lock is given back.
#[test]
fn s3_a_new_node_copies_the_documents_before_it_waits_for_the_publish_lock() {
    // Bound whole: the servers it holds live to the end of the test.
    let nodes = TwoNodes::start("newnode");
    let (a, b, published) = (&nodes.a, &nodes.b, &nodes.published);
    // The publish lock among workers, held by another session.
    let holder = hold_publish_lock(a.postgres.as_deref().unwrap());
    let mut publish = b.spawn(&["publish"]);
    let www_b = b.data().join("www");
    let started = Instant::now();
    while documents(&www_b) != *published {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "node B did not copy the documents while the lock was held: {:?}",
            documents(&www_b)
        );
        assert!(
            publish.try_wait().unwrap().is_none(),
            "node B's publish ended under the held lock"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Still waiting for the lock: it has written nothing of its own.
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        publish.try_wait().unwrap().is_none(),
        "node B's publish ended under the held lock"
    );
    drop(holder);
    let exit = wait_for_exit(
        &mut publish,
        Duration::from_secs(30),
        "node B's publish did not end",
    );
    assert!(
        exit.success(),
        "{exit:?}: {}",
        std::fs::read_to_string(b.dir.join("spawned.log")).unwrap_or_default()
    );
    assert_eq!(documents(&www_b), *published);
}

/// A document the object store's lists name but the store lacks (lost, or deleted by
/// another publish while this one copied): a new node's publish fails naming it and
/// saying what to do, and once it is back the next publish copies everything, the same
/// documents as the node that wrote them.
#[test]
fn s3_a_listed_document_missing_from_the_object_store_is_named_and_copied_once_back() {
    // Bound whole: the servers it holds live to the end of the test.
    let nodes = TwoNodes::start("missingdoc");
    let (garage, a, b, published) = (&nodes.garage, &nodes.a, &nodes.b, &nodes.published);
    // A set's Change List, gone from the object store.
    let rel = published
        .iter()
        .find(|r| r.ends_with("/changelist.xml"))
        .expect("a change list")
        .clone();
    let key = Key::from(format!("kb/www/{rel}"));
    let client = garage.client();
    let bytes = runtime()
        .block_on(async { client.get(&key).await.unwrap().bytes().await })
        .unwrap();
    runtime().block_on(client.delete(&key)).unwrap();
    let o = b.cmd(&["publish"]);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(err.contains(&rel), "the message does not name {rel}: {err}");
    assert!(err.contains("publish again"), "{err}");
    assert!(
        !err.contains("plikt audit"),
        "advice for blobs, not documents: {err}"
    );
    // Back in the object store: the next publish copies what is missing.
    runtime().block_on(client.put(&key, bytes.into())).unwrap();
    let o = b.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(documents(&b.data().join("www")), *published);
    // Byte for byte.
    for rel in published {
        assert_eq!(
            std::fs::read(b.data().join("www").join(rel)).unwrap(),
            std::fs::read(a.data().join("www").join(rel)).unwrap(),
            "{rel}"
        );
    }
}

/// The packages every public dump in `www` lists (URL, length, SHA-256 from its
/// `hash`), by path below the base URL.
fn listed_packages(www: &std::path::Path) -> Vec<(String, u64, String)> {
    let mut out = Vec::new();
    for rel in documents(www) {
        if !(rel.contains("dump") && rel.ends_with(".xml")) || rel.ends_with("-manifest.xml") {
            continue;
        }
        let doc = std::fs::read_to_string(www.join(&rel)).unwrap();
        for url in doc.split("<url>").skip(1) {
            let loc = &locs(url)[0];
            if !loc.ends_with(".zip") {
                continue;
            }
            let attr = |name: &str| {
                let at = url.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
                url[at..at + url[at..].find('"').unwrap()].to_string()
            };
            let path = loc[loc.find("resourcesync/").unwrap()..].to_string();
            // The restricted sets' ask for credentials (tested elsewhere).
            if path.contains("/restricted/") {
                continue;
            }
            let hash = attr("hash");
            let sha256 = hash.split("sha-256:").nth(1).unwrap().to_string();
            out.push((path, attr("length").parse().unwrap(), sha256));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Dump packages hold the files' bytes again (about the collection's size), so workers
/// keep no copy of them: the object store has each package, a worker's folder a stub of
/// it (a few lines), and `plikt serve` serves the package whole from the object store,
/// as the dumps describe it. A new worker writes stubs for what it pulls, without
/// downloading a package. A stub is never copied up: with the object store's lists
/// removed to be written anew from a worker's folder, a package the object store lost is
/// named, and the next publish writes it anew from the catalog.
#[test]
fn s3_workers_keep_stubs_of_dump_packages_which_are_served_whole_from_the_object_store() {
    // Bound whole: the servers it holds live to the end of the test.
    let nodes = TwoNodes::start("stubs");
    let packages: Vec<String> = nodes
        .published
        .iter()
        .filter(|r| r.ends_with(".zip"))
        .cloned()
        .collect();
    assert!(
        !packages.is_empty(),
        "no dump package: {:?}",
        nodes.published
    );
    let (garage, a) = (&nodes.garage, &nodes.a);
    let www_a = a.data().join("www");
    // Each went up as it was written, and the push listed it.
    assert!(!www_a.join(".mirrored-sent.json").exists());
    for rel in &packages {
        let path = www_a.join(rel);
        let (length, sha256) =
            stub(&path).unwrap_or_else(|| panic!("{rel} is kept whole in node A's folder"));
        assert!(std::fs::metadata(&path).unwrap().len() < 512, "{rel}");
        let bytes = object(garage, &format!("kb/www/{rel}"));
        assert_eq!(bytes.len() as u64, length, "{rel}");
        assert_eq!(hex::encode(sha2::Sha256::digest(&bytes)), sha256, "{rel}");
        // Kept with the object, where a HEAD finds it (x-amz-meta-sha256).
        assert_eq!(
            sha256_kept(garage, &format!("kb/www/{rel}")).as_deref(),
            Some(sha256.as_str()),
            "{rel}"
        );
    }
    // Node B's first publish: the same stubs, written, not downloaded.
    let base_b = nodes.b.listen_on_free_port_keeping_base();
    let b = &nodes.b;
    let www_b = b.data().join("www");
    let o = b.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for rel in &packages {
        assert_eq!(
            std::fs::read(www_b.join(rel)).unwrap(),
            std::fs::read(www_a.join(rel)).unwrap(),
            "{rel}"
        );
    }
    // What a Destination gets: every package a dump lists, as the dump describes it,
    // a ZIP with its manifest.
    let listed = listed_packages(&www_b);
    let public: Vec<&String> = packages
        .iter()
        .filter(|r| !r.contains("/restricted/"))
        .collect();
    assert_eq!(
        listed.iter().map(|(p, ..)| p).collect::<Vec<_>>(),
        public,
        "the packages the dumps list"
    );
    let node_b = Serving::start(b, &base_b);
    for (path, length, sha256) in &listed {
        let (status, _, body) = get(&format!("{base_b}{path}"), None);
        assert_eq!(status, 200, "{path}");
        assert_eq!(body.len() as u64, *length, "{path}");
        assert_eq!(hex::encode(sha2::Sha256::digest(&body)), *sha256, "{path}");
        let mut z = zip::ZipArchive::new(std::io::Cursor::new(body)).unwrap();
        assert!(z.by_name("manifest.xml").is_ok(), "{path}");
    }
    node_b.stop();

    // B's folder as a plikt before stubs left it: the packages whole, its record of
    // partitions under the old name; and the object store has lost one of them, of
    // which the folder holds the last copy. Once their set is written again (as every
    // set is on the first publish of a UTC day), the folder keeps stubs, the record is
    // renamed, and the lost package went up again rather than be taken for stored.
    let lost = &packages[0];
    for rel in &packages {
        std::fs::write(www_b.join(rel), object(garage, &format!("kb/www/{rel}"))).unwrap();
    }
    let whole = std::fs::read(www_b.join(lost)).unwrap();
    std::fs::rename(
        www_b.join(".mirrored-sets.json"),
        www_b.join(".mirrored-parts.json"),
    )
    .unwrap();
    runtime()
        .block_on(garage.client().delete(&Key::from(format!("kb/www/{lost}"))))
        .unwrap();
    for set in ["resourcesync/test", "resourcesync/test/restricted"] {
        std::fs::remove_file(www_b.join(set).join(".published")).unwrap();
    }
    let o = b.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!www_b.join(".mirrored-parts.json").exists());
    assert!(www_b.join(".mirrored-sets.json").exists());
    for rel in &packages {
        assert!(stub(&www_b.join(rel)).is_some(), "{rel} kept whole");
    }
    assert_eq!(object(garage, &format!("kb/www/{lost}")), whole);

    // The object store loses both packages (the public set's and the restricted one's);
    // the object store's lists are removed to be written anew from B's folder, which holds
    // only stubs of them. The publish names them, copies nothing up, and forgets them in
    // the folder; the next one writes them anew from the catalog.
    let other = packages
        .iter()
        .find(|r| r.contains("/restricted/"))
        .expect("a restricted package");
    for rel in [lost, other] {
        runtime()
            .block_on(garage.client().delete(&Key::from(format!("kb/www/{rel}"))))
            .unwrap();
    }
    runtime()
        .block_on(garage.client().delete(&Key::from("kb/www/.manifest.json")))
        .unwrap();
    std::fs::remove_file(www_b.join(".mirrored-sets.json")).unwrap();
    let before = objects(garage, "kb/www");
    let o = b.cmd(&["publish"]);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    for rel in [lost, other] {
        assert!(
            err.contains(rel.as_str()),
            "the message does not name {rel}: {err}"
        );
    }
    assert!(err.contains("lacks it"), "{err}");
    assert!(err.contains("publish again"), "{err}");
    // Nothing was copied up: no stub in a package's place, no document listing it.
    assert_eq!(objects(garage, "kb/www"), before);
    // As the message says: the next publish writes them anew from the catalog.
    let o = b.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let served_as_listed = |lost: &String| {
        let node_b = Serving::start(b, &base_b);
        let listed = listed_packages(&www_b);
        assert!(
            listed.iter().any(|(p, ..)| p == lost),
            "{lost} is not listed: {listed:?}"
        );
        for (path, length, sha256) in &listed {
            let (status, _, body) = get(&format!("{base_b}{path}"), None);
            assert_eq!(status, 200, "{path}");
            assert_eq!(body.len() as u64, *length, "{path}");
            assert_eq!(hex::encode(sha2::Sha256::digest(&body)), *sha256, "{path}");
            assert!(stub(&www_b.join(path)).is_some(), "{path} kept whole");
        }
        node_b.stop();
    };
    served_as_listed(lost);
    // Written again byte for byte (the times its manifest had kept from its sidecar), so
    // every snapshot that lists it, today's and past days', still has its hash.
    let again = || object(garage, &format!("kb/www/{lost}"));
    assert!(
        again() == whole,
        "{lost} was written again with other bytes"
    );
    let (length, sha256) = stub(&www_b.join(other)).unwrap();
    let bytes = object(garage, &format!("kb/www/{other}"));
    assert_eq!(
        (
            bytes.len() as u64,
            hex::encode(sha2::Sha256::digest(&bytes))
        ),
        (length, sha256),
        "{other}"
    );

    // Lost again, while the object store's lists still name it, and B's folder no
    // longer knows it (as after a push of B's forgot it while another worker's publish
    // still listed it): B, pulling the lists under the publish lock, forgets it with what
    // goes with it and writes it anew in the same publish, rather than fail on every
    // publish.
    runtime()
        .block_on(garage.client().delete(&Key::from(format!("kb/www/{lost}"))))
        .unwrap();
    // B's folder without the package, its record without it, then B's publish.
    let unknown_to_b = || {
        std::fs::remove_file(www_b.join(lost)).unwrap();
        let record = www_b.join("resourcesync/test/.mirrored.json");
        let mut files: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
        assert!(
            files.remove(lost.as_str()).is_some(),
            "{lost} not in {files:?}"
        );
        std::fs::write(&record, serde_json::to_vec(&files).unwrap()).unwrap();
        std::fs::remove_file(www_b.join(".mirrored-sets.json")).unwrap();
        let o = b.cmd(&["publish"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        served_as_listed(lost);
    };
    unknown_to_b();

    // The same, but the object store holds other bytes of the same length under its
    // name (as a push that stopped part way can leave, with their SHA-256 kept): the
    // length alone would take them for the listed package; the SHA-256 kept with the
    // object tells them apart, and the package is written anew.
    let key = format!("kb/www/{lost}");
    let listed = object(garage, &key);
    let other: Vec<u8> = listed.iter().map(|b| b ^ 0x5a).collect();
    let other_sha256 = hex::encode(sha2::Sha256::digest(&other));
    put_with_sha256(garage, &key, other, &other_sha256);
    unknown_to_b();

    // A stub damaged by hand in a set written again is never copied up in the
    // package's place: the publish says so; removed, the stub comes back.
    let stub_bytes = std::fs::read(www_b.join(lost)).unwrap();
    std::fs::write(www_b.join(lost), b"damaged").unwrap();
    std::fs::remove_file(www_b.join("resourcesync/test/.published")).unwrap();
    let before = objects(garage, "kb/www");
    let o = b.cmd(&["publish"]);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        err.contains(lost.as_str()) && err.contains("neither a dump package nor a stub"),
        "{err}"
    );
    assert_eq!(
        objects(garage, "kb/www")
            .into_iter()
            .filter(|(k, _)| k.ends_with(".zip"))
            .collect::<Vec<_>>(),
        before
            .into_iter()
            .filter(|(k, _)| k.ends_with(".zip"))
            .collect::<Vec<_>>()
    );
    std::fs::remove_file(www_b.join(lost)).unwrap();
    let o = b.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(std::fs::read(www_b.join(lost)).unwrap(), stub_bytes);
    served_as_listed(lost);

    // A package copied up as it was written by a publish stopped before its push, whose
    // content then changed (its stub removed as unlisted): the next push of its set
    // removes it from the object store, where nothing lists it.
    let orphan = "resourcesync/test/resourcedump/0000000000000000.zip";
    runtime()
        .block_on(garage.client().put(
            &Key::from(format!("kb/www/{orphan}")),
            b"PK\x05\x06".to_vec().into(),
        ))
        .unwrap();
    std::fs::write(www_b.join(".mirrored-sent.json"), format!("[\"{orphan}\"]")).unwrap();
    std::fs::remove_file(www_b.join("resourcesync/test/.published")).unwrap();
    let o = b.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        objects(garage, &format!("kb/www/{orphan}")).is_empty(),
        "the unlisted package is still in the object store"
    );
    assert!(!www_b.join(".mirrored-sent.json").exists());
    served_as_listed(lost);

    // `plikt audit` looks up every package the object store's lists name; one lost is
    // named with what to do, and doing it brings it back.
    let (code, out) = a.audit();
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains(&format!(
            "checked {} dump packages in the object store: 0 missing or other bytes",
            packages.len()
        )),
        "{out}"
    );
    // Bytes that rotted in the object store: the same length and the same SHA-256 kept
    // with the object, other bytes. Only reading them again finds it.
    let key = Key::from(format!("kb/www/{lost}"));
    let (kept, sha256) = runtime().block_on(async {
        let got = garage.client().get(&key).await.unwrap();
        let sha256 = got
            .attributes
            .get(&object_store::Attribute::Metadata("sha256".into()))
            .map(|v| v.to_string())
            .expect("a package keeps its SHA-256");
        (got.bytes().await.unwrap(), sha256)
    });
    let mut rotten = kept.to_vec();
    let at = rotten.len() / 2;
    rotten[at] ^= 0x20;
    put_with_sha256(garage, key.as_ref(), rotten, &sha256);
    let (code, out) = a.audit();
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(&format!("package: www/{lost}: listed"))
            && out.contains("holds other bytes under its name, read again"),
        "{out}"
    );
    // As the advice says: the files it names (the stub, the set's state and the
    // Resource Dump's fingerprint) removed from one worker's folder, and a publish there;
    // then the audit is clean, and the package is served as listed, byte for byte as it
    // was.
    let as_advised = |out: &str| {
        let (line, files) = crate::support::package_advice(out, lost);
        assert_eq!(files.len(), 3, "{line}");
        for f in files {
            std::fs::remove_file(b.data().join(f)).unwrap();
        }
        let o = b.cmd(&["publish"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let (code, out) = a.audit();
        assert_eq!(code, Some(0), "{out}");
        served_as_listed(lost);
        assert!(
            again() == whole,
            "{lost} was written again with other bytes"
        );
    };
    // For other bytes: that object removed first.
    assert!(
        out.contains("remove that object, s3://")
            && out.contains(&format!("/kb/www/{lost}, first")),
        "{out}"
    );
    runtime().block_on(garage.client().delete(&key)).unwrap();
    as_advised(&out);
    runtime().block_on(garage.client().delete(&key)).unwrap();
    let (code, out) = a.audit();
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(&format!("package: www/{lost}: listed"))
            && out.contains("the object store lacks it")
            && !out.contains("remove that object"),
        "{out}"
    );
    as_advised(&out);

    // A closed day's Change Dump package the object store lost: the advice names its
    // stub, the set's state and the mark of the last day packed; followed, the day is
    // packed again, byte for byte.
    let two_days_ago = chrono::Utc::now() - chrono::Duration::days(2);
    let url = b.one("SELECT url FROM files LIMIT 1");
    crate::resourcesync::add_deposit(
        b,
        "old",
        &format!("{url}?old"),
        &two_days_ago.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    );
    let o = b.cmd(&["audit", "--recount"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = b.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let day = format!(
        "resourcesync/test/changedump/{}.zip",
        two_days_ago.format("%Y-%m-%d")
    );
    let key = format!("kb/www/{day}");
    let whole = object(garage, &key);
    runtime()
        .block_on(garage.client().delete(&Key::from(key.as_str())))
        .unwrap();
    let (code, out) = a.audit();
    assert_eq!(code, Some(1), "{out}");
    let (line, files) = crate::support::package_advice(&out, &day);
    assert!(
        files.contains(&"www/resourcesync/test/changedump/.closed".to_string()) && files.len() == 3,
        "{line}"
    );
    for f in files {
        std::fs::remove_file(b.data().join(f)).unwrap();
    }
    let o = b.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        object(garage, &key) == whole,
        "{day} was written again with other bytes"
    );
    let (code, out) = a.audit();
    assert_eq!(code, Some(0), "{out}");
}

/// A new worker's first publish writes stubs of the packages other workers wrote and
/// downloads none: it asks the object store for each package's length, one HEAD at a
/// time, and lists a folder whole once it has asked 16 times in it (here a package per
/// file, 19 in the restricted set's folder: 16 HEADs and one listing, not 19 HEADs).
#[test]
fn s3_a_new_worker_writes_stubs_without_downloading_a_package_and_lists_a_full_folder() {
    // Bound whole: the servers it holds live to the end of the test.
    let nodes = TwoNodes::start_with("stublist", 20, "[resourcesync]\ndump_package_bytes = 1");
    let (garage, a, b) = (&nodes.garage, &nodes.a, &nodes.b);
    let folder = "resourcesync/test/restricted/resourcedump/";
    let packages: Vec<&String> = nodes
        .published
        .iter()
        .filter(|r| r.ends_with(".zip"))
        .collect();
    let in_folder = packages.iter().filter(|r| r.starts_with(folder)).count();
    assert!(
        in_folder > 16,
        "{in_folder} packages in {folder}: {packages:?}"
    );
    let proxy = Proxy::start(garage.port);
    b.replace_in_config(&garage.endpoint(), &proxy.endpoint());
    let o = b.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for rel in &packages {
        assert_eq!(
            std::fs::read(b.data().join("www").join(rel)).unwrap(),
            std::fs::read(a.data().join("www").join(rel)).unwrap(),
            "{rel}: not A's stub"
        );
    }
    let heads = proxy.heads();
    let asked = |method: &str, what: &str| {
        heads
            .iter()
            .filter(|h| h.starts_with(method) && h.lines().next().unwrap_or("").contains(what))
            .count()
    };
    assert_eq!(asked("GET ", ".zip "), 0, "a package was downloaded");
    assert_eq!(asked("HEAD ", &format!("/kb/www/{folder}")), 16);
    let listings: Vec<&String> = heads
        .iter()
        .filter(|h| {
            h.starts_with("GET ")
                && h.contains("list-type=2")
                && h.contains("restricted%2Fresourcedump")
        })
        .collect();
    assert_eq!(listings.len(), 1, "{listings:#?}");
}

/// Issue 17 §2: the published ResourceSync documents and dump packages live in the
/// object store, so any number of `plikt serve` nodes serve one collection. Two nodes
/// with their own data folders share one PostgreSQL catalog and one bucket: what node A
/// publishes, node B serves byte for byte (with nothing in its own folder); then B
/// harvests and publishes, carrying on from A's documents (archives, change lists), and
/// A serves what B wrote.
#[test]
fn s3_documents_published_by_one_node_are_served_by_any_node() {
    let garage = Garage::start("documents");
    let pg = OwnPostgres::start();
    let generation = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(1));
    let g = generation.clone();
    let base: std::sync::Arc<std::sync::OnceLock<String>> = Default::default();
    let b2 = base.clone();
    let publisher = Server::with_handler(move |r| {
        let n = 2 + i64::from(g.load(std::sync::atomic::Ordering::SeqCst));
        if r.path == "/feed.xml" {
            let base = b2.get().unwrap();
            // Newest first: a new generation adds a newer item at the top.
            let items: Vec<TestItem> = (1..=n)
                .rev()
                .map(|i| TestItem::new(&format!("d-{i}"), &date(i), &format!("{base}/d-{i}.html")))
                .collect();
            return Response::ok(feed(&items));
        }
        if r.path.starts_with("/d-") {
            return Response::file(HTML, "text/html");
        }
        Response::status(404)
    });
    let _ = base.set(publisher.url(""));
    let mut a = Env::plain("docs-a", &publisher.url("/feed.xml"), "");
    let base_a = a.listen_on_free_port();
    own_catalog(&mut a, &pg, "documents");
    let a = garage.configure(a, "kb/", "");
    // Node B: the same configuration (one base URL for the collection, as behind a load
    // balancer), its own folder and port.
    let port_b = free_port();
    let base_b = format!("http://127.0.0.1:{port_b}/");
    let mut b = Env::plain("docs-b", &publisher.url("/feed.xml"), "");
    let listen_a = base_a
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    // B reaches the object store through a proxy that records its requests.
    let proxy = Proxy::start(garage.port);
    std::fs::write(
        &b.config,
        std::fs::read_to_string(&a.config)
            .unwrap()
            .replace(
                &format!("listen = \"{listen_a}\""),
                &format!("listen = \"127.0.0.1:{port_b}\""),
            )
            .replace(&garage.endpoint(), &proxy.endpoint()),
    )
    .unwrap();
    std::fs::copy(a.dir.join("s3-secret"), b.dir.join("s3-secret")).unwrap();
    b.env = a.env.clone();
    b.postgres = a.postgres.clone();

    let o = a.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = a.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let www_a = a.data().join("www");
    let published = documents(&www_a);
    assert!(
        published.iter().any(|d| d.ends_with("capabilitylist.xml")),
        "{published:?}"
    );
    let in_store = objects(&garage, "kb/www");
    assert!(
        in_store.iter().any(|(k, _)| k == "kb/www/.manifest.json"),
        "{in_store:?}"
    );

    // B has published nothing, and serves all of it from the object store.
    let node_b = Serving::start(&b, &base_b);
    let mut served = 0;
    for rel in &published {
        let (status, _, body) = get(&format!("{base_b}{rel}"), None);
        if rel.contains("/restricted/") {
            assert_eq!(status, 401, "{rel}");
            continue;
        }
        assert_eq!(status, 200, "{rel}");
        assert_published(&www_a, rel, &body);
        served += 1;
    }
    assert!(served >= 4, "{served} documents served of {published:?}");
    assert!(
        documents(&b.data().join("www")).is_empty(),
        "node B served from its own folder: {:?}",
        documents(&b.data().join("www"))
    );
    let (status, _, _) = get(
        &format!("{base_b}resourcesync/test/changedump/1999-01-01.zip"),
        None,
    );
    assert_eq!(status, 404);
    node_b.stop();

    // B harvests a new item and publishes: it carries on from A's documents.
    generation.store(2, std::sync::atomic::Ordering::SeqCst);
    let o = b.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = b.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let www_b = b.data().join("www");
    let now = documents(&www_b);
    // What B's publish kept of A's (everything but the day's dump packages, which a
    // publish on one machine replaces too), B had pulled: B never wrote A's documents.
    for rel in published.iter().filter(|r| !r.contains("dump/")) {
        assert!(
            now.contains(rel),
            "{rel} of A's publish is gone after B's: {now:?}"
        );
    }
    // A serves what B wrote, and the documents say four items now.
    let node_a = Serving::start(&a, &base_a);
    for rel in now.iter().filter(|r| !r.contains("/restricted/")) {
        let (status, _, body) = get(&format!("{base_a}{rel}"), None);
        assert_eq!(status, 200, "{rel} served by A");
        assert_published(&www_b, rel, &body);
    }
    // Any node answers a Destination's If-None-Match alike: a document's entity tag is
    // the object store's, whichever node serves it (RFC 9110 §13.1.2).
    let node_b = Serving::start(&b, &base_b);
    let rel = now
        .iter()
        .find(|r| r.ends_with(".xml") && !r.contains("/restricted/"))
        .unwrap();
    let (status, head, _) = get(&format!("{base_a}{rel}"), None);
    assert_eq!(status, 200, "{rel}: {head}");
    let etag = head
        .lines()
        .find_map(|l| l.strip_prefix("etag: "))
        .unwrap_or_else(|| panic!("{rel}: no ETag: {head}"))
        .to_string();
    let (status, head, body) = get_with(&format!("{base_b}{rel}"), &[("If-None-Match", &etag)]);
    assert_eq!(status, 304, "{rel} from B with A's ETag {etag}: {head}");
    assert!(head.contains(&format!("etag: {etag}")), "{head}");
    assert!(body.is_empty());
    // B asked the object store on the same condition, so the unchanged document's bytes
    // were not fetched only to be dropped (a Change List part can be 40 MB).
    let key = format!("/plikt/kb/www/{rel} ");
    let asked = proxy
        .heads()
        .into_iter()
        .rev()
        .find(|h| h.starts_with("GET ") && h.contains(&key))
        .unwrap_or_else(|| panic!("B did not ask the object store for {key}"));
    assert!(
        asked
            .to_ascii_lowercase()
            .contains(&format!("if-none-match: {}", etag.to_ascii_lowercase())),
        "{asked}"
    );
    // A tag of another version, or a list of tags, gets the document.
    for other in ["\"0123\"", &format!("\"0123\", {etag}")] {
        let (status, head, body) = get_with(&format!("{base_b}{rel}"), &[("If-None-Match", other)]);
        let want = if other.contains(&etag) { 304 } else { 200 };
        assert_eq!(status, want, "{rel} with If-None-Match {other}: {head}");
        if want == 200 {
            assert_eq!(body, std::fs::read(www_b.join(rel)).unwrap(), "{rel}");
        }
    }
    node_b.stop();

    // Every link of every public document B wrote resolves on A: nothing B links to
    // was left behind in B's folder.
    let mut links = 0;
    for rel in now
        .iter()
        .filter(|r| r.ends_with(".xml") && !r.contains("/restricted/"))
    {
        let text = std::fs::read_to_string(www_b.join(rel)).unwrap();
        let hrefs = text
            .split("href=\"")
            .skip(1)
            .map(|t| &t[..t.find('"').unwrap()]);
        let listed = locs(&text);
        for url in hrefs.chain(listed.iter().map(String::as_str)) {
            let Some(path) = url.strip_prefix(&base_a) else {
                continue;
            };
            if !(path.starts_with("resourcesync/") || path.starts_with(".well-known/")) {
                continue;
            }
            let (status, _, _) = get(url, None);
            let want = if path.contains("/restricted/") {
                401
            } else {
                200
            };
            assert_eq!(status, want, "{url} in {rel}");
            links += 1;
        }
    }
    assert!(links > 10, "{links} links followed");
    let (_, _, list) = get(&format!("{base_a}resourcesync/test/resourcelist.xml"), None);
    let list = String::from_utf8(list).unwrap();
    let before = std::fs::read_to_string(www_a.join("resourcesync/test/resourcelist.xml")).unwrap();
    assert!(
        list.matches("<url>").count() > before.matches("<url>").count(),
        "{list}"
    );
    node_a.stop();

    // A publish with nothing new (what `plikt run` does after a run of an unchanged
    // feed) checks that the object store takes its requests and that the prefix is its
    // catalog's, reads the object store's list of partitions and writes nothing there:
    // three requests, whatever the documents published over the years.
    let asked_before = proxy.heads().len();
    let o = b.cmd(&["publish"]);
    assert!(
        text(&o).contains("published 2 sets (2 unchanged"),
        "{}",
        text(&o)
    );
    let asked: Vec<String> = proxy.heads()[asked_before..]
        .iter()
        .map(|h| h.lines().next().unwrap_or_default().to_string())
        .collect();
    assert_eq!(asked.len(), 3, "{asked:?}");
    assert!(
        asked[0].starts_with("GET /plikt?prefix=kb%2Ftmp%2F&uploads= ")
            && asked[1].starts_with("GET /plikt/kb/catalog-id ")
            && asked[2].starts_with("GET /plikt/kb/www/.manifest.json "),
        "{asked:?}"
    );

    // A publish whose copy to the object store fails leaves its sets to be written
    // again: the next publish writes and copies them, though their state (the journal
    // position) is the one it finds in the folder.
    generation.store(3, std::sync::atomic::Ordering::SeqCst);
    let o = b.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    proxy.corrupt_puts(true);
    let o = b.cmd(&["publish"]);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    proxy.corrupt_puts(false);
    let o = b.cmd(&["publish"]);
    assert!(
        text(&o).contains("published 2 sets (0 unchanged"),
        "{}",
        text(&o)
    );
    let node_a = Serving::start(&a, &base_a);
    let rel = "resourcesync/test/resourcelist.xml";
    let (status, _, served) = get(&format!("{base_a}{rel}"), None);
    assert_eq!(status, 200);
    assert_eq!(served, std::fs::read(www_b.join(rel)).unwrap(), "{rel}");
    assert_eq!(
        String::from_utf8(served).unwrap().matches("<url>").count(),
        list.matches("<url>").count() + 2,
        "one more deposit: its file and its metadata record"
    );
    node_a.stop();

    // Dated documents are listed by year, in shards of their set's manifest: a closed
    // day of an earlier year (put in B's folder as an earlier publish would have left
    // it) goes up with its year's shard once; the publishes that write the set again
    // later leave that shard alone; and A, pulling, gets the day from it.
    let year = chrono::Utc::now().format("%Y").to_string();
    let old_day = "resourcesync/test/changelist/2020-01-01.xml";
    std::fs::create_dir_all(www_b.join(old_day).parent().unwrap()).unwrap();
    std::fs::write(www_b.join(old_day), "<urlset/>").unwrap();
    let shard_puts = |y: &str| {
        let key = format!("PUT /plikt/kb/www/resourcesync/test/.documents-{y}-");
        proxy.heads().iter().filter(|h| h.starts_with(&key)).count()
    };
    let this_year_before = shard_puts(&year);
    for g in [4, 5] {
        generation.store(g, std::sync::atomic::Ordering::SeqCst);
        let o = b.harvest();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let o = b.cmd(&["publish"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    }
    assert_eq!(shard_puts("2020"), 1, "{:?}", proxy.heads());
    assert_eq!(shard_puts(&year), this_year_before + 2);
    let client = garage.client();
    let get_json = |key: &str| -> serde_json::Value {
        serde_json::from_slice(
            &runtime()
                .block_on(async { client.get(&Key::from(key)).await.unwrap().bytes().await })
                .unwrap(),
        )
        .unwrap()
    };
    let manifest = get_json("kb/www/resourcesync/test/.documents.json");
    let years: Vec<&String> = manifest["years"].as_object().unwrap().keys().collect();
    assert_eq!(years, ["2020", year.as_str()], "{manifest}");
    let listed: Vec<&String> = manifest["entries"].as_object().unwrap().keys().collect();
    assert!(
        listed.iter().any(|r| r.ends_with("/changelist.xml"))
            && !listed
                .iter()
                .any(|r| r.contains("/2020-") || r.contains(&format!("/{year}-"))),
        "the manifest lists dated documents itself: {listed:?}"
    );
    let sha = manifest["years"]["2020"].as_str().unwrap();
    let shard = get_json(&format!(
        "kb/www/resourcesync/test/.documents-2020-{}.json",
        &sha[..16]
    ));
    assert_eq!(
        shard.as_object().unwrap().keys().collect::<Vec<_>>(),
        [old_day],
        "{shard}"
    );
    let o = a.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(std::fs::read(www_a.join(old_day)).unwrap(), b"<urlset/>");

    // A worker not yet upgraded while the others run a newer plikt (a rolling upgrade)
    // finds their documents in a layout it does not know: it says so and leaves them
    // alone, rather than write them back in its own.
    let key = Key::from("kb/www/.manifest.json");
    let manifest: serde_json::Value = serde_json::from_slice(
        &runtime()
            .block_on(async { client.get(&key).await.unwrap().bytes().await })
            .unwrap(),
    )
    .unwrap();
    let mut newer = manifest.clone();
    newer["format"] = serde_json::json!(manifest["format"].as_u64().unwrap() + 1);
    let newer = serde_json::to_vec(&newer).unwrap();
    runtime()
        .block_on(client.put(&key, newer.clone().into()))
        .unwrap();
    let puts_before = proxy
        .heads()
        .iter()
        .filter(|h| h.starts_with("PUT "))
        .count();
    let o = b.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("of a newer plikt") && text(&o).contains("upgrade"),
        "{}",
        text(&o)
    );
    assert_eq!(
        proxy
            .heads()
            .iter()
            .filter(|h| h.starts_with("PUT "))
            .count(),
        puts_before,
        "it wrote to the object store"
    );
    let kept = runtime()
        .block_on(async { client.get(&key).await.unwrap().bytes().await })
        .unwrap();
    assert_eq!(kept.to_vec(), newer);
}

/// The publish lock among workers is PostgreSQL's, and it ends with its connection (a
/// restart, a failover, a network cut). A publish that lost it while copying its
/// documents up went on, and wrote its documents and manifest over those of the publish
/// another worker made meanwhile (a review reproduced it with gdb and
/// pg_terminate_backend: the Change List lost a deposit until the next publish of the
/// set). The copy now asks, before each write, whether its connection still holds the
/// lock, and stops.
#[test]
fn s3_a_publish_that_loses_its_lock_mid_copy_writes_nothing_more() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, Ordering};
    let garage = Garage::start("lostlock");
    let pg = OwnPostgres::start();
    let items = Arc::new(AtomicI64::new(3));
    let base: Arc<std::sync::OnceLock<String>> = Default::default();
    let (i2, b2) = (items.clone(), base.clone());
    let publisher = Server::with_handler(move |r| {
        if r.path == "/feed.xml" {
            let base = b2.get().unwrap();
            // Newest first, as the profile asks.
            let items: Vec<TestItem> = (1..=i2.load(Ordering::SeqCst))
                .rev()
                .map(|i| TestItem::new(&format!("l-{i}"), &date(i), &format!("{base}/l-{i}.html")))
                .collect();
            return Response::ok(feed(&items));
        }
        Response::file(HTML, "text/html")
    });
    let _ = base.set(publisher.url(""));
    let proxy = Proxy::start(garage.port);
    let mut env = Env::plain("s3-lostlock", &publisher.url("/feed.xml"), "");
    own_catalog(&mut env, &pg, "lostlock");
    let env = garage.configure_through(&proxy, env, "kb/", "");
    for args in [&["harvest"][..], &["publish"]] {
        let o = env.cmd(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o));
    }
    items.store(5, Ordering::SeqCst);
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // A slow object store: the publish is copying its first document when its lock's
    // session ends (as when PostgreSQL restarts).
    proxy.hold_puts(Duration::from_millis(1500));
    let before = proxy.heads().len();
    let mut publish = env.spawn(&["publish", "--no-dumps"]);
    let started = Instant::now();
    while !proxy.heads()[before..]
        .iter()
        .any(|h| h.starts_with("PUT /plikt/kb/www/"))
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the publish copied nothing within 30 s: {:#?}",
            &proxy.heads()[before..]
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let at = proxy.heads().len();
    // pg_advisory_lock(0x706c696b7403), plikt's publish lock: classid and objid.
    let ended = env.sql(
        "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'
         AND granted AND objsubid = 1 AND classid = 28780 AND objid = 1768649731",
    );
    assert_eq!(ended.len(), 1, "the publish lock's session: {ended:?}");
    proxy.hold_puts(Duration::ZERO);
    let exit = wait_for_exit(
        &mut publish,
        Duration::from_secs(30),
        "the publish did not end",
    );
    let said = std::fs::read_to_string(env.dir.join("spawned.log")).unwrap_or_default();
    assert_eq!(exit.code(), Some(2), "{said}");
    assert!(said.contains("lost its lock among workers"), "{said}");
    // Nothing written after the lock went, beyond the document already on its way.
    let after: Vec<String> = proxy.heads()[at..]
        .iter()
        .filter(|h| h.starts_with("PUT ") || h.starts_with("DELETE "))
        .cloned()
        .collect();
    assert!(after.is_empty(), "written without the lock: {after:#?}");
    // The next publish writes what this one did not: the Change List names all five
    // deposits, each with its record and its page.
    let o = env.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let listed = |set: &str| {
        let path = env
            .data()
            .join(format!("www/resourcesync/{set}/changelist.xml"));
        locs(&std::fs::read_to_string(path).unwrap()).len()
    };
    assert_eq!(listed("test"), 10);
}

/// A run that finds the object store away (it stops answering before or during the
/// run) downloads no more files: before, it downloaded every file of the feed only to
/// throw each away, at every run of every publisher for as long as the outage lasted.
/// The files it did not start stay pending, unattempted, and the run after the object
/// store's return stores them all.
#[test]
fn s3_a_run_that_finds_the_object_store_away_downloads_no_more_files() {
    let mut garage = Garage::start("away");
    const ITEMS: usize = 30;
    let publisher = noise_publisher(ITEMS, 2 << 20);
    let env = Env::on_two_connections("s3-away", &publisher);
    let env = garage.configure(env, "", "retry_timeout_secs = 2");
    let bins = || crate::support::files_fetched(&publisher);
    garage.stop();
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("this run downloads no more files"),
        "{}",
        text(&o)
    );
    // The files in flight when the first failed (two connections, four at most), not 30.
    let fetched = bins();
    eprintln!("{fetched} of {ITEMS} files downloaded with the object store away");
    assert!(
        fetched <= 6,
        "{fetched} of {ITEMS} files downloaded with the object store away"
    );
    assert_eq!(
        env.one("SELECT count(*) FROM versions WHERE state = 'pending' AND attempts = 0"),
        ITEMS.to_string()
    );
    garage.restart();
    let o = env.harvest();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(
        env.one("SELECT count(*) FROM versions WHERE state = 'deposited'"),
        ITEMS.to_string()
    );
    assert!(bins() <= ITEMS + fetched, "{} downloads in all", bins());
}

/// A dump package lost by the object store that only a past day's Resource Dump snapshot
/// lists, or comes to list once its set changed: plikt cannot write it again (its files
/// were the set's files that day), so it stays in the object store's lists until it is
/// restored from a backup, and `plikt audit` names it meanwhile with what to do. Before,
/// a pull forgot it, the publish did not write it again, and it dropped from the lists
/// while the snapshot still listed it, out of the audit's sight. Each way a worker meets
/// it is taken: the publish that forgets it and writes the set anew (its stub made
/// again from its sidecar), a new worker's pull, and a push that checks every stub. The
/// past snapshot is made on the embedded default under a clock set a day back, and moved
/// up with `plikt migrate` (Garage refuses requests signed a day off).
#[test]
fn s3_a_lost_package_only_past_snapshots_list_stays_listed_until_restored_from_a_backup() {
    let publisher = crate::resourcesync::one_item_publisher();
    // SQLite and the local folder, plikt's default, in the PostgreSQL pass too.
    let mut source = Env::plain("pastonly-source", &publisher.url("/feed.xml"), "");
    if let Some(url) = source.postgres.take() {
        source.replace_in_config(&format!("[catalog]\nurl = \"{url}\"\n"), "");
    }
    // Harvested and published yesterday: yesterday's snapshot is the live one.
    let yesterday = (chrono::Utc::now() - chrono::Duration::days(1))
        .format("%Y-%m-%d")
        .to_string();
    for (at, args) in [("12:00:00", "harvest"), ("12:05:00", "publish")] {
        let o = crate::support::plikt_at(&source, &format!("{yesterday} {at}"), &[args]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    }
    let set = source.data().join("www/resourcesync/test");
    let packages = |www: &std::path::Path, doc: &str| -> Vec<String> {
        let text = std::fs::read_to_string(www.join("resourcesync/test").join(doc)).unwrap();
        locs(&text)
            .into_iter()
            .filter(|l| l.ends_with(".zip"))
            .map(|l| l[l.find("resourcesync/").unwrap()..].to_string())
            .collect()
    };
    let [past] = &packages(&source.data().join("www"), "resourcedump.xml")[..] else {
        panic!("not one package yesterday");
    };
    let original = std::fs::read(set.parent().unwrap().parent().unwrap().join(past)).unwrap();

    // Moved up into PostgreSQL and Garage; a worker publishes there.
    let pg = OwnPostgres::start();
    let garage = Garage::start("pastonly");
    let mut a = Env::plain("pastonly-a", &publisher.url("/feed.xml"), "");
    own_catalog(&mut a, &pg, "pastonly");
    let a = garage.configure(a, "kb/", "");
    let o = a.cmd(&["migrate", "--from", source.data().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = a.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let key = format!("kb/www/{past}");
    assert!(
        object(&garage, &key) == original,
        "{past} moved up with other bytes"
    );
    let (code, out) = a.audit();
    assert_eq!(code, Some(0), "{out}");
    let sha256 = sha256_kept(&garage, &key).expect("a package keeps its SHA-256");
    // A worker of its own folder for each way in.
    let worker = |name: &str| worker_like(&a, name, &publisher.url("/feed.xml"));
    let published = |w: &Env| {
        let o = w.cmd(&["publish"]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr)
                .contains("to be restored from a backup of the bucket")
                || String::from_utf8_lossy(&o.stderr)
                    .contains("restore it from a backup of the bucket"),
            "no warning: {}",
            text(&o)
        );
    };
    let names_it = || {
        let (code, out) = a.audit();
        assert_eq!(code, Some(1), "{out}");
        let (line, _) = crate::support::package_advice(&out, past);
        assert!(
            line.contains(&format!(
                "only the Resource Dump snapshots of {yesterday} list it"
            )) && line.contains("restore the object from a backup of the bucket"),
            "{line}"
        );
    };

    // The object store loses the live package, and a deposit changes the set: a new
    // worker's publish forgets the package to write it again, but writes today's
    // snapshot under another name instead. Yesterday's snapshot still lists it: it stays
    // listed (its stub made again from its sidecar), and the audit names it.
    runtime()
        .block_on(garage.client().delete(&Key::from(key.as_str())))
        .unwrap();
    let url = a.one("SELECT url FROM files LIMIT 1");
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    crate::resourcesync::add_deposit(&a, "b", &format!("{url}?b"), &now);
    let o = a.cmd(&["audit", "--recount"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let b = worker("pastonly-b");
    published(&b);
    let www_b = b.data().join("www");
    assert!(
        !packages(&www_b, "resourcedump.xml").contains(past),
        "today's snapshot lists yesterday's package too"
    );
    names_it();
    // A new worker's first pull finds it lost: kept listed.
    let c = worker("pastonly-c");
    published(&c);
    names_it();
    // A push that checks every stub (the object store's lists and B's record of them
    // gone, to be written anew from B's folder): kept listed, the publish goes on.
    std::fs::remove_file(www_b.join(".mirrored-sets.json")).unwrap();
    runtime()
        .block_on(garage.client().delete(&Key::from("kb/www/.manifest.json")))
        .unwrap();
    published(&b);
    names_it();

    // As the audit says: the object put back from a backup (its bytes and the SHA-256
    // kept with them, as `rclone copy` keeps them); the audit is clean, and a node
    // serves it as the snapshot lists it.
    put_with_sha256(&garage, &key, original.clone(), &sha256);
    let (code, out) = a.audit();
    assert_eq!(code, Some(0), "{out}");
    let served = c.listen_on_free_port_keeping_base();
    let node = Serving::start(&c, &served);
    let (status, _, body) = get(&format!("{served}{past}"), None);
    assert_eq!(status, 200, "{past}");
    assert!(body == original, "{past} is served with other bytes");
    node.stop();
}

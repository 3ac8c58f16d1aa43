//! Blobs on an S3-compatible object store (issue 17 §2), against a real one: Garage
//! 2.5.0 on loopback ([`Garage`]), never a mock. A harvest, the Destination's downloads,
//! dump packages, `plikt audit`, an object store that goes away, a crash mid-upload.

use std::time::{Duration, Instant};

use object_store::ObjectStore;
use object_store::path::Path as Key;
use sha2::Digest;

use crate::support::{
    Body, Env, Garage, Proxy, Response, Serving, TestItem, date, feed, get_with, serve, text,
};

/// Bytes that do not compress and do not repeat (xorshift).
fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

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
    z.start_file("OEBPS/chapter.xhtml", stored).unwrap();
    z.write_all(&noise(300_000, 9)).unwrap();
    z.start_file("META-INF/rights.xml", stored).unwrap();
    z.write_all(b"<rights/>").unwrap();
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
    // Eight files, four distinct contents: four blobs, four objects, nothing temporary.
    assert_eq!(
        env.one("SELECT count(*) FROM files WHERE state = 'stored'"),
        "8"
    );
    assert_eq!(env.one("SELECT count(*) FROM blobs"), "4");
    let stored = objects(&garage, "kb/blobs");
    assert_eq!(stored.len(), 4, "{stored:?}");
    let big_sha = hex::encode(sha2::Sha256::digest(&big));
    let big_key = format!("kb/blobs/{}/{big_sha}", &big_sha[..2]);
    assert!(
        stored.contains(&(big_key.clone(), big.len() as u64)),
        "{stored:?}"
    );
    assert_eq!(objects(&garage, "kb/tmp"), Vec::new());
    assert_eq!(env.blobs().leftovers().unwrap(), Vec::<String>::new());
    // What went over the wire: the large file in three parts, each with its SHA-256
    // for the server to check; the others in one PUT each; one copy per distinct
    // content (the second PDF and the three other link pages were dropped, not copied).
    let heads = proxy.heads();
    let parts: Vec<&String> = heads.iter().filter(|h| h.contains("partNumber=")).collect();
    assert_eq!(parts.len(), 3, "{heads:#?}");
    let puts: Vec<&String> = heads
        .iter()
        .filter(|h| h.lines().next().unwrap().starts_with("PUT /plikt/kb/tmp/"))
        .collect();
    assert_eq!(puts.len(), 3 + 7, "{heads:#?}");
    assert!(
        puts.iter()
            .all(|h| h.to_ascii_lowercase().contains("x-amz-checksum-sha256: ")),
        "{puts:#?}"
    );
    let copies = heads
        .iter()
        .filter(|h| h.to_ascii_lowercase().contains("x-amz-copy-source:"))
        .count();
    assert_eq!(copies, 4, "{heads:#?}");
    // H-DRM read the EPUB's directory back from the object store.
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
    serving.stop();

    // Dump packages read the blobs from the object store.
    let o = env.cmd(&["publish"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let dumps = env.data().join("www/resourcesync/test/resourcedump");
    let mut packed = Vec::new();
    for e in std::fs::read_dir(&dumps).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "zip") {
            let mut z = zip::ZipArchive::new(std::fs::File::open(&p).unwrap()).unwrap();
            for i in 0..z.len() {
                let mut f = z.by_index(i).unwrap();
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut f, &mut bytes).unwrap();
                packed.push((f.name().to_string(), bytes));
            }
        }
    }
    assert!(
        packed.iter().any(|(_, b)| *b == big),
        "no package holds the large file: {:?}",
        packed.iter().map(|(n, _)| n).collect::<Vec<_>>()
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
    let pdf_sha = hex::encode(sha2::Sha256::digest(PDF));
    let pdf_key = Key::from(format!("kb/blobs/{}/{pdf_sha}", &pdf_sha[..2]));
    runtime()
        .block_on(
            garage
                .client()
                .put(&pdf_key, b"%PDF-1.4 something else".to_vec().into()),
        )
        .unwrap();
    let o = env.cmd(&["audit"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("0 missing, 1 corrupt"), "{out}");
    assert!(
        out.contains(&format!("corrupt: s3://plikt/{pdf_key}")),
        "{out}"
    );
}

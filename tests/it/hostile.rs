//! Hostile and broken input: a clear G-XML finding, never a panic, a hang, network
//! access, or memory that grows with the input.

use std::io::{self, Read, Write};
use std::net::TcpListener;
use std::process::Stdio;
use std::time::{Duration, Instant};

use plikt::profile::{self, Options, Report, RuleId, Severity};

use crate::support::{fixture, plikt};

fn validate(bytes: &[u8]) -> Report {
    profile::validate(bytes, &Options::default()).expect("reading from memory cannot fail")
}

/// The report consists of exactly one G-XML error; returns its message.
fn only_gxml(report: &Report) -> String {
    assert_eq!(report.findings.len(), 1, "{:#?}", report.findings);
    let f = &report.findings[0];
    assert_eq!(
        (f.rule, f.severity),
        (RuleId::GXml, Severity::Error),
        "{f:#?}"
    );
    f.message.to_string()
}

#[test]
fn billion_laughs_is_refused_at_the_expansion_bound() {
    let started = Instant::now();
    let m = only_gxml(&validate(&fixture("g-xml-billion-laughs.xml")));
    assert!(m.contains("expand to more than 100 times"), "{m}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn quadratic_blowup_is_refused_at_the_expansion_bound() {
    let big = "x".repeat(100_000);
    let refs = "&big;".repeat(100_000);
    let doc = format!(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE rss [<!ENTITY big \"{big}\">]>\n<rss version=\"2.0\"><channel><title>{refs}</title></channel></rss>"
    );
    let started = Instant::now();
    let m = only_gxml(&validate(doc.as_bytes()));
    assert!(m.contains("expand to more than 100 times"), "{m}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn external_entities_and_dtds_are_never_fetched() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let xxe = format!(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE rss [<!ENTITY xxe SYSTEM \"http://127.0.0.1:{port}/secret\">]>\n<rss version=\"2.0\"><channel><title>&xxe;</title></channel></rss>"
    );
    only_gxml(&validate(xxe.as_bytes()));
    // A DOCTYPE that only names an external DTD is passed over, never fetched.
    let dtd = String::from_utf8_lossy(&fixture("valid-minimal.xml")).replacen(
        "<rss",
        &format!("<!DOCTYPE rss SYSTEM \"http://127.0.0.1:{port}/rss.dtd\">\n<rss"),
        1,
    );
    let report = validate(dtd.as_bytes());
    assert!(report.valid(), "{:#?}", report.findings);
    let m = only_gxml(&validate(&fixture("g-xml-external-entity.xml")));
    assert!(m.contains("never fetches"), "{m}");
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == io::ErrorKind::WouldBlock),
        "the validator connected to the network"
    );
}

#[test]
fn nesting_deeper_than_the_limit_is_refused() {
    let depth = 100_000;
    let doc = format!(
        "<rss version=\"2.0\"><channel>{}{}</channel></rss>",
        "<x>".repeat(depth),
        "</x>".repeat(depth)
    );
    let m = only_gxml(&validate(doc.as_bytes()));
    assert!(m.contains("nested more than 256 levels"), "{m}");
}

#[test]
fn empty_junk_and_invalid_utf8_are_refused_with_a_position() {
    assert!(only_gxml(&validate(b"")).contains("no XML element"));
    only_gxml(&validate(&fixture("g-xml-binary-junk.xml")));
    let mut junk = vec![0u8; 4096];
    for (i, b) in junk.iter_mut().enumerate() {
        *b = (i * 7919 % 251) as u8;
    }
    only_gxml(&validate(&junk));
    let doc = b"<rss version=\"2.0\">\n<channel>\n<title>Sm\xf6rg\xe5s</title></channel></rss>";
    let report = validate(doc);
    let m = only_gxml(&report);
    assert!(m.contains("not valid UTF-8"), "{m}");
    let pos = report.findings[0].pos.expect("position");
    assert_eq!((pos.line, pos.column), (3, 10));
}

#[test]
fn declared_iso_8859_1_is_decoded() {
    let report = validate(&fixture("valid-iso-8859-1.xml"));
    assert!(
        report.findings.iter().all(|f| f.severity == Severity::Info),
        "{:#?}",
        report.findings
    );
    // The same text with a wrong value shows it decoded in the message.
    let doc = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<rss version=\"2.0\"><channel><title>T</title><link>https://a.se/</link><description>D</description><item><dcterms:accessRights xmlns:dcterms=\"http://purl.org/dc/terms/\">\xf6ppen</dcterms:accessRights></item></channel></rss>";
    let report = validate(doc);
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.rule == RuleId::R107 && f.message.to_string().contains("`öppen`")),
        "{:#?}",
        report.findings
    );
}

#[test]
fn a_huge_text_node_stops_at_the_event_limit() {
    struct Endless(u64);
    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let head = b"<rss version=\"2.0\"><channel><description>";
            let n = buf.len();
            for (i, b) in buf.iter_mut().enumerate() {
                let at = self.0 as usize + i;
                *b = if at < head.len() { head[at] } else { b'a' };
            }
            self.0 += n as u64;
            Ok(n)
        }
    }
    let report = profile::validate(Endless(0), &Options::default()).expect("validate");
    let m = only_gxml(&report);
    assert!(m.contains("larger than the limit of 16777216 bytes"), "{m}");
}

/// Peak resident memory of a running process (VmHWM), in KiB.
fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[test]
fn a_multi_gigabyte_stream_is_read_in_constant_memory_and_stops_at_the_limit() {
    let mut child = plikt()
        .args(["validate", "--format", "json", "--max-bytes", "2G", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let head = b"<?xml version=\"1.0\"?>\n<rss version=\"2.0\" xmlns:dcterms=\"http://purl.org/dc/terms/\"><channel><title>T</title><link>https://a.se/</link><description>D</description>\n";
        let _ = stdin.write_all(head);
        let filler = "Lorem ipsum dolor sit amet, tidningen berättar. ".repeat(160);
        let mut peak = 0;
        let mut written: u64 = 0;
        let mut last_poll = Instant::now();
        for i in 0u64.. {
            let item = format!(
                "<item><guid>https://a.se/{i}</guid><title>T {i}</title><link>https://a.se/{i}</link><pubDate>Sun, 22 Nov 2026 09:30:00 +0100</pubDate><description>{filler}</description></item>\n"
            );
            if stdin.write_all(item.as_bytes()).is_err() {
                break;
            }
            written += item.len() as u64;
            if last_poll.elapsed() > Duration::from_millis(50) {
                peak = peak.max(peak_kib(pid).unwrap_or(0));
                last_poll = Instant::now();
            }
        }
        (written, peak)
    });
    let out = child.wait_with_output().expect("wait");
    let (written, peak) = writer.join().expect("writer");
    assert!(
        written > 2 << 30,
        "only {written} bytes were read before the validator stopped"
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["findings"][0]["rule"], "G-XML");
    assert!(
        v["findings"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("larger than the limit")),
        "{v}"
    );
    assert!(peak > 0, "memory was never sampled");
    assert!(
        peak < 64 * 1024,
        "peak resident memory {peak} KiB for a {written}-byte stream"
    );
}

/// A deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn mutated_fixtures_never_panic_and_always_finish() {
    let mut rng = Rng(0x05EE_D0F9_1AC7);
    let feeds: Vec<Vec<u8>> = [
        "valid-daily-newspaper.xml",
        "valid-book-publisher.xml",
        "valid-podcast.xml",
        "valid-iso-8859-1.xml",
    ]
    .iter()
    .map(|n| fixture(n))
    .collect();
    for round in 0..1500 {
        let mut doc = feeds[round % feeds.len()].clone();
        match rng.below(4) {
            0 => doc.truncate(rng.below(doc.len())),
            1 => {
                for _ in 0..1 + rng.below(8) {
                    let i = rng.below(doc.len());
                    doc[i] = rng.next() as u8;
                }
            }
            2 => {
                let (a, b) = (rng.below(doc.len()), rng.below(doc.len()));
                let (a, b) = (a.min(b), a.max(b));
                let piece = doc[a..b].to_vec();
                let at = rng.below(doc.len());
                doc.splice(at..at, piece);
            }
            _ => {
                let i = rng.below(doc.len());
                let insert: &[u8] = [
                    &b"<"[..],
                    b"&",
                    b"]]>",
                    b"<![CDATA[",
                    b"\xc3",
                    b"xmlns:x=\"\"",
                    b"</item>",
                ][rng.below(7)];
                doc.splice(i..i, insert.iter().copied());
            }
        }
        let report = validate(&doc);
        if report.findings.iter().any(|f| f.rule == RuleId::GXml) {
            assert_eq!(
                report.findings.len(),
                1,
                "round {round}: G-XML must stand alone"
            );
        }
    }
}

/// A valid one-item feed whose description is `filler`, so that what follows the
/// filler lands at a chosen byte offset.
fn feed_with_description(filler: &str) -> String {
    let feed = String::from_utf8(fixture("valid-minimal.xml")).expect("utf-8");
    let item = feed.find("<item").expect("item");
    let at = item + feed[item..].find("</title>").expect("item title") + "</title>".len();
    let mut doc = feed.clone();
    doc.insert_str(at, &format!("<description>{filler}</description>"));
    doc
}

#[test]
fn characters_split_across_read_chunks_are_decoded_whole() {
    // The decoder reads 64 KiB at a time: put a two-byte and a three-byte character
    // across that boundary, and check nothing is reported and positions stay exact.
    let probe = feed_with_description("");
    let desc = probe.find("<description>").expect("description") + "<description>".len();
    for (ch, shift) in [("å", 1), ("€", 1), ("€", 2), ("😀", 3)] {
        let pad = 65_536 - desc - shift;
        let filler = format!("{}{ch}", "x".repeat(pad));
        let doc = feed_with_description(&filler);
        let report = validate(doc.as_bytes());
        assert!(
            report.valid(),
            "{ch} at the chunk boundary: {:#?}",
            report.findings
        );
        // A finding after the boundary still has the right column: break the
        // accessRights value and compare with where it is.
        let broken = doc.replace(">gratis<", ">free<");
        let report = validate(broken.as_bytes());
        let f = report
            .findings
            .iter()
            .find(|f| f.rule == RuleId::R107)
            .expect("R107");
        let line = broken[..broken.find("<dcterms:accessRights>").expect("element")]
            .matches('\n')
            .count() as u32
            + 1;
        assert_eq!(f.pos.map(|p| p.line), Some(line));
    }
}

#[test]
fn a_forbidden_character_split_across_read_chunks_is_found() {
    let probe = feed_with_description("");
    let desc = probe.find("<description>").expect("description") + "<description>".len();
    for shift in 1..=2 {
        let filler = format!("{}\u{FFFF}", "x".repeat(65_536 - desc - shift));
        let m = only_gxml(&validate(feed_with_description(&filler).as_bytes()));
        assert!(m.contains("U+FFFF"), "{m}");
    }
}

#[test]
fn utf16_surrogate_pairs_split_across_read_chunks_are_decoded() {
    // The first read is 64 KiB: place the 4-byte pair at 65534 so it is split 2 + 2.
    let doc = feed_with_description("😀").replacen("encoding=\"UTF-8\"", "encoding=\"UTF-16\"", 1);
    let units_before = doc[..doc.find('😀').expect("emoji")].encode_utf16().count();
    let pad = (65_534 - 2) / 2 - units_before;
    let padded = doc.replacen(
        "<description>",
        &format!("<description>{}", "y".repeat(pad)),
        1,
    );
    let mut bytes = vec![0xFF, 0xFE];
    for u in padded.encode_utf16() {
        bytes.extend_from_slice(&u.to_le_bytes());
    }
    assert_eq!(
        &bytes[65_534..65_538],
        "😀"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect::<Vec<u8>>()
            .as_slice()
    );
    let report = validate(&bytes);
    assert!(report.valid(), "{:#?}", report.findings);
    assert_eq!(report.encoding, Some(plikt::xml::Encoding::Utf16Le));
}

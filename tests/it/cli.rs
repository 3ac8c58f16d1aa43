//! `plikt validate` as a publisher runs it: exit codes, the three formats, standard
//! input and URLs (against a real server on 127.0.0.1).

use std::io::Write;
use std::process::{Output, Stdio};

use crate::support::{Response, Server, fixture, plikt, root};

fn run(args: &[&str]) -> Output {
    plikt()
        .args(args)
        .current_dir(root())
        .output()
        .expect("run plikt")
}

/// Runs plikt with `input` on its standard input (written from a thread, so that a large
/// input cannot block on a full output pipe).
fn run_with_stdin(args: &[&str], input: Vec<u8>) -> Output {
    let mut child = plikt()
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn plikt");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("wait for plikt");
    writer
        .join()
        .expect("writer")
        .expect("write standard input");
    out
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn exit_status_is_0_for_a_valid_feed_1_for_errors_2_for_unreadable_input() {
    let valid = run(&["validate", "fixtures/feeds/valid-book-publisher.xml"]);
    assert_eq!(valid.status.code(), Some(0), "{}", stdout(&valid));
    let warnings_only = run(&["validate", "fixtures/feeds/r108-missing.xml"]);
    assert_eq!(
        warnings_only.status.code(),
        Some(0),
        "{}",
        stdout(&warnings_only)
    );
    assert!(stdout(&warnings_only).contains("warning[R108]"));
    let invalid = run(&["validate", "fixtures/feeds/r107-free.xml"]);
    assert_eq!(invalid.status.code(), Some(1));
    let missing = run(&["validate", "fixtures/feeds/no-such-feed.xml"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("cannot read fixtures/feeds/no-such-feed.xml"),
        "{}",
        stderr(&missing)
    );
    let usage = run(&["validate", "--format", "yaml", "x.xml"]);
    assert_eq!(usage.status.code(), Some(2));
    let no_args = run(&["validate"]);
    assert_eq!(no_args.status.code(), Some(2));
}

#[test]
fn text_report_reads_like_a_compiler_diagnostic() {
    let o = run(&[
        "validate",
        "--color",
        "never",
        "fixtures/feeds/r107-free.xml",
    ]);
    let text = stdout(&o);
    let line = text
        .lines()
        .find(|l| l.contains("error[R107]"))
        .unwrap_or_else(|| panic!("no R107 line:\n{text}"));
    assert!(line.starts_with("fixtures/feeds/r107-free.xml:"), "{line}");
    assert!(
        line.contains("accessRights must be exactly `gratis` or `restricted`; found `free`"),
        "{line}"
    );
    // The source line, then a caret under the column the diagnostic names.
    let (_, pos) = line.split_once(".xml:").expect("position");
    let mut parts = pos.split(':');
    let (ln, col): (usize, usize) = (
        parts.next().and_then(|s| s.parse().ok()).expect("line"),
        parts.next().and_then(|s| s.parse().ok()).expect("col"),
    );
    let lines: Vec<&str> = text.lines().collect();
    let i = lines.iter().position(|l| *l == line).expect("index");
    let source = lines[i + 2];
    assert!(source.starts_with(&format!("{ln} | ")), "{source}");
    assert!(
        source.contains("<dcterms:accessRights>free</dcterms:accessRights>"),
        "{source}"
    );
    let caret = lines[i + 3];
    let bar = caret.find("| ").expect("gutter") + 2;
    assert_eq!(
        caret.find('^'),
        Some(bar + col - 1),
        "caret under column {col}:\n{source}\n{caret}"
    );
    assert!(source[bar..].chars().nth(col - 1) == Some('<'));
    assert!(text.contains("= item 1, guid "));
    assert!(
        text.contains(
            "= help: R107: `dcterms:accessRights`: mandatory, once, `gratis` or `restricted`"
        ),
        "{text}"
    );
    assert!(
        text.trim_end()
            .ends_with("not valid for KB profile 2.4 — 1 error, 0 warnings, 0 infos in 1 item"),
        "{text}"
    );
    assert!(!text.contains('\x1b'), "no colour when not asked for");
    let colored = run(&[
        "validate",
        "--color",
        "always",
        "fixtures/feeds/r107-free.xml",
    ]);
    assert!(stdout(&colored).contains("\x1b[1;31merror"));
}

#[test]
fn text_report_shows_decoded_source_lines_of_an_iso_8859_1_feed() {
    let o = run(&[
        "validate",
        "--color",
        "never",
        "fixtures/feeds/valid-iso-8859-1.xml",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let dir = tempfile::Builder::new()
        .prefix("plikt-latin1-")
        .tempdir()
        .expect("dir");
    let feed = String::from_utf8_lossy(&fixture("r107-free.xml"))
        .replace("encoding=\"UTF-8\"", "encoding=\"ISO-8859-1\"");
    let bytes: Vec<u8> = feed
        .replace("free", "fri på nätet")
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect();
    let path = dir.path().join("latin1.xml");
    std::fs::write(&path, bytes).expect("write");
    let o = plikt()
        .args(["validate", "--color", "never"])
        .arg(&path)
        .output()
        .expect("run");
    let text = stdout(&o);
    assert!(text.contains("found `fri på nätet`"), "{text}");
    assert!(
        text.contains("<dcterms:accessRights>fri på nätet</dcterms:accessRights>"),
        "{text}"
    );
}

/// Issue 16 §3: the report in Swedish with `--lang sv` or a Swedish locale, the same
/// verdict, positions and names; English with `--lang en` whatever the locale.
#[test]
fn the_report_speaks_swedish_with_lang_sv_or_a_swedish_locale() {
    let feed = "fixtures/feeds/r107-free.xml";
    let swedish = |text: &str| {
        assert!(
            text.contains("error[R107]: accessRights ska vara exakt `gratis` eller `restricted`; här står `free`"),
            "{text}"
        );
        assert!(
            text.contains("= hjälp: R107: `dcterms:accessRights`: obligatoriskt"),
            "{text}"
        );
        assert!(
            text.trim_end().ends_with(
                "inte giltigt enligt KB:s profil 2.4 — 1 fel, 0 varningar, 0 upplysningar i 1 item"
            ),
            "{text}"
        );
    };
    let o = run(&["validate", "--color", "never", "--lang", "sv", feed]);
    assert_eq!(o.status.code(), Some(1));
    swedish(&stdout(&o));
    let in_locale = |lang: &str, args: &[&str]| {
        plikt()
            .env_remove("LC_ALL")
            .env_remove("LC_MESSAGES")
            .env("LANG", lang)
            .args(["validate", "--color", "never"])
            .args(args)
            .arg(feed)
            .current_dir(root())
            .output()
            .expect("run plikt")
    };
    swedish(&stdout(&in_locale("sv_SE.UTF-8", &[])));
    let english = stdout(&in_locale("sv_SE.UTF-8", &["--lang", "en"]));
    assert!(
        english.contains("accessRights must be exactly `gratis` or `restricted`; found `free`")
            && english
                .trim_end()
                .ends_with("1 error, 0 warnings, 0 infos in 1 item"),
        "{english}"
    );
    // JSON: the same names and verdict, the message in the language asked for.
    let json = |lang: &str| -> serde_json::Value {
        let o = run(&["validate", "--format", "json", "--lang", lang, feed]);
        serde_json::from_slice(&o.stdout).expect("JSON")
    };
    let (sv, en) = (json("sv"), json("en"));
    assert_eq!(sv["valid"], en["valid"]);
    assert_eq!(sv["findings"][0]["rule"], "R107");
    assert_eq!(sv["findings"][0]["line"], en["findings"][0]["line"]);
    assert!(
        sv["findings"][0]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("accessRights ska vara exakt")),
        "{sv}"
    );
    let bad = run(&["validate", "--lang", "de", feed]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("use `sv` or `en`"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn json_report_has_the_stable_names() {
    let o = run(&[
        "validate",
        "--format",
        "json",
        "fixtures/feeds/r107-free.xml",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(v["profile"], "kb-2.4");
    assert_eq!(v["source"], "fixtures/feeds/r107-free.xml");
    assert_eq!(v["valid"], false);
    assert_eq!(v["items"], 1);
    assert_eq!(v["errors"], 1);
    assert_eq!(v["warnings"], 0);
    let f = &v["findings"][0];
    assert_eq!(f["rule"], "R107");
    assert_eq!(f["severity"], "error");
    assert!(f["line"].as_u64().is_some_and(|l| l > 1));
    assert!(f["column"].as_u64().is_some_and(|c| c >= 1));
    assert_eq!(f["item"], 1);
    assert!(f["guid"].as_str().is_some_and(|g| !g.is_empty()));
    assert!(f["message"].as_str().is_some_and(|m| m.contains("`free`")));
}

#[test]
fn junit_report_has_one_testcase_per_item_plus_the_channel() {
    let o = run(&[
        "validate",
        "--format",
        "junit",
        "fixtures/feeds/g-order-simple.xml",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let xml = stdout(&o);
    let report = plikt::profile::validate(&fixture("g-order-simple.xml")[..], &Default::default())
        .expect("validate");
    let cases = xml.matches("<testcase ").count();
    assert_eq!(cases, report.items as usize + 1, "{xml}");
    assert!(xml.contains("name=\"channel\""));
    assert!(xml.contains("<failure type=\"G-ORDER\""), "{xml}");
    // The JUnit document itself is well-formed XML.
    let junit = plikt::profile::validate(xml.as_bytes(), &Default::default()).expect("read");
    assert!(
        junit
            .findings
            .iter()
            .all(|f| f.rule != plikt::profile::RuleId::GXml),
        "{:?}",
        junit.findings
    );
}

#[test]
fn standard_input_is_validated_with_source_lines() {
    let o = run_with_stdin(
        &["validate", "--color", "never", "-"],
        fixture("r107-free.xml"),
    );
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(text.contains("-:"), "{text}");
    assert!(
        text.contains("<dcterms:accessRights>free</dcterms:accessRights>"),
        "{text}"
    );
}

#[test]
fn a_url_is_fetched_from_the_server_and_validated() {
    let server = Server::start(vec![
        ("/eplikt.xml", Response::ok(fixture("r107-free.xml"))),
        (
            "/gzip.xml",
            Response::ok(gzip(&fixture("r107-free.xml"))).header("Content-Encoding", "gzip"),
        ),
        (
            "/br.xml",
            Response::ok(vec![1, 2, 3]).header("Content-Encoding", "br"),
        ),
        ("/big.xml", Response::ok(vec![b' '; 4096])),
    ]);
    // The test server is on loopback, which `validate` fetches only when allowed.
    let run = |args: &[&str]| run(&[&["validate", "--allow-private"][..], args].concat());
    let o = run(&["--color", "never", &server.url("/eplikt.xml")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("<dcterms:accessRights>free</dcterms:accessRights>"));
    let head = server.requests.lock().expect("lock")[0].to_ascii_lowercase();
    assert!(head.contains("user-agent: plikt/"), "{head}");
    assert!(head.contains("accept-encoding: gzip"), "{head}");

    let missing = run(&[&server.url("/gone.xml")]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("HTTP 404"),
        "{}",
        stderr(&missing)
    );
    // A gzip-coded feed is decoded (its decoded size capped by --max-bytes) …
    let gz = run(&["--color", "never", &server.url("/gzip.xml")]);
    assert_eq!(gz.status.code(), Some(1), "{}", stderr(&gz));
    assert!(stdout(&gz).contains("<dcterms:accessRights>free</dcterms:accessRights>"));
    let capped = run(&["--max-bytes", "1K", &server.url("/gzip.xml")]);
    assert_eq!(capped.status.code(), Some(2));
    assert!(
        stderr(&capped).contains("larger than the limit of 1024 bytes"),
        "{}",
        stderr(&capped)
    );
    // … any other coding is refused.
    let coded = run(&[&server.url("/br.xml")]);
    assert_eq!(coded.status.code(), Some(2));
    assert!(
        stderr(&coded).contains("Content-Encoding: br"),
        "{}",
        stderr(&coded)
    );
    let big = run(&["--max-bytes", "1K", &server.url("/big.xml")]);
    assert_eq!(big.status.code(), Some(2));
    assert!(
        stderr(&big).contains("larger than the limit of 1024 bytes"),
        "{}",
        stderr(&big)
    );
    let refused = run(&["http://127.0.0.1:9/feed.xml"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("http://127.0.0.1:9/feed.xml"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn a_url_on_a_private_address_is_refused_unless_allowed() {
    let server = Server::start(vec![
        ("/eplikt.xml", Response::ok(fixture("r107-free.xml"))),
        ("/hop", Response::redirect("/eplikt.xml")),
    ]);
    // A loopback address as such, and a name that resolves to one: refused before any
    // request, saying how to allow it.
    for url in [
        server.url("/eplikt.xml"),
        server.url("/eplikt.xml").replace("127.0.0.1", "localhost"),
    ] {
        let o = run(&["validate", &url]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("--allow-private"), "{}", stderr(&o));
    }
    assert!(server.received().is_empty());
    // Allowed: fetched, redirects included (each hop checked again).
    let o = run(&["validate", "--allow-private", &server.url("/hop")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(server.received().len(), 2);
}

#[test]
fn a_truncated_feed_reports_g_xml_alone_and_no_items() {
    let o = run(&[
        "validate",
        "--format",
        "json",
        "fixtures/feeds/g-xml-truncated.xml",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        v["items"], 0,
        "items read before a fatal error count for nothing"
    );
    assert_eq!(v["findings"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["findings"][0]["rule"], "G-XML");
    let junit = run(&[
        "validate",
        "--format",
        "junit",
        "fixtures/feeds/g-xml-truncated.xml",
    ]);
    let xml = stdout(&junit);
    assert_eq!(xml.matches("<testcase ").count(), 1, "{xml}");
    assert!(xml.contains("<failure type=\"G-XML\""), "{xml}");
}

fn gzip(b: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(b).expect("gzip");
    e.finish().expect("gzip")
}

#[test]
fn a_large_file_gives_the_report_its_bytes_give_on_standard_input() {
    // Past 8 MiB a file is read on two threads, standard input on one: the JSON reports
    // must be the same but for the source's name. The daily newspaper's items written
    // over and over repeat guids and pubDates, so R101 and G-ORDER fire across the file.
    let one = fixture("valid-daily-newspaper.xml");
    let first = one
        .windows(6)
        .position(|w| w == b"<item>")
        .expect("an item");
    let last = one
        .windows(7)
        .rposition(|w| w == b"</item>")
        .expect("an item end")
        + 7;
    let mut feed = one[..first].to_vec();
    while feed.len() < 9 << 20 {
        feed.extend_from_slice(&one[first..last]);
    }
    feed.extend_from_slice(&one[last..]);
    let dir = tempfile::Builder::new()
        .prefix("plikt-it-split-")
        .tempdir()
        .expect("temp dir");
    let path = dir.path().join("large.xml");
    std::fs::write(&path, &feed).expect("write feed");

    let from_file = run(&[
        "validate",
        "--format",
        "json",
        path.to_str().expect("utf-8 path"),
    ]);
    let from_stdin = run_with_stdin(&["validate", "--format", "json", "-"], feed);
    drop(dir);

    assert_eq!(from_file.status.code(), Some(1), "{}", stderr(&from_file));
    assert_eq!(from_stdin.status.code(), Some(1), "{}", stderr(&from_stdin));
    let report = |o: &Output| {
        let mut v: serde_json::Value =
            serde_json::from_slice(&o.stdout).expect("one JSON document");
        v.as_object_mut().expect("object").remove("source");
        v
    };
    let (a, b) = (report(&from_file), report(&from_stdin));
    assert!(a["items"].as_u64().unwrap_or(0) > 1000, "{a}");
    assert!(a["errors"].as_u64().unwrap_or(0) > 1000, "{a}");
    assert_eq!(a, b);
}

/// `plikt status | head -1`: a reader that stops reading is no error. Each report
/// command writes into a pipe whose reader is gone before it writes, and exits as it
/// would have (0), without a panic or an error message.
#[test]
fn a_report_into_a_closed_pipe_ends_quietly() {
    let env = crate::support::Env::plain("closed-pipe", "http://127.0.0.1:9/feed.xml", "");
    assert_eq!(env.cmd(&["audit"]).status.code(), Some(0));
    for args in [
        &["status"][..],
        &["status", "--format", "json"],
        &["audit"],
        &["publish", "--no-dumps"],
    ] {
        let mut child = plikt()
            .args(args)
            .arg("--config")
            .arg(&env.config)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start plikt");
        // The reader goes away before plikt writes its report.
        drop(child.stdout.take());
        let o = child.wait_with_output().expect("plikt ends");
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).is_empty(), "{args:?}: {}", stderr(&o));
    }
}

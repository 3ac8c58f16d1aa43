//! Two threads must give exactly the report of one: every test compares
//! [`run`] with [`super::super::validate`] on the same bytes, finding by finding
//! (rule, severity, position, item, guid, message, order), and checks that the helper
//! did read items where it could.

use std::io::Write;
use std::path::Path;

use super::*;
use crate::profile::RuleId;

/// A file holding `bytes`, removed when dropped.
fn temp_feed(name: &str, bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut feed = tempfile::Builder::new()
        .prefix(&format!("plikt-split-{name}-"))
        .suffix(".xml")
        .tempfile()
        .expect("create temp feed");
    feed.write_all(bytes).expect("write temp feed");
    feed
}

/// Validates `bytes` on one thread and, with `segment`-byte segments, on two; asserts
/// the reports are identical and returns the split report and how many items the
/// helper read.
fn same(name: &str, bytes: &[u8], segment: u64) -> (Report, u32) {
    let one = crate::profile::validate(bytes, &Options::default()).expect("read from memory");
    let feed = temp_feed(name, bytes);
    let file = File::open(feed.path()).expect("open temp feed");
    let options = Options {
        segment_bytes: segment,
        ..Options::default()
    };
    let (two, spliced) = run(&file, &options).expect("read temp feed");
    assert_eq!(
        format!("{one:#?}"),
        format!("{two:#?}"),
        "{name}, segments of {segment} bytes ({spliced} items read by the helper)"
    );
    (two, spliced)
}

/// `bytes` with the stretch from the first `<item` to the end of the last `</item>`
/// written `n` times.
fn amplified(bytes: &[u8], n: usize) -> Option<Vec<u8>> {
    let first = memchr::memmem::find(bytes, b"<item>")
        .or_else(|| memchr::memmem::find(bytes, b"<item "))?;
    let last = memchr::memmem::rfind(bytes, b"</item>")? + b"</item>".len();
    if last <= first {
        return None;
    }
    let mut out = bytes[..first].to_vec();
    for _ in 0..n {
        out.extend_from_slice(&bytes[first..last]);
    }
    out.extend_from_slice(&bytes[last..]);
    Some(out)
}

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/feeds")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The pubDate of item `i`: a minute older than item `i - 1`'s.
fn pub_date(i: u32) -> String {
    let minute = 59 - i % 60;
    let hour = 23 - (i / 60) % 24;
    let day = 28 - (i / 1440) % 28;
    format!("<pubDate>{day:02} Nov 2026 {hour:02}:{minute:02}:00 +0100</pubDate>")
}

/// A valid item of the profile, the `i`-th of a feed, newest first.
fn item(i: u32, description: &str) -> String {
    let date = pub_date(i);
    format!(
        "\t\t<item>\n\t\t\t<guid isPermaLink=\"false\">urn:uuid:split-{i}</guid>\n\
         \t\t\t<link>https://tidning.example/a/{i}</link>\n\
         \t\t\t{date}\n\
         \t\t\t<title>Artikel {i}</title>\n\t\t\t<description>{description}</description>\n\
         \t\t\t<dcterms:publisher>http://id.kb.se/organisations/SE5560041815</dcterms:publisher>\n\
         \t\t\t<dcterms:identifier xsi:type=\"dcterms:uri\">https://tidning.example/a/{i}</dcterms:identifier>\n\
         \t\t\t<dcterms:accessRights>gratis</dcterms:accessRights>\n\
         \t\t\t<dcterms:license>https://creativecommons.org/licenses/by/4.0/</dcterms:license>\n\
         \t\t\t<dcterms:format>text/html</dcterms:format>\n\t\t</item>\n"
    )
}

/// A feed of `n` items; `description(i)` gives item `i`'s description, `between(i)`
/// what comes after it.
fn feed(n: u32, description: impl Fn(u32) -> String, between: impl Fn(u32) -> String) -> Vec<u8> {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <rss version=\"2.0\" xmlns:dcterms=\"http://purl.org/dc/terms/\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">\n\
         \t<channel xmlns:media=\"http://search.yahoo.com/mrss/\">\n\
         \t\t<title>Dagbladet</title>\n\t\t<link>https://tidning.example/</link>\n\
         \t\t<description>Nyheter</description>\n",
    );
    for i in 1..=n {
        s.push_str(&item(i, &description(i)));
        s.push_str(&between(i));
    }
    s.push_str("\t</channel>\n</rss>\n");
    s.into_bytes()
}

#[test]
fn every_fixture_gives_the_same_report_on_two_threads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/feeds");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixtures/feeds")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".xml"))
        .collect();
    names.sort();
    assert!(names.len() > 100, "only {} fixtures", names.len());
    // Fixtures that are not well-formed before their first items, or have none, are
    // read on one thread; the others must have had items read by the helper.
    let mut spliced = 0;
    let mut fixtures_spliced = 0;
    for name in &names {
        let bytes = fixture(name);
        let mut here = 0;
        for segment in [1, 300, 2000] {
            here += same(name, &bytes, segment).1;
            // Each fixture's items twelve times over: duplicate guids and pubDates out
            // of order across segments, and every oddity of the fixture at many offsets.
            if let Some(more) = amplified(&bytes, 12) {
                here += same(&format!("{name}x12"), &more, segment).1;
            }
        }
        spliced += here;
        fixtures_spliced += u32::from(here > 0);
    }
    assert!(
        fixtures_spliced as usize > names.len() * 3 / 4,
        "the helper read items of only {fixtures_spliced} of {} fixtures ({spliced} items)",
        names.len()
    );
}

#[test]
fn a_large_valid_feed_is_shared_with_the_helper_and_stays_valid() {
    let bytes = feed(3000, |i| format!("Text {i}"), |_| String::new());
    let (report, spliced) = same("large", &bytes, 16 * 1024);
    assert_eq!(report.items, 3000);
    assert_eq!(
        (report.errors, report.warnings, report.infos),
        (0, 0, 0),
        "{report:#?}"
    );
    // The threads share by measured speed ([`share`]), which counts as at most four
    // times apart: the helper reads at least about a sixth, however busy the machine.
    assert!(
        spliced > 500,
        "the helper read only {spliced} of 3000 items"
    );
}

#[test]
fn cross_item_rules_see_items_of_both_threads() {
    // Item 1500 reuses item 10's guid, item 2500 is newer than the one before it.
    let mut text =
        String::from_utf8(feed(3000, |i| format!("Text {i}"), |_| String::new())).expect("utf-8");
    text = text.replace("urn:uuid:split-1500<", "urn:uuid:split-10<");
    text = text.replace(&pub_date(2500), &pub_date(2500).replace("Nov", "Dec"));
    let (report, spliced) = same("cross", text.as_bytes(), 8 * 1024);
    assert!(
        spliced > 500,
        "the helper read only {spliced} of 3000 items"
    );
    let rules: Vec<(RuleId, Option<u32>)> =
        report.findings.iter().map(|f| (f.rule, f.item)).collect();
    assert_eq!(
        rules,
        [(RuleId::R101, Some(1500)), (RuleId::GOrder, Some(2500))],
        "{report:#?}"
    );
}

#[test]
fn item_ends_inside_cdata_and_comments_are_not_taken_for_boundaries() {
    let bytes = feed(
        400,
        |i| match i % 3 {
            0 => format!("<![CDATA[<p>{i}</item> </p>]]>"),
            1 => format!("x{i} &lt;/item&gt; y"),
            _ => format!("Text {i}"),
        },
        |i| {
            if i % 5 == 0 {
                format!("\t\t<!-- </item> {i} -->\n")
            } else {
                String::new()
            }
        },
    );
    let mut spliced = 0;
    for segment in [1, 97, 250, 1024, 3000] {
        let (report, n) = same("cdata", &bytes, segment);
        assert_eq!(report.errors, 0, "{report:#?}");
        spliced += n;
    }
    assert!(spliced > 0);
}

#[test]
fn malformed_xml_in_a_later_segment_is_reported_where_one_thread_reports_it() {
    for (k, bad) in [
        "Text &bogus; x",
        "Text ]]> x",
        "<b>unclosed",
        "Text \u{1} x",
    ]
    .into_iter()
    .enumerate()
    {
        let bytes = feed(
            600,
            |i| {
                if i == 450 {
                    bad.to_string()
                } else {
                    format!("Text {i}")
                }
            },
            |_| String::new(),
        );
        for segment in [1, 4096] {
            let (report, _) = same(&format!("bad{k}"), &bytes, segment);
            assert_eq!(report.findings.len(), 1, "{report:#?}");
            assert_eq!(report.findings[0].rule, RuleId::GXml);
        }
    }
    let mut invalid = feed(600, |i| format!("Text {i}"), |_| String::new());
    let at = memchr::memmem::find(&invalid, b"Text 450").expect("item 450");
    invalid[at] = 0xFF;
    let (report, _) = same("invalid-utf8", &invalid, 4096);
    assert_eq!(report.findings[0].rule, RuleId::GXml, "{report:#?}");
}

#[test]
fn channel_children_after_items_a_second_channel_and_declarations_in_items() {
    let text = String::from_utf8(feed(
        500,
        |i| format!("Text {i}"),
        |i| match i {
            // A channel element among the items: the run of items ends there.
            150 => "\t\t<title>Second title</title>\n".to_string(),
            // DC 1.1 elements and namespace declarations inside items, a foreign
            // element between items.
            200..=210 => "\t\t<x:note xmlns:x=\"urn:x\">n</x:note>\n".to_string(),
            _ => String::new(),
        },
    ))
    .expect("utf-8");
    let text = text
        .replace(
            "<title>Artikel 300</title>",
            "<title xmlns:dc=\"http://purl.org/dc/elements/1.1/\">Artikel 300</title><dc:subject xmlns:dc=\"http://purl.org/dc/elements/1.1/\">s</dc:subject>",
        )
        .replace(
            "<title>Artikel 320</title>",
            "<title xmlns:dcterms=\"http://purl.org/dc/terms\">Artikel 320</title>",
        )
        .replace(
            "\t</channel>\n</rss>",
            &format!(
                "\t</channel>\n\t<channel xmlns:dcterms=\"urn:other\">{}\t</channel>\n</rss>",
                (1..40).map(|i| item(3000 + i, "second")).collect::<String>()
            ),
        );
    let mut spliced = 0;
    for segment in [1, 512, 4096] {
        let (report, n) = same("channel", text.as_bytes(), segment);
        spliced += n;
        for rule in [
            RuleId::GRssChannel,
            RuleId::GNsDcelements,
            RuleId::GNsDcterms,
            RuleId::GRss,
        ] {
            assert!(
                report.findings.iter().any(|f| f.rule == rule),
                "no {rule} at segments of {segment}: {report:#?}"
            );
        }
    }
    assert!(spliced > 100, "the helper read only {spliced} items");
}

#[test]
fn an_xml_declaration_ending_after_the_first_kib_gives_one_verdict() {
    // Found by the split fuzz target: the `?>` of the XML declaration comes only after the
    // first KiB, and a quote follows its unclosed label. One thread read the whole input at
    // once and took the label up to that quote (an unsupported encoding); two threads
    // looked at the first KiB only and read on as UTF-8. Both now read it as UTF-8, and
    // the declaration itself is malformed (its encoding is no name).
    let text = String::from_utf8(feed(
        40,
        |i| format!("Text {i}"),
        |i| {
            if i == 3 {
                "<?pi x?>".into()
            } else {
                String::new()
            }
        },
    ))
    .expect("utf-8");
    let text = text.replacen("encoding=\"UTF-8\"?>", "encoding=\"U", 1);
    assert!(text.find("?>").is_some_and(|at| at > 1024));
    let (report, _) = same("late-declaration-end", text.as_bytes(), 1);
    assert!(
        report
            .findings
            .iter()
            .all(|f| !f.message.to_string().contains("is not supported")),
        "{report:#?}"
    );
}

#[test]
fn other_encodings_and_small_files_are_read_on_one_thread() {
    let utf8 = feed(300, |i| format!("Text {i} åäö"), |_| String::new());
    let latin1: Vec<u8> = String::from_utf8(utf8.clone())
        .expect("utf-8")
        .replace("encoding=\"UTF-8\"", "encoding=\"ISO-8859-1\"")
        .chars()
        .map(|c| u8::try_from(u32::from(c)).expect("latin-1"))
        .collect();
    assert_eq!(same("latin1", &latin1, 1).1, 0);
    let mut bom = vec![0xEF, 0xBB, 0xBF];
    bom.extend_from_slice(&utf8);
    assert_eq!(same("bom", &bom, 1).1, 0);
    assert_eq!(same("small", &utf8, 1 << 20).1, 0);
    assert!(same("utf8", &utf8, 1).1 > 0);
}

#[test]
fn a_feed_whose_doctype_declares_entities_is_read_on_one_thread() {
    // The helper would not know `&nbsp;` or the default attribute; one thread reads it
    // all, with the same report, and expansion is bounded over the whole document.
    let utf8 = String::from_utf8(feed(300, |i| format!("Text&nbsp;{i}"), |_| String::new()))
        .expect("utf-8");
    let declared = utf8.replacen(
        "<rss ",
        "<!DOCTYPE rss [<!ENTITY nbsp \"&#160;\"><!ATTLIST guid isPermaLink CDATA \"false\">]>\n<rss ",
        1,
    );
    let (report, spliced) = same("doctype", declared.as_bytes(), 1);
    assert_eq!(spliced, 0);
    assert_eq!(report.items, 300);
    // Without declarations, the DOCTYPE changes nothing.
    let plain = utf8
        .replace("&nbsp;", "&#160;")
        .replacen("<rss ", "<!DOCTYPE rss>\n<rss ", 1);
    assert!(same("plain-doctype", plain.as_bytes(), 1).1 > 0);
}

/// [`share`] with 1 MiB segments, for threads that have read `main_speed` and
/// `helper_speed` MiB in one busy second each.
fn plan(remaining: u64, lag: u64, main_speed: u64, helper_speed: u64) -> (u64, bool) {
    share(Progress {
        segment: 1 << 20,
        remaining,
        lag,
        main: (main_speed << 20, 1_000_000_000),
        helper: (helper_speed << 20, 1_000_000_000),
    })
}

#[test]
fn the_main_thread_is_given_what_it_reads_while_the_helper_reads_a_segment() {
    const MIB: u64 = 1 << 20;
    // As fast as the helper: a segment's worth, and half again to stay a little behind.
    assert_eq!(plan(80 * MIB, 0, 10, 10), (3 * MIB / 2, false));
    // Half as fast (it also applies the rules across items): half as much.
    assert_eq!(plan(80 * MIB, 0, 5, 10), (3 * MIB / 4, false));
    // Behind by a quarter of a MiB: that much less.
    assert_eq!(plan(80 * MIB, MIB / 4, 10, 10), (5 * MIB / 4, false));
    // Behind by more than it can read meanwhile: the helper reads on at once.
    assert_eq!(plan(80 * MIB, 3 * MIB, 10, 10), (0, false));
    // Nothing measured yet: taken as equally fast.
    let unmeasured = share(Progress {
        segment: MIB,
        remaining: 80 * MIB,
        lag: 0,
        main: (0, 0),
        helper: (MIB, 0),
    });
    assert_eq!(unmeasured, (3 * MIB / 2, false));
    // A stall measured early does not leave one thread nearly all the work: speeds
    // count as at most four times apart.
    assert_eq!(plan(80 * MIB, 0, 1, 100), (3 * MIB / 8, false));
    assert_eq!(plan(80 * MIB, 0, 100, 1), (6 * MIB, false));
}

#[test]
fn near_the_end_both_threads_are_given_what_makes_them_finish_together() {
    const MIB: u64 = 1 << 20;
    for (remaining, lag, main_speed, helper_speed) in [
        (2 * MIB, 0, 10, 10),
        (2 * MIB, MIB / 2, 10, 10),
        (2 * MIB, MIB, 6, 10),
        (MIB / 3, 0, 10, 7),
        (MIB, 2 * MIB, 10, 10),
    ] {
        let (gap, last) = plan(remaining, lag, main_speed, helper_speed);
        assert!(
            last,
            "{remaining} bytes left: the helper should read on to the end"
        );
        // Time is bytes over speed; compare main (lag + gap) / main_speed with
        // helper (remaining - gap) / helper_speed, to the byte.
        let main = u128::from(lag + gap) * u128::from(helper_speed);
        let helper = u128::from(remaining - gap) * u128::from(main_speed);
        let slack = u128::from(main_speed + helper_speed);
        assert!(
            main.abs_diff(helper) <= slack || (gap == 0 && main >= helper),
            "{remaining} bytes left, {lag} behind, speeds {main_speed}:{helper_speed}: \
             the main thread gets {gap}"
        );
    }
    // Further from the end, segments keep their size.
    assert!(!plan(6 * MIB, 0, 10, 10).1);
}

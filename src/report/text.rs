//! `--format text`: compiler-style diagnostics (STYLE habit 3, after just's
//! `src/token.rs`): `path:line:col: severity[RULE]: message`, the source line with a
//! caret under the spot, the hint, and a summary. Colour only when asked for.

use std::fs::File;
use std::io::{self, Write};

use super::{Printer, Snippets, Source};
use crate::profile::{Finding, Report, Severity};

/// The text printer.
#[derive(Debug, Default)]
pub struct Text {
    /// Use ANSI colours.
    pub color: bool,
}

struct Style {
    on: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn severity(&self, s: Severity) -> String {
        let code = match s {
            Severity::Error => "1;31",
            Severity::Warning => "1;33",
            Severity::Info => "1;36",
        };
        self.paint(code, s.as_str())
    }
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

impl Text {
    fn finding(
        &self,
        f: &Finding,
        source: &Source,
        snippets: &Snippets,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let style = Style { on: self.color };
        let hint = f.rule.summary();
        let at = f
            .pos
            .map(|p| format!("{}:{}:", p.line, p.column))
            .unwrap_or_default();
        writeln!(
            out,
            "{} {}{}: {}",
            style.paint("1", &format!("{}:{at}", source.name)),
            style.severity(f.severity),
            style.paint("1", &format!("[{}]", f.rule)),
            f.message
        )?;
        if let Some(p) = f.pos {
            let gutter = p.line.to_string().len();
            if let Some(s) = snippets.line(p.line) {
                let pre = if s.cut_before { "…" } else { "" };
                let post = if s.cut_after { "…" } else { "" };
                let bar = style.paint("1;34", "|");
                writeln!(out, "{:gutter$} {bar}", "")?;
                writeln!(
                    out,
                    "{} {bar} {pre}{}{post}",
                    style.paint("1;34", &p.line.to_string()),
                    s.text
                )?;
                let offset = p.column.saturating_sub(s.first_column) as usize + pre.chars().count();
                writeln!(
                    out,
                    "{:gutter$} {bar} {:offset$}{}",
                    "",
                    "",
                    style.paint("1;32", "^")
                )?;
            }
            let mut notes = Vec::new();
            if let Some(i) = f.item {
                notes.push(match &f.guid {
                    Some(g) => format!("item {i}, guid {g}"),
                    None => format!("item {i}"),
                });
            }
            for n in notes {
                writeln!(out, "{:gutter$} {} {}", "", style.paint("1;34", "="), n)?;
            }
            writeln!(
                out,
                "{:gutter$} {} {}: {}: {hint}",
                "",
                style.paint("1;34", "="),
                style.paint("1", "help"),
                f.rule
            )?;
        } else {
            writeln!(out, "  = help: {}: {hint}", f.rule)?;
        }
        writeln!(out)
    }
}

impl Printer for Text {
    fn print(&self, report: &Report, source: &Source, out: &mut dyn Write) -> io::Result<()> {
        let snippets = match &source.copy {
            Some(path) => {
                let positions = report
                    .findings
                    .iter()
                    .filter_map(|f| f.pos)
                    .map(|p| (p.line, p.column));
                File::open(path)
                    .and_then(|f| Snippets::read(f, positions))
                    .unwrap_or_default()
            }
            None => Snippets::default(),
        };
        for f in &report.findings {
            self.finding(f, source, &snippets, out)?;
        }
        for ((rule, severity), n) in &report.omitted {
            writeln!(
                out,
                "{}: … and {} more {severity}[{rule}] not shown (raise --max-findings)",
                source.name, n
            )?;
        }
        let style = Style { on: self.color };
        let verdict = if report.valid() {
            style.paint("1;32", "valid")
        } else {
            style.paint("1;31", "not valid")
        };
        writeln!(
            out,
            "{}: {} for KB profile 2.4 — {}, {}, {} in {}",
            source.name,
            verdict,
            plural(report.errors, "error"),
            plural(report.warnings, "warning"),
            plural(report.infos, "info"),
            plural(u64::from(report.items), "item"),
        )
    }
}

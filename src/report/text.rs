//! `--format text`: compiler-style diagnostics (STYLE habit 3, after just's
//! `src/token.rs`): `path:line:col: severity[RULE]: message`, the source line with a
//! caret under the spot, the hint, and a summary. Colour only when asked for.

use std::io::{self, Seek, SeekFrom, Write};

use super::{Printer, Snippets, Source};
use crate::i18n::{self, Lang};
use crate::profile::{Finding, Report, Severity};

/// The text printer.
#[derive(Debug, Clone, Copy)]
pub struct Text {
    /// Use ANSI colours.
    pub color: bool,
    /// The language of the messages, hints and summary.
    pub lang: Lang,
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

impl Text {
    fn finding(
        &self,
        f: &Finding,
        source: &Source,
        snippets: &Snippets,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let style = Style { on: self.color };
        let hint = f.rule.summary(self.lang);
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
            f.message.render(self.lang)
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
                    Some(g) => crate::msg!("text-item-guid", item = i, guid = g),
                    None => crate::msg!("text-item", item = i),
                });
            }
            for n in notes {
                let n = n.render(self.lang);
                writeln!(out, "{:gutter$} {} {}", "", style.paint("1;34", "="), n)?;
            }
            writeln!(
                out,
                "{:gutter$} {} {}: {}: {hint}",
                "",
                style.paint("1;34", "="),
                style.paint("1", &i18n::text(self.lang, "text-help", &[])),
                f.rule
            )?;
        } else {
            let help = i18n::text(self.lang, "text-help", &[]);
            writeln!(out, "  = {help}: {}: {hint}", f.rule)?;
        }
        writeln!(out)
    }
}

impl Printer for Text {
    fn print(&self, report: &Report, source: &Source, out: &mut dyn Write) -> io::Result<()> {
        let snippets = match &source.copy {
            Some(file) => {
                let positions = report
                    .findings
                    .iter()
                    .filter_map(|f| f.pos)
                    .map(|p| (p.line, p.column));
                file.try_clone()
                    .and_then(|mut f| {
                        f.seek(SeekFrom::Start(0))?;
                        Snippets::read(f, positions)
                    })
                    .unwrap_or_default()
            }
            None => Snippets::default(),
        };
        for f in &report.findings {
            self.finding(f, source, &snippets, out)?;
        }
        for ((rule, severity), n) in &report.omitted {
            let more = crate::msg!(
                "text-omitted",
                n = *n,
                severity = severity.as_str(),
                rule = rule.as_str()
            );
            writeln!(out, "{}: {}", source.name, more.render(self.lang))?;
        }
        let style = Style { on: self.color };
        let lang = self.lang;
        let verdict = if report.valid() {
            style.paint("1;32", &i18n::text(lang, "text-valid", &[]))
        } else {
            style.paint("1;31", &i18n::text(lang, "text-not-valid", &[]))
        };
        let summary = crate::msg!(
            "text-summary",
            verdict = verdict,
            errors = i18n::count(lang, "count-errors", report.errors),
            warnings = i18n::count(lang, "count-warnings", report.warnings),
            infos = i18n::count(lang, "count-infos", report.infos),
            items = i18n::count(lang, "count-items", u64::from(report.items)),
        );
        writeln!(out, "{}: {}", source.name, summary.render(lang))
    }
}

//! `plikt status`.

use clap::Args;

use super::error::{Error, Exit};
use crate::store::PublisherStatus;

/// Output format of `plikt status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StatusFormat {
    /// For people.
    Text,
    /// `{"publishers":[…]}`, names stable.
    Json,
}

/// Arguments of `plikt status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The configuration file.
    #[arg(long, short, default_value = "plikt.toml")]
    pub config: std::path::PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = StatusFormat::Text)]
    pub format: StatusFormat,
}

/// Prints the status of every configured publisher.
pub fn run(args: &StatusArgs) -> Result<Exit, Error> {
    let config = super::load(&args.config)?;
    let publishers = crate::schedule::status(&config)?;
    match args.format {
        StatusFormat::Json => {
            let doc = serde_json::json!({ "publishers": publishers });
            outln!("{}", serde_json::to_string_pretty(&doc)?);
        }
        StatusFormat::Text => {
            for p in &publishers {
                outln!("{}", text(p).trim_end_matches('\n'));
            }
        }
    }
    Ok(Exit::Ok)
}

fn text(p: &PublisherStatus) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "{}", p.id);
    match &p.last_run {
        Some(r) => {
            let _ = writeln!(
                s,
                "  last run   #{} {} → {}: {}{}",
                r.id,
                r.started_at,
                r.ended_at
                    .map_or("(running)".to_string(), |t| t.to_string()),
                r.outcome,
                r.message
                    .as_deref()
                    .map(|m| format!(" — {m}"))
                    .unwrap_or_default()
            );
            let _ = writeln!(
                s,
                "             {} items, {} new versions, {} deposited, {} rejected, {} files stored, {} failed",
                r.counts.items,
                r.counts.new_versions,
                r.counts.deposited,
                r.counts.rejected,
                r.counts.files_stored,
                r.counts.files_failed
            );
        }
        None => {
            let _ = writeln!(s, "  last run   never");
        }
    }
    let _ = writeln!(
        s,
        "  collection {} deposits, {} versions, {} files; {} pending, {} failed",
        p.deposits, p.versions, p.files, p.pending, p.failed
    );
    match &p.harvesting {
        Some(h) if h.expired => {
            let _ = writeln!(
                s,
                "  harvesting stopped: the lease of worker {} ran out at {}; the next worker to look takes the run over",
                h.worker, h.lease_until
            );
        }
        Some(h) => {
            let _ = writeln!(
                s,
                "  harvesting now, by worker {} (lease until {})",
                h.worker, h.lease_until
            );
        }
        None => {}
    }
    let _ = writeln!(
        s,
        "  next run   {}",
        p.next_run.map_or("none".to_string(), |t| t.to_string())
    );
    for i in &p.items {
        let _ = writeln!(
            s,
            "  {:<9} {} — {}{}",
            i.state.as_str(),
            i.guid.as_deref().unwrap_or("(no guid)"),
            i.reason.as_deref().unwrap_or(""),
            i.next_attempt_at
                .map(|t| format!(" (retry after {t})"))
                .unwrap_or_default()
        );
    }
    findings(&mut s, &p.findings);
    s
}

/// The findings of the last feed read, the first 20 of them.
fn findings(s: &mut String, findings: &[crate::store::StoredFinding]) {
    use std::fmt::Write;
    let errors = findings
        .iter()
        .filter(|f| f.severity == crate::profile::Severity::Error)
        .count();
    let warnings = findings.len() - errors;
    if !findings.is_empty() {
        let _ = writeln!(
            s,
            "  findings   {errors} errors, {warnings} warnings in the last feed read"
        );
        for f in findings.iter().take(20) {
            let at = match (f.line, f.column) {
                (Some(l), Some(c)) => format!("{l}:{c}: "),
                _ => String::new(),
            };
            let _ = writeln!(s, "    {at}{}[{}]: {}", f.severity, f.rule, f.message);
        }
        if findings.len() > 20 {
            let _ = writeln!(
                s,
                "    … {} more (--format json lists them)",
                findings.len() - 20
            );
        }
    }
}

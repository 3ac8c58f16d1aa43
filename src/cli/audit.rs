//! `plikt audit`.

use clap::Args;

use super::error::{Error, Exit};
use crate::store::{Mode, Store};

/// Arguments of `plikt audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// The configuration file.
    #[arg(long, short, default_value = "plikt.toml")]
    pub config: std::path::PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Re-reads every blob; exit 0 only when everything the catalog points at is intact.
pub fn run(args: &AuditArgs) -> Result<Exit, Error> {
    let config = super::load(&args.config)?;
    let store = Store::open(&config, Mode::Read)?;
    let report = store.catalog.audit(&store.blobs, &|_| {})?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "checked {} blobs ({} bytes): {} missing, {} corrupt, {} dangling, {} incomplete versions, {} unreferenced files",
            report.blobs_checked,
            report.bytes_checked,
            report.missing.len(),
            report.corrupt.len(),
            report.dangling.len(),
            report.incomplete.len(),
            report.unreferenced.len()
        );
        for (what, list) in [
            ("missing", &report.missing),
            ("corrupt", &report.corrupt),
            ("dangling", &report.dangling),
            ("incomplete", &report.incomplete),
            ("unreferenced", &report.unreferenced),
            ("temporary", &report.leftovers),
        ] {
            for l in list {
                println!("{what}: {l}");
            }
        }
    }
    Ok(if report.intact() {
        Exit::Ok
    } else {
        Exit::Invalid
    })
}

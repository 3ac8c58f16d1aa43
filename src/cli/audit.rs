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
    /// First set the tallies behind `/metrics`, `plikt status` and the dashboard
    /// (each publisher's deposits, versions and files; the store's blobs and bytes)
    /// from a count of the catalog's rows, and report those that were wrong. Safe while
    /// `plikt run` harvests.
    #[arg(long)]
    pub recount: bool,
    /// Then fetch every blob found missing or damaged again from its publisher, and
    /// store it if its bytes are the ones recorded (takes the data folder's lock, as a
    /// harvest does). Exit 0 only if every one was stored again.
    #[arg(long)]
    pub refetch: bool,
}

/// Re-reads every blob; exit 0 only when everything the catalog points at is intact.
pub fn run(args: &AuditArgs) -> Result<Exit, Error> {
    let config = super::load(&args.config)?;
    let mode = if args.refetch {
        Mode::Write
    } else {
        Mode::Read
    };
    let mut store = Store::open(&config, mode)?;
    let recounted = if args.recount {
        store.catalog.recount()?
    } else {
        Vec::new()
    };
    let mut report = store.catalog.audit(&store.blobs, &|_| {})?;
    report.recounted = recounted;
    // The packages' lookup failing (the object store away) loses nothing of the
    // catalog's audit, which is printed first.
    let packages =
        crate::resourcesync::audit_packages(&config, &store.blobs).map(|(checked, found)| {
            report.packages_checked = checked;
            report.packages = found;
        });
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        outln!(
            "checked {} blobs ({} bytes): {} missing, {} corrupt, {} dangling, {} incomplete versions, {} unreferenced files, {} wrong tallies",
            report.blobs_checked,
            report.bytes_checked,
            report.missing.len(),
            report.corrupt.len(),
            report.dangling.len(),
            report.incomplete.len(),
            report.unreferenced.len(),
            report.tallies.len()
        );
        for (what, list) in [
            ("missing", &report.missing),
            ("corrupt", &report.corrupt),
            ("dangling", &report.dangling),
            ("incomplete", &report.incomplete),
            ("unreferenced", &report.unreferenced),
            ("temporary", &report.leftovers),
            ("recounted", &report.recounted),
        ] {
            for l in list {
                outln!("{what}: {l}");
            }
        }
        for t in &report.tallies {
            outln!("wrong tally: {t} (plikt audit --recount sets it from the rows)");
        }
        if report.packages_checked > 0 || !report.packages.is_empty() {
            outln!(
                "checked {} dump packages {}: {} missing or other bytes",
                report.packages_checked,
                if store.blobs.documents().is_some() {
                    "in the object store"
                } else {
                    "in data_dir/www"
                },
                report.packages.len()
            );
            for p in &report.packages {
                outln!("package: {p}");
            }
        }
    }
    packages?;
    if args.refetch && !report.lost.is_empty() {
        return refetch(config, &store, &report);
    }
    Ok(if report.intact() {
        Exit::Ok
    } else {
        Exit::Invalid
    })
}

/// `--refetch`: the lost blobs fetched again, each reported; exit 0 only if every one
/// was stored again and nothing else was wrong.
fn refetch(
    config: std::sync::Arc<crate::config::Config>,
    store: &Store,
    report: &crate::store::AuditReport,
) -> Result<Exit, Error> {
    use crate::harvest::{Harvester, NoProgress, Refetched};
    let rt = super::runtime()?;
    let (_keep, shutdown) = tokio::sync::watch::channel(false);
    let harvester = Harvester::new(config, shutdown, std::sync::Arc::new(NoProgress))?;
    let done = rt.block_on(harvester.refetch(&store.catalog, &store.blobs, &report.lost))?;
    let stored = done
        .iter()
        .filter(|r| matches!(r, Refetched::Stored { .. }))
        .count();
    for r in &done {
        match r {
            Refetched::Stored { sha256, url } => outln!("fetched again: blob {sha256} from {url}"),
            Refetched::NotStored { sha256, reason } => {
                outln!("not fetched again: blob {sha256}: {reason}");
            }
        }
    }
    outln!(
        "fetched again and stored {stored} of {} missing or damaged blobs; `plikt audit` checks them",
        done.len()
    );
    Ok(if stored == done.len() && report.intact_but_lost() {
        Exit::Ok
    } else {
        Exit::Invalid
    })
}

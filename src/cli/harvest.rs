//! `plikt harvest`.

use std::io::IsTerminal;
use std::sync::Arc;

use clap::Args;

use super::error::{Error, Exit};
use crate::config::{Config, PublisherConfig};
use crate::harvest::{Harvester, NoProgress, Progress, RunSummary};
use crate::store::{Busy, Mode, Store};

/// Arguments of `plikt harvest`.
#[derive(Debug, Args)]
pub struct HarvestArgs {
    /// The configuration file.
    #[arg(long, short, default_value = "plikt.toml")]
    pub config: std::path::PathBuf,
    /// Harvest only this publisher.
    #[arg(long)]
    pub publisher: Option<String>,
}

/// Harvests now; exit 0 when every run was carried out (items that failed are
/// recorded and retried later), 1 when a run could not be carried out.
pub fn run(args: &HarvestArgs) -> Result<Exit, Error> {
    let config = super::load(&args.config)?;
    let publishers: Vec<_> = match &args.publisher {
        Some(id) => vec![config.publisher(id).cloned().ok_or_else(|| {
            Error::Usage(format!(
                "no publisher `{id}` in {}; configured: {}",
                args.config.display(),
                config
                    .publishers
                    .iter()
                    .map(|p| p.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?],
        None => config.publishers.clone(),
    };
    let interactive = std::io::stderr().is_terminal();
    super::init_logging(interactive);
    let store = Store::open(&config, Mode::Write)?;
    let progress: Arc<dyn Progress> = if interactive {
        Arc::new(super::progress::Bars::new(publishers.len() as u64))
    } else {
        Arc::new(NoProgress)
    };
    let rt = super::runtime()?;
    let (mut summaries, mut busy) = rt.block_on(harvest(config.clone(), publishers, progress))?;
    drop(store);
    summaries.sort_by(|a, b| a.publisher.cmp(&b.publisher));
    let mut all_completed = true;
    for s in &summaries {
        let c = &s.counts;
        outln!(
            "{}: {} (run {}) — {} items, {} new versions, {} deposited, {} rejected, {} files stored ({} bytes), {} files failed",
            s.publisher,
            s.outcome,
            s.run,
            c.items,
            c.new_versions,
            c.deposited,
            c.rejected,
            c.files_stored,
            c.bytes,
            c.files_failed
        );
        if let Some(m) = &s.message {
            eprintln!("plikt: error: {m}");
        }
        for f in &s.failures {
            eprintln!("plikt: failed: {f}");
        }
        all_completed &= s.completed();
    }
    busy.sort_by(|a, b| a.0.cmp(&b.0));
    for (publisher, Busy::HeldBy(worker, until)) in &busy {
        eprintln!(
            "plikt: {publisher}: not harvested: worker {worker} is harvesting it (its lease runs until {until}); try again when that run has ended"
        );
        all_completed = false;
    }
    Ok(if all_completed {
        Exit::Ok
    } else {
        Exit::Invalid
    })
}

/// Runs `publishers` now, `runs_per_worker` at a time, each under a lease: the runs
/// carried out, and the publishers another worker was harvesting.
async fn harvest(
    config: Arc<Config>,
    publishers: Vec<PublisherConfig>,
    progress: Arc<dyn Progress>,
) -> Result<(Vec<RunSummary>, Vec<(String, Busy)>), Error> {
    let (_tx, shutdown) = super::shutdown_signal();
    let harvester = Harvester::new(config.clone(), shutdown.clone(), progress)?;
    // Under a lease, like a worker's scheduled run: never beside another
    // worker's run of the same publisher.
    let worker = crate::schedule::Worker::new(&config)?;
    tokio::spawn(worker.clone().keep_leases(shutdown));
    let harvester = match worker.host_gate() {
        Some(gate) => harvester.with_host_gate(gate),
        None => harvester,
    };
    // At most `runs_per_worker` runs at once, as `plikt run`: each run holds its
    // feed and its state, so starting all made memory grow by about 1 MiB per
    // publisher (issue 35 §6).
    let capacity = (config.harvest.runs_per_worker as usize).max(1);
    let mut waiting = publishers.into_iter();
    let mut set = tokio::task::JoinSet::new();
    let mut start = |set: &mut tokio::task::JoinSet<_>| {
        let Some(p) = waiting.next() else { return };
        let (h, w) = (harvester.clone(), worker.clone());
        set.spawn(async move {
            w.harvest_now(&h, &p)
                .await
                .map(|r| r.map_err(|busy| (p.id.clone(), busy)))
        });
    };
    for _ in 0..capacity {
        start(&mut set);
    }
    let mut out = Vec::new();
    let mut busy = Vec::new();
    while let Some(r) = set.join_next().await {
        start(&mut set);
        match r.map_err(|e| Error::Task {
            what: "a harvest",
            reason: e.to_string(),
        })?? {
            Ok(summary) => out.push(summary),
            Err(b) => busy.push(b),
        }
    }
    Ok((out, busy))
}

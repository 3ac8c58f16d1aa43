//! Command-line arguments, one file per command. Nothing else depends on this module.

/// `println!` for the commands' reports: a reader that went away (`plikt status | head`)
/// is not an error (what it did not read is dropped, as other Unix tools do); another
/// failure to write is [`Error::Output`]. Returns from the function with it.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::written({
            use std::io::Write as _;
            let mut out = std::io::stdout().lock();
            writeln!(out, $($arg)*).and_then(|()| out.flush())
        })?
    };
}

mod audit;
mod error;
mod harvest;
mod migrate;
mod progress;
mod publish;
mod run;
mod status;
mod validate;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use tokio::sync::watch;

use crate::config::Config;
pub use error::{Error, Exit};

pub use validate::ValidateArgs;

/// The result of writing a report: a closed pipe (the reader went away) is fine.
fn written(result: std::io::Result<()>) -> Result<(), Error> {
    match result {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Output(e)),
        _ => Ok(()),
    }
}

/// plikt: legal deposit of publishers' RSS feeds (KB e-plikt profile 2.4).
#[derive(Debug, Parser)]
#[command(name = "plikt", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// plikt's commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check a feed against KB's delivery profile 2.4 and report every finding.
    Validate(ValidateArgs),
    /// Harvest every publisher (or one) now, then exit.
    Harvest(harvest::HarvestArgs),
    /// Run the service: harvest each publisher on its schedule and serve HTTP.
    Run(ConfigArgs),
    /// Write the ResourceSync documents (Source Description, Capability Lists, Resource
    /// and Change Lists, Resource and Change Dumps) from the catalog.
    Publish(publish::PublishArgs),
    /// Serve the ResourceSync documents and the resources on `listen`.
    Serve(ConfigArgs),
    /// Show each publisher's last run, counts, failures, findings and next run.
    Status(status::StatusArgs),
    /// Re-read every stored file and check it against the catalog.
    Audit(audit::AuditArgs),
    /// Copy a SQLite catalog and its blob folder into the configuration's PostgreSQL
    /// catalog and object store, resumably, and verify the copy.
    Migrate(migrate::MigrateArgs),
}

/// `--config FILE`.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// The configuration file.
    #[arg(long, short, default_value = "plikt.toml")]
    pub config: PathBuf,
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<Exit, Error> {
    match cli.command {
        Command::Validate(args) => validate::run(&args),
        Command::Harvest(args) => harvest::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Publish(args) => publish::publish(&args),
        Command::Serve(args) => publish::serve(&args),
        Command::Status(args) => status::run(&args),
        Command::Audit(args) => audit::run(&args),
        Command::Migrate(args) => migrate::run(&args),
    }
}

fn load(path: &Path) -> Result<Arc<Config>, Error> {
    Ok(Arc::new(Config::load(path)?))
}

fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(Error::Runtime)
}

/// Structured logs on standard error, filtered by `RUST_LOG` (default: `info`, or
/// `warn` under a progress bar).
fn init_logging(quiet: bool) {
    let default = if quiet { "warn" } else { "info" };
    let filter: tracing_subscriber::filter::Targets = std::env::var("RUST_LOG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| default.parse().expect("constant filter"));
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::stderr().is_terminal()),
        )
        .with(filter)
        .try_init();
}

/// Runs `open` (blocking) until it succeeds or fails for another reason than the
/// catalog being away; `None` once shutdown is asked for. A service started while
/// PostgreSQL starts or restarts waits for it, as a running one does (issue 35 §5:
/// a worker started 0.3 s before `pg_ctl restart` exited).
async fn when_catalog_answers<T: Send + 'static>(
    what: &'static str,
    shutdown: &watch::Receiver<bool>,
    open: impl Fn() -> Result<T, Error> + Send + Sync + 'static,
) -> Result<Option<T>, Error> {
    let open = Arc::new(open);
    let mut patience = crate::store::Patience::default();
    let mut shutdown = shutdown.clone();
    loop {
        let attempt = open.clone();
        let result = tokio::task::spawn_blocking(move || attempt())
            .await
            .map_err(|e| Error::Task {
                what,
                reason: e.to_string(),
            })?;
        match result {
            Ok(t) => return Ok(Some(t)),
            Err(e) if e.catalog_away() => {
                tracing::warn!(error = %e, retry_in_secs = patience.next_secs(), "{what}: the catalog does not answer; waiting for it");
            }
            Err(e) => return Err(e),
        }
        if !patience.wait(&mut shutdown).await {
            return Ok(None);
        }
    }
}

/// A shutdown signal that turns true on SIGTERM or Ctrl-C.
fn shutdown_signal() -> (watch::Sender<bool>, watch::Receiver<bool>) {
    let (tx, rx) = watch::channel(false);
    let tx2 = tx.clone();
    tokio::spawn(async move {
        let ctrl_c = tokio::signal::ctrl_c();
        #[cfg(unix)]
        {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                    .expect("installing the SIGTERM handler");
            tokio::select! {
                _ = ctrl_c => {}
                _ = term.recv() => {}
            }
        }
        #[cfg(not(unix))]
        let _ = ctrl_c.await;
        tracing::warn!("shutdown requested: finishing work in flight");
        let _ = tx2.send(true);
    });
    (tx, rx)
}

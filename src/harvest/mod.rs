//! One run of one publisher, end to end (issue 3 §3):
//!
//! 1. **fetch** the feed with a conditional GET (a 304 skips to step 4);
//! 2. **validate** it with the same [`Validator`] as `plikt validate`. A first pass
//!    only decides whether the feed is readable: `G-XML` / `G-RSS` stop the run with
//!    nothing harvested (never the items before the error), and it finds duplicate
//!    guids;
//! 3. **diff**, in one transaction with the run's findings: each item is rejected (no
//!    or duplicate guid, no usable pubDate, no valid file URL), unchanged, or a new
//!    deposit / new version (known guid, newer pubDate), recorded as `pending` with its
//!    files. H-VERSION, H-COVERAGE, H-PUBLISHER and H-PAGINATION are applied here;
//! 4. **download** every file of every pending version that is due (new ones and
//!    earlier failures whose backoff has passed), verify and store it;
//! 5. **deposit**: a version whose files are all stored becomes `deposited` and its
//!    change is journalled in the same transaction; a failed file counts a failed
//!    attempt, retried with backoff by later runs until `max_failed_runs`.
//!
//! A crash at any instant leaves the catalog consistent: staged versions stay pending
//! and the next run fetches what is missing.

mod download;
mod downloads;
mod drm;
mod item;
mod refetch;
mod stage;

use std::sync::Arc;

use tokio::sync::watch;

pub use download::safe_filename;
pub use item::{Candidate, Plan, organisation_id, plan};
pub use refetch::Refetched;

use crate::config::{Config, PublisherConfig};
use crate::fetch::{
    self, Client, Conditional, Credentials, FetchError, Kind, Limits, Policy, Retry,
};
use crate::profile::{self};
use crate::store::{Catalog, Outcome, RunCounts, StoreError};

/// Why a run could not be carried out.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HarvestError {
    /// The catalog or blob store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The feed could not be fetched.
    #[error("fetching the feed failed: {0}")]
    Feed(FetchError),
    /// The downloaded feed could not be read back from its temporary file.
    #[error("reading the downloaded feed back from its temporary file failed: {0}")]
    Spool(std::io::Error),
    /// The feed is unreadable (G-XML, G-RSS): nothing was harvested.
    #[error("the feed is unreadable, nothing was harvested: {0}")]
    Unreadable(String),
    /// The HTTP client could not be set up.
    #[error(transparent)]
    Setup(FetchError),
    /// A configuration value is unusable.
    #[error("{0}")]
    Config(String),
    /// The run failed, and recording its end failed too (a full disk fails both): the
    /// run stays open in the catalog until a later start closes it as cut short.
    #[error("{run}; recording the run's end failed too: {end}")]
    NotEnded {
        /// The run's own failure.
        run: Box<HarvestError>,
        /// Why its end could not be recorded.
        end: StoreError,
    },
    /// A task of the run panicked or was cancelled (a bug: the log has more).
    #[error("{what} stopped unexpectedly: {reason}")]
    Task {
        /// What it was doing.
        what: &'static str,
        /// The panic or cancellation.
        reason: String,
    },
}

/// Progress of a harvest, for a progress bar. Every method has a default that does
/// nothing.
pub trait Progress: Send + Sync + std::fmt::Debug {
    /// A publisher's run started.
    fn publisher(&self, _id: &str) {}
    /// Items read from a feed.
    fn items(&self, _n: u64) {}
    /// Files queued for download.
    fn files_queued(&self, _n: u64) {}
    /// A file finished (stored or failed).
    fn file_done(&self) {}
    /// Bytes received.
    fn bytes(&self, _n: u64) {}
    /// A publisher's run ended.
    fn publisher_done(&self, _summary: &RunSummary) {}
}

/// A [`Progress`] that shows nothing.
#[derive(Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// What one run did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunSummary {
    /// Publisher id.
    pub publisher: String,
    /// Run number in the catalog.
    pub run: i64,
    /// Outcome.
    pub outcome: Outcome,
    /// Why it failed, if it did.
    pub message: Option<String>,
    /// Counters.
    pub counts: RunCounts,
    /// Failures of files and items, each naming publisher, guid, URL and reason.
    pub failures: Vec<String>,
}

impl RunSummary {
    /// The run was carried out (even if some items failed and were recorded).
    pub fn completed(&self) -> bool {
        self.outcome != Outcome::Failed
    }
}

/// Harvests publishers into one data folder. Clone-cheap parts are shared by every
/// run of the process: concurrency limits, the shutdown signal.
#[derive(Debug, Clone)]
pub struct Harvester {
    config: Arc<Config>,
    /// The process's HTTP policy (built-in defaults → `[http]`), under each publisher's
    /// layer.
    policy: Policy,
    limits: Arc<Limits>,
    shutdown: watch::Receiver<bool>,
    progress: Arc<dyn Progress>,
    user_agent: String,
}

impl Harvester {
    /// A harvester for `config`; runs stop taking work when `shutdown` turns true.
    /// The caller holds the data folder's write lock ([`crate::store::Store`]).
    pub fn new(
        config: Arc<Config>,
        shutdown: watch::Receiver<bool>,
        progress: Arc<dyn Progress>,
    ) -> Result<Self, HarvestError> {
        for p in &config.publishers {
            if let Some(auth) = &p.auth
                && let Err(why) = &auth.password
            {
                return Err(HarvestError::Config(why.clone()));
            }
            for o in &p.organisations {
                if organisation_id(o).is_none() {
                    return Err(HarvestError::Config(format!(
                        "publisher `{}`: organisation `{o}` is not `SE` + 10 digits with an optional `-suffix` (R104)",
                        p.id
                    )));
                }
            }
        }
        let user_agent = match &config.contact {
            Some(c) => format!(
                "plikt/{} (legal-deposit harvester; +{c})",
                env!("CARGO_PKG_VERSION")
            ),
            None => format!(
                "plikt/{} (legal-deposit harvester)",
                env!("CARGO_PKG_VERSION")
            ),
        };
        let policy = Policy::default().with_http(&config.http);
        Ok(Self {
            limits: Limits::new(&policy),
            policy,
            config,
            shutdown,
            progress,
            user_agent,
        })
    }

    /// The same harvester, its per-host limits kept together with other workers
    /// through `gate` ([`crate::schedule::Worker::host_gate`]).
    pub fn with_host_gate(mut self, gate: Arc<dyn fetch::HostGate>) -> Self {
        self.limits = Limits::shared(&self.policy, gate);
        self
    }

    fn catalog(&self) -> Result<Catalog, StoreError> {
        Catalog::open(&crate::store::Location::of(&self.config)?)
    }

    /// One run of `publisher`. `Err` only when the run could not even be recorded;
    /// a run that failed is an `Ok` summary with outcome `failed`.
    pub async fn run(&self, publisher: &PublisherConfig) -> Result<RunSummary, HarvestError> {
        let mut catalog = self.catalog()?;
        catalog.upsert_publisher(&publisher.id, &publisher.name, publisher.feed.as_str())?;
        let run = catalog.begin_run(&publisher.id, crate::store::now())?;
        self.progress.publisher(&publisher.id);
        tracing::info!(publisher = %publisher.id, run, feed = %publisher.feed, "run started");
        let mut state = RunState {
            run,
            counts: RunCounts::default(),
            failures: Vec::new(),
        };
        let result = self.run_inner(&mut catalog, publisher, &mut state).await;
        let (outcome, failure) = match result {
            Ok(o) => (o, None),
            Err(e) => {
                tracing::error!(publisher = %publisher.id, run, error = %e, "run failed");
                (Outcome::Failed, Some(e))
            }
        };
        let message = failure
            .as_ref()
            .map(|e| format!("publisher {}: {e}", publisher.id));
        let outcome = if *self.shutdown.borrow() && outcome == Outcome::Ok {
            Outcome::Interrupted
        } else {
            outcome
        };
        let ended = catalog.end_run(
            run,
            outcome,
            message.as_deref(),
            &state.counts,
            crate::store::now(),
        );
        if let Err(end) = ended {
            // The run's own failure first (a full disk fails both).
            return Err(match failure {
                Some(e) => HarvestError::NotEnded {
                    run: Box::new(e),
                    end,
                },
                None => end.into(),
            });
        }
        let m = crate::metrics::get();
        crate::metrics::Metrics::count(&m.runs, &publisher.id, outcome.as_str());
        for (family, n) in [
            (&m.items, state.counts.items),
            (&m.versions, state.counts.deposited),
            (&m.files, state.counts.files_stored),
            (&m.bytes, state.counts.bytes),
        ] {
            crate::metrics::Metrics::add(family, &publisher.id, n);
        }
        let summary = RunSummary {
            publisher: publisher.id.clone(),
            run,
            outcome,
            message,
            counts: state.counts,
            failures: state.failures,
        };
        tracing::info!(publisher = %publisher.id, run, outcome = %summary.outcome, deposited = summary.counts.deposited, files = summary.counts.files_stored, failed = summary.counts.files_failed, "run ended");
        self.progress.publisher_done(&summary);
        Ok(summary)
    }

    async fn run_inner(
        &self,
        catalog: &mut Catalog,
        p: &PublisherConfig,
        state: &mut RunState,
    ) -> Result<Outcome, HarvestError> {
        let client = self.client_for(p)?;

        // 1. Fetch.
        let started = std::time::Instant::now();
        let mut response = self.fetch_feed(catalog, &client, p).await?;
        let outcome = if response.status == 304 {
            tracing::info!(publisher = %p.id, "feed not modified");
            Outcome::NotModified
        } else {
            // 2 + 3: validate and diff.
            self.stage_feed(catalog, p, &mut response, state, started)
                .await?;
            Outcome::Ok
        };
        // The feed's connection permits go back before the files take theirs: with
        // `max_connections_per_host = 1` the downloads would otherwise wait for ever.
        drop(response);

        // 4 + 5. Download what is due and deposit.
        downloads::Downloads::new(self, catalog, &client, p, state.run)?
            .run(state)
            .await?;
        Ok(outcome)
    }

    /// The HTTP client of `p`'s runs: its policy, its credentials (for its feed's origin
    /// only), the per-host limits shared with the other runs.
    fn client_for(&self, p: &PublisherConfig) -> Result<Client, HarvestError> {
        let credentials = match &p.auth {
            Some(a) => Some(Credentials {
                username: a.username.clone(),
                password: a.password.clone().map_err(HarvestError::Config)?,
                origin: p.feed.origin(),
            }),
            None => None,
        };
        Client::new(
            self.policy.clone().with_publisher(p),
            &self.user_agent,
            credentials,
            self.limits.clone(),
        )
        .map_err(HarvestError::Setup)
    }

    /// The feed, by a conditional GET (retried after connection errors, time-outs,
    /// 5xx and 429 while the run is not shutting down).
    async fn fetch_feed(
        &self,
        catalog: &mut Catalog,
        client: &Client,
        p: &PublisherConfig,
    ) -> Result<fetch::Response, HarvestError> {
        let (etag, last_modified) = catalog.feed_validators(&p.id)?;
        let conditional = Conditional {
            etag,
            last_modified,
        };
        let mut attempt = 0;
        loop {
            match client.get(&p.feed, Kind::Feed, Some(&conditional)).await {
                Ok(r) => return Ok(r),
                Err(e) => match client.retry(&e, attempt) {
                    Retry::After(d) if !*self.shutdown.borrow() => {
                        tracing::info!(publisher = %p.id, url = %p.feed, error = %e, "retrying the feed");
                        crate::metrics::get().retried("feed");
                        attempt += 1;
                        tokio::time::sleep(d).await;
                    }
                    _ => return Err(HarvestError::Feed(e)),
                },
            }
        }
    }

    /// Steps 2 and 3 off the async threads (CPU and SQLite), on a catalog connection of
    /// their own; an unreadable feed ends the run with nothing harvested.
    async fn stage_feed(
        &self,
        catalog: &mut Catalog,
        p: &PublisherConfig,
        response: &mut fetch::Response,
        state: &mut RunState,
        started: std::time::Instant,
    ) -> Result<(), HarvestError> {
        let spool = fetch::spool(response).await.map_err(HarvestError::Feed)?;
        crate::metrics::get().fetched("feed", started.elapsed());
        let html = response
            .content_type
            .as_deref()
            .is_some_and(|t| t.to_ascii_lowercase().contains("html"));
        let ctx = stage::StageContext {
            publisher: p.clone(),
            run: state.run,
            last_success: catalog.last_successful_run(&p.id)?,
            etag: response.etag.clone(),
            last_modified: response.last_modified.clone(),
            options: profile::Options {
                profile: profile::ProfileOptions {
                    require_is_part_of: p.require_is_part_of,
                },
                ..profile::Options::default()
            },
            keep_runs: self.config.harvest.findings_retention_runs,
        };
        let location = crate::store::Location::of(&self.config)?;
        let staged = tokio::task::spawn_blocking(move || {
            let mut c = Catalog::open(&location)?;
            stage::stage(&mut c, &spool, &ctx)
        })
        .await
        .map_err(|e| HarvestError::Task {
            what: "validating the feed",
            reason: e.to_string(),
        })??;
        tracing::info!(publisher = %p.id, items = staged.items, new_versions = staged.new_versions, rejected = staged.rejected, "feed validated and changes staged");
        state.counts.items = staged.items;
        state.counts.new_versions = staged.new_versions;
        state.counts.rejected = staged.rejected;
        self.progress.items(staged.items);
        let Some(fatal) = staged.fatal else {
            return Ok(());
        };
        let mut why = format!(
            "{} at line {}, column {}: {}",
            fatal.rule,
            fatal.pos.map_or(0, |p| p.line),
            fatal.pos.map_or(0, |p| p.column),
            fatal.message
        );
        if html {
            why.push_str(" — the server sent an HTML page (`Content-Type: text/html`), perhaps a maintenance or error page, instead of the feed");
        }
        Err(HarvestError::Unreadable(format!("{}: {why}", p.feed)))
    }
}

#[derive(Debug)]
struct RunState {
    run: i64,
    counts: RunCounts,
    failures: Vec<String>,
}

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
mod drm;
mod item;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::Instant;

pub use download::safe_filename;
pub use item::{Candidate, Plan, organisation_id, plan};

use crate::config::{Config, HarvestConfig, PublisherConfig};
use crate::fetch::{
    self, Client, Conditional, Credentials, FetchError, Kind, Limits, Policy, Retry,
};
use crate::profile::{self, Checked, Finding, RuleId, Severity, Validator};
use crate::store::{
    Blobs, Catalog, FileResult, NewVersion, Outcome, RunCounts, Settled, StoreError, StoredFinding,
    Written,
};
use download::{FileJob, FileOutcome};
use item::{harvest_finding, stored};

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
    /// The feed is unreadable (G-XML, G-RSS): nothing was harvested.
    #[error("the feed is unreadable, nothing was harvested: {0}")]
    Unreadable(String),
    /// The HTTP client could not be set up.
    #[error(transparent)]
    Setup(FetchError),
    /// A configuration value is unusable.
    #[error("{0}")]
    Config(String),
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
    pub outcome: &'static str,
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
        self.outcome != Outcome::Failed.as_str()
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

    fn catalog_path(&self) -> PathBuf {
        self.config.data_dir.join("catalog.sqlite")
    }

    /// One run of `publisher`. `Err` only when the run could not even be recorded;
    /// a run that failed is an `Ok` summary with outcome `failed`.
    pub async fn run(&self, publisher: &PublisherConfig) -> Result<RunSummary, HarvestError> {
        let mut catalog = Catalog::open(&self.catalog_path())?;
        catalog.upsert_publisher(&publisher.id, &publisher.name, publisher.feed.as_str())?;
        let run = catalog.begin_run(&publisher.id, &crate::store::now())?;
        self.progress.publisher(&publisher.id);
        tracing::info!(publisher = %publisher.id, run, feed = %publisher.feed, "run started");
        let mut state = RunState {
            run,
            counts: RunCounts::default(),
            failures: Vec::new(),
        };
        let result = self.run_inner(&mut catalog, publisher, &mut state).await;
        let (outcome, message) = match result {
            Ok(o) => (o, None),
            Err(e) => {
                let message = format!("publisher {}: {e}", publisher.id);
                tracing::error!(publisher = %publisher.id, run, error = %e, "run failed");
                (Outcome::Failed, Some(message))
            }
        };
        let outcome = if *self.shutdown.borrow() && outcome == Outcome::Ok {
            Outcome::Interrupted
        } else {
            outcome
        };
        catalog.end_run(
            run,
            outcome,
            message.as_deref(),
            &state.counts,
            &crate::store::now(),
        )?;
        let summary = RunSummary {
            publisher: publisher.id.clone(),
            run,
            outcome: outcome.as_str(),
            message,
            counts: state.counts,
            failures: state.failures,
        };
        tracing::info!(publisher = %publisher.id, run, outcome = summary.outcome, deposited = summary.counts.deposited, files = summary.counts.files_stored, failed = summary.counts.files_failed, "run ended");
        self.progress.publisher_done(&summary);
        Ok(summary)
    }

    async fn run_inner(
        &self,
        catalog: &mut Catalog,
        p: &PublisherConfig,
        state: &mut RunState,
    ) -> Result<Outcome, HarvestError> {
        let credentials = match &p.auth {
            Some(a) => Some(Credentials {
                username: a.username.clone(),
                password: a.password.clone().map_err(HarvestError::Config)?,
                origin: p.feed.origin(),
            }),
            None => None,
        };
        let client = Client::new(
            self.policy.clone().with_publisher(p),
            &self.user_agent,
            credentials,
            self.limits.clone(),
        )
        .map_err(HarvestError::Setup)?;

        // 1. Fetch.
        let (etag, last_modified) = catalog.feed_validators(&p.id)?;
        let conditional = Conditional {
            etag,
            last_modified,
        };
        let mut attempt = 0;
        let mut response = loop {
            match client.get(&p.feed, Kind::Feed, Some(&conditional)).await {
                Ok(r) => break r,
                Err(e) => match client.retry(&e, attempt) {
                    Retry::After(d) if !*self.shutdown.borrow() => {
                        tracing::info!(publisher = %p.id, url = %p.feed, error = %e, "retrying the feed");
                        attempt += 1;
                        tokio::time::sleep(d).await;
                    }
                    _ => return Err(HarvestError::Feed(e)),
                },
            }
        };
        let outcome = if response.status == 304 {
            tracing::info!(publisher = %p.id, "feed not modified");
            Outcome::NotModified
        } else {
            let spool = fetch::spool(&mut response)
                .await
                .map_err(HarvestError::Feed)?;
            let html = response
                .content_type
                .as_deref()
                .is_some_and(|t| t.to_ascii_lowercase().contains("html"));
            // 2 + 3: validate and diff off the async threads (CPU and SQLite), on a
            // connection of their own.
            let ctx = StageContext {
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
            let catalog_path = self.catalog_path();
            let staged = tokio::task::spawn_blocking(move || {
                let mut c = Catalog::open(&catalog_path)?;
                stage(&mut c, spool.path(), &ctx)
            })
            .await
            .map_err(|e| HarvestError::Config(format!("the validation task failed: {e}")))?;
            let staged = staged?;
            tracing::info!(publisher = %p.id, items = staged.items, new_versions = staged.new_versions, rejected = staged.rejected, "feed validated and changes staged");
            state.counts.items = staged.items;
            state.counts.new_versions = staged.new_versions;
            state.counts.rejected = staged.rejected;
            self.progress.items(staged.items);
            if let Some(fatal) = staged.fatal {
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
                return Err(HarvestError::Unreadable(format!("{}: {why}", p.feed)));
            }
            Outcome::Ok
        };

        // 4 + 5. Download what is due and deposit.
        self.download(catalog, &client, p, state).await?;
        Ok(outcome)
    }

    async fn download(
        &self,
        catalog: &mut Catalog,
        client: &Client,
        p: &PublisherConfig,
        state: &mut RunState,
    ) -> Result<(), HarvestError> {
        let now = crate::store::now();
        let due = catalog.due_versions(&p.id, &now)?;
        let mut remaining: HashMap<i64, usize> = HashMap::new();
        let mut batch = Batch::default();
        let mut jobs = std::collections::VecDeque::new();

        for v in due {
            if v.files.is_empty() {
                batch.ready.push(v.id);
                continue;
            }
            remaining.insert(v.id, v.files.len());
            for f in v.files {
                jobs.push_back(FileJob {
                    version: v.id,
                    file_id: f.id,
                    guid: v.guid.clone(),
                    file: f.file,
                });
            }
        }
        self.progress.files_queued(jobs.len() as u64);
        let window = self.policy.max_connections.max(1) * 2;
        let blobs = Blobs::open(&self.config.data_dir).map_err(|source| StoreError::Io {
            path: self.config.data_dir.clone(),
            source,
        })?;
        let mut set: JoinSet<FileOutcome> = JoinSet::new();

        let mut settler = Settler {
            catalog: Some(Catalog::open(&self.catalog_path())?),
            running: None,
            blobs: blobs.clone(),
            config: self.config.harvest.clone(),
            data_dir: self.config.data_dir.clone(),
            run: state.run,
        };
        // Versions a server asked to come back to later (long `Retry-After`).
        let mut postponed: HashMap<i64, Duration> = HashMap::new();
        let mut last_flush = Instant::now();
        let mut shutdown = self.shutdown.clone();
        let mut grace_deadline: Option<Instant> = None;
        loop {
            let stopping = *shutdown.borrow();
            if stopping && grace_deadline.is_none() {
                grace_deadline = Some(
                    Instant::now() + Duration::from_secs(self.config.harvest.shutdown_grace_secs),
                );
                tracing::warn!(publisher = %p.id, in_flight = set.len(), "shutting down: no new files; waiting for those in flight");
            }
            while !stopping && set.len() < window {
                let Some(job) = jobs.pop_front() else { break };
                let (client, blobs, shutdown, progress) = (
                    client.clone(),
                    blobs.clone(),
                    self.shutdown.clone(),
                    self.progress.clone(),
                );
                set.spawn(async move {
                    download::fetch_file(&client, &blobs, job, shutdown, &|n| progress.bytes(n))
                        .await
                });
            }
            let next = match grace_deadline {
                Some(deadline) => tokio::select! {
                    r = set.join_next() => r,
                    () = tokio::time::sleep_until(deadline) => {
                        tracing::warn!(publisher = %p.id, abandoned = set.len(), "grace period over: abandoning files in flight (the next run fetches them)");
                        set.abort_all();
                        while set.join_next().await.is_some() {}
                        None
                    }
                },
                None => tokio::select! {
                    r = set.join_next() => r,
                    _ = shutdown.changed() => continue,
                },
            };
            let Some(joined) = next else {
                break;
            };
            let Ok(outcome) = joined else {
                continue; // aborted: nothing recorded, the file stays pending
            };
            self.progress.file_done();
            let v = outcome.job.version;
            match &outcome.result {
                FileResult::Stored(s) => {
                    state.counts.files_stored += 1;
                    state.counts.bytes += s.digests.length;
                }
                FileResult::Failed(reason) => {
                    state.counts.files_failed += 1;
                    let line = format!(
                        "publisher {}, item {}, {}: {reason}",
                        p.id, outcome.job.guid, outcome.job.file.url
                    );
                    tracing::warn!(publisher = %p.id, guid = %outcome.job.guid, url = %outcome.job.file.url, reason = %reason, "file failed");
                    state.failures.push(line);
                }
            }
            if let Some(d) = outcome.postpone {
                postponed.insert(v, d);
            }
            // A stored file with a harvest-time error (H-DRM) makes its version
            // non-conforming, as a profile error in the item would.
            for f in outcome.findings.iter().filter(|f| f.severity == "error") {
                if matches!(outcome.result, FileResult::Stored(_)) {
                    batch.nonconforming.push((v, f.clone()));
                }
            }
            batch.findings.extend(outcome.findings);
            batch.written.extend(outcome.blob);
            batch
                .results
                .push((outcome.job.file_id, outcome.result, outcome.at));
            if let Some(n) = remaining.get_mut(&v) {
                *n -= 1;
                if *n == 0 {
                    remaining.remove(&v);
                    match postponed.remove(&v) {
                        Some(d) => batch.postponed.push((v, d)),
                        None => batch.ready.push(v),
                    }
                }
            }
            // Batches amortise the catalog's commit and the blobs' sync; the settler
            // takes one batch at a time while the downloads go on.
            if (batch.ready.len() >= 256
                || batch.results.len() >= 1024
                || last_flush.elapsed() > Duration::from_secs(1))
                && settler.idle()
            {
                state.counts.deposited += settler.wait().await?;
                settler.start(std::mem::take(&mut batch));
                last_flush = Instant::now();
            }
        }
        state.counts.deposited += settler.wait().await?;
        settler.start(std::mem::take(&mut batch));
        state.counts.deposited += settler.wait().await?;
        Ok(())
    }
}

/// Records batches of file results on a blocking thread with a catalog connection of
/// its own, one batch at a time, so that the download loop never waits for SQLite or
/// for the disk unless the previous batch is still being recorded.
#[derive(Debug)]
struct Settler {
    /// The connection, while no batch is being recorded.
    catalog: Option<Catalog>,
    running: Option<tokio::task::JoinHandle<(Catalog, Result<u64, HarvestError>)>>,
    blobs: Blobs,
    config: HarvestConfig,
    data_dir: PathBuf,
    run: i64,
}

impl Settler {
    /// No batch is being recorded (or the last one has finished).
    fn idle(&self) -> bool {
        self.running.as_ref().is_none_or(|h| h.is_finished())
    }

    /// Waits for the batch being recorded; returns how many versions it deposited.
    async fn wait(&mut self) -> Result<u64, HarvestError> {
        let Some(handle) = self.running.take() else {
            return Ok(0);
        };
        let (catalog, result) = handle
            .await
            .map_err(|e| HarvestError::Config(format!("recording files failed: {e}")))?;
        self.catalog = Some(catalog);
        result
    }

    /// Starts recording `batch`. Call only when [`Settler::wait`] has returned.
    fn start(&mut self, batch: Batch) {
        let mut catalog = self.catalog.take().expect("wait() before start()");
        let (blobs, config, data_dir, run) = (
            self.blobs.clone(),
            self.config.clone(),
            self.data_dir.clone(),
            self.run,
        );
        self.running = Some(tokio::task::spawn_blocking(move || {
            let result = settle(&mut catalog, &blobs, &config, &data_dir, run, batch);
            (catalog, result)
        }));
    }
}

/// Records file results and settles the versions whose files are all done; returns how
/// many versions were deposited.
fn settle(
    catalog: &mut Catalog,
    blobs: &Blobs,
    h: &HarvestConfig,
    data_dir: &std::path::Path,
    run: i64,
    batch: Batch,
) -> Result<u64, HarvestError> {
    let Batch {
        written,
        results,
        ready,
        findings,
        postponed,
        nonconforming,
    } = batch;
    if results.is_empty() && ready.is_empty() && findings.is_empty() && postponed.is_empty() {
        return Ok(0);
    }
    // The blobs are durable in the store before the catalog says they are there.
    blobs.commit(written).map_err(|source| StoreError::Io {
        path: data_dir.join("blobs"),
        source,
    })?;
    let retry_at = |attempts: u32| {
        let secs = h
            .retry_backoff_secs
            .saturating_mul(1 << attempts.saturating_sub(1).min(20))
            .min(h.max_retry_backoff_secs);
        crate::store::instant(
            chrono::Utc::now()
                + chrono::Duration::seconds(i64::try_from(secs).unwrap_or(i64::MAX / 2)),
        )
    };
    let settled = catalog.record(
        &results,
        &ready,
        &crate::store::now(),
        h.max_failed_runs.max(1),
        &retry_at,
    )?;
    let deposited = settled
        .iter()
        .filter(|s| matches!(s, Settled::Deposited(_)))
        .count() as u64;
    for (v, d) in postponed {
        let until = crate::store::instant(
            chrono::Utc::now()
                + chrono::Duration::seconds(i64::try_from(d.as_secs()).unwrap_or(86_400)),
        );
        catalog.postpone(
            v,
            &until,
            &format!("the server asked plikt to come back after {until} (Retry-After)"),
        )?;
    }
    if !findings.is_empty() {
        catalog.add_findings(run, &findings)?;
    }
    for (version, finding) in nonconforming {
        catalog.mark_nonconforming(version, &finding)?;
    }
    Ok(deposited)
}

/// File results waiting to be recorded, and versions whose files are all done.
#[derive(Debug, Default)]
struct Batch {
    /// Verified blobs of the stored files in `results`, committed before those are recorded.
    written: Vec<Written>,
    results: Vec<(i64, FileResult, String)>,
    ready: Vec<i64>,
    findings: Vec<StoredFinding>,
    /// Versions whose files are all done, but a server asked to come back to one of them
    /// later (long `Retry-After`): not settled, postponed.
    postponed: Vec<(i64, Duration)>,
    /// Versions with a stored file that has a harvest-time error (H-DRM).
    nonconforming: Vec<(i64, StoredFinding)>,
}

#[derive(Debug)]
struct RunState {
    run: i64,
    counts: RunCounts,
    failures: Vec<String>,
}

#[derive(Debug)]
struct StageContext {
    publisher: PublisherConfig,
    run: i64,
    last_success: Option<String>,
    etag: Option<String>,
    last_modified: Option<String>,
    options: profile::Options,
    keep_runs: u32,
}

#[derive(Debug, Default)]
struct Staged {
    fatal: Option<Finding>,
    items: u64,
    new_versions: u64,
    rejected: u64,
}

/// Steps 2 and 3: validate the spooled feed and record, in one transaction, the run's
/// findings, rejections and new versions. A fatal finding records only itself.
fn stage(
    catalog: &mut Catalog,
    feed: &std::path::Path,
    ctx: &StageContext,
) -> Result<Staged, HarvestError> {
    let open = || {
        std::fs::File::open(feed)
            .map(std::io::BufReader::new)
            .map_err(|source| {
                HarvestError::Store(StoreError::Io {
                    path: feed.to_path_buf(),
                    source,
                })
            })
    };
    let io_err = |e: std::io::Error| {
        HarvestError::Store(StoreError::Io {
            path: feed.to_path_buf(),
            source: e,
        })
    };
    // Pass 1: is the feed readable at all, and which guids occur twice?
    let mut seen: HashSet<String> = HashSet::new();
    let mut duplicates: HashSet<String> = HashSet::new();
    let mut validator = Validator::new(open()?, &ctx.options);
    while let Some(c) = validator.next() {
        match c.map_err(io_err)? {
            Checked::Fatal(f) => return fatal(catalog, ctx.run, f),
            Checked::Item(item, _) => {
                if let Some(g) = item::guid(&item)
                    && !seen.insert(g.clone())
                {
                    duplicates.insert(g);
                }
                validator.recycle(item);
            }
            Checked::Finding(_) => {}
        }
    }
    drop(seen);

    // Pass 2: diff and record.
    let p = &ctx.publisher;
    let now = crate::store::now();
    let agreed: Vec<&str> = p
        .organisations
        .iter()
        .filter_map(|o| organisation_id(o))
        .collect();
    let mut staged = Staged::default();
    let tx = catalog.stage()?;
    let mut findings: Vec<StoredFinding> = Vec::new();
    let mut oldest: Option<i64> = None;
    let mut validator = Validator::new(open()?, &ctx.options);
    while let Some(c) = validator.next() {
        match c.map_err(io_err)? {
            Checked::Fatal(f) => {
                // The same bytes cannot turn fatal on a second reading; if they do,
                // record nothing of the feed.
                drop(tx);
                return fatal(catalog, ctx.run, f);
            }
            Checked::Finding(f) => findings.push(stored(&f)),
            Checked::Item(item, item_findings) => {
                staged.items += 1;
                findings.extend(item_findings.iter().map(stored));
                let duplicate = item::guid(&item).is_some_and(|g| duplicates.contains(&g));
                match plan(&item, &item_findings, duplicate) {
                    Plan::Reject { guid, reason } => {
                        staged.rejected += 1;
                        tracing::warn!(publisher = %p.id, item = item.index, guid = guid.as_deref().unwrap_or(""), reason = %reason, "item rejected");
                        tx.reject(ctx.run, item.index, guid.as_deref(), &reason)?;
                    }
                    Plan::Collect(c) => {
                        oldest = Some(oldest.map_or(c.instant, |o| o.min(c.instant)));
                        if !agreed.is_empty() {
                            for value in &c.publishers {
                                if organisation_id(value).is_some_and(|id| !agreed.contains(&id)) {
                                    findings.push(harvest_finding(
                                        RuleId::HPublisher,
                                        Severity::Warning,
                                        Some(&c.guid),
                                        None,
                                        format!(
                                            "item {} names publisher `{value}`, which is not agreed for this feed ({}) (H-PUBLISHER); check the R104 value with KB",
                                            item.index,
                                            agreed.join(", ")
                                        ),
                                    ));
                                }
                            }
                        }
                        if diff(&tx, ctx, &c, item.index, &now, &mut findings)? {
                            staged.new_versions += 1;
                        }
                    }
                }
                validator.recycle(item);
            }
        }
    }
    // H-PAGINATION (newer KB specification): the feed must not be paginated.
    for link in validator.pagination() {
        findings.push(StoredFinding {
            line: Some(link.pos.line),
            column: Some(link.pos.column),
            ..harvest_finding(
                RuleId::HPagination,
                Severity::Warning,
                None,
                Some(&link.value),
                format!(
                    "the feed links to a further page `{}`; KB harvests only this document, so put every item in one feed (H-PAGINATION)",
                    link.value
                ),
            )
        });
    }
    // H-COVERAGE: the oldest item is newer than the last successful run, so items
    // published in between may have dropped off the feed unseen.
    if let (Some(oldest), Some(last)) = (oldest, &ctx.last_success)
        && let Ok(last_t) = chrono::DateTime::parse_from_rfc3339(last)
        && oldest > last_t.timestamp()
    {
        findings.push(harvest_finding(
            RuleId::HCoverage,
            Severity::Warning,
            None,
            None,
            format!(
                "the oldest item ({}) is newer than the last successful harvest ({last}): items published in between may have dropped off the feed (H-COVERAGE); keep items in the feed for longer than the harvest interval",
                crate::store::instant(chrono::DateTime::from_timestamp(oldest, 0).unwrap_or_default())
            ),
        ));
    }
    tx.findings(ctx.run, &findings)?;
    tx.prune_findings(&p.id, ctx.keep_runs)?;
    tx.feed_validators(&p.id, ctx.etag.as_deref(), ctx.last_modified.as_deref())?;
    tx.commit()?;
    Ok(staged)
}

/// An unreadable feed: only its fatal finding is recorded.
fn fatal(catalog: &mut Catalog, run: i64, f: Finding) -> Result<Staged, HarvestError> {
    catalog.add_findings(run, &[stored(&f)])?;
    Ok(Staged {
        fatal: Some(f),
        ..Staged::default()
    })
}

/// Compares one item with the catalog; records a new deposit or version. True when
/// something new was recorded.
fn diff(
    tx: &crate::store::Stage<'_>,
    ctx: &StageContext,
    c: &Candidate,
    index: u32,
    now: &str,
    findings: &mut Vec<StoredFinding>,
) -> Result<bool, HarvestError> {
    let p = &ctx.publisher;
    let version = NewVersion {
        pub_date: &c.pub_date,
        pub_date_raw: &c.pub_date_raw,
        item_hash: &c.item_hash,
        metadata: &c.metadata,
        findings: &c.findings,
        conforming: c.conforming,
        access: c.access,
        files: &c.files,
    };
    let deposit = match tx.known(&p.id, &c.guid)? {
        None => tx.new_deposit(&p.id, &c.guid, now)?,
        Some(known) => {
            match known.pub_date.as_deref() {
                Some(latest) if c.pub_date.as_str() == latest => {
                    if known.item_hash.as_deref() != Some(c.item_hash.as_str()) {
                        findings.push(harvest_finding(
                            RuleId::HVersion,
                            Severity::Warning,
                            Some(&c.guid),
                            None,
                            format!(
                                "item {index} (guid `{}`) changed but its pubDate did not (H-VERSION); plikt keeps the version it has — give a changed item a newer pubDate so it is harvested again",
                                c.guid
                            ),
                        ));
                    }
                    return Ok(false);
                }
                Some(latest) if c.pub_date.as_str() < latest => {
                    findings.push(harvest_finding(
                        RuleId::HVersion,
                        Severity::Warning,
                        Some(&c.guid),
                        None,
                        format!(
                            "item {index} (guid `{}`) has pubDate {}, older than the version plikt already has ({latest}) (H-VERSION); a new version needs a newer pubDate",
                            c.guid, c.pub_date_raw
                        ),
                    ));
                    return Ok(false);
                }
                _ => {}
            }
            known.deposit_id
        }
    };
    tx.new_version(deposit, ctx.run, &version, now)?;
    Ok(true)
}

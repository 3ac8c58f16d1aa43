//! Steps 4 and 5 of a run: download every due file and deposit the versions whose
//! files are all stored. [`Downloads`] is the loop: it keeps up to a window of
//! downloads in flight (twice `max_connections`), accounts for each file as it ends,
//! and hands the results in batches to the [`Settler`], which records them on a
//! blocking thread while the downloads go on. On shutdown it takes no new file, lets
//! those in flight finish for `shutdown_grace_secs` and abandons the rest (they stay
//! pending for the next run).

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use tokio::task::JoinSet;
use tokio::time::Instant;

use super::download::{self, FileJob, FileOutcome};
use super::{HarvestError, Harvester, RunState};
use crate::config::{HarvestConfig, PublisherConfig};
use crate::fetch::Client;
use crate::profile::Severity;
use crate::store::{
    Blobs, Catalog, FileResult, Packing, Settled, StoreError, StoredFinding, Timestamp, Written,
};

/// The download loop of one run.
#[derive(Debug)]
pub(super) struct Downloads<'a> {
    harvester: &'a Harvester,
    client: &'a Client,
    publisher: &'a PublisherConfig,
    blobs: Blobs,
    /// Files not started yet.
    jobs: VecDeque<FileJob>,
    /// Files in flight.
    in_flight: JoinSet<FileOutcome>,
    /// How many files of each version are still to end.
    remaining: HashMap<i64, usize>,
    /// Versions a server asked to come back to later (long `Retry-After`).
    postponed: HashMap<i64, Duration>,
    /// Results waiting for the settler.
    batch: Batch,
    settler: Settler,
    last_flush: Instant,
    /// Set once shutdown was asked for: when the files in flight are abandoned.
    grace_deadline: Option<Instant>,
}

/// What the loop waits for next.
enum Next {
    /// A file ended.
    Ended(Box<FileOutcome>),
    /// Something else happened (shutdown asked, a download aborted): look again.
    Again,
    /// Nothing left (or the grace period is over).
    Done,
}

impl<'a> Downloads<'a> {
    /// The due files of `publisher`'s versions, queued.
    pub(super) fn new(
        harvester: &'a Harvester,
        catalog: &Catalog,
        client: &'a Client,
        publisher: &'a PublisherConfig,
        run: i64,
    ) -> Result<Self, HarvestError> {
        let config = &harvester.config;
        let blobs = Blobs::open(&config.data_dir, &config.blobs).map_err(StoreError::from)?;
        let mut d = Self {
            harvester,
            client,
            publisher,
            blobs: blobs.clone(),
            jobs: VecDeque::new(),
            in_flight: JoinSet::new(),
            remaining: HashMap::new(),
            postponed: HashMap::new(),
            batch: Batch::default(),
            settler: Settler {
                catalog: Some(harvester.catalog()?),
                running: None,
                blobs,
                config: config.harvest.clone(),
                run,
            },
            last_flush: Instant::now(),
            grace_deadline: None,
        };
        for v in catalog.due_versions(&publisher.id, crate::store::now())? {
            if v.files.is_empty() {
                // Every file stored before a crash: only the deposit is missing.
                d.batch.ready.push(v.id);
                continue;
            }
            d.remaining.insert(v.id, v.files.len());
            for f in v.files {
                d.jobs.push_back(FileJob {
                    version: v.id,
                    file_id: f.id,
                    guid: v.guid.clone(),
                    file: f.file,
                });
            }
        }
        harvester.progress.files_queued(d.jobs.len() as u64);
        Ok(d)
    }

    /// Downloads and deposits until every file has ended (or shutdown), counting into
    /// `state`.
    pub(super) async fn run(mut self, state: &mut RunState) -> Result<(), HarvestError> {
        let mut shutdown = self.harvester.shutdown.clone();
        loop {
            let stopping = *shutdown.borrow();
            if stopping && self.grace_deadline.is_none() {
                let grace = self.harvester.config.harvest.shutdown_grace_secs;
                self.grace_deadline = Some(Instant::now() + Duration::from_secs(grace));
                tracing::warn!(publisher = %self.publisher.id, in_flight = self.in_flight.len(), "shutting down: no new files; waiting for those in flight");
            }
            if !stopping {
                self.start_more();
            }
            match self.next(&mut shutdown).await {
                Next::Ended(outcome) => self.account(*outcome, state),
                Next::Again => continue,
                Next::Done => break,
            }
            // Batches amortise the catalog's commit and the blobs' sync; the settler
            // takes one batch at a time while the downloads go on.
            if self.batch.held >= 2 * HELD_FLUSH && !self.settler.idle() {
                self.settled(state).await?;
            }
            let b = &self.batch;
            if (b.ready.len() >= 256
                || b.results.len() >= 1024
                || b.held >= HELD_FLUSH
                || self.last_flush.elapsed() > Duration::from_secs(1))
                && self.settler.idle()
            {
                self.settled(state).await?;
                self.settler.start(std::mem::take(&mut self.batch));
                self.last_flush = Instant::now();
            }
        }
        self.settled(state).await?;
        self.settler.start(std::mem::take(&mut self.batch));
        self.settled(state).await?;
        Ok(())
    }

    /// Waits for the batch being recorded and counts what it did: versions deposited,
    /// and files whose blob could not be moved into place (an object store that
    /// failed): they were counted stored when they ended, and failed in the end.
    async fn settled(&mut self, state: &mut RunState) -> Result<(), HarvestError> {
        let done = self.settler.wait().await?;
        state.counts.deposited += done.deposited;
        let p = self.publisher;
        for (guid, url, reason) in done.not_stored {
            state.counts.files_stored = state.counts.files_stored.saturating_sub(1);
            state.counts.files_failed += 1;
            let m = crate::metrics::get();
            crate::metrics::Metrics::count(&m.failures, &p.id, "store");
            tracing::warn!(publisher = %p.id, guid = %guid, url = %url, reason = %reason, "file failed");
            state
                .failures
                .push(format!("publisher {}, item {guid}, {url}: {reason}", p.id));
        }
        Ok(())
    }

    /// Starts queued files until the window is full.
    fn start_more(&mut self) {
        let window = self.harvester.policy.max_connections.max(1) * 2;
        while self.in_flight.len() < window {
            let Some(job) = self.jobs.pop_front() else {
                break;
            };
            let h = self.harvester;
            let (client, blobs, shutdown, progress) = (
                self.client.clone(),
                self.blobs.clone(),
                h.shutdown.clone(),
                h.progress.clone(),
            );
            self.in_flight.spawn(async move {
                download::fetch_file(&client, &blobs, job, shutdown, &|n| progress.bytes(n)).await
            });
        }
    }

    /// Waits for the next file to end, for shutdown, or for the grace period to end.
    async fn next(&mut self, shutdown: &mut tokio::sync::watch::Receiver<bool>) -> Next {
        let joined = match self.grace_deadline {
            Some(deadline) => tokio::select! {
                r = self.in_flight.join_next() => r,
                () = tokio::time::sleep_until(deadline) => {
                    tracing::warn!(publisher = %self.publisher.id, abandoned = self.in_flight.len(), "grace period over: abandoning files in flight (the next run fetches them)");
                    self.in_flight.abort_all();
                    while self.in_flight.join_next().await.is_some() {}
                    None
                }
            },
            None => tokio::select! {
                r = self.in_flight.join_next() => r,
                _ = shutdown.changed() => return Next::Again,
            },
        };
        match joined {
            None => Next::Done,
            Some(Ok(outcome)) => Next::Ended(Box::new(outcome)),
            // Aborted: nothing recorded, the file stays pending.
            Some(Err(_)) => Next::Again,
        }
    }

    /// Counts a file that ended and puts its result in the batch; a version whose
    /// files have all ended is ready to settle (or postponed).
    fn account(&mut self, outcome: FileOutcome, state: &mut RunState) {
        let p = self.publisher;
        self.harvester.progress.file_done();
        let v = outcome.job.version;
        match &outcome.result {
            FileResult::Stored(s) => {
                state.counts.files_stored += 1;
                state.counts.bytes += s.digests.length;
            }
            FileResult::Failed(reason) => {
                state.counts.files_failed += 1;
                let m = crate::metrics::get();
                crate::metrics::Metrics::count(
                    &m.failures,
                    &p.id,
                    outcome.failure.unwrap_or("other"),
                );
                tracing::warn!(publisher = %p.id, guid = %outcome.job.guid, url = %outcome.job.file.url, reason = %reason, "file failed");
                state.failures.push(format!(
                    "publisher {}, item {}, {}: {reason}",
                    p.id, outcome.job.guid, outcome.job.file.url
                ));
            }
        }
        if let Some(d) = outcome.postpone {
            self.postponed.insert(v, d);
        }
        // A stored file with a harvest-time error (H-DRM) makes its version
        // non-conforming, as a profile error in the item would.
        if matches!(outcome.result, FileResult::Stored(_)) {
            for f in outcome
                .findings
                .iter()
                .filter(|f| f.severity == Severity::Error)
            {
                self.batch.nonconforming.push((v, f.clone()));
            }
        }
        self.batch.findings.extend(outcome.findings);
        if let Some(blob) = outcome.blob {
            let job = &outcome.job;
            self.batch.held += blob.held_bytes();
            self.batch
                .written
                .push((job.file_id, job.guid.clone(), job.file.url.clone(), blob));
        }
        self.batch
            .results
            .push((outcome.job.file_id, outcome.result, outcome.at));
        if let Some(n) = self.remaining.get_mut(&v) {
            *n -= 1;
            if *n == 0 {
                self.remaining.remove(&v);
                match self.postponed.remove(&v) {
                    Some(d) => self.batch.postponed.push((v, d)),
                    None => self.batch.ready.push(v),
                }
            }
        }
    }
}

/// File results waiting to be recorded, and versions whose files are all done.
#[derive(Debug, Default)]
struct Batch {
    /// Verified blobs of the stored files in `results` (file row, guid, URL, blob),
    /// committed before those are recorded.
    written: Vec<(i64, String, String, Written)>,
    results: Vec<(i64, FileResult, Timestamp)>,
    ready: Vec<i64>,
    findings: Vec<StoredFinding>,
    /// Versions whose files are all done, but a server asked to come back to one of them
    /// later (long `Retry-After`): not settled, postponed.
    postponed: Vec<(i64, Duration)>,
    /// Versions with a stored file that has a harvest-time error (H-DRM).
    nonconforming: Vec<(i64, StoredFinding)>,
    /// Bytes of `written` held in memory until their commit (small blobs for a pack on
    /// an object store).
    held: u64,
}

/// A batch goes to the settler once it holds this many bytes of small blobs in memory
/// (a pack's worth); the downloads wait for the settler while it holds twice as many,
/// so memory stays bounded whatever the files' number.
const HELD_FLUSH: u64 = 8 << 20;

/// Records batches of file results on a blocking thread with a catalog connection of
/// its own, one batch at a time, so that the download loop never waits for SQLite or
/// for the disk unless the previous batch is still being recorded.
#[derive(Debug)]
struct Settler {
    /// The connection, while no batch is being recorded.
    catalog: Option<Catalog>,
    running: Option<tokio::task::JoinHandle<(Catalog, Result<SettledBatch, HarvestError>)>>,
    blobs: Blobs,
    config: HarvestConfig,
    run: i64,
}

/// What recording a batch did.
#[derive(Debug, Default)]
struct SettledBatch {
    /// Versions deposited.
    deposited: u64,
    /// Files whose blob could not be moved into place: (guid, URL, why).
    not_stored: Vec<(String, String, String)>,
}

impl Settler {
    /// No batch is being recorded (or the last one has finished).
    fn idle(&self) -> bool {
        self.running.as_ref().is_none_or(|h| h.is_finished())
    }

    /// Waits for the batch being recorded; returns what it did.
    async fn wait(&mut self) -> Result<SettledBatch, HarvestError> {
        let Some(handle) = self.running.take() else {
            return Ok(SettledBatch::default());
        };
        let (catalog, result) = handle.await.map_err(|e| HarvestError::Task {
            what: "recording files",
            reason: e.to_string(),
        })?;
        self.catalog = Some(catalog);
        result
    }

    /// Starts recording `batch`. Call only when [`Settler::wait`] has returned.
    fn start(&mut self, batch: Batch) {
        let mut catalog = self.catalog.take().expect("wait() before start()");
        let (blobs, config, run) = (self.blobs.clone(), self.config.clone(), self.run);
        self.running = Some(tokio::task::spawn_blocking(move || {
            let result = settle(&mut catalog, &blobs, &config, run, batch);
            (catalog, result)
        }));
    }
}

/// Records file results and settles the versions whose files are all done.
fn settle(
    catalog: &mut Catalog,
    blobs: &Blobs,
    h: &HarvestConfig,
    run: i64,
    batch: Batch,
) -> Result<SettledBatch, HarvestError> {
    let Batch {
        written,
        mut results,
        ready,
        findings,
        postponed,
        nonconforming,
        held: _,
    } = batch;
    if results.is_empty() && ready.is_empty() && findings.is_empty() && postponed.is_empty() {
        return Ok(SettledBatch::default());
    }
    // The blobs are in place (durable, or copied on the object store) before the catalog
    // says they are there. Identical bytes are stored once, decided in the catalog: a
    // blob it has already is dropped (issue 17 §2).
    let (files, blobs_written): (Vec<_>, Vec<_>) = written
        .into_iter()
        .map(|(id, guid, url, w)| ((id, guid, url), w))
        .unzip();
    let shas: Vec<&str> = blobs_written
        .iter()
        .map(|w| w.digests.sha256.as_str())
        .collect();
    // A lookup that fails counts as unknown: the blob is copied, which is harmless.
    let known = catalog.known_blobs(&shas).unwrap_or_default();
    let known = |sha: &str| known.contains(sha);
    let committed = blobs
        .commit(blobs_written, &known, Packing::Small)
        .map_err(StoreError::from)?;
    let mut not_stored = Vec::new();
    let at: HashMap<i64, usize> = results
        .iter()
        .enumerate()
        .map(|(i, (f, _, _))| (*f, i))
        .collect();
    for ((id, guid, url), placed) in files.into_iter().zip(committed) {
        let Some(r) = at.get(&id).and_then(|&i| results.get_mut(i)) else {
            continue;
        };
        match placed {
            Ok(pack) => {
                if let FileResult::Stored(s) = &mut r.1 {
                    s.pack = pack;
                }
            }
            Err(e) => {
                // The file stays pending: its version is retried by a later run, as
                // for a download that failed.
                let reason = format!("{url}: storing the file failed: {e}");
                r.1 = FileResult::Failed(reason.clone());
                not_stored.push((guid, url, reason));
            }
        }
    }
    let retry_at = |attempts: u32| {
        let secs = h
            .retry_backoff_secs
            .saturating_mul(1 << attempts.saturating_sub(1).min(20))
            .min(h.max_retry_backoff_secs);
        crate::store::now().plus(chrono::Duration::seconds(
            i64::try_from(secs).unwrap_or(i64::MAX / 2),
        ))
    };
    let settled = catalog.record(
        &results,
        &ready,
        crate::store::now(),
        h.max_failed_runs.max(1),
        &retry_at,
    )?;
    let deposited = settled
        .iter()
        .filter(|s| matches!(s, Settled::Deposited(_)))
        .count() as u64;
    for (v, d) in postponed {
        let until = crate::store::now().plus(chrono::Duration::seconds(
            i64::try_from(d.as_secs()).unwrap_or(86_400),
        ));
        catalog.postpone(
            v,
            until,
            &format!("the server asked plikt to come back after {until} (Retry-After)"),
        )?;
    }
    if !findings.is_empty() {
        catalog.add_findings(run, &findings)?;
    }
    for (version, finding) in nonconforming {
        catalog.mark_nonconforming(version, &finding)?;
    }
    Ok(SettledBatch {
        deposited,
        not_stored,
    })
}

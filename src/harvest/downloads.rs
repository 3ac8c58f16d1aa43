//! Steps 4 and 5 of a run: download every due file and deposit the versions whose
//! files are all stored. [`Downloads`] is the loop: it keeps up to a window of
//! downloads in flight (twice `max_connections`), accounts for each file as it ends,
//! and hands the results in batches to the [`Settler`], which stores a batch's blobs
//! and records it on blocking threads while the downloads go on. On shutdown it takes
//! no new file, lets those in flight finish for `shutdown_grace_secs` and abandons the
//! rest (they stay pending for the next run).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinSet;
use tokio::time::Instant;

use super::download::{self, FileJob, FileOutcome};
use super::{HarvestError, Harvester, RunState};
use crate::config::{HarvestConfig, PublisherConfig};
use crate::fetch::Client;
use crate::profile::Severity;
use crate::store::{
    Blobs, Catalog, FileResult, Packing, Retries, Settled, StoreError, StoredFinding, Timestamp,
    Written,
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
    /// The blob store took no file (the object store stopped answering, or the disk
    /// is full): no file is started any more, and those not started stay pending,
    /// unattempted, for the next run (which would otherwise download every one of them
    /// only to throw it away).
    store_down: bool,
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
                committer: Some(harvester.catalog()?),
                recorder: Some(harvester.catalog()?),
                committing: None,
                recording: None,
                unrecorded: Arc::new(HashSet::new()),
                unstored: Arc::default(),
                blobs,
                config: config.harvest.clone(),
                run,
            },
            last_flush: Instant::now(),
            grace_deadline: None,
            store_down: false,
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
            // stores one batch's blobs while it records the batch before, and the
            // downloads go on.
            let done = self.settler.advance(false).await?;
            self.count(done, state);
            if self.batch.held >= 2 * HELD_FLUSH && self.settler.busy() {
                let done = self.settler.advance(true).await?;
                self.count(done, state);
            }
            let b = &self.batch;
            if (b.ready.len() >= 256
                || b.results.len() >= 1024
                || b.held >= HELD_FLUSH
                || self.last_flush.elapsed() > Duration::from_secs(1))
                && !self.settler.busy()
            {
                self.settler.start(std::mem::take(&mut self.batch));
                self.last_flush = Instant::now();
            }
        }
        let done = self.settler.drain().await?;
        self.count(done, state);
        self.settler.start(std::mem::take(&mut self.batch));
        let done = self.settler.drain().await?;
        self.count(done, state);
        Ok(())
    }

    /// Counts what a recorded batch did: versions deposited, and files whose blob could
    /// not be stored (an object store that failed): they were counted stored when they
    /// ended, and failed in the end.
    fn count(&mut self, done: SettledBatch, state: &mut RunState) {
        if done.store_down {
            self.store_down();
        }
        state.counts.deposited += done.deposited;
        let p = self.publisher;
        for (guid, url, reason) in done.not_stored {
            state.counts.files_stored = state.counts.files_stored.saturating_sub(1);
            state.counts.files_failed += 1;
            let m = crate::metrics::get();
            let store = download::FileFailure::Store {
                down: done.store_down,
            };
            crate::metrics::Metrics::count(&m.failures, &p.id, store.label());
            tracing::warn!(publisher = %p.id, guid = %guid, url = %url, reason = %reason, "file failed");
            state
                .failures
                .push(format!("publisher {}, item {guid}, {url}: {reason}", p.id));
        }
    }

    /// Stops starting files: the blob store takes no file now.
    fn store_down(&mut self) {
        if !std::mem::replace(&mut self.store_down, true) {
            tracing::warn!(publisher = %self.publisher.id, left = self.jobs.len(), "the blob store takes no file now (the failure above says why: the object store does not answer, or the folder is full, read-only or not writable): this run downloads no more files; those left stay pending for the next run");
        }
    }

    /// Starts queued files until the window is full (none once the object store
    /// stopped answering).
    fn start_more(&mut self) {
        if self.store_down {
            return;
        }
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
                    outcome
                        .failure
                        .map_or("other", download::FileFailure::label),
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
        if let Some(download::FileFailure::Store { down }) = outcome.failure {
            Arc::make_mut(&mut self.settler.unstored).insert(v);
            if down {
                self.store_down();
            }
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
            self.batch.written.push((
                job.file_id,
                job.version,
                job.guid.clone(),
                job.file.url.clone(),
                blob,
            ));
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
    /// Verified blobs of the stored files in `results` (file row, version, guid, URL,
    /// blob), committed before those are recorded.
    written: Vec<(i64, i64, String, String, Written)>,
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

/// Settles batches of file results in two stages, each on a blocking thread with a
/// catalog connection of its own: on an object store, a batch's blobs are stored
/// (packs put, large files copied into place) while the batch before is recorded in the
/// catalog, and the download loop waits for neither unless both are busy. Batches are
/// recorded in their order: a version's files may span batches.
#[derive(Debug)]
struct Settler {
    /// The stages' connections, while idle.
    committer: Option<Catalog>,
    recorder: Option<Catalog>,
    /// The batch whose blobs are being stored.
    committing: Option<tokio::task::JoinHandle<(Catalog, Result<Committed, HarvestError>)>>,
    /// The batch being recorded.
    recording: Option<tokio::task::JoinHandle<(Catalog, Result<SettledBatch, HarvestError>)>>,
    /// The new blobs of the batch being recorded: stored, not in the catalog yet. The
    /// next batch does not store them again.
    unrecorded: Arc<HashSet<String>>,
    /// The versions of the run with a file the blob store could not keep.
    unstored: Arc<HashSet<i64>>,
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
    /// Some of them because the blob store takes no file now.
    store_down: bool,
}

impl SettledBatch {
    fn and(mut self, other: Self) -> Self {
        self.deposited += other.deposited;
        self.not_stored.extend(other.not_stored);
        self.store_down |= other.store_down;
        self
    }
}

/// A batch whose blobs are stored, to be recorded: its `results` say which files
/// failed to be stored, and its `written` is empty.
#[derive(Debug)]
struct Committed {
    batch: Batch,
    not_stored: Vec<(String, String, String)>,
    /// Some of them because the blob store takes no file now.
    store_down: bool,
    /// The versions of those files.
    unstored: Vec<i64>,
    /// The SHA-256 of the blobs this batch stored.
    new_blobs: HashSet<String>,
    /// Every version of the run with a file the blob store could not keep (this batch's
    /// and the batches' before): not an attempt of the publisher's ([`Catalog::record`]).
    spared: Arc<HashSet<i64>>,
}

fn joined<T>(
    what: &'static str,
    r: Result<(Catalog, Result<T, HarvestError>), tokio::task::JoinError>,
) -> Result<(Catalog, Result<T, HarvestError>), HarvestError> {
    r.map_err(|e| HarvestError::Task {
        what,
        reason: e.to_string(),
    })
}

impl Settler {
    /// A batch's blobs are being stored (or stored, waiting for the batch before to be
    /// recorded): no new batch can start. With the local folder, one batch is settled at
    /// a time: storing is a rename and a sync there, and new files created in one
    /// folder while another thread creates and renames others made ext4's inode
    /// allocator spin (up to 12 s of system CPU in a 10,000-item harvest that takes 7 s
    /// of wall time otherwise).
    fn busy(&self) -> bool {
        self.committing.is_some() || (!self.blobs.is_remote() && self.recording.is_some())
    }

    /// Moves the stored batch on to be recorded once the batch before is recorded, and
    /// returns what that one did. Without `wait`, only if neither stage has to be waited
    /// for.
    async fn advance(&mut self, wait: bool) -> Result<SettledBatch, HarvestError> {
        let done = if self.recording.as_ref().is_some_and(|r| r.is_finished()) {
            self.recorded().await?
        } else {
            SettledBatch::default()
        };
        let Some(committing) = self
            .committing
            .take_if(|c| wait || (c.is_finished() && self.recording.is_none()))
        else {
            return Ok(done);
        };
        let (catalog, committed) = joined("storing files", committing.await)?;
        self.committer = Some(catalog);
        let before = self.recorded().await;
        let mut committed = committed?;
        let done = done.and(before?);
        self.unrecorded = Arc::new(std::mem::take(&mut committed.new_blobs));
        if !committed.unstored.is_empty() {
            Arc::make_mut(&mut self.unstored).extend(committed.unstored.iter().copied());
        }
        committed.spared = self.unstored.clone();
        let mut catalog = self.recorder.take().expect("recorded() before recording");
        let (config, run) = (self.config.clone(), self.run);
        self.recording = Some(tokio::task::spawn_blocking(move || {
            let result = record(&mut catalog, &config, run, committed);
            (catalog, result)
        }));
        Ok(done)
    }

    /// Waits for the batch being recorded; returns what it did.
    async fn recorded(&mut self) -> Result<SettledBatch, HarvestError> {
        let Some(handle) = self.recording.take() else {
            return Ok(SettledBatch::default());
        };
        let (catalog, result) = joined("recording files", handle.await)?;
        self.recorder = Some(catalog);
        result
    }

    /// Waits until every batch started is recorded; returns what they did.
    async fn drain(&mut self) -> Result<SettledBatch, HarvestError> {
        let done = self.advance(true).await?;
        Ok(done.and(self.recorded().await?))
    }

    /// Starts storing `batch`'s blobs. Call only when not [`Settler::busy`].
    fn start(&mut self, batch: Batch) {
        let mut catalog = self.committer.take().expect("not busy() before start()");
        let (blobs, unrecorded) = (self.blobs.clone(), self.unrecorded.clone());
        self.committing = Some(tokio::task::spawn_blocking(move || {
            let result = commit(&mut catalog, &blobs, &unrecorded, batch);
            (catalog, result)
        }));
    }
}

/// Stores the blobs of a batch's stored files; a file whose blob could not be stored
/// fails (it stays pending for a later run).
fn commit(
    catalog: &mut Catalog,
    blobs: &Blobs,
    unrecorded: &HashSet<String>,
    mut batch: Batch,
) -> Result<Committed, HarvestError> {
    let written = std::mem::take(&mut batch.written);
    // The blobs are in place (durable, or stored on the object store) before the
    // catalog says they are there. Identical bytes are stored once, decided in the
    // catalog: a blob it has already (or the batch before stored) is dropped (issue 17
    // §2).
    let (files, blobs_written): (Vec<_>, Vec<_>) = written
        .into_iter()
        .map(|(id, version, guid, url, w)| ((id, version, guid, url), w))
        .unzip();
    let shas: Vec<String> = blobs_written
        .iter()
        .map(|w| w.digests.sha256.clone())
        .collect();
    // A lookup that fails counts as unknown: the blob is stored again, which is
    // harmless.
    let in_catalog = {
        let shas: Vec<&str> = shas.iter().map(String::as_str).collect();
        catalog.known_blobs(&shas).unwrap_or_default()
    };
    let known = |sha: &str| in_catalog.contains(sha) || unrecorded.contains(sha);
    let committed = blobs
        .commit(blobs_written, &known, Packing::Small)
        .map_err(StoreError::from)?;
    // What this batch stored (not what failed): the next batch does not store it again.
    let new_blobs: HashSet<String> = shas
        .iter()
        .zip(&committed)
        .filter(|(sha, placed)| placed.is_ok() && !known(sha))
        .map(|(sha, _)| sha.clone())
        .collect();
    let (mut not_stored, mut unstored) = (Vec::new(), Vec::new());
    let mut store_down = false;
    let results = &mut batch.results;
    let at: HashMap<i64, usize> = results
        .iter()
        .enumerate()
        .map(|(i, (f, _, _))| (*f, i))
        .collect();
    for ((id, version, guid, url), placed) in files.into_iter().zip(committed) {
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
                store_down |= e.takes_nothing_now();
                let reason = download::not_stored(&url, e);
                r.1 = FileResult::Failed(reason.clone());
                not_stored.push((guid, url, reason));
                unstored.push(version);
            }
        }
    }
    Ok(Committed {
        batch,
        not_stored,
        store_down,
        unstored,
        new_blobs,
        spared: Arc::default(),
    })
}

/// Records a batch's file results and settles the versions whose files are all done.
fn record(
    catalog: &mut Catalog,
    h: &HarvestConfig,
    run: i64,
    committed: Committed,
) -> Result<SettledBatch, HarvestError> {
    let Committed {
        batch,
        not_stored,
        store_down,
        spared,
        ..
    } = committed;
    let Batch {
        results,
        ready,
        findings,
        postponed,
        nonconforming,
        ..
    } = batch;
    if results.is_empty() && ready.is_empty() && findings.is_empty() && postponed.is_empty() {
        return Ok(SettledBatch {
            deposited: 0,
            not_stored,
            store_down,
        });
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
    let settled = crate::store::again_when_busy(|| {
        catalog.record(
            &results,
            &ready,
            &nonconforming,
            crate::store::now(),
            &Retries {
                max_attempts: h.max_failed_runs.max(1),
                retry_at: &retry_at,
                unstored: &|v| spared.contains(&v),
            },
        )
    })?;
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
    Ok(SettledBatch {
        deposited,
        not_stored,
        store_down,
    })
}

//! The SQLite catalog: publishers, runs, findings, deposits, versions, files, blobs and
//! the append-only change journal that the ResourceSync publisher reads. The only SQL
//! in plikt.
//!
//! Durability: WAL with `synchronous=FULL`, so a committed transaction survives a power
//! loss, not only a crash. Foreign keys are on. The schema is migrated in code
//! ([`MIGRATIONS`], `PRAGMA user_version`).
//!
//! Every writing transaction is `BEGIN IMMEDIATE`: it waits (busy timeout) for another
//! publisher's run to commit instead of failing when its snapshot turns stale.
//!
//! Exactly once: a version becomes `deposited` in the same transaction that appends
//! its change to the journal, guarded by its state and by `UNIQUE(version_id)` on the
//! journal, so a retried or replayed step cannot deposit or announce it twice.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use super::StoreError;
use super::digest::Digests;
use super::migrations::MIGRATIONS;
use super::stage::{Stage, insert_findings};
use super::state::{Access, Change, FileRole, FileState, Outcome, Timestamp, VersionState};
use crate::profile::Severity;

/// Counters of one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct RunCounts {
    /// Items in the feed.
    pub items: u64,
    /// New deposits and new versions found.
    pub new_versions: u64,
    /// Items rejected (cannot be identified or collected).
    pub rejected: u64,
    /// Versions completely stored in this run.
    pub deposited: u64,
    /// Files stored.
    pub files_stored: u64,
    /// Files that failed.
    pub files_failed: u64,
    /// Bytes stored.
    pub bytes: u64,
}

/// A finding as stored with a run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoredFinding {
    /// Rule ID as the catalogue spells it.
    pub rule: String,
    /// Its severity.
    pub severity: Severity,
    /// Line, if known.
    pub line: Option<u32>,
    /// Column, if known.
    pub column: Option<u32>,
    /// Item index.
    pub item: Option<u32>,
    /// Item guid.
    pub guid: Option<String>,
    /// URL concerned (harvest-time findings).
    pub url: Option<String>,
    /// The message.
    pub message: String,
}

/// What a feed item's guid is already known as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownVersion {
    /// The deposit.
    pub deposit_id: i64,
    /// Latest version's pubDate, if any version exists.
    pub pub_date: Option<Timestamp>,
    /// Latest version's metadata hash.
    pub item_hash: Option<String>,
}

/// A new version to record.
#[derive(Debug, Clone)]
pub struct NewVersion<'a> {
    /// pubDate.
    pub pub_date: Timestamp,
    /// pubDate as written.
    pub pub_date_raw: &'a str,
    /// Metadata hash.
    pub item_hash: &'a str,
    /// Metadata JSON.
    pub metadata: &'a str,
    /// Findings JSON.
    pub findings: &'a str,
    /// No profile errors.
    pub conforming: bool,
    /// Effective access level.
    pub access: Access,
    /// The files.
    pub files: &'a [NewFile],
}

/// A file of a new version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewFile {
    /// What it is to its item.
    pub role: FileRole,
    /// The publisher's URL.
    pub url: String,
    /// Declared MIME type (F303).
    pub declared_type: Option<String>,
    /// Declared size (`fileSize`).
    pub declared_size: Option<u64>,
    /// Declared MD5 (F305).
    pub declared_md5: Option<String>,
}

/// A version waiting for its files, with those still missing.
#[derive(Debug, Clone)]
pub struct DueVersion {
    /// Version row.
    pub id: i64,
    /// Deposit's guid.
    pub guid: String,
    /// Failed attempts so far.
    pub attempts: u32,
    /// Files not yet stored.
    pub files: Vec<DueFile>,
}

/// A file still to fetch.
#[derive(Debug, Clone)]
pub struct DueFile {
    /// File row.
    pub id: i64,
    /// Declared facts and URL.
    pub file: NewFile,
}

/// The outcome of fetching one file.
#[derive(Debug, Clone)]
pub enum FileResult {
    /// Stored and verified.
    Stored(StoredFile),
    /// Failed; the reason names the URL and what went wrong.
    Failed(String),
}

/// What is recorded of a stored file.
#[derive(Debug, Clone)]
pub struct StoredFile {
    /// Digests and length.
    pub digests: Digests,
    /// URL after redirects.
    pub final_url: String,
    /// HTTP status.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: Option<String>,
    /// `Content-Encoding` applied although not asked for (bytes kept as sent).
    pub content_encoding: Option<String>,
    /// `Last-Modified`.
    pub last_modified: Option<String>,
    /// `ETag`.
    pub etag: Option<String>,
    /// A safe file name from `Content-Disposition`, if any.
    pub filename: Option<String>,
}

/// The SQLite catalog.
#[derive(Debug)]
pub struct Catalog {
    conn: Connection,
}

pub(super) fn sql(context: &'static str) -> impl Fn(rusqlite::Error) -> StoreError {
    move |source| StoreError::Sql { context, source }
}

impl Catalog {
    /// Opens (creating and migrating) the catalog at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let conn = Connection::open(path).map_err(sql("opening the catalog"))?;
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(sql("setting the busy timeout"))?;
        // Turning a new catalog to WAL takes an exclusive lock, and SQLite answers a
        // second process doing the same at that instant with SQLITE_BUSY without calling
        // the busy handler: try again, within the busy timeout.
        let started = std::time::Instant::now();
        loop {
            match conn.execute_batch("PRAGMA journal_mode = WAL") {
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::DatabaseBusy
                        && started.elapsed() < std::time::Duration::from_secs(30) =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                r => break r.map_err(sql("turning the catalog to WAL"))?,
            }
        }
        // Statement journals (a statement's undo inside a transaction) stay in memory.
        conn.execute_batch(
            "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY;",
        )
        .map_err(sql("setting the catalog's pragmas"))?;
        let mut catalog = Self { conn };
        catalog.migrate()?;
        Ok(catalog)
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let version = |c: &Connection| -> Result<usize, StoreError> {
            c.query_row("PRAGMA user_version", [], |r| r.get(0))
                .map_err(sql("reading the schema version"))
        };
        if version(&self.conn)? == MIGRATIONS.len() {
            return Ok(());
        }
        // Each step in a transaction of its own that reads the version again: another
        // process opening the same catalog at the same moment (`plikt serve` starting
        // beside `plikt run`) may have taken the step already.
        loop {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql("migrating"))?;
            let found = version(&tx)?;
            if found > MIGRATIONS.len() {
                return Err(StoreError::Schema {
                    found,
                    known: MIGRATIONS.len(),
                });
            }
            let Some(step) = MIGRATIONS.get(found) else {
                return Ok(());
            };
            tx.execute_batch(step)
                .map_err(sql("migrating the schema"))?;
            tx.pragma_update(None, "user_version", found + 1)
                .map_err(sql("migrating"))?;
            tx.commit().map_err(sql("migrating"))?;
        }
    }

    /// The raw connection, for read-only queries of other modules in `store`.
    pub(super) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// The connection, for transactions (in this module's siblings).
    pub(super) fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// Records (or updates) a configured publisher.
    pub fn upsert_publisher(&self, id: &str, name: &str, feed: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO publishers (id, name, feed) VALUES (?1, ?2, ?3)
                 ON CONFLICT (id) DO UPDATE SET name = ?2, feed = ?3,
                   etag = CASE WHEN feed = ?3 THEN etag END,
                   last_modified = CASE WHEN feed = ?3 THEN last_modified END",
                params![id, name, feed],
            )
            .map_err(sql("recording the publisher"))?;
        Ok(())
    }

    /// Marks runs left `running` by a crash as interrupted. Call while holding the data
    /// folder's lock.
    pub fn close_interrupted_runs(&self, now: Timestamp) -> Result<usize, StoreError> {
        self.conn
            .execute(
                "UPDATE runs SET outcome = ?2, ended_at = ?1,
                   message = 'plikt stopped before the run ended; the next run completes it'
                 WHERE outcome = ?3",
                params![now, Outcome::Interrupted, Outcome::Running],
            )
            .map_err(sql("closing interrupted runs"))
    }

    /// Starts a run.
    pub fn begin_run(&self, publisher: &str, now: Timestamp) -> Result<i64, StoreError> {
        self.conn
            .execute(
                "INSERT INTO runs (publisher, started_at, outcome) VALUES (?1, ?2, ?3)",
                params![publisher, now, Outcome::Running],
            )
            .map_err(sql("starting a run"))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Ends a run.
    pub fn end_run(
        &self,
        run: i64,
        outcome: Outcome,
        message: Option<&str>,
        counts: &RunCounts,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let n = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        self.conn
            .execute(
                "UPDATE runs SET ended_at = ?2, outcome = ?3, message = ?4, items = ?5,
                   new_versions = ?6, rejected = ?7, deposited = ?8, files_stored = ?9,
                   files_failed = ?10, bytes = ?11 WHERE id = ?1",
                params![
                    run,
                    now,
                    outcome,
                    message,
                    n(counts.items),
                    n(counts.new_versions),
                    n(counts.rejected),
                    n(counts.deposited),
                    n(counts.files_stored),
                    n(counts.files_failed),
                    n(counts.bytes)
                ],
            )
            .map_err(sql("ending a run"))?;
        Ok(())
    }

    /// The feed's validators from the last run that processed it.
    pub fn feed_validators(
        &self,
        publisher: &str,
    ) -> Result<(Option<String>, Option<String>), StoreError> {
        self.conn
            .query_row(
                "SELECT etag, last_modified FROM publishers WHERE id = ?1",
                params![publisher],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map(Option::unwrap_or_default)
            .map_err(sql("reading the feed's validators"))
    }

    /// Start of the last run of `publisher`, whatever its outcome (schedule catch-up).
    pub fn last_run_start(&self, publisher: &str) -> Result<Option<Timestamp>, StoreError> {
        self.conn
            .query_row(
                "SELECT max(started_at) FROM runs WHERE publisher = ?1",
                params![publisher],
                |r| r.get(0),
            )
            .map_err(sql("reading the last run"))
    }

    /// Start of the last run that read the feed successfully (H-COVERAGE).
    pub fn last_successful_run(&self, publisher: &str) -> Result<Option<Timestamp>, StoreError> {
        self.conn
            .query_row(
                "SELECT max(started_at) FROM runs WHERE publisher = ?1 AND outcome IN (?2, ?3)",
                params![publisher, Outcome::Ok, Outcome::NotModified],
                |r| r.get(0),
            )
            .map_err(sql("reading the last successful run"))
    }

    /// Starts the transaction that stages one feed: findings, rejections, new
    /// deposits, versions and files, and the feed's validators, all or nothing.
    pub fn stage(&mut self) -> Result<Stage<'_>, StoreError> {
        Ok(Stage {
            tx: self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql("starting the feed's transaction"))?,
        })
    }

    /// Records findings of a run outside a feed transaction (fatal findings,
    /// harvest-time findings).
    pub fn add_findings(&mut self, run: i64, findings: &[StoredFinding]) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql("recording findings"))?;
        insert_findings(&tx, run, findings)?;
        tx.commit().map_err(sql("recording findings"))
    }

    /// Versions of `publisher` waiting for files whose retry time has come.
    pub fn due_versions(
        &self,
        publisher: &str,
        now: Timestamp,
    ) -> Result<Vec<DueVersion>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT v.id, d.guid, v.attempts, f.id, f.role, f.url, f.declared_type,
                        f.declared_size, f.declared_md5
                 FROM versions v JOIN deposits d ON d.id = v.deposit_id
                 JOIN files f ON f.version_id = v.id
                 WHERE d.publisher = ?1 AND v.state = ?3
                   AND (v.next_attempt_at IS NULL OR v.next_attempt_at <= ?2)
                   AND f.state != ?4
                 ORDER BY v.id, f.ord",
            )
            .map_err(sql("listing due versions"))?;
        let mut out: Vec<DueVersion> = Vec::new();
        let rows = stmt
            .query_map(
                params![publisher, now, VersionState::Pending, FileState::Stored],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, u32>(2)?,
                        DueFile {
                            id: r.get(3)?,
                            file: NewFile {
                                role: r.get(4)?,
                                url: r.get(5)?,
                                declared_type: r.get(6)?,
                                declared_size: r
                                    .get::<_, Option<i64>>(7)?
                                    .map(|v| v.max(0).unsigned_abs()),
                                declared_md5: r.get(8)?,
                            },
                        },
                    ))
                },
            )
            .map_err(sql("listing due versions"))?;
        for row in rows {
            let (id, guid, attempts, file) = row.map_err(sql("listing due versions"))?;
            match out.last_mut() {
                Some(v) if v.id == id => v.files.push(file),
                _ => out.push(DueVersion {
                    id,
                    guid,
                    attempts,
                    files: vec![file],
                }),
            }
        }
        // Versions whose files were all stored before a crash, but which were not yet
        // marked deposited, have no due file: finish them too.
        let mut stmt = self
            .conn
            .prepare(
                "SELECT v.id, d.guid, v.attempts FROM versions v JOIN deposits d ON d.id = v.deposit_id
                 WHERE d.publisher = ?1 AND v.state = ?2
                   AND NOT EXISTS (SELECT 1 FROM files f WHERE f.version_id = v.id AND f.state != ?3)",
            )
            .map_err(sql("listing due versions"))?;
        let rows = stmt
            .query_map(
                params![publisher, VersionState::Pending, FileState::Stored],
                |r| {
                    Ok(DueVersion {
                        id: r.get(0)?,
                        guid: r.get(1)?,
                        attempts: r.get(2)?,
                        files: Vec::new(),
                    })
                },
            )
            .map_err(sql("listing due versions"))?;
        for row in rows {
            out.push(row.map_err(sql("listing due versions"))?);
        }
        Ok(out)
    }

    /// Records the results of fetched files and then settles each listed version, in
    /// one transaction: a version with every file stored becomes `deposited` and its
    /// change is appended to the journal; a version with a failed file counts a failed
    /// attempt (retried after `backoff(attempts)`, or `failed` after `max_attempts`).
    pub fn record(
        &mut self,
        files: &[(i64, FileResult, Timestamp)],
        settle: &[i64],
        now: Timestamp,
        max_attempts: u32,
        retry_at: &dyn Fn(u32) -> Timestamp,
    ) -> Result<Vec<Settled>, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql("recording files"))?;
        for (id, result, fetched_at) in files {
            record_file(&tx, *id, result, *fetched_at)?;
        }
        let now = journal_time(&tx, now)?;
        let mut settled = Vec::new();
        for &version in settle {
            let (missing, error): (i64, Option<String>) = tx
                .prepare_cached(
                    "SELECT count(*), max(error) FROM files WHERE version_id = ?1 AND state != ?2",
                )
                .and_then(|mut s| {
                    s.query_row(params![version, FileState::Stored], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })
                })
                .map_err(sql("settling a version"))?;
            let outcome = if missing == 0 {
                deposit(&tx, version, now)?
            } else {
                Some(failed_attempt(&tx, version, error, max_attempts, retry_at)?)
            };
            settled.extend(outcome);
        }
        tx.commit().map_err(sql("recording files"))?;
        Ok(settled)
    }

    /// Marks a version non-conforming (and so `restricted`) because of a harvest-time
    /// error found in one of its files (H-DRM), adding the finding to the version's own.
    pub fn mark_nonconforming(
        &self,
        version: i64,
        finding: &StoredFinding,
    ) -> Result<(), StoreError> {
        let json = serde_json::json!({
            "rule": finding.rule,
            "severity": finding.severity,
            "line": finding.line,
            "column": finding.column,
            "url": finding.url,
            "message": finding.message,
        })
        .to_string();
        self.conn
            .execute(
                "UPDATE versions SET conforming = 0, access = ?3,
                   findings = json_insert(findings, '$[#]', json(?2)) WHERE id = ?1",
                params![version, json, Access::Restricted],
            )
            .map_err(sql("marking a version non-conforming"))?;
        Ok(())
    }

    /// Whether the catalog has the blob with this SHA-256 (stored once: a new copy of
    /// it is dropped at commit, [`super::Blobs::commit`]).
    pub fn has_blob(&self, sha256: &str) -> Result<bool, StoreError> {
        self.conn
            .prepare_cached("SELECT 1 FROM blobs WHERE sha256 = ?1")
            .and_then(|mut stmt| stmt.exists(params![sha256]))
            .map_err(sql("looking up a blob"))
    }

    /// Postpones a version (a long `Retry-After`) without counting a failed attempt.
    pub fn postpone(&self, version: i64, until: Timestamp, reason: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE versions SET next_attempt_at = ?2, last_error = ?3 WHERE id = ?1 AND state = ?4",
                params![version, until, reason, VersionState::Pending],
            )
            .map_err(sql("postponing a version"))?;
        Ok(())
    }
}

/// How a version was settled by [`Catalog::record`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// Every file stored: deposited, change journalled.
    Deposited(i64),
    /// A file failed; retried later.
    Retry(i64),
    /// A file failed too often: stays failed.
    GaveUp(i64),
}

/// Records one fetched file's result (a stored file's blob too).
fn record_file(
    tx: &Transaction<'_>,
    id: i64,
    result: &FileResult,
    fetched_at: Timestamp,
) -> Result<(), StoreError> {
    match result {
        FileResult::Stored(s) => {
            let len = i64::try_from(s.digests.length).unwrap_or(i64::MAX);
            tx.prepare_cached(
                // Plain SQL (SQLite and PostgreSQL): of two workers recording identical
                // new bytes, the second keeps the first's row (issue 17 §2).
                "INSERT INTO blobs (sha256, length, md5, stored_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (sha256) DO NOTHING",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![s.digests.sha256, len, s.digests.md5, fetched_at])
            })
            .map_err(sql("recording a blob"))?;
            tx.prepare_cached(
                "UPDATE files SET state = ?13, error = NULL, final_url = ?2, http_status = ?3,
                   content_type = ?4, content_encoding = ?5, last_modified = ?6, etag = ?7,
                   filename = ?8, sha256 = ?9, length = ?10, md5 = ?11, fetched_at = ?12
                 WHERE id = ?1",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    id,
                    s.final_url,
                    s.status,
                    s.content_type,
                    s.content_encoding,
                    s.last_modified,
                    s.etag,
                    s.filename,
                    s.digests.sha256,
                    len,
                    s.digests.md5,
                    fetched_at,
                    FileState::Stored
                ])
            })
            .map_err(sql("recording a file"))?;
        }
        FileResult::Failed(reason) => {
            tx.prepare_cached(
                "UPDATE files SET state = ?4, error = ?2, fetched_at = ?3 WHERE id = ?1 AND state != ?5",
            )
            .and_then(|mut stmt| {
                stmt.execute(params![
                    id,
                    reason,
                    fetched_at,
                    FileState::Failed,
                    FileState::Stored
                ])
            })
            .map_err(sql("recording a failed file"))?;
        }
    }
    Ok(())
}

/// The journal's time for the changes of this transaction: taken here, inside it
/// (writers take turns), and at least a millisecond after the journal's last change,
/// so journal order is forward chronological and every transaction's changes have a
/// time of their own (Change Lists, change notifications).
fn journal_time(tx: &Transaction<'_>, now: Timestamp) -> Result<Timestamp, StoreError> {
    let last: Option<Timestamp> = tx
        .query_row("SELECT max(at) FROM changes", [], |r| r.get(0))
        .map_err(sql("reading the change journal"))?;
    let after_last = last.map(|t| t.plus(chrono::Duration::milliseconds(1)));
    Ok([Some(now), Some(super::now()), after_last]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(now))
}

/// Deposits a pending version whose files are all stored and journals its change
/// (`created` for a deposit's first, `updated` after); `None` if it was not pending.
fn deposit(
    tx: &Transaction<'_>,
    version: i64,
    now: Timestamp,
) -> Result<Option<Settled>, StoreError> {
    let changed = tx
        .prepare_cached(
            "UPDATE versions SET state = ?3, deposited_at = ?2, last_error = NULL,
               next_attempt_at = NULL WHERE id = ?1 AND state = ?4",
        )
        .and_then(|mut s| {
            s.execute(params![
                version,
                now,
                VersionState::Deposited,
                VersionState::Pending
            ])
        })
        .map_err(sql("depositing a version"))?;
    if changed != 1 {
        return Ok(None);
    }
    let (deposit, publisher, earlier): (i64, String, bool) = tx
        .prepare_cached(
            "SELECT v.deposit_id, d.publisher,
               EXISTS (SELECT 1 FROM changes c WHERE c.deposit_id = v.deposit_id)
             FROM versions v JOIN deposits d ON d.id = v.deposit_id WHERE v.id = ?1",
        )
        .and_then(|mut s| s.query_row(params![version], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))))
        .map_err(sql("depositing a version"))?;
    let change = if earlier {
        Change::Updated
    } else {
        Change::Created
    };
    tx.prepare_cached(
        "INSERT INTO changes (version_id, deposit_id, publisher, change, at) VALUES (?1, ?2, ?3, ?4, ?5)",
    )
    .and_then(|mut stmt| stmt.execute(params![version, deposit, publisher, change, now]))
    .map_err(sql("appending to the change journal"))?;
    Ok(Some(Settled::Deposited(version)))
}

/// Counts a failed attempt of a pending version: retried at `retry_at(attempts)`, or
/// failed for good after `max_attempts`.
fn failed_attempt(
    tx: &Transaction<'_>,
    version: i64,
    error: Option<String>,
    max_attempts: u32,
    retry_at: &dyn Fn(u32) -> Timestamp,
) -> Result<Settled, StoreError> {
    let attempts: u32 = tx
        .prepare_cached(
            "UPDATE versions SET attempts = attempts + 1, last_error = ?2
             WHERE id = ?1 AND state = ?3 RETURNING attempts",
        )
        .and_then(|mut s| s.query_row(params![version, error, VersionState::Pending], |r| r.get(0)))
        .optional()
        .map_err(sql("recording a failed attempt"))?
        .unwrap_or(0);
    if attempts >= max_attempts {
        tx.prepare_cached("UPDATE versions SET state = ?2, next_attempt_at = NULL WHERE id = ?1")
            .and_then(|mut stmt| stmt.execute(params![version, VersionState::Failed]))
            .map_err(sql("giving up a version"))?;
        return Ok(Settled::GaveUp(version));
    }
    tx.prepare_cached("UPDATE versions SET next_attempt_at = ?2 WHERE id = ?1")
        .and_then(|mut s| s.execute(params![version, retry_at(attempts)]))
        .map_err(sql("scheduling a retry"))?;
    Ok(Settled::Retry(version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processes_opening_a_fresh_catalog_at_once_both_migrate_it() {
        // `plikt serve` and `plikt harvest` started together on a new data folder.
        let dir = std::env::temp_dir().join(format!("plikt-migrate-{}", std::process::id()));
        for round in 0..20 {
            let path = dir.join(format!("{round}.sqlite"));
            let _ = std::fs::create_dir_all(&dir);
            let openers: Vec<_> = (0..3)
                .map(|_| {
                    let path = path.clone();
                    std::thread::spawn(move || Catalog::open(&path).map(drop))
                })
                .collect();
            for o in openers {
                o.join().unwrap().unwrap();
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

//! Deposits: the versions a run staged, their files fetched and recorded, and the
//! versions whose files are all stored deposited and journalled.
//!
//! Exactly once: a version becomes `deposited` in the same transaction that appends
//! its change to the journal, guarded by its state and by `UNIQUE(version_id)` on the
//! journal, so a retried or replayed step cannot deposit or announce it twice.

use super::StoreError;
use super::catalog::Catalog;
use super::records::*;
use super::sql::{Db, DbError, Lock, Param, chunks, in_list, params, sql, value_rows};
use super::stage::Stage;
use super::state::{Access, Change, FileState, Timestamp, VersionState};

impl Catalog {
    /// Where the blob `sha256` came from: the latest stored file with these bytes, with
    /// its publisher, version, guid and what its feed declared (`plikt audit --refetch`).
    pub fn blob_source(&self, sha256: &str) -> Result<Option<BlobSource>, StoreError> {
        self.db()
            .query_opt(
                "SELECT d.publisher, v.id, f.id, d.guid, f.role, f.url, f.declared_type,
                        f.declared_size, f.declared_md5
                 FROM files f JOIN versions v ON v.id = f.version_id
                 JOIN deposits d ON d.id = v.deposit_id
                 WHERE f.sha256 = ?1 AND f.state = ?2 ORDER BY f.id DESC LIMIT 1",
                params![sha256, FileState::Stored],
                |r| {
                    Ok(BlobSource {
                        publisher: r.get(0)?,
                        version: r.get(1)?,
                        file_id: r.get(2)?,
                        guid: r.get(3)?,
                        file: new_file(r, 4)?,
                    })
                },
            )
            .map_err(sql("looking up a blob's file"))
    }

    /// Records where the blob `sha256` is now (stored again: at its own name, or in a
    /// pack).
    pub fn place_blob(&self, sha256: &str, pack: Option<&super::Packed>) -> Result<(), StoreError> {
        let offset = pack.map(|p| i64::try_from(p.offset).unwrap_or(i64::MAX));
        self.db()
            .execute(
                "UPDATE blobs SET pack = ?2, pack_offset = ?3 WHERE sha256 = ?1",
                params![sha256, pack.map(|p| p.pack.as_str()), offset],
            )
            .map_err(sql("recording where a blob is"))?;
        Ok(())
    }

    /// Starts the transaction that stages one feed: findings, rejections, new
    /// deposits, versions and files, and the feed's validators, all or nothing.
    pub fn stage(&mut self) -> Result<Stage<'_>, StoreError> {
        Ok(Stage {
            tx: self
                .db_mut()
                .transaction()
                .map_err(sql("starting the feed's transaction"))?,
        })
    }

    /// Versions of `publisher` waiting for files whose retry time has come.
    pub fn due_versions(
        &self,
        publisher: &str,
        now: Timestamp,
    ) -> Result<Vec<DueVersion>, StoreError> {
        let mut out: Vec<DueVersion> = Vec::new();
        self.db()
            .each(
                &due_files_sql(),
                params![publisher, now, FileState::Stored],
                |r| {
                    let id: i64 = r.get(0)?;
                    let file = DueFile {
                        id: r.get(3)?,
                        file: new_file(r, 4)?,
                    };
                    match out.last_mut() {
                        Some(v) if v.id == id => v.files.push(file),
                        _ => out.push(DueVersion {
                            id,
                            guid: r.get(1)?,
                            attempts: r.get(2)?,
                            files: vec![file],
                        }),
                    }
                    Ok::<_, DbError>(())
                },
            )
            .map_err(sql("listing due versions"))?;
        // Versions whose files were all stored before a crash, but which were not yet
        // marked deposited, have no due file: finish them too.
        let finished = self
            .db()
            .query(
                &format!(
                    "SELECT p.id, p.guid, p.attempts FROM ({}) p
                 WHERE p.guid IS NOT NULL
                   AND NOT EXISTS (SELECT 1 FROM files f WHERE f.version_id = p.id AND f.state != ?2)",
                    pending_versions_sql()
                ),
                params![publisher, FileState::Stored],
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
        out.extend(finished);
        Ok(out)
    }

    /// Records the results of fetched files and then settles each listed version, in
    /// one transaction: a version with every file stored becomes `deposited` and its
    /// change is appended to the journal; a version with a failed file counts a failed
    /// attempt (retried after `backoff(attempts)`, or `failed` after `max_attempts`).
    /// The versions in `nonconforming` are marked so first, with the finding that made
    /// them so (H-DRM), and deposited `restricted`.
    pub fn record(
        &mut self,
        files: &[(i64, FileResult, Timestamp)],
        settle: &[i64],
        nonconforming: &[(i64, StoredFinding)],
        now: Timestamp,
        retries: &Retries<'_>,
    ) -> Result<Vec<Settled>, StoreError> {
        let Retries {
            max_attempts,
            retry_at,
            unstored,
        } = *retries;
        let tx = self
            .db_mut()
            .transaction()
            .map_err(sql("recording files"))?;
        let stored: Vec<(i64, &StoredFile, Timestamp)> = files
            .iter()
            .filter_map(|(id, r, at)| match r {
                FileResult::Stored(s) => Some((*id, &**s, *at)),
                FileResult::Failed(_) => None,
            })
            .collect();
        let new_blobs = record_stored(&tx, &stored)?;
        for (version, finding) in nonconforming {
            mark_nonconforming(&tx, *version, finding)?;
        }
        for (id, result, fetched_at) in files {
            if let FileResult::Failed(reason) = result {
                record_failed(&tx, *id, reason, *fetched_at)?;
            }
        }
        // Writers of the journal take turns from here to their commit, so that journal
        // order is commit order: a Destination reading after position N never misses
        // a change committed later with a smaller position (PostgreSQL; SQLite's write
        // transaction is one at a time already).
        tx.lock(Lock::Journal).map_err(sql("recording files"))?;
        tally_blobs(&tx, new_blobs)?;
        let now = journal_time(&tx, now)?;
        let missing = missing_files(&tx, settle)?;
        let mut complete: Vec<i64> = Vec::new();
        for v in settle {
            if !missing.contains_key(v) && !complete.contains(v) {
                complete.push(*v);
            }
        }
        let deposited = deposit(&tx, &complete, now)?;
        let mut settled = Vec::new();
        for &version in settle {
            match missing.get(&version) {
                None if deposited.contains(&version) => {
                    settled.push(Settled::Deposited(version));
                }
                None => {}
                // The publisher served every file, the blob store could not keep one:
                // the deposit's own failure is not the publisher's, so it does not count
                // towards `max_failed_runs` (an object store away for hours would
                // otherwise give up every version of that time for good).
                Some(error) if unstored(version) => {
                    settled.push(retry_unstored(&tx, version, error.clone(), retry_at)?);
                }
                Some(error) => settled.push(failed_attempt(
                    &tx,
                    version,
                    error.clone(),
                    max_attempts,
                    retry_at,
                )?),
            }
        }
        tx.commit().map_err(sql("recording files"))?;
        Ok(settled)
    }

    /// Of these SHA-256s, those the catalog has a blob of (stored once: a new copy of
    /// it is dropped at commit, [`super::Blobs::commit`]). Each looked up by key (a
    /// scalar subquery per SHA-256): as `sha256 IN (…)`, PostgreSQL planned it on the
    /// statistics of the empty table a first harvest starts with, and scanned every blob
    /// for every batch (6.0 of a 10,000-item harvest's 17.5 s).
    pub fn known_blobs(
        &self,
        sha256s: &[&str],
    ) -> Result<std::collections::HashSet<String>, StoreError> {
        let mut known = std::collections::HashSet::new();
        for piece in chunks(sha256s) {
            let p: Vec<&dyn Param> = piece.iter().map(|s| s as &dyn Param).collect();
            let rows = self
                .db()
                .query(
                    &format!(
                        "SELECT v.column1,
                           (SELECT 1 FROM blobs b WHERE b.sha256 = v.column1)
                         FROM (VALUES {}) AS v",
                        value_rows(piece.len(), 1, 1, Some(&["TEXT"]))
                    ),
                    &p,
                    |r| Ok((r.get::<String>(0)?, r.get::<Option<i64>>(1)?.is_some())),
                )
                .map_err(sql("looking up blobs"))?;
            known.extend(rows.into_iter().filter(|(_, k)| *k).map(|(s, _)| s));
        }
        Ok(known)
    }

    /// Postpones a version (a long `Retry-After`) without counting a failed attempt.
    pub fn postpone(&self, version: i64, until: Timestamp, reason: &str) -> Result<(), StoreError> {
        self.db()
            .execute(
                "UPDATE versions SET next_attempt_at = ?2, last_error = ?3 WHERE id = ?1 AND state = ?4",
                params![version, until, reason, VersionState::Pending],
            )
            .map_err(sql("postponing a version"))?;
        Ok(())
    }
}

/// The pending versions (`?1`: their publisher; `guid` NULL for another's), through the
/// partial index of them (migration 10), each one's deposit looked up by its key. Not a
/// join with `deposits`: planned on statistics older than a large stage (PostgreSQL,
/// before autovacuum's analyze), where both sides look like a row or two, it scanned the
/// publisher's deposits once per pending version: 14 s for 10,000 new items.
fn pending_versions_sql() -> String {
    format!(
        "SELECT v.id, v.attempts, v.next_attempt_at,
                (SELECT d.guid FROM deposits d WHERE d.id = v.deposit_id AND d.publisher = ?1) AS guid
         FROM versions v WHERE {}",
        super::migrations::PENDING_VERSION
    )
}

/// The files not stored of the publisher's pending versions due by `?2` (`?3`: stored).
/// MATERIALIZED: otherwise SQLite walks every version in id order to spare the sort, a
/// scan of the whole collection in every run.
fn due_files_sql() -> String {
    format!(
        "WITH p AS MATERIALIZED ({})
         SELECT p.id, p.guid, p.attempts, f.id, f.role, f.url, f.declared_type,
                f.declared_size, f.declared_md5
         FROM p JOIN files f ON f.version_id = p.id
         WHERE p.guid IS NOT NULL
           AND (p.next_attempt_at IS NULL OR p.next_attempt_at <= ?2)
           AND f.state != ?3
         ORDER BY p.id, f.ord",
        pending_versions_sql()
    )
}

/// Records stored files and their blobs, a few multi-row statements per
/// [`chunks`] piece (issue 17 §6: on PostgreSQL one round trip per piece, not three per
/// file).
/// Returns the blobs that were new to the catalog.
fn record_stored(
    tx: &Db,
    stored: &[(i64, &StoredFile, Timestamp)],
) -> Result<NewBlobs, StoreError> {
    let mut new = NewBlobs::default();
    // The blobs in SHA-256 order: two workers recording the same new bytes at once (a
    // page two publishers share) take the rows' locks in the same order, so one waits
    // for the other instead of both waiting for each other (PostgreSQL found such a
    // deadlock with four workers when the rows went in file order).
    let mut by_sha: Vec<(i64, &StoredFile, Timestamp)> = stored.to_vec();
    by_sha.sort_by(|a, b| a.1.digests.sha256.cmp(&b.1.digests.sha256));
    for piece in chunks(&by_sha) {
        let lengths: Vec<i64> = piece
            .iter()
            .map(|(_, s, _)| i64::try_from(s.digests.length).unwrap_or(i64::MAX))
            .collect();
        let packs: Vec<(Option<&str>, Option<i64>)> = piece
            .iter()
            .map(|(_, s, _)| match &s.pack {
                Some(p) => (
                    Some(p.pack.as_str()),
                    Some(i64::try_from(p.offset).unwrap_or(i64::MAX)),
                ),
                None => (None, None),
            })
            .collect();
        let mut p: Vec<&dyn Param> = Vec::with_capacity(piece.len() * 6);
        for (((_, s, at), len), (pack, offset)) in piece.iter().zip(&lengths).zip(&packs) {
            p.extend([
                &s.digests.sha256 as &dyn Param,
                len,
                &s.digests.md5,
                at,
                pack,
                offset,
            ]);
        }
        // A blob the catalog has keeps its row (and its place): identical bytes are
        // stored once. The rows inserted are counted for the blob tally.
        let inserted = tx
            .query(
                &format!(
                    "INSERT INTO blobs (sha256, length, md5, stored_at, pack, pack_offset) VALUES {}
                     ON CONFLICT (sha256) DO NOTHING RETURNING length",
                    value_rows(piece.len(), 6, 1, None)
                ),
                &p,
                |r| r.get::<i64>(0),
            )
            .map_err(sql("recording blobs"))?;
        new.blobs += i64::try_from(inserted.len()).unwrap_or(i64::MAX);
        new.bytes += inserted.iter().sum::<i64>();
        let mut p: Vec<&dyn Param> = Vec::with_capacity(1 + piece.len() * 12);
        p.push(&FileState::Stored);
        for ((id, s, at), len) in piece.iter().zip(&lengths) {
            p.extend([
                id as &dyn Param,
                &s.final_url,
                &s.status,
                &s.content_type,
                &s.content_encoding,
                &s.last_modified,
                &s.etag,
                &s.filename,
                &s.digests.sha256,
                len,
                &s.digests.md5,
                at,
            ]);
        }
        const TYPES: [&str; 12] = [
            "BIGINT", "TEXT", "BIGINT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "BIGINT",
            "TEXT", "TEXT",
        ];
        tx.execute(
            &format!(
                "UPDATE files SET state = ?1, error = NULL, final_url = v.column2,
                   http_status = v.column3, content_type = v.column4,
                   content_encoding = v.column5, last_modified = v.column6, etag = v.column7,
                   filename = v.column8, sha256 = v.column9, length = v.column10,
                   md5 = v.column11, fetched_at = v.column12
                 FROM (VALUES {}) AS v WHERE files.id = v.column1",
                value_rows(piece.len(), 12, 2, Some(&TYPES))
            ),
            &p,
        )
        .map_err(sql("recording files"))?;
    }
    Ok(new)
}

/// Blobs a transaction added to the catalog: their number and bytes.
#[derive(Debug, Default, Clone, Copy)]
struct NewBlobs {
    blobs: i64,
    bytes: i64,
}

/// Adds the blobs a transaction recorded to the blob tally (migration 12). After the
/// journal's lock: the writers that update the one row already take turns from there to
/// their commit, so it adds no wait.
fn tally_blobs(tx: &Db, new: NewBlobs) -> Result<(), StoreError> {
    if new.blobs == 0 {
        return Ok(());
    }
    tx.execute(
        "INSERT INTO blob_tally (id, blobs, bytes) VALUES (1, ?1, ?2)
         ON CONFLICT (id) DO UPDATE SET blobs = blob_tally.blobs + excluded.blobs,
           bytes = blob_tally.bytes + excluded.bytes",
        params![new.blobs, new.bytes],
    )
    .map_err(sql("counting blobs"))?;
    Ok(())
}

/// Marks a version non-conforming (and so `restricted`) because of a harvest-time
/// error found in one of its files (H-DRM), adding the finding to the version's own. In
/// the transaction that may deposit it ([`Catalog::record`]): a version is journalled
/// with the access it keeps, and a crash cannot leave it public.
fn mark_nonconforming(tx: &Db, version: i64, finding: &StoredFinding) -> Result<(), StoreError> {
    let json = serde_json::json!({
        "rule": finding.rule,
        "severity": finding.severity,
        "line": finding.line,
        "column": finding.column,
        "url": finding.url,
        "message": finding.message,
    })
    .to_string();
    tx.execute(
        // The finding appended to the version's JSON array (written compact by plikt),
        // as text: the same on SQLite and PostgreSQL, and the findings already there
        // keep their bytes.
        "UPDATE versions SET conforming = 0, access = ?3,
           findings = CASE WHEN findings = '[]' THEN '[' || ?2 || ']'
             ELSE substr(findings, 1, length(findings) - 1) || ',' || ?2 || ']' END
         WHERE id = ?1",
        params![version, json, Access::Restricted],
    )
    .map_err(sql("marking a version non-conforming"))?;
    Ok(())
}

/// Records a file that failed (one that was stored meanwhile stays stored).
fn record_failed(tx: &Db, id: i64, reason: &str, fetched_at: Timestamp) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE files SET state = ?4, error = ?2, fetched_at = ?3 WHERE id = ?1 AND state != ?5",
        params![id, reason, fetched_at, FileState::Failed, FileState::Stored],
    )
    .map_err(sql("recording a failed file"))?;
    Ok(())
}

/// Of `versions`, those with a file not stored: the last error among them.
fn missing_files(
    tx: &Db,
    versions: &[i64],
) -> Result<std::collections::HashMap<i64, Option<String>>, StoreError> {
    let mut out = std::collections::HashMap::new();
    for piece in chunks(versions) {
        let mut p: Vec<&dyn Param> = vec![&FileState::Stored];
        p.extend(piece.iter().map(|v| v as &dyn Param));
        // `query`, not a cursor: a piece's rows are few, and one round trip. Each
        // version's files by its key (scalar subqueries): as `version_id IN (…)`,
        // PostgreSQL planned it on the statistics of the empty table a first harvest
        // starts with and scanned every file for every batch.
        let rows = tx
            .query(
                &format!(
                    "SELECT v.column1,
                       (SELECT count(*) FROM files f WHERE f.version_id = v.column1 AND f.state != ?1),
                       (SELECT max(f.error) FROM files f WHERE f.version_id = v.column1 AND f.state != ?1)
                     FROM (VALUES {}) AS v",
                    value_rows(piece.len(), 1, 2, Some(&["BIGINT"]))
                ),
                &p,
                |r| {
                    Ok((
                        r.get::<i64>(0)?,
                        r.get::<i64>(1)?,
                        r.get::<Option<String>>(2)?,
                    ))
                },
            )
            .map_err(sql("settling versions"))?;
        out.extend(
            rows.into_iter()
                .filter(|(_, missing, _)| *missing > 0)
                .map(|(v, _, error)| (v, error)),
        );
    }
    Ok(out)
}

/// The journal's time for the changes of this transaction: taken here, inside it
/// (writers take turns), and at least a millisecond after the journal's last change,
/// so journal order is forward chronological and every transaction's changes have a
/// time of their own (Change Lists, change notifications).
fn journal_time(tx: &Db, now: Timestamp) -> Result<Timestamp, StoreError> {
    let last: Option<Timestamp> = tx
        .one("SELECT max(at) FROM changes", params![])
        .map_err(sql("reading the change journal"))?;
    let after_last = last.map(|t| t.plus(chrono::Duration::milliseconds(1)));
    Ok([Some(now), Some(super::now()), after_last]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(now))
}

/// Deposits the pending versions among `versions` (whose files are all stored) and
/// journals their changes in `versions`' order: `created` for a deposit's first change,
/// `updated` after (a deposit's second version in the same batch too). Returns the
/// versions deposited; one that was not pending is left alone.
fn deposit(
    tx: &Db,
    versions: &[i64],
    now: Timestamp,
) -> Result<std::collections::HashSet<i64>, StoreError> {
    let mut deposited = std::collections::HashSet::new();
    let mut of: std::collections::HashMap<i64, Deposited> = std::collections::HashMap::new();
    for piece in chunks(versions) {
        let mut p: Vec<&dyn Param> = vec![&VersionState::Deposited, &now, &VersionState::Pending];
        p.extend(piece.iter().map(|v| v as &dyn Param));
        let ids = in_list(piece.len(), 4);
        let changed = tx
            .query(
                &format!(
                    "UPDATE versions SET state = ?1, deposited_at = ?2, last_error = NULL,
                       next_attempt_at = NULL WHERE state = ?3 AND id IN ({ids}) RETURNING id"
                ),
                &p,
                |r| r.get::<i64>(0),
            )
            .map_err(sql("depositing versions"))?;
        deposited.extend(changed);
        // Each version's publisher, files and journal entries looked up by key, not
        // joined: a join planned on the statistics of a smaller catalog hashed every
        // deposit per batch. What the journal and the tallies need, in one round trip.
        let rows = tx
            .query(
                &format!(
                    "SELECT v.id, v.deposit_id,
                       (SELECT d.publisher FROM deposits d WHERE d.id = v.deposit_id),
                       EXISTS (SELECT 1 FROM changes c WHERE c.deposit_id = v.deposit_id),
                       (SELECT count(*) FROM files f WHERE f.version_id = v.id), v.access
                     FROM versions v WHERE v.id IN ({})",
                    in_list(piece.len(), 1)
                ),
                &p[3..],
                |r| {
                    let row = Deposited {
                        deposit: r.get(1)?,
                        publisher: r.get(2)?,
                        journalled: r.get(3)?,
                        files: r.get(4)?,
                        restricted: r.get::<Access>(5)? == Access::Restricted,
                    };
                    Ok((r.get::<i64>(0)?, row))
                },
            )
            .map_err(sql("depositing versions"))?;
        of.extend(rows);
    }
    let mut journalled = std::collections::HashSet::new();
    let mut changes: Vec<(i64, &Deposited, Change)> = Vec::new();
    for v in versions.iter().filter(|v| deposited.contains(v)) {
        let Some(d) = of.get(v) else {
            continue;
        };
        let change = if d.journalled || !journalled.insert(d.deposit) {
            Change::Updated
        } else {
            Change::Created
        };
        changes.push((*v, d, change));
    }
    for piece in chunks(&changes) {
        let mut p: Vec<&dyn Param> = Vec::with_capacity(piece.len() * 5);
        for (v, d, change) in piece {
            p.extend([v as &dyn Param, &d.deposit, &d.publisher, change, &now]);
        }
        tx.execute(
            &format!(
                "INSERT INTO changes (version_id, deposit_id, publisher, change, at) VALUES {}",
                value_rows(piece.len(), 5, 1, None)
            ),
            &p,
        )
        .map_err(sql("appending to the change journal"))?;
    }
    tally(tx, &changes)?;
    Ok(deposited)
}

/// A version being deposited, as [`deposit`] looked it up.
#[derive(Debug)]
struct Deposited {
    deposit: i64,
    publisher: String,
    /// The journal has a change of the deposit already.
    journalled: bool,
    /// Its files (all stored, or it would not be deposited).
    files: i64,
    /// Its access is `restricted` (settled by then: H-DRM marks it in the same
    /// transaction).
    restricted: bool,
}

/// Adds the versions just deposited to their publishers' tallies (migrations 11 and
/// 15): a deposit with its first change, each version, its files, and each restricted
/// version. In the transaction that deposits them, so the tallies are what a recount
/// would find.
fn tally(tx: &Db, changes: &[(i64, &Deposited, Change)]) -> Result<(), StoreError> {
    // (deposits, versions, files, restricted versions) by publisher, in a stable order.
    let mut by: std::collections::BTreeMap<&str, [i64; 4]> = Default::default();
    for (_, d, change) in changes {
        let t = by.entry(&d.publisher).or_default();
        t[0] += i64::from(*change == Change::Created);
        t[1] += 1;
        t[2] += d.files;
        t[3] += i64::from(d.restricted);
    }
    for (publisher, [deposits, versions, files, restricted]) in by {
        tx.execute(
            "INSERT INTO tallies (publisher, deposits, versions, files, restricted)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (publisher) DO UPDATE SET deposits = tallies.deposits + excluded.deposits,
               versions = tallies.versions + excluded.versions, files = tallies.files + excluded.files,
               restricted = tallies.restricted + excluded.restricted",
            params![publisher, deposits, versions, files, restricted],
        )
        .map_err(sql("counting deposits"))?;
    }
    Ok(())
}

/// Adds one to the count `column` of a pending version's failures (`attempts`, the
/// publisher's; `store_failures`, the blob store's) and records `error`; the new count,
/// or `None` if the version is no longer pending.
fn count_failure(
    tx: &Db,
    version: i64,
    error: Option<String>,
    column: &'static str,
) -> Result<Option<u32>, StoreError> {
    tx.query_opt(
        &format!(
            "UPDATE versions SET {column} = {column} + 1, last_error = ?2
             WHERE id = ?1 AND state = ?3 RETURNING {column}"
        ),
        params![version, error, VersionState::Pending],
        |r| r.get::<i64>(0),
    )
    .map(|n| n.map(|n| u32::try_from(n).unwrap_or(u32::MAX)))
    .map_err(sql("recording a failed try"))
}

/// A version the blob store could not keep a file of: its attempts unchanged (it is
/// never given up for it), retried after a backoff that grows with its store failures
/// (migration 18) as a publisher's failures' does.
fn retry_unstored(
    tx: &Db,
    version: i64,
    error: Option<String>,
    retry_at: &dyn Fn(u32) -> Timestamp,
) -> Result<Settled, StoreError> {
    let failures = count_failure(tx, version, error, "store_failures")?.unwrap_or(1);
    tx.execute(
        "UPDATE versions SET next_attempt_at = ?2 WHERE id = ?1 AND state = ?3",
        params![version, retry_at(failures), VersionState::Pending],
    )
    .map_err(sql("scheduling a retry"))?;
    Ok(Settled::Retry(version))
}

/// Counts a failed attempt of a pending version: retried at `retry_at(attempts)`, or
/// failed for good after `max_attempts`.
fn failed_attempt(
    tx: &Db,
    version: i64,
    error: Option<String>,
    max_attempts: u32,
    retry_at: &dyn Fn(u32) -> Timestamp,
) -> Result<Settled, StoreError> {
    let attempts = count_failure(tx, version, error, "attempts")?.unwrap_or(0);
    if attempts >= max_attempts {
        tx.execute(
            "UPDATE versions SET state = ?2, next_attempt_at = NULL WHERE id = ?1",
            params![version, VersionState::Failed],
        )
        .map_err(sql("giving up a version"))?;
        return Ok(Settled::GaveUp(version));
    }
    tx.execute(
        "UPDATE versions SET next_attempt_at = ?2 WHERE id = ?1",
        params![version, retry_at(attempts)],
    )
    .map_err(sql("scheduling a retry"))?;
    Ok(Settled::Retry(version))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Digests, FileRole, Location};

    /// A run's look for due files goes through the pending versions' index, not over
    /// every version of the collection (it scanned them all in every run).
    #[test]
    fn due_files_are_found_without_a_scan_of_every_version() {
        let tmp = tempfile::tempdir().unwrap();
        let c = Catalog::open_sqlite(&tmp.path().join("c.sqlite")).unwrap();
        let plan: Vec<String> = c
            .db()
            .query(
                &format!("EXPLAIN QUERY PLAN {}", due_files_sql()),
                params!["p", Timestamp::now(), FileState::Stored],
                |r| r.get(3),
            )
            .unwrap();
        assert!(
            plan.iter()
                .any(|l| l.contains("USING INDEX versions_pending")),
            "{plan:#?}"
        );
        assert!(!plan.iter().any(|l| l == "SCAN v"), "{plan:#?}");
    }

    /// Two workers recording the same new blobs at the same moment (a page two publishers
    /// share), listed in opposite orders: both commit. With the blobs' rows inserted in
    /// file order, PostgreSQL found a deadlock between them (bench-workers, four workers).
    // Over 100 lines: two workers' batches, built in full so that the deadlock is reproduced.
    #[test]
    fn workers_recording_the_same_new_blobs_at_once_do_not_deadlock() {
        let Some(server) = super::super::sql::tests::postgres_server() else {
            return;
        };
        let location = Location::plain_postgres(super::super::sql::tests::fresh_database(
            &server,
            "blob_race",
        ));
        let bytes: Vec<Vec<u8>> = (0..64).map(|i| format!("page {i}").into_bytes()).collect();
        for round in 0..20 {
            // Each round new bytes for both: the rows do not exist yet.
            let bytes: Vec<Vec<u8>> = bytes
                .iter()
                .map(|b| [b.as_slice(), format!(" {round}").as_bytes()].concat())
                .collect();
            let mut jobs = Vec::new();
            for p in ["a", "b"] {
                let mut c = Catalog::open(&location).unwrap();
                let publisher = format!("{p}{round}");
                c.upsert_publisher(&publisher, &publisher, "https://p.example/feed.xml")
                    .unwrap();
                let run = c.begin_run(&publisher, super::super::now()).unwrap();
                let files: Vec<NewFile> = (0..bytes.len())
                    .map(|i| NewFile {
                        role: FileRole::Content,
                        url: format!("https://p.example/{i}"),
                        declared_type: None,
                        declared_size: None,
                        declared_md5: None,
                    })
                    .collect();
                let stage = c.stage().unwrap();
                stage
                    .new_versions(
                        &publisher,
                        run,
                        &[super::super::NewItem {
                            guid: "g",
                            deposit: None,
                            version: NewVersion {
                                pub_date: super::super::now(),
                                pub_date_raw: "x",
                                item_hash: "h",
                                metadata: "{}",
                                findings: "[]",
                                conforming: true,
                                access: Access::Gratis,
                                files: &files,
                            },
                        }],
                        super::super::now(),
                    )
                    .unwrap();
                stage.commit().unwrap();
                let due = c.due_versions(&publisher, super::super::now()).unwrap();
                let mut results: Vec<(i64, FileResult, Timestamp)> = due[0]
                    .files
                    .iter()
                    .zip(&bytes)
                    .map(|(f, b)| {
                        let stored = StoredFile {
                            digests: Digests::of(b),
                            final_url: f.file.url.clone(),
                            status: 200,
                            content_type: None,
                            content_encoding: None,
                            last_modified: None,
                            etag: None,
                            filename: None,
                            pack: None,
                        };
                        (
                            f.id,
                            FileResult::Stored(Box::new(stored)),
                            super::super::now(),
                        )
                    })
                    .collect();
                if p == "b" {
                    results.reverse();
                }
                jobs.push((c, results, due[0].id));
            }
            let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
            let threads: Vec<_> = jobs
                .into_iter()
                .map(|(mut c, results, version)| {
                    let barrier = barrier.clone();
                    std::thread::spawn(move || {
                        barrier.wait();
                        c.record(
                            &results,
                            &[version],
                            &[],
                            super::super::now(),
                            &Retries {
                                max_attempts: 5,
                                retry_at: &|_| super::super::now(),
                                unstored: &|_| false,
                            },
                        )
                    })
                })
                .collect();
            for t in threads {
                let settled = t.join().unwrap().unwrap();
                assert!(
                    matches!(settled[..], [Settled::Deposited(_)]),
                    "{settled:?}"
                );
            }
        }
    }
}

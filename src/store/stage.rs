//! The transaction that stages one feed ([`Catalog::stage`](super::Catalog::stage)):
//! the run's findings, rejected items, new deposits, versions and files, and the feed's
//! validators, all or nothing.

use super::StoreError;
use super::catalog::{KnownVersion, NewVersion, StoredFinding, sql};
use super::sql::{Db, Tx, params};
use super::state::{FileState, Timestamp, VersionState};

pub(super) fn insert_findings(
    tx: &Db,
    run: i64,
    findings: &[StoredFinding],
) -> Result<(), StoreError> {
    for f in findings {
        tx.execute(
            "INSERT INTO findings (run_id, rule, severity, line, col, item, guid, url, message)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                run, f.rule, f.severity, f.line, f.column, f.item, f.guid, f.url, f.message
            ],
        )
        .map_err(sql("recording findings"))?;
    }
    Ok(())
}

/// The transaction staging one feed ([`Catalog::stage`]). Dropped without
/// [`Stage::commit`], nothing of the feed is recorded.
#[derive(Debug)]
pub struct Stage<'c> {
    pub(super) tx: Tx<'c>,
}

impl Stage<'_> {
    /// Records findings of the run.
    pub fn findings(&self, run: i64, findings: &[StoredFinding]) -> Result<(), StoreError> {
        insert_findings(&self.tx, run, findings)
    }

    /// Records an item that cannot be identified or collected.
    pub fn reject(
        &self,
        run: i64,
        item: u32,
        guid: Option<&str>,
        reason: &str,
    ) -> Result<(), StoreError> {
        self.tx
            .execute(
                "INSERT INTO rejections (run_id, item, guid, reason) VALUES (?1, ?2, ?3, ?4)",
                params![run, item, guid, reason],
            )
            .map_err(sql("recording a rejected item"))?;
        Ok(())
    }

    /// What is known of `guid`: its deposit and latest version.
    pub fn known(&self, publisher: &str, guid: &str) -> Result<Option<KnownVersion>, StoreError> {
        self.tx
            .query_opt(
                "SELECT d.id, v.pub_date, v.item_hash FROM deposits d
                 LEFT JOIN versions v ON v.deposit_id = d.id
                 WHERE d.publisher = ?1 AND d.guid = ?2
                 ORDER BY v.pub_date DESC LIMIT 1",
                params![publisher, guid],
                |r| {
                    Ok(KnownVersion {
                        deposit_id: r.get(0)?,
                        pub_date: r.get(1)?,
                        item_hash: r.get(2)?,
                    })
                },
            )
            .map_err(sql("looking up a guid"))
    }

    /// Creates the deposit for a new guid.
    pub fn new_deposit(
        &self,
        publisher: &str,
        guid: &str,
        now: Timestamp,
    ) -> Result<i64, StoreError> {
        self.tx
            .one(
                "INSERT INTO deposits (publisher, guid, created_at) VALUES (?1, ?2, ?3) RETURNING id",
                params![publisher, guid, now],
            )
            .map_err(sql("recording a deposit"))
    }

    /// Records a new pending version with its files.
    pub fn new_version(
        &self,
        deposit: i64,
        run: i64,
        v: &NewVersion<'_>,
        now: Timestamp,
    ) -> Result<i64, StoreError> {
        let id: i64 = self
            .tx
            .one(
                "INSERT INTO versions (deposit_id, pub_date, pub_date_raw, item_hash, metadata, findings,
                   conforming, access, state, found_run, found_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?11, ?9, ?10) RETURNING id",
                params![
                deposit,
                v.pub_date,
                v.pub_date_raw,
                v.item_hash,
                v.metadata,
                v.findings,
                v.conforming,
                v.access,
                run,
                now,
                VersionState::Pending
            ],
            )
            .map_err(sql("recording a version"))?;
        for (ord, f) in v.files.iter().enumerate() {
            self.tx.execute(
                "INSERT INTO files (version_id, ord, role, url, declared_type, declared_size, declared_md5, state)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                id,
                ord,
                f.role,
                f.url,
                f.declared_type,
                f.declared_size
                    .map(|s| i64::try_from(s).unwrap_or(i64::MAX)),
                f.declared_md5,
                FileState::Pending
            ],
            )
            .map_err(sql("recording a file"))?;
        }
        Ok(id)
    }

    /// Keeps the run findings of only the latest `keep` runs of `publisher` that read
    /// its feed (0 keeps all). A version's own findings stay with the version.
    pub fn prune_findings(&self, publisher: &str, keep: u32) -> Result<(), StoreError> {
        if keep == 0 {
            return Ok(());
        }
        self.tx
            .execute(
                "DELETE FROM findings WHERE run_id IN (
                   SELECT id FROM runs WHERE publisher = ?1 AND id < (
                     SELECT min(id) FROM (SELECT DISTINCT f.run_id AS id FROM findings f
                       JOIN runs r ON r.id = f.run_id WHERE r.publisher = ?1
                       ORDER BY f.run_id DESC LIMIT ?2) AS kept))",
                params![publisher, keep],
            )
            .map_err(sql("pruning old findings"))?;
        Ok(())
    }

    /// Remembers the feed's validators for the next conditional GET.
    pub fn feed_validators(
        &self,
        publisher: &str,
        etag: Option<&str>,
        last_modified: Option<&str>,
    ) -> Result<(), StoreError> {
        self.tx
            .execute(
                "UPDATE publishers SET etag = ?2, last_modified = ?3 WHERE id = ?1",
                params![publisher, etag, last_modified],
            )
            .map_err(sql("recording the feed's validators"))?;
        Ok(())
    }

    /// Makes everything staged durable.
    pub fn commit(self) -> Result<(), StoreError> {
        self.tx.commit().map_err(sql("committing the feed"))
    }
}

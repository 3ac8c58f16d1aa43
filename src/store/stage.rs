//! The transaction that stages one feed ([`Catalog::stage`](super::Catalog::stage)):
//! the run's findings, rejected items, new deposits, versions and files, and the feed's
//! validators, all or nothing.

use std::collections::HashMap;

use super::StoreError;
use super::records::{KnownVersion, NewFile, NewVersion, StoredFinding};
use super::sql::sql;
use super::sql::{Db, DbError, Param, Tx, chunks, in_list, params, value_rows_sharing};
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

/// A new version of a feed's item to record ([`Stage::new_versions`]).
#[derive(Debug, Clone)]
pub struct NewItem<'a> {
    /// The item's guid.
    pub guid: &'a str,
    /// Its deposit, or `None` for a guid the catalog does not know yet.
    pub deposit: Option<i64>,
    /// The version.
    pub version: NewVersion<'a>,
}

/// A version whose deposit was neither known nor made: a bug.
fn missing_deposit(guid: &str) -> StoreError {
    StoreError::Sql {
        context: "recording versions",
        source: DbError::Column {
            index: 0,
            reason: format!("no deposit was recorded for guid `{guid}`"),
        },
    }
}

/// The transaction staging one feed ([`Catalog::stage`](super::Catalog::stage)). Dropped without
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

    /// What is known of each of `guids`: its deposit and latest version (a guid the
    /// catalog does not know is missing from the map). One query per [`chunks`] piece.
    pub fn known(
        &self,
        publisher: &str,
        guids: &[&str],
    ) -> Result<HashMap<String, KnownVersion>, StoreError> {
        let mut out = HashMap::new();
        for piece in chunks(guids) {
            let mut p: Vec<&dyn Param> = vec![&publisher];
            p.extend(piece.iter().map(|g| g as &dyn Param));
            // Through a cursor (`each`): it is planned for these guids when declared. A
            // generic plan of a prepared query, made while a new catalog's tables were
            // nearly empty, looked a batch up in 18 ms instead of 1 on PostgreSQL.
            self.tx
                .each(
                    &format!(
                        "SELECT d.guid, d.id, v.pub_date, v.item_hash FROM deposits d
                         LEFT JOIN versions v ON v.id = (SELECT l.id FROM versions l
                           WHERE l.deposit_id = d.id ORDER BY l.pub_date DESC, l.id DESC LIMIT 1)
                         WHERE d.publisher = ?1 AND d.guid IN ({})",
                        in_list(piece.len(), 2)
                    ),
                    &p,
                    |r| {
                        let known = KnownVersion {
                            deposit_id: r.get(1)?,
                            pub_date: r.get(2)?,
                            item_hash: r.get(3)?,
                        };
                        out.insert(r.get::<String>(0)?, known);
                        Ok::<_, DbError>(())
                    },
                )
                .map_err(sql("looking up guids"))?;
        }
        Ok(out)
    }

    /// Records new pending versions with their files, and the deposits of the guids
    /// that have none yet (`deposit` `None`). A few multi-row statements per
    /// [`chunks`] piece (issue 17 §6: a feed of 10,000 new items costs PostgreSQL
    /// hundreds of round trips, not 50,000).
    // Over 100 lines: the multi-row statements for deposits, versions and files of one piece.
    pub fn new_versions(
        &self,
        publisher: &str,
        run: i64,
        new: &[NewItem<'_>],
        now: Timestamp,
    ) -> Result<(), StoreError> {
        // New guids' deposits, by guid.
        let guids: Vec<&str> = new
            .iter()
            .filter(|n| n.deposit.is_none())
            .map(|n| n.guid)
            .collect();
        let mut deposits: HashMap<String, i64> = HashMap::new();
        for piece in chunks(&guids) {
            let mut p: Vec<&dyn Param> = vec![&publisher, &now];
            p.extend(piece.iter().map(|g| g as &dyn Param));
            let rows = value_rows_sharing(piece.len(), 1, 3, "?1, ?2");
            let made = self
                .tx
                .query(
                    &format!(
                        "INSERT INTO deposits (guid, publisher, created_at) VALUES {rows}
                         RETURNING guid, id"
                    ),
                    &p,
                    |r| Ok((r.get::<String>(0)?, r.get::<i64>(1)?)),
                )
                .map_err(sql("recording deposits"))?;
            deposits.extend(made);
        }
        let deposit_of = |n: &NewItem<'_>| n.deposit.or_else(|| deposits.get(n.guid).copied());
        // Versions, by deposit (a feed has one new version per deposit at most: its
        // guids are unique).
        let mut versions: HashMap<i64, i64> = HashMap::new();
        for piece in chunks(new) {
            let ids: Vec<i64> = piece
                .iter()
                .map(|n| deposit_of(n).ok_or_else(|| missing_deposit(n.guid)))
                .collect::<Result<_, _>>()?;
            let mut p: Vec<&dyn Param> = vec![&run, &now, &VersionState::Pending];
            for (n, id) in piece.iter().zip(&ids) {
                let v = &n.version;
                p.extend([
                    id as &dyn Param,
                    &v.pub_date,
                    &v.pub_date_raw,
                    &v.item_hash,
                    &v.metadata,
                    &v.findings,
                    &v.conforming,
                    &v.access,
                ]);
            }
            let rows = value_rows_sharing(piece.len(), 8, 4, "?3, ?1, ?2");
            let made = self
                .tx
                .query(
                    &format!(
                        "INSERT INTO versions (deposit_id, pub_date, pub_date_raw, item_hash,
                           metadata, findings, conforming, access, state, found_run, found_at)
                         VALUES {rows} RETURNING deposit_id, id"
                    ),
                    &p,
                    |r| Ok((r.get::<i64>(0)?, r.get::<i64>(1)?)),
                )
                .map_err(sql("recording versions"))?;
            versions.extend(made);
        }
        // Files, in their items' order.
        let mut files: Vec<(i64, usize, &NewFile)> = Vec::new();
        for n in new {
            let deposit = deposit_of(n).ok_or_else(|| missing_deposit(n.guid))?;
            let version = *versions
                .get(&deposit)
                .ok_or_else(|| missing_deposit(n.guid))?;
            files.extend(
                n.version
                    .files
                    .iter()
                    .enumerate()
                    .map(|(ord, f)| (version, ord, f)),
            );
        }
        for piece in chunks(&files) {
            let sizes: Vec<Option<i64>> = piece
                .iter()
                .map(|(_, _, f)| {
                    f.declared_size
                        .map(|s| i64::try_from(s).unwrap_or(i64::MAX))
                })
                .collect();
            let mut p: Vec<&dyn Param> = vec![&FileState::Pending];
            for ((version, ord, f), size) in piece.iter().zip(&sizes) {
                p.extend([
                    version as &dyn Param,
                    ord,
                    &f.role,
                    &f.url,
                    &f.declared_type,
                    size,
                    &f.declared_md5,
                ]);
            }
            let rows = value_rows_sharing(piece.len(), 7, 2, "?1");
            self.tx
                .execute(
                    &format!(
                        "INSERT INTO files (version_id, ord, role, url, declared_type,
                           declared_size, declared_md5, state) VALUES {rows}"
                    ),
                    &p,
                )
                .map_err(sql("recording files"))?;
        }
        Ok(())
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

    /// Records on the run's row what it staged (its feed's items, the new versions, the
    /// rejected items), with the feed: a run that does not end (a worker killed) still
    /// shows them; the run's end writes its whole count.
    pub fn counts(
        &self,
        run: i64,
        items: u64,
        new_versions: u64,
        rejected: u64,
    ) -> Result<(), StoreError> {
        let n = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        self.tx
            .execute(
                "UPDATE runs SET items = ?2, new_versions = ?3, rejected = ?4 WHERE id = ?1",
                params![run, n(items), n(new_versions), n(rejected)],
            )
            .map_err(sql("recording what the run staged"))?;
        Ok(())
    }

    /// Makes everything staged durable.
    pub fn commit(self) -> Result<(), StoreError> {
        self.tx.commit().map_err(sql("committing the feed"))
    }
}

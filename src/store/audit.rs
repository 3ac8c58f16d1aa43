//! `plikt audit`'s reading of the catalog: every blob it records read back and compared
//! with its length and SHA-256, and the tallies counted again.

use super::catalog::Catalog;
use super::migrations::{BLOB_RECOUNT, TALLY_RECOUNT};
use super::sql::{Db, Lock, Param, chunks, in_list, params, sql};
use super::state::{FileState, VersionState};
use super::{BlobError, Blobs, Packed, StoreError};
use serde::Serialize;

/// A blob as the catalog records it ([`Catalog::each_blob`]).
#[derive(Debug, Clone)]
pub struct BlobRow {
    /// Its SHA-256 (hex).
    pub sha256: String,
    /// Its length in bytes.
    pub length: i64,
    /// Its MD5 (hex).
    pub md5: String,
    /// Its place in a pack (`None`: at its own name).
    pub packed: Option<Packed>,
}

/// What `plikt audit` found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AuditReport {
    /// Blobs re-read and checked.
    pub blobs_checked: u64,
    /// Bytes re-read.
    pub bytes_checked: u64,
    /// Blobs in the catalog with no file on disk.
    pub missing: Vec<String>,
    /// Blobs whose bytes do not match the catalog (SHA-256, length or MD5).
    pub corrupt: Vec<String>,
    /// Stored files whose blob is not in the catalog.
    pub dangling: Vec<String>,
    /// Deposited versions with a file that is not stored.
    pub incomplete: Vec<String>,
    /// Blob files on disk the catalog does not know (left by a crash between the
    /// rename and the commit; harmless, reused if the same bytes arrive again).
    pub unreferenced: Vec<String>,
    /// Tallies that differ from a count of the rows they tally (each publisher's
    /// deposits, versions and files, and the store's blobs and bytes): what `/metrics`,
    /// `plikt status` and the dashboard show would be wrong. `plikt audit --recount` sets
    /// them from the rows.
    pub tallies: Vec<String>,
    /// Tallies `plikt audit --recount` set from the rows (what they were, what they are).
    pub recounted: Vec<String>,
    /// Temporary blobs: files in `tmp/`, or an object store's temporary objects and
    /// unfinished multipart uploads. In flight, or left by a crash (removed when a
    /// harvest starts: a local folder's at once, an object store's once older than
    /// `stale_upload_secs`). Not a finding: the audit stays clean.
    pub leftovers: Vec<String>,
    /// Dump packages the published documents list, read again: those the object store's
    /// lists name, in the object store; with the local folder, those the kept Resource
    /// Dump snapshots and Change Dump days in `data_dir/www` list.
    pub packages_checked: u64,
    /// Those of them missing or holding other bytes (or, in the folder, unreadable), each
    /// with what brings it back.
    pub packages: Vec<String>,
    /// The SHA-256 of each blob found missing or damaged (`plikt audit --refetch`
    /// fetches them again from their publishers).
    #[serde(skip)]
    pub lost: Vec<String>,
}

impl AuditReport {
    /// Everything the catalog points at is present and intact.
    pub fn intact(&self) -> bool {
        self.missing.is_empty() && self.corrupt.is_empty() && self.intact_but_lost()
    }

    /// Everything is intact but the blobs found missing or damaged (those `lost` names).
    pub fn intact_but_lost(&self) -> bool {
        self.dangling.is_empty()
            && self.incomplete.is_empty()
            && self.tallies.is_empty()
            && self.packages.is_empty()
    }
}

impl Catalog {
    /// Every blob the catalog records, in the order that reads a blob store best, a page
    /// at a time (memory stays flat whatever the collection's size): those at their own
    /// name in SHA-256 order, then pack by pack, each pack's blobs in their order in it,
    /// so that a pack is read whole once, as the object store's reader holds packs
    /// (`plikt audit`, and `plikt migrate`'s verification).
    pub fn each_blob(
        &self,
        f: &mut dyn FnMut(BlobRow) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let c = self.db();
        let row = |r: &super::sql::Row<'_>| -> Result<BlobRow, super::DbError> {
            let length = r.get::<i64>(1)?;
            Ok(BlobRow {
                sha256: r.get(0)?,
                length,
                md5: r.get(2)?,
                packed: super::records::packed(r, 3, length.max(0).unsigned_abs())?,
            })
        };
        let mut after = String::new();
        loop {
            let page: Vec<BlobRow> = c
                .query(
                    "SELECT sha256, length, md5, pack, pack_offset FROM blobs
                     WHERE pack IS NULL AND sha256 > ?1 ORDER BY sha256 LIMIT 1000",
                    params![after],
                    row,
                )
                .map_err(sql("listing blobs"))?;
            let Some(last) = page.last() else { break };
            after.clone_from(&last.sha256);
            for b in page {
                f(b)?;
            }
        }
        let mut after = String::new();
        loop {
            let names: Vec<String> = c
                .query(
                    "SELECT DISTINCT pack FROM blobs WHERE pack > ?1 ORDER BY pack LIMIT 100",
                    params![after],
                    |r| r.get(0),
                )
                .map_err(sql("listing packs"))?;
            let Some(last) = names.last() else { break };
            after.clone_from(last);
            for pack in &names {
                let members = c
                    .query(
                        "SELECT sha256, length, md5, pack, pack_offset FROM blobs
                         WHERE pack = ?1 ORDER BY pack_offset",
                        params![pack],
                        row,
                    )
                    .map_err(sql("listing a pack's blobs"))?;
                for b in members {
                    f(b)?;
                }
            }
        }
        Ok(())
    }

    /// Re-reads every blob the catalog knows and checks it; `progress` is told the
    /// bytes of each blob checked. Memory stays flat whatever the collection's size
    /// (a monthly audit of 10 million files, docs/deployment.md): the blobs are read
    /// as [`Catalog::each_blob`] gives them, and the objects stored are listed a page at
    /// a time and looked up in the catalog.
    pub fn audit(&self, blobs: &Blobs, progress: &dyn Fn(u64)) -> Result<AuditReport, StoreError> {
        let c = self.db();
        let mut report = AuditReport::default();
        self.each_blob(&mut |b| {
            report.blobs_checked += 1;
            check_blob(
                blobs,
                &b.sha256,
                b.packed.as_ref(),
                b.length,
                &b.md5,
                &mut report,
                progress,
            )?;
            Ok(())
        })?;
        let rows = c
            .query(
                "SELECT f.url, f.sha256 FROM files f WHERE f.state = ?1
                 AND NOT EXISTS (SELECT 1 FROM blobs b WHERE b.sha256 = f.sha256)",
                params![FileState::Stored],
                |r| {
                    Ok(format!(
                        "{} → blob {}",
                        r.get::<String>(0)?,
                        r.get::<String>(1)?
                    ))
                },
            )
            .map_err(sql("checking files"))?;
        for row in rows {
            report.dangling.push(row);
        }
        let rows = c.query(
"SELECT d.publisher, d.guid, v.pub_date FROM versions v JOIN deposits d ON d.id = v.deposit_id
                 WHERE v.state = ?1
                   AND EXISTS (SELECT 1 FROM files f WHERE f.version_id = v.id AND f.state != ?2)",
params![VersionState::Deposited, FileState::Stored],
|r| {
                Ok(format!(
                    "{} {} ({})",
                    r.get::<String>(0)?,
                    r.get::<String>(1)?,
                    r.get::<String>(2)?
                ))
            },
)
            .map_err(sql("checking versions"))?;
        for row in rows {
            report.incomplete.push(row);
        }
        // An object is known when it is a blob the catalog names or a pack holding one.
        blobs.list_pages(|page| {
            for piece in chunks(&page) {
                let names: Vec<&dyn Param> = piece.iter().map(|(n, _)| n as &dyn Param).collect();
                let list = in_list(piece.len(), 1);
                let known: std::collections::HashSet<String> = c
                    .query(
                        &format!(
                            "SELECT sha256 FROM blobs WHERE sha256 IN ({list})
                             UNION ALL SELECT DISTINCT pack FROM blobs WHERE pack IN ({list})"
                        ),
                        &names,
                        |r| r.get(0),
                    )
                    .map_err(sql("looking up stored objects"))?
                    .into_iter()
                    .collect();
                report.unreferenced.extend(
                    piece
                        .iter()
                        .filter(|(name, _)| !known.contains(name))
                        .map(|(_, location)| location.clone()),
                );
            }
            Ok::<_, StoreError>(())
        })?;
        report.leftovers = blobs.leftovers()?;
        report.tallies = tally_differences(c)?;
        Ok(report)
    }

    /// Sets every tally from a count of the rows it tallies (`plikt audit --recount`),
    /// and returns those that were different. Under the journal's lock, which every
    /// writer of a tally holds until its commit: no deposit is counted twice or missed,
    /// while `plikt run` goes on.
    pub fn recount(&mut self) -> Result<Vec<String>, StoreError> {
        let ctx = "recounting the tallies";
        let tx = self.db_mut().transaction().map_err(sql(ctx))?;
        tx.lock(Lock::Journal).map_err(sql(ctx))?;
        let changed = tally_differences(&tx)?;
        tx.batch(&format!(
            "DELETE FROM tallies;
             INSERT INTO tallies (publisher, deposits, versions, files, restricted) {TALLY_RECOUNT};
             DELETE FROM blob_tally;
             INSERT INTO blob_tally (id, blobs, bytes) {BLOB_RECOUNT};"
        ))
        .map_err(sql(ctx))?;
        tx.commit().map_err(sql(ctx))?;
        Ok(changed)
    }
}

/// The tallies that differ from a count of their rows, each as "what: tally …, rows …".
/// Each comparison is one statement, so both sides are read at one moment (PostgreSQL
/// gives a statement one snapshot) even while `plikt run` deposits.
fn tally_differences(c: &Db) -> Result<Vec<String>, StoreError> {
    type Counts = [i64; 4];
    let rows = c
        .query(
            &format!(
                "SELECT 0, publisher, deposits, versions, files, restricted FROM tallies
                 UNION ALL SELECT 1, r.* FROM ({TALLY_RECOUNT}) r
                 UNION ALL SELECT 0, '', id, blobs, bytes, 0 FROM blob_tally
                 UNION ALL SELECT 1, '', b.*, 0 FROM ({BLOB_RECOUNT}) b"
            ),
            params![],
            |r| {
                Ok((
                    r.get::<i64>(0)? == 1,
                    r.get::<String>(1)?,
                    [
                        r.get::<i64>(2)?,
                        r.get::<i64>(3)?,
                        r.get::<i64>(4)?,
                        r.get::<i64>(5)?,
                    ],
                ))
            },
        )
        .map_err(sql("comparing the tallies with the rows"))?;
    // (kept, counted) by publisher; the blob tally's key is the empty string, which no
    // publisher id is.
    let mut by: std::collections::BTreeMap<String, (Counts, Counts)> = Default::default();
    for (counted, key, n) in rows {
        let e = by.entry(key).or_default();
        if counted { e.1 = n } else { e.0 = n }
    }
    Ok(by
        .into_iter()
        .filter(|(_, (kept, counted))| kept != counted)
        .map(|(key, (kept, counted))| {
            if key.is_empty() {
                format!(
                    "blobs: tally {} blobs, {} bytes; rows {} blobs, {} bytes",
                    kept[1], kept[2], counted[1], counted[2]
                )
            } else {
                let say = |n: Counts| {
                    format!(
                        "{} deposits, {} versions ({} restricted), {} files",
                        n[0], n[1], n[3], n[2]
                    )
                };
                format!(
                    "publisher {key}: tally {}; rows {}",
                    say(kept),
                    say(counted)
                )
            }
        })
        .collect())
}

/// Re-reads one blob and records what is wrong with it, if anything. An object store
/// that cannot be read is no finding about the blob: the audit stops with its error.
fn check_blob(
    blobs: &Blobs,
    sha: &str,
    pack: Option<&Packed>,
    length: i64,
    md5: &str,
    report: &mut AuditReport,
    progress: &dyn Fn(u64),
) -> Result<(), BlobError> {
    let path = blobs.location_of(sha, pack);
    let d = match blobs.digest(sha, pack) {
        Err(e) if e.is_not_found() => {
            report.missing.push(format!("{path}: no such file"));
            report.lost.push(sha.to_string());
            return Ok(());
        }
        Err(e) if blobs.is_remote() => return Err(e),
        Err(e) => {
            report.missing.push(format!("{path}: {e}"));
            report.lost.push(sha.to_string());
            return Ok(());
        }
        Ok(d) => d,
    };
    report.bytes_checked += d.length;
    progress(d.length);
    let mut wrong = Vec::new();
    if d.sha256 != sha {
        wrong.push(format!("SHA-256 is {}", d.sha256));
    }
    if i64::try_from(d.length).ok() != Some(length) {
        wrong.push(format!("{} bytes, catalog says {length}", d.length));
    }
    if d.md5 != md5 {
        wrong.push(format!("MD5 is {}, catalog says {md5}", d.md5));
    }
    if !wrong.is_empty() {
        report.corrupt.push(format!("{path}: {}", wrong.join("; ")));
        report.lost.push(sha.to_string());
    }
    Ok(())
}

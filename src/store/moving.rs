//! Moving up (issue 17 §5, `plikt migrate`): a SQLite catalog and its local blob folder
//! copied into another catalog (PostgreSQL) and blob store (an object store), resumably,
//! and verified before success.
//!
//! Blobs first, each streamed from its file to the target through [`Blobs::writer`] (the
//! object store checks every part's SHA-256), settled a batch at a time as a harvest
//! settles them (small files in packs on an object store) and recorded in the target's
//! catalog with their places, which decides what a re-run skips; then the catalog's
//! rows, table by table in an order that respects their references, in transactions of
//! [`BATCH`] rows, each `INSERT … ON CONFLICT DO NOTHING` with the
//! source's ids (a re-run after an interruption goes over what is there without
//! duplicating it), then the target's id sequences moved past the copied ids. The source
//! is only read. [`verify`] compares row counts, the change journal row by row, and
//! re-reads every blob from the target. Memory stays flat: everything is read a page at a
//! time.

use std::io::Read;

use bytes::Bytes;

use super::catalog::Catalog;
use super::sql::sql;
use super::sql::{Backend, Cell, Param, Value, chunks, params, value_rows};
use super::{Blobs, Packing, StoreError, Written};

/// Rows per target transaction.
pub const BATCH: usize = 2_000;

/// The catalog's tables in an order where every reference points backwards. A source
/// table not in this list stops the copy (a plikt newer than this one made it).
pub const TABLES: &[&str] = &[
    "publishers",
    "runs",
    "findings",
    "rejections",
    "deposits",
    "versions",
    "blobs",
    "files",
    "changes",
    "tallies",
    "blob_tally",
    "record_digests",
    "record_digest_mark",
    "topics",
    "subscriptions",
    "notifications",
    "deliveries",
    "leases",
    "catalog_identity",
];

/// Where a copy went wrong.
#[derive(Debug, thiserror::Error)]
pub enum MoveError {
    /// The source has a table this plikt does not know.
    #[error(
        "the source catalog has a table `{0}` this plikt does not know; run the plikt that made it"
    )]
    UnknownTable(String),
    /// The source and target are the same place.
    #[error("the target is the source: {0}")]
    SameTarget(String),
    /// The catalog or a blob store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a copy did.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Copied {
    /// Blobs in the source.
    pub blobs: u64,
    /// Of them, copied by this run (the rest were in the target already).
    pub blobs_copied: u64,
    /// Bytes copied by this run.
    pub bytes_copied: u64,
    /// Rows per table (the source's count).
    pub rows: Vec<(String, u64)>,
}

/// A row's cells, owned.
#[derive(Debug, Clone)]
enum Owned {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Param for Owned {
    fn value(&self) -> Value<'_> {
        match self {
            Owned::Null => Value::Null,
            Owned::Int(i) => Value::Int(*i),
            Owned::Real(r) => Value::Real(*r),
            Owned::Text(t) => Value::Text(t.as_str().into()),
            Owned::Blob(b) => Value::Blob(b),
        }
    }
}

impl From<Cell<'_>> for Owned {
    fn from(c: Cell<'_>) -> Self {
        match c {
            Cell::Null => Owned::Null,
            Cell::Int(i) => Owned::Int(i),
            Cell::Real(r) => Owned::Real(r),
            Cell::Text(t) => Owned::Text(t.to_owned()),
            Cell::Blob(b) => Owned::Blob(b.to_vec()),
        }
    }
}

/// The source's tables, each checked against [`TABLES`].
fn source_tables(src: &Catalog) -> Result<Vec<String>, MoveError> {
    let names: Vec<String> = src
        .db()
        .query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
            params![],
            |r| r.get(0),
        )
        .map_err(StoreError::from)?;
    if let Some(unknown) = names.iter().find(|n| !TABLES.contains(&n.as_str())) {
        return Err(MoveError::UnknownTable(unknown.clone()));
    }
    Ok(names)
}

/// A table's columns on the source, in order.
fn columns(src: &Catalog, table: &str) -> Result<Vec<String>, StoreError> {
    Ok(src
        .db()
        .query(&format!("PRAGMA table_info({table})"), params![], |r| {
            r.get(1)
        })?)
}

/// Source blobs read per page, and most blobs settled at once.
const BLOB_PAGE: usize = 512;
/// Bytes of small blobs held in memory before their batch is settled (a harvest's
/// batch size: one pack).
const HELD_BYTES: u64 = 8 << 20;

/// A blob's row in the source catalog.
struct SourceBlob {
    sha256: String,
    length: i64,
    md5: String,
    stored_at: String,
}

/// Copies every blob the source catalog lists from `from` to `to` and records each in
/// `dst`'s `blobs` table as it is settled, so that the target's catalog decides what is
/// there already (a re-run skips it), as a harvest does. On an object store the small
/// ones go into packs as a harvest puts them (one PUT for hundreds of files, their
/// places recorded with them); the rest of their rows comes with [`copy_rows`], which
/// leaves these as they are. Memory stays flat: the source is read a page at a time and
/// a batch holds at most [`HELD_BYTES`] of small files. `progress(done, total)` after
/// each blob.
pub async fn copy_blobs(
    src: &Catalog,
    dst: &mut Catalog,
    from: &Blobs,
    to: &Blobs,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Copied, StoreError> {
    let total: u64 = src
        .db()
        .one("SELECT count(*) FROM blobs", params![])
        .map_err(sql("counting the source's blobs"))?;
    let mut copied = Copied {
        blobs: total,
        ..Copied::default()
    };
    let (mut after, mut done) = (String::new(), 0u64);
    loop {
        let page: Vec<SourceBlob> = src
            .db()
            .query(
                "SELECT sha256, length, md5, stored_at FROM blobs WHERE sha256 > ?1 ORDER BY sha256 LIMIT ?2",
                params![after, BLOB_PAGE as i64],
                |r| {
                    Ok(SourceBlob {
                        sha256: r.get(0)?,
                        length: r.get(1)?,
                        md5: r.get(2)?,
                        stored_at: r.get(3)?,
                    })
                },
            )
            .map_err(sql("listing the source's blobs"))?;
        let Some(last) = page.last() else { break };
        after.clone_from(&last.sha256);
        let shas: Vec<&str> = page.iter().map(|b| b.sha256.as_str()).collect();
        let there = dst.known_blobs(&shas)?;
        let mut batch: Vec<(SourceBlob, Written)> = Vec::new();
        let mut held = 0u64;
        for blob in page {
            done += 1;
            if !there.contains(&blob.sha256) {
                let written = copy_one(from, to, &blob.sha256).await?;
                held += written.held_bytes();
                copied.bytes_copied += written.digests.length;
                batch.push((blob, written));
                if held >= HELD_BYTES {
                    copied.blobs_copied += settle(dst, to, std::mem::take(&mut batch))?;
                    held = 0;
                }
            }
            progress(done, total);
        }
        copied.blobs_copied += settle(dst, to, batch)?;
    }
    Ok(copied)
}

/// Streams the blob `sha256` from `from` into a new blob of `to`; it must come out with
/// the SHA-256 it is named by.
async fn copy_one(from: &Blobs, to: &Blobs, sha256: &str) -> Result<Written, StoreError> {
    let mut input = from.reader(sha256, None)?;
    let mut writer = to.writer()?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = input.read(&mut buf).map_err(|source| StoreError::Io {
            path: from.location(sha256).into(),
            source,
        })?;
        if n == 0 {
            break;
        }
        writer.write(&Bytes::copy_from_slice(&buf[..n])).await?;
    }
    let written = tokio::task::block_in_place(|| writer.finish())?;
    if written.digests.sha256 != sha256 {
        return Err(StoreError::Io {
            path: from.location(sha256).into(),
            source: std::io::Error::other(format!(
                "the source file's SHA-256 is {}, not the {sha256} it is named by: the source is damaged (run plikt audit on it)",
                written.digests.sha256
            )),
        });
    }
    Ok(written)
}

/// Stores a batch of copied blobs at their names (small ones in packs on an object
/// store), then records them in `dst` with their places, in one transaction; the number
/// settled. A blob the object store refused stops the copy (run it again: it goes on
/// from what `dst` records; a pack put before the stop and not recorded is left for
/// `plikt audit` to list, harmless).
fn settle(
    dst: &mut Catalog,
    to: &Blobs,
    batch: Vec<(SourceBlob, Written)>,
) -> Result<u64, StoreError> {
    if batch.is_empty() {
        return Ok(0);
    }
    let (rows, written): (Vec<SourceBlob>, Vec<Written>) = batch.into_iter().unzip();
    let places = tokio::task::block_in_place(|| to.commit(written, &|_| false, Packing::Small))?;
    let places = places.into_iter().collect::<Result<Vec<_>, _>>()?;
    let insert = |n: usize| {
        format!(
            "INSERT INTO blobs (sha256, length, md5, stored_at, pack, pack_offset) VALUES {} ON CONFLICT (sha256) DO NOTHING",
            value_rows(n, 6, 1, None)
        )
    };
    // Each row with its place: the pack and the blob's first byte in it, or none.
    let cells: Vec<(&SourceBlob, Option<&str>, Option<i64>)> = rows
        .iter()
        .zip(&places)
        .map(|(row, p)| match p {
            Some(p) => (
                row,
                Some(p.pack.as_str()),
                Some(i64::try_from(p.offset).unwrap_or(i64::MAX)),
            ),
            None => (row, None, None),
        })
        .collect();
    let tx = dst
        .db_mut()
        .transaction()
        .map_err(sql("recording copied blobs"))?;
    for piece in chunks(&cells) {
        let mut p: Vec<&dyn Param> = Vec::with_capacity(piece.len() * 6);
        for (row, pack, offset) in piece {
            p.extend([
                &row.sha256 as &dyn Param,
                &row.length,
                &row.md5,
                &row.stored_at,
                pack,
                offset,
            ]);
        }
        tx.execute(&insert(piece.len()), &p)
            .map_err(sql("recording copied blobs"))?;
    }
    tx.commit().map_err(sql("recording copied blobs"))?;
    Ok(rows.len() as u64)
}

/// Copies every row of the source catalog into `dst` (which must be migrated to the
/// same schema version), keeping ids; rows already there are left as they are.
pub fn copy_rows(
    src: &Catalog,
    dst: &mut Catalog,
    progress: &dyn Fn(&str, u64),
) -> Result<Vec<(String, u64)>, MoveError> {
    let present = source_tables(src)?;
    let mut counts = Vec::new();
    for table in TABLES.iter().filter(|t| present.iter().any(|p| p == *t)) {
        let cols = columns(src, table)?;
        let list = cols.join(", ");
        // The source's ids, also into PostgreSQL's GENERATED ALWAYS columns (the
        // journal's `seq`).
        let overriding = match dst.backend() {
            Backend::Postgres => " OVERRIDING SYSTEM VALUE",
            Backend::Sqlite => "",
        };
        // Rows go in multi-row statements (`sql::chunks`): one round trip per piece.
        let insert = |rows: usize| {
            format!(
                "INSERT INTO {table} ({list}){overriding} VALUES {} ON CONFLICT DO NOTHING",
                value_rows(rows, cols.len(), 1, None)
            )
        };
        let mut batch: Vec<Vec<Owned>> = Vec::with_capacity(BATCH);
        let mut n = 0u64;
        let flush = |dst: &mut Catalog, batch: &mut Vec<Vec<Owned>>| -> Result<(), StoreError> {
            let tx = dst.db_mut().transaction().map_err(sql("copying rows"))?;
            for piece in chunks(batch) {
                let params: Vec<&dyn Param> = piece
                    .iter()
                    .flat_map(|row| row.iter().map(|c| c as &dyn Param))
                    .collect();
                tx.execute(&insert(piece.len()), &params)
                    .map_err(sql("copying rows"))?;
            }
            batch.clear();
            tx.commit().map_err(sql("copying rows"))
        };
        src.db().each(
            &format!("SELECT {list} FROM {table} ORDER BY rowid"),
            params![],
            |r| {
                let row = (0..cols.len())
                    .map(|i| r.cell(i).map(Owned::from))
                    .collect::<Result<Vec<_>, _>>()?;
                batch.push(row);
                n += 1;
                if batch.len() >= BATCH {
                    flush(dst, &mut batch)?;
                    progress(table, n);
                }
                Ok::<_, StoreError>(())
            },
        )?;
        if !batch.is_empty() {
            flush(dst, &mut batch)?;
        }
        progress(table, n);
        counts.push(((*table).to_owned(), n));
    }
    // The collection's identity moves with it (its row conflicts with the one the
    // target made, and was left out above): the object store a catalog of the embedded
    // default used knows it by this id.
    dst.db()
        .execute(
            "UPDATE catalog_identity SET id = ?1",
            params![src.identity()?],
        )
        .map_err(sql("copying the catalog's identity"))?;
    if dst.backend() == Backend::Postgres {
        // The next ids a worker makes come after the copied ones.
        let identities: Vec<(String, String)> = dst
            .db()
            .query(
                "SELECT table_name::text, column_name::text FROM information_schema.columns
                 WHERE is_identity = 'YES' AND table_schema = current_schema()",
                params![],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(sql("reading the target's id columns"))?;
        for (table, column) in identities {
            dst.db()
                .query_row(
                    &format!(
                        "SELECT setval(pg_get_serial_sequence('{table}', '{column}'), GREATEST((SELECT COALESCE(max({column}), 0) FROM {table}), 1))::text"
                    ),
                    params![],
                    |_| Ok(()),
                )
                .map_err(sql("moving the target's id sequences"))?;
        }
    }
    Ok(counts)
}

/// What differs between the source and the copy: row counts per table, the change
/// journal row by row, and every blob re-read from the target (length and SHA-256).
/// Empty when the copy is complete and intact.
pub fn verify(
    src: &Catalog,
    dst: &Catalog,
    to: &Blobs,
    progress: &dyn Fn(u64, u64),
) -> Result<Vec<String>, MoveError> {
    let mut problems = Vec::new();
    for table in source_tables(src)? {
        let count = |c: &Catalog| -> Result<u64, StoreError> {
            c.db()
                .one(&format!("SELECT count(*) FROM {table}"), params![])
                .map_err(sql("counting rows"))
        };
        let (a, b) = (count(src)?, count(dst)?);
        if a != b {
            problems.push(format!(
                "table {table}: {a} rows in the source, {b} in the target"
            ));
        }
    }
    // The journal a page at a time from both, entry by entry (flat memory).
    type Entry = (i64, i64, String, String);
    let page = |c: &Catalog, after: i64| -> Result<Vec<Entry>, StoreError> {
        c.db()
            .query(
                "SELECT seq, version_id, change, at FROM changes WHERE seq > ?1 ORDER BY seq LIMIT 10000",
                params![after],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .map_err(sql("reading the change journal"))
    };
    let (mut after, mut entries) = (i64::MIN, 0usize);
    loop {
        let (a, b) = (page(src, after)?, page(dst, after)?);
        if let Some(i) = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)) {
            problems.push(format!(
                "the change journal differs from entry {}: source {:?}, target {:?}",
                entries + i + 1,
                a.get(i),
                b.get(i)
            ));
            break;
        }
        let Some(last) = a.last() else { break };
        after = last.0;
        entries += a.len();
    }
    let total: u64 = dst
        .db()
        .one("SELECT count(*) FROM blobs", params![])
        .map_err(sql("counting the target's blobs"))?;
    let mut done = 0u64;
    dst.each_blob(&mut |b| {
        let (sha256, length, pack) = (&b.sha256, b.length, b.packed.as_ref());
        match to.digest(sha256, pack) {
            Ok(d) if d.sha256 == *sha256 && i64::try_from(d.length).ok() == Some(length) => {}
            Ok(d) => problems.push(format!(
                "blob {sha256} at {}: {} bytes with SHA-256 {}, expected {length} bytes",
                to.location_of(sha256, pack),
                d.length,
                d.sha256
            )),
            Err(e) => problems.push(format!("blob {sha256}: {e}")),
        }
        done += 1;
        progress(done, total);
        Ok(())
    })?;
    Ok(problems)
}

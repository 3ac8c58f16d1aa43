//! Moving up (issue 17 §5, `plikt migrate`): a SQLite catalog and its local blob folder
//! copied into another catalog (PostgreSQL) and blob store (an object store), resumably,
//! and verified before success.
//!
//! Blobs first, each streamed from its file to the target through [`Blobs::writer`] (the
//! object store checks every part's SHA-256) and skipped when the target has it already;
//! then the catalog's rows, table by table in an order that respects their references,
//! in transactions of [`BATCH`] rows, each `INSERT … ON CONFLICT DO NOTHING` with the
//! source's ids (a re-run after an interruption goes over what is there without
//! duplicating it), then the target's id sequences moved past the copied ids. The source
//! is only read. [`verify`] compares row counts, the change journal row by row, and
//! re-reads every blob from the target.

use std::collections::HashSet;
use std::io::Read;

use bytes::Bytes;

use super::catalog::{Catalog, sql};
use super::sql::{Backend, Cell, Param, Value, chunks, params, value_rows};
use super::{Blobs, Packed, Packing, StoreError};

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
    "record_digests",
    "topics",
    "subscriptions",
    "notifications",
    "deliveries",
    "leases",
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

/// Copies every blob the source catalog lists from `from` to `to`, skipping those `to`
/// has; `progress(done, total)` after each.
pub async fn copy_blobs(
    src: &Catalog,
    from: &Blobs,
    to: &Blobs,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Copied, StoreError> {
    let wanted: Vec<(String, u64)> = src
        .db()
        .query(
            "SELECT sha256, length FROM blobs ORDER BY sha256",
            params![],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(sql("listing the source's blobs"))?;
    let mut there: HashSet<String> = HashSet::new();
    tokio::task::block_in_place(|| {
        to.list_pages(|page| {
            there.extend(page.into_iter().map(|(sha, _)| sha));
            Ok::<_, StoreError>(())
        })
    })?;
    let mut copied = Copied {
        blobs: wanted.len() as u64,
        ..Copied::default()
    };
    for (i, (sha256, _)) in wanted.iter().enumerate() {
        if !there.contains(sha256) {
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
            if written.digests.sha256 != *sha256 {
                return Err(StoreError::Io {
                    path: from.location(sha256).into(),
                    source: std::io::Error::other(format!(
                        "the source file's SHA-256 is {}, not the {sha256} it is named by: the source is damaged (run plikt audit on it)",
                        written.digests.sha256
                    )),
                });
            }
            copied.bytes_copied += written.digests.length;
            // At its own name: the catalog's rows, copied as they are, name no pack.
            let results = tokio::task::block_in_place(|| {
                to.commit(vec![written], &|_| false, Packing::None)
            })?;
            if let Some(Err(e)) = results.into_iter().next() {
                return Err(e.into());
            }
            copied.blobs_copied += 1;
        }
        progress(i as u64 + 1, wanted.len() as u64);
    }
    Ok(copied)
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
    let journal = |c: &Catalog| -> Result<Vec<(i64, i64, String, String)>, StoreError> {
        c.db()
            .query(
                "SELECT seq, version_id, change, at FROM changes ORDER BY seq",
                params![],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .map_err(sql("reading the change journal"))
    };
    let (a, b) = (journal(src)?, journal(dst)?);
    if let Some(i) = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)) {
        problems.push(format!(
            "the change journal differs from entry {}: source {:?}, target {:?}",
            i + 1,
            a.get(i),
            b.get(i)
        ));
    }
    let blobs: Vec<(String, u64, Option<Packed>)> = dst
        .db()
        .query(
            "SELECT sha256, length, pack, pack_offset FROM blobs ORDER BY sha256",
            params![],
            |r| {
                let length: u64 = r.get(1)?;
                let pack = super::catalog::packed(r, 2, length)?;
                Ok((r.get(0)?, length, pack))
            },
        )
        .map_err(sql("listing the target's blobs"))?;
    for (i, (sha256, length, pack)) in blobs.iter().enumerate() {
        match to.digest(sha256, pack.as_ref()) {
            Ok(d) if d.sha256 == *sha256 && d.length == *length => {}
            Ok(d) => problems.push(format!(
                "blob {sha256} at {}: {} bytes with SHA-256 {}, expected {length} bytes",
                to.location_of(sha256, pack.as_ref()),
                d.length,
                d.sha256
            )),
            Err(e) => problems.push(format!("blob {sha256}: {e}")),
        }
        progress(i as u64 + 1, blobs.len() as u64);
    }
    Ok(problems)
}

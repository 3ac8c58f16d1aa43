//! The catalog's connection, on SQLite (the embedded default) or PostgreSQL (issue 17:
//! a deposit team's shared catalog): the one place that knows both. The rest of `store`
//! writes one SQL for both, with `?N` parameters (turned into `$N` for PostgreSQL),
//! portable syntax (`ON CONFLICT`, `RETURNING`, `EXISTS`, `COALESCE`), integers as
//! `BIGINT` and times as RFC 3339 text; values cross as [`Param`] and [`Column`], one
//! conversion per Rust type whatever the backend.
//!
//! Like `rusqlite::Connection` (whose shape it keeps, so statements read the same):
//! methods take `&self`; a [`Tx`] is a transaction that rolls back when dropped without
//! [`Tx::commit`]. PostgreSQL's statements are prepared once per connection.
//!
//! Past 800 lines with its tests: both drivers' binding, reading, streaming (cursors on
//! PostgreSQL) and transactions side by side, so that each difference between the two
//! backends is seen in one place.

use std::cell::RefCell;
use std::collections::HashMap;

use super::StoreError;
mod value;

use value::{Bind, RowRef};
pub use value::{Cell, Column, Param, Row, Value};

/// Maps a driver's error to the store's, saying what plikt was doing (`context`).
pub(super) fn sql<E: Into<DbError>>(context: &'static str) -> impl Fn(E) -> StoreError {
    move |source| StoreError::Sql {
        context,
        source: source.into(),
    }
}

/// Which database holds the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// One SQLite file under `data_dir` (the default).
    Sqlite,
    /// A PostgreSQL database (`[catalog] url`).
    Postgres,
}

/// Why a statement failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DbError {
    /// SQLite's error.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL's error (with the server's message and detail).
    #[error("{}", postgres_message(.0))]
    Postgres(#[from] postgres::Error),
    /// A column did not hold what plikt expected.
    #[error("column {index}: {reason}")]
    Column {
        /// Its position in the result.
        index: usize,
        /// What was wrong.
        reason: String,
    },
    /// A query that must return a row returned none.
    #[error("no row")]
    NoRow,
}

impl DbError {
    /// Whether the database refused the statement because another transaction holds a
    /// lock it needs, or PostgreSQL found a serialization conflict: worth retrying.
    pub fn is_busy(&self) -> bool {
        match self {
            DbError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => matches!(
                e.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ),
            DbError::Postgres(e) => e.code().is_some_and(|c| {
                *c == postgres::error::SqlState::T_R_SERIALIZATION_FAILURE
                    || *c == postgres::error::SqlState::T_R_DEADLOCK_DETECTED
            }),
            _ => false,
        }
    }

    /// What to do about it, where the error alone does not say (`"; …"`, or empty): a
    /// full disk under the catalog.
    pub fn advice(&self) -> &'static str {
        match self {
            DbError::Sqlite(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DiskFull =>
            {
                "; the filesystem holding the SQLite catalog (data_dir) is full: free space or grow it; nothing is lost: the transaction was rolled back, and what it recorded is done again by a later run"
            }
            DbError::Sqlite(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::SystemIoFailure =>
            {
                "; check the filesystem holding the SQLite catalog (data_dir): is it full, read-only or failing (the kernel's log says)? nothing is lost: the transaction was rolled back"
            }
            DbError::Postgres(e) if e.code() == Some(&postgres::error::SqlState::DISK_FULL) => {
                "; the PostgreSQL server's disk is full: free space there or grow it; nothing is lost: the transaction was rolled back, and what it recorded is done again by a later run"
            }
            _ => "",
        }
    }

    /// Whether the connection to the server is gone (PostgreSQL restarted, network): a
    /// new connection may succeed.
    pub fn is_disconnect(&self) -> bool {
        match self {
            DbError::Postgres(e) => {
                e.is_closed()
                    || e.code()
                        .is_some_and(|c| c.code().starts_with("08") || c.code().starts_with("57P"))
                    || e.as_db_error().is_none() && e.code().is_none()
            }
            _ => false,
        }
    }
}

fn postgres_message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut m = format!("PostgreSQL: {}", db.message());
            if let Some(d) = db.detail() {
                m.push_str(&format!(" ({d})"));
            }
            m
        }
        None => format!("PostgreSQL: {}", super::with_causes(e)),
    }
}

/// Binds parameters: `params![a, b]` as with rusqlite.
macro_rules! params {
    () => {
        &[] as &[&dyn $crate::store::sql::Param]
    };
    ($($p:expr),+ $(,)?) => {
        &[$(&$p as &dyn $crate::store::sql::Param),+] as &[&dyn $crate::store::sql::Param]
    };
}
pub(crate) use params;

/// The most rows one multi-row statement carries ([`chunks`]).
const ROWS: usize = 128;

/// `items` cut into the pieces that multi-row statements carry (a feed's new versions, a
/// batch of stored files): as many pieces of [`ROWS`] as fit, then one each of 64, 32,
/// …, 1 rows as the rest needs, so that a statement's text is one of eight whatever the
/// number of rows (PostgreSQL prepares each once per connection, SQLite caches it). One
/// statement per piece instead of one per row: on PostgreSQL a round trip and a
/// statement's overhead each (issue 17 §6).
pub(super) fn chunks<T>(items: &[T]) -> impl Iterator<Item = &[T]> {
    let mut rest = items;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let n = if rest.len() >= ROWS {
            ROWS
        } else {
            1 << rest.len().ilog2()
        };
        let (piece, tail) = rest.split_at(n);
        rest = tail;
        Some(piece)
    })
}

/// The rows of a `VALUES` list: `n` rows of `width` parameters numbered from `?first`,
/// `(?1, ?2), (?3, ?4)`. With `types` (one per column), every parameter is cast,
/// `CAST(?1 AS BIGINT)`: PostgreSQL has no other way to know the column types of a
/// `VALUES` list in `FROM`.
pub(super) fn value_rows(n: usize, width: usize, first: usize, types: Option<&[&str]>) -> String {
    rows(n, width, first, types, "")
}

/// [`value_rows`] (untyped) with `shared` at the end of every row: parameters that all
/// rows share, bound once (`(?3, ?4, ?1), (?5, ?6, ?1)` for `shared` `?1`).
pub(super) fn value_rows_sharing(n: usize, width: usize, first: usize, shared: &str) -> String {
    rows(n, width, first, None, shared)
}

fn rows(n: usize, width: usize, first: usize, types: Option<&[&str]>, shared: &str) -> String {
    let mut out = String::with_capacity(n * (width * 8 + shared.len()));
    for r in 0..n {
        out.push_str(if r == 0 { "(" } else { ", (" });
        for c in 0..width {
            if c > 0 {
                out.push_str(", ");
            }
            let p = first + r * width + c;
            match types {
                Some(t) => out.push_str(&format!("CAST(?{p} AS {})", t[c])),
                None => out.push_str(&format!("?{p}")),
            }
        }
        if !shared.is_empty() {
            out.push_str(", ");
            out.push_str(shared);
        }
        out.push(')');
    }
    out
}

/// `?first, …`: `n` parameters of an `IN` list.
pub(super) fn in_list(n: usize, first: usize) -> String {
    (first..first + n)
        .map(|p| format!("?{p}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// SQL with `?N` parameters as PostgreSQL writes them (`$N`); a bare `?` takes the
/// next number. Quoted text and identifiers are left alone.
fn postgres_sql(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut next = 1;
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                out.push(c);
            }
            (Some(_), c) => out.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                out.push(c);
            }
            (None, '?') => {
                let mut n = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    n.push(*d);
                    chars.next();
                }
                if n.is_empty() {
                    n = next.to_string();
                }
                // As SQLite numbers them: one more than the largest so far.
                next = next.max(n.parse::<usize>().unwrap_or(next) + 1);
                out.push('$');
                out.push_str(&n);
            }
            (None, c) => out.push(c),
        }
    }
    out
}

struct Postgres {
    /// Always `Some` but while dropping (closing blocks, [`blocking`]).
    client: Option<postgres::Client>,
    statements: HashMap<String, postgres::Statement>,
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Some(c) = self.client.take() {
            blocking(|| drop(c));
        }
    }
}

/// Runs `f`, which blocks on PostgreSQL's client (a runtime of its own), where that is
/// allowed: on a worker thread of plikt's runtime, outside the runtime's context
/// (`block_in_place`; the other tasks move to other threads meanwhile); elsewhere (a
/// blocking-pool thread, a plain thread) as it is.
pub(super) fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

impl Postgres {
    fn client(&mut self) -> &mut postgres::Client {
        self.client.as_mut().expect("a connection until dropped")
    }

    fn statement(&mut self, sql: &str) -> Result<postgres::Statement, DbError> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client().prepare(&postgres_sql(sql))?;
        self.statements.insert(sql.to_string(), s.clone());
        Ok(s)
    }
}

enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres(Box<RefCell<Postgres>>),
}

/// A connection to the catalog's database.
pub struct Db {
    conn: Conn,
    /// In a transaction ([`Db::transaction`]).
    in_tx: std::cell::Cell<bool>,
    /// PostgreSQL cursors open ([`Db::each`] in `each`).
    cursors: std::cell::Cell<usize>,
}

/// Rows a PostgreSQL cursor reads at a time.
const CURSOR_BATCH: usize = 1000;

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Db({:?})", self.backend())
    }
}

fn values<'a>(params: &'a [&'a dyn Param]) -> Vec<Value<'a>> {
    params.iter().map(|p| p.value()).collect()
}

impl Db {
    /// A SQLite connection.
    pub fn sqlite(conn: rusqlite::Connection) -> Self {
        conn.set_prepared_statement_cache_capacity(128);
        Self {
            conn: Conn::Sqlite(conn),
            in_tx: std::cell::Cell::new(false),
            cursors: std::cell::Cell::new(0),
        }
    }

    /// A PostgreSQL connection.
    pub fn postgres(client: postgres::Client) -> Self {
        Self {
            conn: Conn::Postgres(Box::new(RefCell::new(Postgres {
                client: Some(client),
                statements: HashMap::new(),
            }))),
            in_tx: std::cell::Cell::new(false),
            cursors: std::cell::Cell::new(0),
        }
    }

    /// The backend.
    pub fn backend(&self) -> Backend {
        match self.conn {
            Conn::Sqlite(_) => Backend::Sqlite,
            Conn::Postgres(_) => Backend::Postgres,
        }
    }

    /// SQLite: the rows this connection has changed since it was opened
    /// (`sqlite3_total_changes64`); `None` on PostgreSQL.
    pub fn total_changes(&self) -> Option<u64> {
        match &self.conn {
            Conn::Sqlite(c) => Some(c.total_changes()),
            Conn::Postgres(_) => None,
        }
    }

    /// Runs statements without parameters (schema, `BEGIN`, `COMMIT`).
    pub fn batch(&self, sql: &str) -> Result<(), DbError> {
        match &self.conn {
            Conn::Sqlite(c) => Ok(c.execute_batch(sql)?),
            Conn::Postgres(p) => Ok(blocking(|| p.borrow_mut().client().batch_execute(sql))?),
        }
    }

    /// Runs one statement; the number of rows it changed.
    pub fn execute(&self, sql: &str, params: &[&dyn Param]) -> Result<usize, DbError> {
        let values = values(params);
        match &self.conn {
            Conn::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                Ok(stmt.execute(rusqlite::params_from_iter(values.into_iter().map(Bind)))?)
            }
            Conn::Postgres(p) => blocking(|| {
                let mut p = p.borrow_mut();
                let stmt = p.statement(sql)?;
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = values
                    .iter()
                    .map(|v| v as &(dyn postgres::types::ToSql + Sync))
                    .collect();
                let n = p.client().execute(&stmt, &refs)?;
                Ok(usize::try_from(n).unwrap_or(usize::MAX))
            }),
        }
    }

    /// PostgreSQL's rows of a query, all at once (the connection is free again when
    /// they are read).
    fn postgres_rows(
        p: &RefCell<Postgres>,
        sql: &str,
        values: &[Value<'_>],
    ) -> Result<Vec<postgres::Row>, DbError> {
        blocking(|| {
            let mut p = p.borrow_mut();
            let stmt = p.statement(sql)?;
            let refs: Vec<&(dyn postgres::types::ToSql + Sync)> = values
                .iter()
                .map(|v| v as &(dyn postgres::types::ToSql + Sync))
                .collect();
            Ok(p.client().query(&stmt, &refs)?)
        })
    }

    /// Runs a query and calls `f` on each row as it comes, with memory bounded
    /// whatever the number of rows (SQLite steps through them; PostgreSQL reads them
    /// through a cursor, [`CURSOR_BATCH`] at a time). `f` may use this connection.
    pub fn each<E: From<DbError>>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        mut f: impl FnMut(&Row<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let values = values(params);
        match &self.conn {
            Conn::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql).map_err(DbError::from)?;
                let mut rows = stmt
                    .query(rusqlite::params_from_iter(values.into_iter().map(Bind)))
                    .map_err(DbError::from)?;
                while let Some(r) = rows.next().map_err(DbError::from)? {
                    f(&Row(RowRef::Sqlite(r)))?;
                }
                Ok(())
            }
            Conn::Postgres(p) => {
                // A cursor lives in a transaction: this one's, or one of its own.
                let own = !self.in_tx.get();
                if own {
                    self.batch("BEGIN")?;
                }
                let depth = self.cursors.get();
                self.cursors.set(depth + 1);
                // Named by its query too: the prepared FETCH of a cursor knows the
                // types of that query's columns.
                let cursor = format!("plikt_cursor_{depth}_{:016x}", {
                    use std::hash::{Hash, Hasher};
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    sql.hash(&mut h);
                    h.finish()
                });
                let result = (|| {
                    Self::postgres_rows(
                        p,
                        &format!("DECLARE {cursor} NO SCROLL CURSOR FOR {sql}"),
                        &values,
                    )?;
                    let fetch = format!("FETCH {CURSOR_BATCH} FROM {cursor}");
                    loop {
                        let rows = Self::postgres_rows(p, &fetch, &[])?;
                        if rows.is_empty() {
                            break;
                        }
                        for r in &rows {
                            f(&Row(RowRef::Postgres(r)))?;
                        }
                    }
                    self.batch(&format!("CLOSE {cursor}"))?;
                    Ok::<_, E>(())
                })();
                self.cursors.set(depth);
                if own {
                    let end = if result.is_ok() { "COMMIT" } else { "ROLLBACK" };
                    let ended = self.batch(end);
                    result?;
                    ended?;
                    Ok(())
                } else {
                    result
                }
            }
        }
    }

    /// Runs a query; `f` of each row.
    pub fn query<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        mut f: impl FnMut(&Row<'_>) -> Result<T, DbError>,
    ) -> Result<Vec<T>, DbError> {
        match &self.conn {
            Conn::Sqlite(_) => {
                let mut out = Vec::new();
                self.each(sql, params, |r| {
                    out.push(f(r)?);
                    Ok::<_, DbError>(())
                })?;
                Ok(out)
            }
            Conn::Postgres(p) => Self::postgres_rows(p, sql, &values(params))?
                .iter()
                .map(|r| f(&Row(RowRef::Postgres(r))))
                .collect(),
        }
    }

    /// Runs a query; `f` of its first row, if any.
    pub fn query_opt<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnOnce(&Row<'_>) -> Result<T, DbError>,
    ) -> Result<Option<T>, DbError> {
        match &self.conn {
            Conn::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                let mut rows = stmt.query(rusqlite::params_from_iter(
                    values(params).into_iter().map(Bind),
                ))?;
                match rows.next()? {
                    Some(r) => f(&Row(RowRef::Sqlite(r))).map(Some),
                    None => Ok(None),
                }
            }
            Conn::Postgres(p) => Self::postgres_rows(p, sql, &values(params))?
                .first()
                .map(|r| f(&Row(RowRef::Postgres(r))))
                .transpose(),
        }
    }

    /// Runs a query that returns a row; `f` of it.
    pub fn query_row<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnOnce(&Row<'_>) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        self.query_opt(sql, params, f)?.ok_or(DbError::NoRow)
    }

    /// The first column of the one row a query returns.
    pub fn one<T: Column>(&self, sql: &str, params: &[&dyn Param]) -> Result<T, DbError> {
        self.query_row(sql, params, |r| r.get(0))
    }

    /// Begins a writing transaction: on SQLite `BEGIN IMMEDIATE` (it waits, busy
    /// timeout, for the writer before it), on PostgreSQL `BEGIN` (read committed;
    /// writers that must take turns take a lock, [`Tx::lock`]).
    pub fn transaction(&mut self) -> Result<Tx<'_>, DbError> {
        match self.backend() {
            Backend::Sqlite => self.batch("BEGIN IMMEDIATE")?,
            Backend::Postgres => self.batch("BEGIN")?,
        }
        self.in_tx.set(true);
        Ok(Tx {
            db: self,
            open: true,
        })
    }
}

/// Named locks that writers take in a transaction, held until it ends (on SQLite the
/// transaction holds the database's one write lock already).
#[derive(Debug, Clone, Copy)]
pub enum Lock {
    /// The change journal: its sequence numbers and times follow commit order.
    Journal,
    /// The schema: migrations.
    Schema,
    /// The notification outbox.
    Outbox,
    /// Publishing the ResourceSync documents: one publish at a time, whichever worker
    /// (held for a session: [`Db::lock_session_within`]).
    Publish,
}

impl Lock {
    /// pg_advisory_lock's key: a constant per lock, in plikt's own range.
    fn key(self) -> i64 {
        0x706c_696b_7400 + self as i64
    }
}

impl Db {
    /// Takes `lock` until this connection closes (PostgreSQL: a session advisory lock,
    /// which the server releases when the connection ends, also when the process dies),
    /// waiting for its holder at most `wait`: whether it is now held. The wait is in
    /// PostgreSQL's queue of the lock's waiters, so waiting workers take it in turn.
    /// Always held on SQLite, whose single writer holds the data folder's lock.
    pub fn lock_session_within(
        &self,
        lock: Lock,
        wait: std::time::Duration,
    ) -> Result<bool, DbError> {
        if self.backend() != Backend::Postgres {
            return Ok(true);
        }
        self.batch(&format!("SET lock_timeout = {}", wait.as_millis().max(1)))?;
        let taken = self.one::<String>("SELECT pg_advisory_lock(?1)::text", params![lock.key()]);
        let reset = self.batch("RESET lock_timeout");
        match taken {
            Ok(_) => reset.map(|()| true),
            Err(DbError::Postgres(e))
                if e.code() == Some(&postgres::error::SqlState::LOCK_NOT_AVAILABLE) =>
            {
                reset.map(|()| false)
            }
            Err(e) => Err(e),
        }
    }

    /// Whether this connection still holds `lock` (taken with
    /// [`Db::lock_session_within`]): PostgreSQL releases a session's locks when the
    /// session ends (a restart, a failover, `pg_terminate_backend`, a network cut it
    /// noticed), and the connection that took it may not know yet. An `Err` is a
    /// connection that is gone, and its locks with it. Always held on SQLite.
    pub fn holds_session_lock(&self, lock: Lock) -> Result<bool, DbError> {
        if self.backend() != Backend::Postgres {
            return Ok(true);
        }
        // A bigint key is pg_locks' classid (high 32 bits) and objid (low), objsubid 1
        // (PostgreSQL 15 documentation §54.12, pg_locks).
        self.one(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
               AND pid = pg_backend_pid() AND granted AND objsubid = 1
               AND classid::bigint = (?1::bigint >> 32)
               AND objid::bigint = (?1::bigint & 4294967295))",
            params![lock.key()],
        )
    }
}

/// A transaction: rolled back when dropped without [`Tx::commit`].
pub struct Tx<'a> {
    db: &'a mut Db,
    open: bool,
}

impl std::fmt::Debug for Tx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tx({:?})", self.db)
    }
}

impl std::ops::Deref for Tx<'_> {
    type Target = Db;
    fn deref(&self) -> &Db {
        self.db
    }
}

impl Tx<'_> {
    /// Takes `lock` until the transaction ends; another transaction taking it waits.
    pub fn lock(&self, lock: Lock) -> Result<(), DbError> {
        if self.db.backend() == Backend::Postgres {
            self.db.query_row(
                "SELECT pg_advisory_xact_lock(?1)::text",
                params![lock.key()],
                |_| Ok(()),
            )?;
        }
        Ok(())
    }

    /// Makes the transaction's writes durable.
    pub fn commit(mut self) -> Result<(), DbError> {
        self.open = false;
        self.db.in_tx.set(false);
        self.db.batch("COMMIT")
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open {
            self.db.in_tx.set(false);
            let _ = self.db.batch("ROLLBACK");
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A new, empty database on the test server (`PLIKT_TEST_POSTGRES`); its URL.
    pub(in crate::store) fn fresh_database(server: &str, name: &str) -> String {
        let db = format!("plikt_unit_{name}_{}", std::process::id());
        let mut c = postgres::Client::connect(server, postgres::NoTls).unwrap();
        c.batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
            .unwrap();
        c.batch_execute(&format!("CREATE DATABASE {db}")).unwrap();
        let base = server.rsplit_once('/').map_or(server, |(b, _)| b);
        format!("{base}/{db}")
    }

    /// The PostgreSQL test server (`PLIKT_TEST_POSTGRES`), when `scripts/test` runs the
    /// PostgreSQL pass; the tests that need one return at once without it.
    pub(in crate::store) fn postgres_server() -> Option<String> {
        std::env::var("PLIKT_TEST_POSTGRES")
            .ok()
            .filter(|u| !u.is_empty())
    }

    #[test]
    fn values_read_back_as_written_on_postgres() {
        let Some(server) = postgres_server() else {
            return;
        };
        let url = fresh_database(&server, "values");
        let db = Db::postgres(postgres::Client::connect(&url, postgres::NoTls).unwrap());
        db.batch("CREATE TABLE t (i BIGINT, s TEXT, b BYTEA, n INTEGER)")
            .unwrap();
        db.execute(
            "INSERT INTO t VALUES (?1, ?2, ?3, ?4)",
            params![-5i64, "å", b"\x00\xff".to_vec(), 7u32],
        )
        .unwrap();
        let (i, s, b, n, e): (i64, String, Vec<u8>, u32, bool) = db
            .query_row(
                "SELECT i, s, b, n, EXISTS (SELECT 1 FROM t) FROM t WHERE s = ?1",
                params!["å"],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .unwrap();
        assert_eq!((i, s.as_str(), b, n, e), (-5, "å", vec![0, 255], 7, true));
        // Nested queries while a cursor reads, in and out of a transaction.
        let mut seen = 0;
        db.each("SELECT i FROM t", params![], |r| {
            let i: i64 = r.get(0)?;
            seen += db.one::<i64>("SELECT count(*) FROM t WHERE i = ?1", params![i])?;
            Ok::<_, DbError>(())
        })
        .unwrap();
        assert_eq!(seen, 1);
        let e = db
            .one::<i64>("SELECT 1 FROM nowhere", params![])
            .unwrap_err();
        assert!(e.to_string().contains("\"nowhere\" does not exist"), "{e}");
    }

    #[test]
    fn a_session_lock_is_held_by_one_connection_until_it_closes() {
        let Some(server) = postgres_server() else {
            return;
        };
        let url = fresh_database(&server, "session_lock");
        let connect = || Db::postgres(postgres::Client::connect(&url, postgres::NoTls).unwrap());
        let (a, b) = (connect(), connect());
        let short = std::time::Duration::from_millis(100);
        assert!(a.lock_session_within(Lock::Publish, short).unwrap());
        let started = std::time::Instant::now();
        assert!(!b.lock_session_within(Lock::Publish, short).unwrap());
        assert!(started.elapsed() >= short, "gave up before waiting");
        assert!(
            b.lock_session_within(Lock::Schema, short).unwrap(),
            "another lock is free"
        );
        // The wait's timeout does not stay on the connection.
        assert_eq!(
            b.one::<String>("SHOW lock_timeout", params![]).unwrap(),
            "0"
        );
        // A waiter gets it as soon as the holder's connection ends.
        let holder = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            drop(a);
        });
        let wait = std::time::Duration::from_secs(10);
        assert!(b.lock_session_within(Lock::Publish, wait).unwrap());
        holder.join().unwrap();
    }

    #[test]
    fn parameters_are_numbered_for_postgres_outside_quotes() {
        assert_eq!(
            postgres_sql("SELECT a FROM t WHERE b = ?2 AND c = ?1 AND d = '?3' AND \"e?\" = ?"),
            "SELECT a FROM t WHERE b = $2 AND c = $1 AND d = '?3' AND \"e?\" = $3"
        );
        assert_eq!(postgres_sql("VALUES (?, ?, ?)"), "VALUES ($1, $2, $3)");
    }

    #[test]
    fn values_read_back_as_written_on_sqlite() {
        let db = Db::sqlite(rusqlite::Connection::open_in_memory().unwrap());
        let (a, b, c, d): (i64, Option<String>, bool, u32) = db
            .query_row(
                "SELECT ?1, ?2, ?3, ?4",
                params![-5i64, None::<String>, true, 7u32],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        assert_eq!((a, b, c, d), (-5, None, true, 7));
        let e = db.one::<u32>("SELECT -1", params![]).unwrap_err();
        assert!(e.to_string().contains("does not fit a u32"), "{e}");
    }
}

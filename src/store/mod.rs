//! Durable storage: a content-addressed [`Blobs`] store (the local folder or an
//! S3-compatible object store, `[blobs]`) and the SQLite [`Catalog`]. The only module
//! with SQL.
//!
//! One writer per data folder: [`Store::open`] in [`Mode::Write`] takes an exclusive
//! lock on `data_dir/lock` (a second `plikt harvest` or `plikt run` on the same folder
//! is refused), removes temporary blobs a crash left behind and closes runs a crash
//! left open. Readers (`status`, `audit`, `serve`) need no lock: the catalog is in WAL
//! mode.

mod audit;
mod blobs;
mod catalog;
mod clock;
mod connection;
mod deposit;
mod digest;
mod lease;
mod location;
mod metadata;
mod migrations;
pub mod moving;
mod notify;
mod published;
mod query;
mod records;
mod runs;
mod sql;
mod stage;
mod state;
mod tls;

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

pub use audit::AuditReport;
pub use blobs::{
    BlobError, BlobWriter, Blobs, ByteStream, Document, Documents, Failure, Fetched, Head,
    ObjectStoreError, Packed, Packing, ReadSeek, Written, open_beneath, sync_dir,
};
pub use catalog::Catalog;
pub use clock::ClockReading;
pub use connection::{Connection, Patience, Pool};
pub use digest::{Digester, Digests, INLINE_LIMIT, digest_file};
pub use lease::{Busy, Claim, Lease};
pub use location::Location;
pub use metadata::{ContentMetadata, Credit, Hash, ItemMetadata, License, Typed};
pub use notify::{
    ClaimedDelivery, DeliveryResult, NewNotification, OutboxCounts, Subscription, TopicCursor,
};
pub use published::{JournalEntry, JournalKey, JournalPage, Page, PublishedFile, SetPositions};
pub use query::{
    DayDeposits, DayFindings, Gauges, Harvesting, LastRun, PublisherGauges, PublisherStatus,
    Unsettled, UnsettledState,
};
pub use records::{
    BlobSource, DueFile, DueVersion, FileResult, KnownVersion, NewFile, NewVersion, Retries,
    RunCounts, Settled, StoredFile, StoredFinding,
};
pub use sql::{Backend, DbError};
pub use stage::{NewItem, Stage};
pub use state::{
    Access, Change, DeliveryState, FileRole, FileState, Outcome, Timestamp, VersionState,
};

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A catalog statement failed.
    #[error("catalog: {context}: {source}{}", source.advice())]
    Sql {
        /// What plikt was doing.
        context: &'static str,
        /// The database's error.
        source: DbError,
    },
    /// PostgreSQL refused the connection for its settings (the password, the
    /// database): who plikt connected as, where, and what to change.
    #[error("{reason}")]
    Refused {
        /// All of it, the server's words included.
        reason: String,
    },
    /// The catalog's password cannot be loaded.
    #[error("{reason}")]
    Secret {
        /// Which variable or file, and why (never the value).
        reason: String,
    },
    /// TLS to the PostgreSQL catalog could not be set up or was refused
    /// (`sslmode`, `sslrootcert` in `[catalog] url`).
    #[error("catalog: {reason}; {hint}")]
    CatalogTls {
        /// What went wrong.
        reason: String,
        /// What the operator can do about it.
        hint: &'static str,
    },
    /// `[catalog] url` is not a PostgreSQL URL.
    #[error(
        "[catalog] url `{url}` is not a PostgreSQL URL ({reason}); write postgres://user@host:port/database"
    )]
    CatalogUrl {
        /// The URL.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// The catalog was written by a newer plikt.
    #[error(
        "the catalog has schema version {found}, newer than this plikt knows ({known}); upgrade plikt"
    )]
    Schema {
        /// Found.
        found: usize,
        /// Known.
        known: usize,
    },
    /// A file of the store could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A version's stored metadata does not decode.
    #[error(
        "version {version}: its stored metadata does not decode ({reason}); its record cannot be made"
    )]
    Metadata {
        /// The version.
        version: i64,
        /// What is wrong.
        reason: String,
    },
    /// The blob store failed.
    #[error(transparent)]
    Blob(#[from] BlobError),
    /// This machine's clock is further from the catalog's than allowed
    /// (`store::clock`).
    #[error(
        "this machine's clock is {:.1} s {} the catalog's (the PostgreSQL server's); the machines of one catalog must agree within [catalog] max_clock_offset_secs = {max_secs} (leases, and the deposit times that order the Change Lists): set this machine's clock right (NTP: chrony or systemd-timesyncd)",
        offset_ms.unsigned_abs() as f64 / 1000.0,
        if *offset_ms > 0 { "behind" } else { "ahead of" }
    )]
    ClockOff {
        /// The catalog's clock minus this machine's, in milliseconds.
        offset_ms: i64,
        /// The most allowed, in seconds.
        max_secs: i64,
    },
    /// The catalog's clock reads no time.
    #[error(
        "the catalog's clock reads {micros} µs since 1970, not a time; check the database server's clock"
    )]
    ClockUnreadable {
        /// What it read.
        micros: i64,
    },
    /// Another plikt process writes to this data folder.
    #[error(
        "{path} is locked by another plikt process (harvest or run) writing to this data folder; wait for it to finish or stop it (several workers at once need [catalog] on PostgreSQL and [blobs] on an object store)"
    )]
    Locked {
        /// The lock file.
        path: PathBuf,
    },
    /// No catalog connection could be had in time (every one busy, or none made).
    #[error(
        "catalog: no connection within {secs} s: {reason}; is the catalog reachable at [catalog] url, and not overloaded?"
    )]
    Unreachable {
        /// How long was waited.
        secs: u64,
        /// The last failure to connect, if any.
        reason: String,
    },
}

/// `error`'s message followed by those of its causes that it does not already say:
/// rust-postgres and the object store's client name only the kind of a failure ("error
/// connecting to server", "error sending request"); the cause ("Connection refused", a
/// certificate refused) is what the operator needs.
pub(crate) fn with_causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut message = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        cause = c.source();
    }
    message
}

impl StoreError {
    /// Whether the catalog's connection is gone (PostgreSQL restarted, the network
    /// cut): a new connection may succeed where this one cannot.
    pub fn is_disconnect(&self) -> bool {
        matches!(self, StoreError::Sql { source, .. } if source.is_disconnect())
            || matches!(self, StoreError::Unreachable { .. })
    }

    /// Whether the database gave up the transaction for another's sake (PostgreSQL
    /// found a deadlock or a serialization conflict; SQLite stayed busy past its
    /// timeout): the same transaction again may well commit.
    pub fn is_busy(&self) -> bool {
        matches!(self, StoreError::Sql { source, .. } if source.is_busy())
    }
}

/// Runs the transaction `f` and, when the database gives it up for another's sake
/// ([`StoreError::is_busy`]: two workers recording at once), runs it again after a
/// short pause (20, 40, 80, 160 ms and a random part), up to four times more. Before,
/// such a batch failed its run and its files waited for the next one. `f` must be a
/// whole transaction (rolled back when it fails), so that running it again is safe.
/// Blocks.
pub fn again_when_busy<T>(mut f: impl FnMut() -> Result<T, StoreError>) -> Result<T, StoreError> {
    let mut pause = std::time::Duration::from_millis(20);
    for _ in 0..4 {
        match f() {
            Err(e) if e.is_busy() => {
                tracing::warn!(error = %e, "the catalog gave up a transaction for another's; trying it again");
                let mut jitter = [0u8; 1];
                let _ = getrandom::fill(&mut jitter);
                std::thread::sleep(
                    pause + std::time::Duration::from_millis(u64::from(jitter[0]) / 4),
                );
                pause *= 2;
            }
            result => return result,
        }
    }
    f()
}

/// Whether the store is opened to write (harvest) or only to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Exclusive writer: takes the data folder's lock.
    Write,
    /// Reader.
    Read,
}

/// Whether the object store takes plikt's requests, and its prefix holds this catalog's
/// collection ([`Blobs::check_access`], [`Blobs::claim`]), as a command that writes or
/// serves starts: `Err` if it refuses them or holds another catalog's collection (no
/// request can succeed: the command stops and says why); `Ok(false)` if it does not
/// answer now (it may come back: files stay pending, a Destination is told to come back);
/// `Ok(true)` otherwise, and always with the local folder.
///
/// `writes`: the command writes to the object store (a harvest, a publish). A server only
/// reads: it makes no listing of uploads (a read-only key may not), and does not name the
/// prefix's catalog where none is named yet.
pub fn check_object_store(
    blobs: &Blobs,
    catalog: &Catalog,
    writes: bool,
) -> Result<bool, StoreError> {
    if !blobs.is_remote() {
        return Ok(true);
    }
    let unanswered = |e: &BlobError| {
        tracing::warn!(error = %e, "the object store does not answer now; files stay pending and documents unserved until it does");
        Ok(false)
    };
    if writes {
        match blobs.check_access() {
            Ok(()) => {}
            Err(e) if e.is_refused() => return Err(e.into()),
            Err(e) => return unanswered(&e),
        }
    }
    match blobs.claim(&catalog.identity()?, writes) {
        Ok(()) => Ok(true),
        Err(e @ BlobError::OtherCatalog { .. }) => Err(e.into()),
        Err(e) if e.is_refused() => Err(e.into()),
        // Not written now (a request that failed): the next start writes it.
        Err(e) => unanswered(&e),
    }
}

/// Takes the lock of the data folder `data_dir` (the file `lock` in it), held as long as
/// the file returned: one process at a time writes to, or moves (`plikt migrate`), a
/// data folder of the embedded default. `Err(Locked)` at once if another holds it.
pub fn lock_data_dir(data_dir: &Path) -> Result<File, StoreError> {
    let path = data_dir.join("lock");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path);
    let file = match file {
        Ok(file) => file,
        Err(source) => return Err(StoreError::Io { path, source }),
    };
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::Locked { path }),
        Err(std::fs::TryLockError::Error(source)) => Err(StoreError::Io { path, source }),
    }
}

/// The blob store and catalog of one data folder.
#[derive(Debug)]
pub struct Store {
    /// The catalog.
    pub catalog: Catalog,
    /// The blobs.
    pub blobs: Blobs,
    dir: PathBuf,
    _lock: Option<File>,
}

impl Store {
    /// Opens the store of `config`: blobs where `[blobs]` says (the data folder unless
    /// an object store is named), the catalog where `[catalog]` says.
    /// A process that writes refuses to start on a machine whose clock is further
    /// from a PostgreSQL catalog's than `[catalog] max_clock_offset_secs` (`clock`).
    pub fn open(config: &crate::config::Config, mode: Mode) -> Result<Self, StoreError> {
        let store = Self::open_at(
            &config.data_dir,
            &config.blobs,
            &Location::of(config)?,
            mode,
        )?;
        if mode == Mode::Write {
            store
                .catalog
                .check_clock(config.catalog.max_clock_offset())?;
        }
        Ok(store)
    }

    /// Opens the store in `data_dir` with the blob store `blobs` names and the catalog
    /// at `catalog`.
    pub fn open_at(
        data_dir: &Path,
        blobs: &crate::config::BlobsConfig,
        catalog: &Location,
        mode: Mode,
    ) -> Result<Self, StoreError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| StoreError::Io { path, source }
        };
        std::fs::create_dir_all(data_dir).map_err(io(data_dir))?;
        private_folder(data_dir).map_err(io(data_dir))?;
        // One writer per data folder, unless the catalog is PostgreSQL and the blobs
        // are in an object store: then the data folder holds nothing shared, and any
        // number of workers share the harvest through the catalog's leases.
        let shared = matches!(catalog, Location::Postgres { .. }) && blobs.s3_endpoint.is_some();
        let lock = match mode {
            Mode::Write if !shared => Some(lock_data_dir(data_dir)?),
            Mode::Write | Mode::Read => None,
        };
        let blobs = Blobs::open(data_dir, blobs)?;
        let catalog = Catalog::open(catalog)?;
        if mode == Mode::Write {
            // An object store that refuses plikt's requests (credentials, bucket, region)
            // would fail every file: the command stops here and says why. One away now
            // fails the files of this run (they stay pending); its leftovers wait.
            let reachable = check_object_store(&blobs, &catalog, true)?;
            match if reachable { blobs.clean_tmp() } else { Ok(0) } {
                Ok(0) => {}
                Ok(n) => tracing::info!(removed = n, "temporary blobs a crash left removed"),
                Err(e) if blobs.is_remote() => {
                    tracing::warn!(error = %e, "temporary objects a crash left could not be removed");
                }
                Err(e) => return Err(e.into()),
            }
            // With SQLite the lock says no other process is running: a run left
            // `running` was cut short. On PostgreSQL another worker may be carrying
            // it out: a run is closed when its worker's lease expires (`lease`).
            if catalog.backend() == Backend::Sqlite {
                catalog.close_interrupted_runs(now())?;
            }
            // Holding the data folder's lock (SQLite, or PostgreSQL with the files in
            // this folder, which no other worker can share), this process is the only
            // writer: a lease still held is a stopped process's (a `plikt harvest`
            // killed mid-run), free to take at once.
            if lock.is_some() {
                catalog.free_leases()?;
            }
        }
        Ok(Self {
            catalog,
            blobs,
            dir: data_dir.to_path_buf(),
            _lock: lock,
        })
    }

    /// The data folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Now, to the millisecond ([`Timestamp::now`]).
pub fn now() -> Timestamp {
    Timestamp::now()
}

/// A statement's error where no step names it (the rows of a query as they come).
impl From<DbError> for StoreError {
    fn from(source: DbError) -> Self {
        StoreError::Sql {
            context: "reading the catalog",
            source,
        }
    }
}

/// Takes group write and every bit of others' from the data folder (one made by an
/// earlier plikt, or by hand under umask 022): what is in it (restricted metadata,
/// subscribers' secrets) is for plikt's user, and its group at most to read. Files
/// plikt creates get the same through its umask (`main`).
fn private_folder(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir)?.permissions().mode() & 0o7777;
        if mode & 0o027 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode & !0o027))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy() -> StoreError {
        StoreError::Sql {
            context: "recording files",
            source: DbError::Sqlite(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                None,
            )),
        }
    }

    #[test]
    fn a_transaction_given_up_for_another_is_run_again_and_other_errors_are_not() {
        let mut calls = 0;
        let r = again_when_busy(|| {
            calls += 1;
            if calls < 3 { Err(busy()) } else { Ok(calls) }
        });
        assert_eq!(r.unwrap(), 3);
        let mut calls = 0;
        let r: Result<(), _> = again_when_busy(|| {
            calls += 1;
            Err(StoreError::Locked {
                path: "lock".into(),
            })
        });
        assert!(matches!(r, Err(StoreError::Locked { .. })));
        assert_eq!(calls, 1);
        let mut calls = 0;
        let r: Result<(), _> = again_when_busy(|| {
            calls += 1;
            Err(busy())
        });
        assert!(r.unwrap_err().is_busy());
        assert_eq!(calls, 5, "tried once and four times more");
    }

    /// Two transactions taking two rows in opposite orders on a real PostgreSQL: the
    /// server finds the deadlock and gives one up (40P01); run again, it commits after
    /// the other, and both changes are there.
    #[test]
    fn a_deadlock_found_by_postgresql_is_run_again_and_both_commit() {
        let Some(server) = sql::tests::postgres_server() else {
            return;
        };
        let url = sql::tests::fresh_database(&server, "deadlock");
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        c.batch_execute(
            "CREATE TABLE t (id INT PRIMARY KEY, n INT); INSERT INTO t VALUES (1, 0), (2, 0)",
        )
        .unwrap();
        let both = std::sync::Arc::new(std::sync::Barrier::new(2));
        let workers: Vec<_> = [(1i32, 2i32), (2, 1)]
            .into_iter()
            .map(|(first, second)| {
                let (url, both) = (url.clone(), both.clone());
                std::thread::spawn(move || {
                    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
                    let pg = |e: postgres::Error| StoreError::Sql {
                        context: "test",
                        source: e.into(),
                    };
                    let mut attempts = 0;
                    again_when_busy(|| {
                        attempts += 1;
                        let mut tx = c.transaction().map_err(pg)?;
                        tx.execute("UPDATE t SET n = n + 1 WHERE id = $1", &[&first])
                            .map_err(pg)?;
                        if attempts == 1 {
                            // Each holds its first row before taking the other's.
                            both.wait();
                        }
                        tx.execute("UPDATE t SET n = n + 1 WHERE id = $1", &[&second])
                            .map_err(pg)?;
                        tx.commit().map_err(pg)
                    })
                    .map(|()| attempts)
                })
            })
            .collect();
        let attempts: Vec<u32> = workers
            .into_iter()
            .map(|w| w.join().unwrap().unwrap())
            .collect();
        assert!(attempts.contains(&2), "no deadlock happened: {attempts:?}");
        let sum: i64 = c.query_one("SELECT sum(n) FROM t", &[]).unwrap().get(0);
        assert_eq!(sum, 4);
    }
}

//! Durable storage: a content-addressed [`Blobs`] store (the local folder or an
//! S3-compatible object store, `[blobs]`) and the SQLite [`Catalog`]. The only module
//! with SQL.
//!
//! One writer per data folder: [`Store::open`] in [`Mode::Write`] takes an exclusive
//! lock on `data_dir/lock` (a second `plikt harvest` or `plikt run` on the same folder
//! is refused), removes temporary blobs a crash left behind and closes runs a crash
//! left open. Readers (`status`, `audit`, `serve`) need no lock: the catalog is in WAL
//! mode.

mod blobs;
mod catalog;
mod connection;
mod digest;
mod lease;
mod metadata;
mod migrations;
pub mod moving;
mod notify;
mod published;
mod query;
mod sql;
mod stage;
mod state;

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

pub use blobs::{
    BlobError, BlobWriter, Blobs, ByteStream, Documents, ObjectStoreError, PackCache, Packed,
    Packing, ReadSeek, Written, sync_dir,
};
pub use catalog::{
    Catalog, DueFile, DueVersion, FileResult, KnownVersion, Location, NewFile, NewVersion,
    RunCounts, Settled, StoredFile, StoredFinding,
};
pub use connection::Connection;
pub use digest::{Digester, Digests, INLINE_LIMIT, digest_file};
pub use lease::{Busy, Claim, Lease};
pub use metadata::{ContentMetadata, Credit, Hash, ItemMetadata, License, Typed};
pub use notify::{
    ClaimedDelivery, DeliveryResult, NewNotification, OutboxCounts, Subscription, TopicCursor,
};
pub use published::{JournalEntry, JournalKey, JournalPage, Page, PublishedFile};
pub use query::{
    AuditReport, DayDeposits, DayFindings, Gauges, LastRun, PublisherGauges, PublisherStatus,
    Unsettled, UnsettledState,
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
    #[error("catalog: {context}: {source}")]
    Sql {
        /// What plikt was doing.
        context: &'static str,
        /// The database's error.
        source: DbError,
    },
    /// The catalog's password cannot be loaded.
    #[error("{reason}")]
    Secret {
        /// Which variable or file, and why (never the value).
        reason: String,
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
    /// Another plikt process writes to this data folder.
    #[error(
        "{path} is locked by another plikt process (harvest or run) writing to this data folder; wait for it to finish or stop it (several workers at once need [catalog] on PostgreSQL and [blobs] on an object store)"
    )]
    Locked {
        /// The lock file.
        path: PathBuf,
    },
}

impl StoreError {
    /// Whether the catalog's connection is gone (PostgreSQL restarted, the network
    /// cut): a new connection may succeed where this one cannot.
    pub fn is_disconnect(&self) -> bool {
        matches!(self, StoreError::Sql { source, .. } if source.is_disconnect())
    }
}

/// Whether the store is opened to write (harvest) or only to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Exclusive writer: takes the data folder's lock.
    Write,
    /// Reader.
    Read,
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
    pub fn open(config: &crate::config::Config, mode: Mode) -> Result<Self, StoreError> {
        Self::open_at(
            &config.data_dir,
            &config.blobs,
            &Location::of(config)?,
            mode,
        )
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
        // One writer per data folder, unless the catalog is PostgreSQL and the blobs
        // are in an object store: then the data folder holds nothing shared, and any
        // number of workers share the harvest through the catalog's leases.
        let shared = matches!(catalog, Location::Postgres { .. }) && blobs.s3_endpoint.is_some();
        let lock = match mode {
            Mode::Write if !shared => {
                let path = data_dir.join("lock");
                let file = OpenOptions::new()
                    .create(true)
                    .truncate(false)
                    .write(true)
                    .open(&path)
                    .map_err(io(&path))?;
                match file.try_lock() {
                    Ok(()) => Some(file),
                    Err(std::fs::TryLockError::WouldBlock) => {
                        return Err(StoreError::Locked { path });
                    }
                    Err(std::fs::TryLockError::Error(e)) => return Err(io(&path)(e)),
                }
            }
            Mode::Write | Mode::Read => None,
        };
        let blobs = Blobs::open(data_dir, blobs)?;
        let catalog = Catalog::open(catalog)?;
        if mode == Mode::Write {
            match blobs.clean_tmp() {
                Ok(0) => {}
                Ok(n) => tracing::info!(removed = n, "temporary blobs a crash left removed"),
                // An object store that cannot be reached now fails the files of this run
                // (they stay pending); its leftovers wait for the next start.
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

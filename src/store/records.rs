//! The records the catalog is handed and hands back: a run's counts and findings, the
//! versions and files a run records, and how each was settled. No SQL here but the
//! decoding of a row's columns into a record.

use super::digest::Digests;
use super::sql::{DbError, Row};
use super::state::{Access, FileRole, Timestamp};
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

/// A file's row as its feed declared it, from the columns `role, url, declared_type,
/// declared_size, declared_md5` at `at` of a row.
pub(super) fn new_file(r: &Row<'_>, at: usize) -> Result<NewFile, DbError> {
    Ok(NewFile {
        role: r.get(at)?,
        url: r.get(at + 1)?,
        declared_type: r.get(at + 2)?,
        declared_size: r
            .get::<Option<i64>>(at + 3)?
            .map(|v| v.max(0).unsigned_abs()),
        declared_md5: r.get(at + 4)?,
    })
}

/// Where a blob came from ([`Catalog::blob_source`](super::Catalog::blob_source)).
#[derive(Debug, Clone)]
pub struct BlobSource {
    /// The publisher's id.
    pub publisher: String,
    /// The version's row.
    pub version: i64,
    /// The file's row.
    pub file_id: i64,
    /// The item's guid.
    pub guid: String,
    /// The file as its feed declared it.
    pub file: NewFile,
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
    Stored(Box<StoredFile>),
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
    /// Where its blob is in a pack on the object store (`None`: at its own name), as
    /// [`super::Blobs::commit`] put it.
    pub pack: Option<super::Packed>,
}

/// How a version was settled by [`Catalog::record`](super::Catalog::record).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// Every file stored: deposited, change journalled.
    Deposited(i64),
    /// A file failed; retried later.
    Retry(i64),
    /// A file failed too often: stays failed.
    GaveUp(i64),
}

/// How a version with a file not stored is retried ([`Catalog::record`](super::Catalog::record)).
#[derive(Clone, Copy)]
pub struct Retries<'a> {
    /// Failed attempts after which a version is given up (`max_failed_runs`).
    pub max_attempts: u32,
    /// When a version that failed `n` times is tried again.
    pub retry_at: &'a dyn Fn(u32) -> Timestamp,
    /// Whether the blob store could not keep a file of this version (fetched and
    /// verified): retried without counting an attempt.
    pub unstored: &'a dyn Fn(i64) -> bool,
}

impl std::fmt::Debug for Retries<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Retries")
            .field("max_attempts", &self.max_attempts)
            .finish_non_exhaustive()
    }
}

/// A blob's place in a pack, from the columns `pack, pack_offset` at `column` of a row
/// (`None`: the blob is at its own name); `length` is the blob's.
pub(super) fn packed(
    r: &Row<'_>,
    column: usize,
    length: u64,
) -> Result<Option<super::Packed>, DbError> {
    Ok(match r.get::<Option<String>>(column)? {
        Some(pack) => Some(super::Packed {
            pack,
            offset: r.get::<i64>(column + 1)?.max(0).unsigned_abs(),
            length,
        }),
        None => None,
    })
}

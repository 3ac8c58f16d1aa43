//! What `plikt serve` keeps in memory so that a resource is answered without a catalog
//! query, a file read or header formatting when it was asked for before (issue 14 §5;
//! BENCHMARKS.md, `plikt serve`). Only with a SQLite catalog and a local blob folder
//! (`AppState::local`); PostgreSQL and object stores are asked every time.
//!
//! - **The files of a deposit** (its current version's, or one version's), ready to
//!   serve: each with its URL key and its response headers made once. Never stale:
//!   every request first reads the catalog's change stamp
//!   ([`Catalog::change_stamp`]: SQLite's `PRAGMA data_version`, which changes with
//!   every commit of another connection — `plikt harvest`, `plikt publish`, the run
//!   loop — and this connection's own changes), and a stamp other than the one the
//!   cache was filled under empties it first. The stamp is read before the query that
//!   fills an entry, so a commit between the two only empties the cache once more.
//!   At most [`MAX_DEPOSITS`] deposits; a full cache is emptied.
//! - **The bytes of small blobs** (up to [`super::resource::SMALL`] each), by SHA-256:
//!   a blob's name is its content, so bytes kept are never stale. At most
//!   [`BLOB_BYTES`] in all; the oldest go first.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use axum::http::HeaderValue;
use bytes::Bytes;

use crate::resourcesync;
use crate::store::{Access, Catalog, PublishedFile, StoreError, Timestamp};

/// Deposits whose files are kept at most (about 600 bytes a file: some 12 MiB for the
/// benchmark's two files a deposit).
pub(super) const MAX_DEPOSITS: usize = 10_000;

/// Bytes of small blobs kept at most: 64 MiB (about 14,000 files of 4.6 KiB, the size of
/// the benchmark's small resources).
pub(super) const BLOB_BYTES: usize = 64 << 20;

/// A stored file as served: what the catalog says of it and the headers of its answers.
#[derive(Debug)]
pub(super) struct Served {
    /// Its key in the resource's URL (`d/<publisher>/<deposit>/<key>`).
    pub key: String,
    /// SHA-256 of the bytes (the blob's name).
    pub sha256: String,
    /// Where the blob is in a pack on the object store.
    pub pack: Option<crate::store::Packed>,
    /// Byte count.
    pub length: u64,
    /// The version's effective access.
    pub access: Access,
    /// `Content-Type`, `ETag`, `Last-Modified` and `Link`; `Err` (a 500 when the file
    /// is asked for) when the catalog holds something no header can carry.
    pub headers: Result<Headers, String>,
}

/// The header values of every answer about a resource.
#[derive(Debug, Clone)]
pub(super) struct Headers {
    /// `Content-Type`.
    pub content_type: HeaderValue,
    /// `ETag`: the SHA-256 in quotes.
    pub etag: HeaderValue,
    /// `Last-Modified`: when plikt stored it.
    pub last_modified: Option<HeaderValue>,
    /// `Link: <capability list>; rel="resourcesync"` (§6.3.3).
    pub link: HeaderValue,
    /// `Content-Disposition: attachment` for a deposited file of a type a browser would
    /// run ([`super::guard::disposition`]).
    pub disposition: Option<HeaderValue>,
}

impl Served {
    /// `f`, a file of `publisher`'s served below `base_url`.
    pub fn new(base_url: &str, publisher: &str, f: &PublishedFile) -> Self {
        let content_type = f
            .content_type
            .as_deref()
            .unwrap_or("application/octet-stream");
        Self {
            key: resourcesync::url_key(&f.url),
            sha256: f.sha256.clone(),
            pack: f.pack.clone(),
            length: f.length,
            access: f.access,
            headers: Headers::new(
                base_url,
                publisher,
                f.access,
                content_type,
                &format!("\"{}\"", f.sha256),
                Timestamp::parse(&f.stored_at),
            )
            .map(|h| Headers {
                disposition: super::guard::disposition(content_type),
                ..h
            }),
        }
    }
}

impl Headers {
    /// The headers of an answer about a resource or record of `publisher`'s set of
    /// `access`.
    pub fn new(
        base_url: &str,
        publisher: &str,
        access: Access,
        content_type: &str,
        etag: &str,
        modified: Option<Timestamp>,
    ) -> Result<Self, String> {
        let value = |s: &str| HeaderValue::from_str(s).map_err(|e| format!("{e}: {s:?}"));
        Ok(Self {
            content_type: value(content_type)?,
            etag: value(etag)?,
            last_modified: match modified {
                Some(t) => Some(value(&httpdate::fmt_http_date(
                    std::time::SystemTime::from(t.get()),
                ))?),
                None => None,
            },
            link: value(&format!(
                "<{base_url}{}>; rel=\"resourcesync\"",
                resourcesync::capability_list_path(publisher, access)
            ))?,
            disposition: None,
        })
    }
}

/// The stored files of a deposited version, as served, in their order.
#[derive(Debug)]
pub(super) struct DepositFiles {
    /// Whose deposit the files were asked for as (none of another publisher's).
    publisher: Box<str>,
    /// The files.
    pub files: Vec<Served>,
}

impl DepositFiles {
    /// The stored files of `publisher`'s deposit `deposit` (version `version`, or the
    /// current one) on `catalog`, as served below `base_url`.
    pub fn read(
        catalog: &Catalog,
        base_url: &str,
        publisher: &str,
        deposit: i64,
        version: Option<i64>,
    ) -> Result<Self, StoreError> {
        Ok(Self {
            publisher: publisher.into(),
            files: catalog
                .deposit_files(publisher, deposit, version)?
                .iter()
                .map(|f| Served::new(base_url, publisher, f))
                .collect(),
        })
    }

    /// The file whose URL key is `key`.
    pub fn find(&self, key: &str) -> Option<&Served> {
        self.files.iter().find(|f| f.key == key)
    }
}

/// The two caches (see the module's documentation).
#[derive(Default)]
pub(super) struct Cache {
    files: Mutex<Files>,
    blobs: Mutex<Blobs>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        let blobs = self.blobs.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("Cache")
            .field("deposits", &files.by_deposit.len())
            .field("blobs", &blobs.by_sha256.len())
            .field("blob_bytes", &blobs.bytes)
            .finish()
    }
}

#[derive(Default)]
struct Files {
    /// The catalog's change stamp when the entries were read.
    stamp: Option<(i64, u64)>,
    /// By deposit and version (`None`: the current one).
    by_deposit: HashMap<(i64, Option<i64>), Arc<DepositFiles>>,
}

#[derive(Default)]
struct Blobs {
    by_sha256: HashMap<Box<str>, Bytes>,
    /// Oldest first.
    order: VecDeque<Box<str>>,
    /// The bytes of the blobs kept.
    bytes: usize,
}

impl Cache {
    /// The stored files of `publisher`'s deposit `deposit` (version `version`, or the
    /// current one) on `catalog`, as served below `base_url`: kept from an earlier
    /// request when the catalog has not changed since, else read now (and kept). Read
    /// every time from a catalog that cannot tell cheaply whether it changed
    /// (PostgreSQL).
    pub fn deposit_files(
        &self,
        catalog: &Catalog,
        base_url: &str,
        publisher: &str,
        deposit: i64,
        version: Option<i64>,
    ) -> Result<Arc<DepositFiles>, StoreError> {
        let read =
            || DepositFiles::read(catalog, base_url, publisher, deposit, version).map(Arc::new);
        // First the stamp, then the query: a commit between the two is seen at the
        // next request.
        let Some(stamp) = catalog.change_stamp()? else {
            return read();
        };
        {
            let mut cache = self.files.lock().unwrap_or_else(PoisonError::into_inner);
            if cache.stamp != Some(stamp) {
                cache.by_deposit.clear();
                cache.stamp = Some(stamp);
            } else if let Some(d) = cache.by_deposit.get(&(deposit, version))
                // The same deposit asked for as another publisher's is not found.
                && *d.publisher == *publisher
            {
                return Ok(d.clone());
            }
        }
        let d = read()?;
        let mut cache = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        if cache.stamp == Some(stamp) {
            if cache.by_deposit.len() >= MAX_DEPOSITS {
                cache.by_deposit.clear();
            }
            cache.by_deposit.insert((deposit, version), d.clone());
        }
        Ok(d)
    }

    /// The bytes of the blob `sha256`, if kept.
    pub fn blob(&self, sha256: &str) -> Option<Bytes> {
        let blobs = self.blobs.lock().unwrap_or_else(PoisonError::into_inner);
        blobs.by_sha256.get(sha256).cloned()
    }

    /// Keeps `bytes`, the blob `sha256`, making room by forgetting the oldest.
    pub fn keep_blob(&self, sha256: &str, bytes: Bytes) {
        if bytes.len() > BLOB_BYTES {
            return;
        }
        let mut blobs = self.blobs.lock().unwrap_or_else(PoisonError::into_inner);
        if blobs.by_sha256.contains_key(sha256) {
            return;
        }
        while blobs.bytes + bytes.len() > BLOB_BYTES {
            let Some(old) = blobs.order.pop_front() else {
                break;
            };
            if let Some(b) = blobs.by_sha256.remove(&old) {
                blobs.bytes -= b.len();
            }
        }
        blobs.bytes += bytes.len();
        blobs.order.push_back(sha256.into());
        blobs.by_sha256.insert(sha256.into(), bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_bytes_stay_within_their_budget_oldest_out_first() {
        let cache = Cache::default();
        let chunk = BLOB_BYTES / 4;
        for i in 0..6 {
            cache.keep_blob(&format!("{i}"), Bytes::from(vec![i as u8; chunk]));
        }
        let blobs = cache.blobs.lock().unwrap();
        assert_eq!(blobs.bytes, BLOB_BYTES);
        drop(blobs);
        assert!(cache.blob("0").is_none() && cache.blob("1").is_none());
        assert_eq!(cache.blob("5").unwrap()[0], 5);
        assert_eq!(cache.blob("2").unwrap().len(), chunk);
        // Bigger than the whole budget: not kept, and nothing forgotten for it.
        cache.keep_blob("big", Bytes::from(vec![0; BLOB_BYTES + 1]));
        assert!(cache.blob("big").is_none() && cache.blob("2").is_some());
    }
}

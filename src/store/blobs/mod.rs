//! The content-addressed blob store: one API ([`Blobs`], [`BlobWriter`], [`Written`])
//! over two backends, chosen by `[blobs]` (issue 17 §2):
//!
//! - the local folder `data_dir/blobs/ab/<sha256>` (`local.rs`, the default): temporary
//!   file → batch sync → rename → sync;
//! - an S3-compatible object store (`s3.rs`): temporary object (streamed in parts) →
//!   server-side copy to `<prefix>blobs/ab/<sha256>` → delete; a blob of at most 1 MiB
//!   held in memory and stored with others in a pack, `<prefix>packs/ab/<name>.pack`
//!   (named by the SHA-256 of its blobs' SHA-256s), whose name and offset the catalog records
//!   ([`Packed`]; readers pass it back).
//!
//! Either way a blob is known by its SHA-256, which is known only when its last byte
//! has passed: bytes go to a temporary place while MD5 and SHA-256 are computed
//! ([`BlobWriter`]), the harvester verifies them ([`Written`]), and a batch is committed
//! ([`Blobs::commit`]) before the catalog records it. Identical bytes are stored once.
//!
//! Calling conventions: [`BlobWriter::write`] and [`Blobs::stream`] are `async`; the
//! other methods block (on the object store's answers, for S3) and belong on blocking
//! threads (`spawn_blocking`), as the catalog's do. The object store's I/O runs on a
//! runtime of its own, so these work from any thread that is not an async worker.

mod local;
mod s3;

pub use local::open_beneath;
pub use s3::{Packed, Packing};

use std::fs::File;
use std::io::{self, Read, Seek};
use std::path::{Path, PathBuf};

use bytes::Bytes;
use futures_util::stream::BoxStream;

use super::digest::{Digester, Digests};
use crate::config::BlobsConfig;

/// Why the blob store failed. Messages say where (path, or endpoint, bucket and
/// object) and what to do; they never hold a credential.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BlobError {
    /// A file or folder of the local blob store.
    #[error("{path}: {source}{}", unwritable(.source).unwrap_or(""))]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// A request to the object store failed (after the client's retries).
    #[error(transparent)]
    ObjectStore(Box<ObjectStoreError>),
    /// `[blobs]` cannot be used (a credential could not be read).
    #[error("{0}")]
    Config(String),
    /// The object store's prefix holds another catalog's collection.
    #[error(
        "{location} says this bucket and prefix hold the collection of catalog `{found}`, but this catalog is `{ours}`: two catalogs under one prefix overwrite each other's published documents; give this deployment a [blobs] prefix (or bucket) of its own, or, if that catalog is gone for good and this one takes its place, remove {location}"
    )]
    OtherCatalog {
        /// `s3://bucket/<prefix>catalog-id`.
        location: String,
        /// The catalog it names.
        found: String,
        /// This catalog.
        ours: String,
    },
}

/// What to do, if `e` says the local blob store cannot be written at all (not one
/// file's trouble): its filesystem full or read-only, or plikt's user over its quota or
/// without the right to write there.
fn unwritable(e: &io::Error) -> Option<&'static str> {
    match e.kind() {
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => Some(FULL),
        io::ErrorKind::ReadOnlyFilesystem => Some(READ_ONLY),
        // EPERM, which no owner or mode explains (Rust calls EACCES and EPERM alike).
        io::ErrorKind::PermissionDenied if e.raw_os_error() == Some(1) => Some(NOT_PERMITTED),
        io::ErrorKind::PermissionDenied => Some(DENIED),
        _ => None,
    }
}

const FULL: &str =
    "; the filesystem is full (or plikt's user is over its quota there): free space or grow it";
const READ_ONLY: &str = "; the filesystem is read-only (Linux remounts a filesystem read-only after a disk error: the kernel's log says): repair it and mount it read-write";
const NOT_PERMITTED: &str = "; the operation is not permitted whoever asks: an immutable or append-only attribute (`lsattr -d` shows it, `chattr -i` removes it) or a security policy (SELinux, AppArmor) forbids it";
const DENIED: &str = "; plikt's user may not read or write there: give data_dir and everything in it to the user plikt runs as (a restore, or a command run as another user, can leave files owned by someone else)";

/// A request to the object store that failed: where, what, why, and what to do.
#[derive(Debug, thiserror::Error)]
#[error("object store {endpoint}, bucket `{bucket}`: {op} `{key}` failed: {reason}; {advice}")]
pub struct ObjectStoreError {
    /// The endpoint.
    pub endpoint: String,
    /// The bucket.
    pub bucket: String,
    /// What plikt was doing (`uploading`, `copying` …).
    pub op: &'static str,
    /// The object.
    pub key: String,
    /// The client's error (it names the request, never a credential).
    pub reason: String,
    /// What to do about it.
    pub advice: &'static str,
    /// What kind of failure it is.
    pub failure: Failure,
}

/// What kind of failure an object store's request had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// No answer, or a server error, after the client's retries: a later request may
    /// succeed.
    Unreachable,
    /// The object does not exist.
    NotFound,
    /// The object store refused the request (credentials, permissions, a bucket that
    /// does not exist): no request succeeds until `[blobs]` or the store is changed.
    Refused,
}

impl BlobError {
    /// The blob (or object) does not exist.
    pub fn is_not_found(&self) -> bool {
        match self {
            BlobError::Io { source, .. } => source.kind() == io::ErrorKind::NotFound,
            BlobError::ObjectStore(e) => e.failure == Failure::NotFound,
            BlobError::Config(_) | BlobError::OtherCatalog { .. } => false,
        }
    }

    /// The object store does not answer (an outage, not a refusal): what is stored
    /// now fails until it comes back.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, BlobError::ObjectStore(e) if e.failure == Failure::Unreachable)
    }

    /// The blob store takes no file now, whichever file it is: the object store does
    /// not answer, or the local folder cannot be written (its filesystem full or
    /// read-only, plikt's user over its quota or without the right to write there).
    /// What is stored now fails until that changes.
    pub fn takes_nothing_now(&self) -> bool {
        self.is_unreachable()
            || matches!(self, BlobError::Io { source, .. } if unwritable(source).is_some())
    }

    /// The object store refused plikt's requests (not an outage): its settings or its
    /// credentials must change before anything is stored.
    pub fn is_refused(&self) -> bool {
        matches!(self, BlobError::ObjectStore(e) if e.failure == Failure::Refused)
    }

    fn io(path: &Path) -> impl FnOnce(io::Error) -> BlobError + '_ {
        move |source| BlobError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A blob's bytes as they arrive (from a file, or from the object store).
pub type ByteStream = BoxStream<'static, io::Result<Bytes>>;

/// Something a harvest-time check can read back and seek in ([`Written::reader`]).
pub trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

/// The blob store of one configuration: the local folder or an object store.
#[derive(Debug, Clone)]
pub struct Blobs(Backend);

#[derive(Debug, Clone)]
enum Backend {
    Local(local::Local),
    S3(s3::S3),
}

impl Blobs {
    /// Opens the blob store `[blobs]` names: the local folder `data_dir/blobs` (created
    /// if needed), or a client of the object store (no request is made yet).
    pub fn open(data_dir: &Path, config: &BlobsConfig) -> Result<Self, BlobError> {
        match &config.s3 {
            None => local::Local::open(data_dir)
                .map(|l| Blobs(Backend::Local(l)))
                .map_err(BlobError::io(data_dir)),
            Some(Err(why)) => Err(BlobError::Config(why.clone())),
            Some(Ok(settings)) => s3::S3::open(settings).map(|s| Blobs(Backend::S3(s))),
        }
    }

    /// Whether the blobs are on an object store (whose calls block on the network).
    pub fn is_remote(&self) -> bool {
        matches!(self.0, Backend::S3(_))
    }

    /// Where the blob with this SHA-256 is (or would be), for messages and reports: a
    /// path, or `s3://bucket/key`.
    pub fn location(&self, sha256: &str) -> String {
        self.location_of(sha256, None)
    }

    /// [`Blobs::location`] of a blob that may be in a pack (as the catalog says).
    pub fn location_of(&self, sha256: &str, packed: Option<&Packed>) -> String {
        match &self.0 {
            Backend::Local(l) => l.path(sha256).display().to_string(),
            Backend::S3(s) => s.location_of(sha256, packed),
        }
    }

    /// A new blob being written.
    pub fn writer(&self) -> Result<BlobWriter, BlobError> {
        let inner = match &self.0 {
            Backend::Local(l) => {
                let (file, tmp) = l.writer().map_err(BlobError::io(l.root()))?;
                WriterInner::Local(Some(file), tmp)
            }
            Backend::S3(s) => WriterInner::S3(s.writer()),
        };
        Ok(BlobWriter {
            inner,
            digester: Digester::new(),
        })
    }

    /// Moves a batch of written blobs to their names, durably; only then may the
    /// catalog record them. `known(sha256)` says whether the catalog has the blob
    /// already: then its new copy is dropped (identical bytes are stored once, decided
    /// in the catalog). On an object store, `packing` says whether blobs of at most
    /// 1 MiB go into packs (issue 17 §6: one PUT for hundreds of small files); the local
    /// folder keeps every blob as a file. Returns, per blob, where it is stored (`None`:
    /// at its own name; or its place in a pack, which the catalog records) or the error
    /// (an object store that failed for one blob: that file stays pending); `Err` when
    /// the batch as a whole failed (the local folder cannot be synced). Blocks.
    pub fn commit(
        &self,
        batch: Vec<Written>,
        known: &dyn Fn(&str) -> bool,
        packing: Packing,
    ) -> Result<Vec<Result<Option<Packed>, BlobError>>, BlobError> {
        match &self.0 {
            Backend::Local(l) => {
                let n = batch.len();
                let files = batch
                    .into_iter()
                    .map(|w| match w.tmp {
                        Tmp::Local(t) => (w.digests.sha256, t),
                        Tmp::S3(_) => unreachable!("a local store writes local blobs"),
                    })
                    .collect();
                match l.commit(files) {
                    Ok(()) => Ok((0..n).map(|_| Ok(None)).collect()),
                    // The folder takes no file now (full, read-only, not plikt's):
                    // every file of the batch fails alike, each to be fetched again,
                    // and the run stops downloading, as when a file's own write
                    // failed so. Another failure is the run's.
                    Err(e) if unwritable(&e).is_some() => Ok((0..n)
                        .map(|_| {
                            Err(BlobError::Io {
                                path: l.root().to_path_buf(),
                                // The same error for each (the system's, if it was one).
                                source: e.raw_os_error().map_or_else(
                                    || io::Error::new(e.kind(), e.to_string()),
                                    io::Error::from_raw_os_error,
                                ),
                            })
                        })
                        .collect()),
                    Err(e) => Err(BlobError::io(l.root())(e)),
                }
            }
            Backend::S3(s) => {
                let batch = batch
                    .into_iter()
                    .map(|w| {
                        let known = known(&w.digests.sha256);
                        match w.tmp {
                            Tmp::S3(t) => (w.digests.sha256, t, known),
                            Tmp::Local(_) => unreachable!("an object store writes objects"),
                        }
                    })
                    .collect();
                Ok(s.commit(batch, packing))
            }
        }
    }

    /// Whether the blob store takes requests: with an object store, one listing (a
    /// refusal is [`BlobError::is_refused`]); the local folder always does. Blocks.
    pub fn check_access(&self) -> Result<(), BlobError> {
        match &self.0 {
            Backend::Local(_) => Ok(()),
            Backend::S3(s) => s.check_access(),
        }
    }

    /// Claims the object store's prefix for the catalog `id` (`<prefix>catalog-id`):
    /// `Err(OtherCatalog)` if another catalog's collection is there. The local folder
    /// belongs to its data folder's catalog already. Blocks.
    /// Without `write` (a server), a prefix that names no catalog yet is left so.
    pub fn claim(&self, id: &str, write: bool) -> Result<(), BlobError> {
        match &self.0 {
            Backend::Local(_) => Ok(()),
            Backend::S3(s) => s.claim(id, write),
        }
    }

    /// Removes what a crash left of blobs being written: the local folder's temporary
    /// files (call only while holding the data folder's lock), or the object store's
    /// temporary objects and unfinished uploads of other processes older than
    /// `stale_upload_secs`. Returns how many were removed. Blocks.
    pub fn clean_tmp(&self) -> Result<usize, BlobError> {
        match &self.0 {
            Backend::Local(l) => l.clean_tmp().map_err(BlobError::io(l.root())),
            Backend::S3(s) => s.clean_tmp(),
        }
    }

    /// Temporary blobs now (in flight, or left by a crash), each with its location and
    /// age, for `plikt audit`. Blocks.
    pub fn leftovers(&self) -> Result<Vec<String>, BlobError> {
        match &self.0 {
            Backend::Local(l) => l.leftovers().map_err(BlobError::io(l.tmp())),
            Backend::S3(s) => s.leftovers(),
        }
    }

    /// `length` bytes of a blob from byte `start` (a resource served, with or without a
    /// `Range`): a ranged read of the file or of the object.
    pub async fn stream(
        &self,
        sha256: &str,
        packed: Option<&Packed>,
        start: u64,
        length: u64,
    ) -> Result<ByteStream, BlobError> {
        match &self.0 {
            Backend::Local(l) => {
                use futures_util::StreamExt;
                use tokio::io::{AsyncReadExt, AsyncSeekExt};
                let path = l.path(sha256);
                let mut file =
                    tokio::fs::File::from_std(l.open_blob(sha256).map_err(BlobError::io(&path))?);
                if start > 0 {
                    file.seek(io::SeekFrom::Start(start))
                        .await
                        .map_err(BlobError::io(&path))?;
                }
                // 256 KiB a read: each read of a tokio file is a trip to a blocking
                // thread, and the default 4 KiB made a large file cost 64 times as
                // many (BENCHMARKS.md, `plikt serve`).
                Ok(
                    tokio_util::io::ReaderStream::with_capacity(file.take(length), 256 << 10)
                        .boxed(),
                )
            }
            Backend::S3(s) => s.stream(sha256, packed, start, length).await,
        }
    }

    /// `length` bytes of a blob from `start`, read whole, when the blob is a local file
    /// (`None` on an object store): the one trip to a blocking thread a small
    /// resource costs `plikt serve`, with its catalog query. Blocks.
    pub fn read_local(
        &self,
        sha256: &str,
        start: u64,
        length: usize,
    ) -> Option<io::Result<Vec<u8>>> {
        let Backend::Local(l) = &self.0 else {
            return None;
        };
        Some((|| {
            use std::io::{Seek, SeekFrom};
            let mut file = l.open_blob(sha256)?;
            if start > 0 {
                file.seek(SeekFrom::Start(start))?;
            }
            let mut buf = vec![0; length];
            file.read_exact(&mut buf)?;
            Ok(buf)
        })())
    }

    /// Reads a whole blob from the start (dump packages, `plikt audit`): the file, or
    /// the object streamed a few chunks at a time. Blocks.
    pub fn reader(
        &self,
        sha256: &str,
        packed: Option<&Packed>,
    ) -> Result<Box<dyn Read + Send>, BlobError> {
        match &self.0 {
            Backend::Local(l) => {
                let path = l.path(sha256);
                let file = File::open(&path).map_err(BlobError::io(&path))?;
                Ok(Box::new(file))
            }
            Backend::S3(s) => s.reader(sha256, packed),
        }
    }

    /// Re-reads a blob and computes its digests (`plikt audit`), in constant memory.
    /// Blocks.
    pub fn digest(&self, sha256: &str, packed: Option<&Packed>) -> Result<Digests, BlobError> {
        let mut input = self.reader(sha256, packed)?;
        let mut d = Digester::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = input
                .read(&mut buf)
                .map_err(|e| self.read_error(sha256, e))?;
            if n == 0 {
                break;
            }
            d.update(&Bytes::copy_from_slice(&buf[..n]));
        }
        Ok(d.finish())
    }

    fn read_error(&self, sha256: &str, e: io::Error) -> BlobError {
        match &self.0 {
            Backend::Local(l) => BlobError::io(&l.path(sha256))(e),
            Backend::S3(s) => s.read_error(sha256, e),
        }
    }

    /// Every blob and pack stored: (SHA-256 from its name, its location), handed to `f`
    /// a page at a time as they are listed (a folder of the local folder; up to 1,000
    /// objects of the object store), so that memory does not grow with the collection.
    /// For `plikt audit`. Blocks (within async code: in `tokio::task::block_in_place`).
    pub fn list_pages<E: From<BlobError>>(
        &self,
        f: impl FnMut(Vec<(String, String)>) -> Result<(), E>,
    ) -> Result<(), E> {
        match &self.0 {
            Backend::Local(l) => l.list_pages(f),
            Backend::S3(s) => s.list_pages(f),
        }
    }

    /// Where the published documents are shared among nodes: on the object store, when
    /// the blobs are there (`None`: the local folder, the documents stay in
    /// `data_dir/www`).
    pub fn documents(&self) -> Option<Documents> {
        match &self.0 {
            Backend::Local(_) => None,
            Backend::S3(s) => Some(Documents(s.clone())),
        }
    }
}

/// The published ResourceSync documents and dump packages on the object store
/// (`<prefix>www/<path>`, issue 17 §2), by their path under `data_dir/www`. The blocking
/// methods belong on blocking threads, as [`Blobs`]' do.
#[derive(Debug, Clone)]
pub struct Documents(s3::S3);

impl Documents {
    /// A small document, whole (`None`: there is none).
    pub fn get(&self, path: &str) -> Result<Option<Bytes>, BlobError> {
        self.0.document(path)
    }

    /// Writes `bytes` as the document `path`.
    pub fn put(&self, path: &str, bytes: Bytes) -> Result<(), BlobError> {
        self.0.put_document(path, bytes)
    }

    /// Copies the file `from` to the document `path`, streamed in parts.
    pub fn upload(&self, path: &str, from: &Path) -> Result<(), BlobError> {
        self.0.upload_document(path, from, None)
    }

    /// [`Documents::upload`], keeping `sha256` (the file's) with the object, where
    /// [`Documents::head`] finds it: a dump package, which workers do not keep.
    pub fn upload_with_sha256(
        &self,
        path: &str,
        from: &Path,
        sha256: &str,
    ) -> Result<(), BlobError> {
        self.0.upload_document(path, from, Some(sha256))
    }

    /// Copies the document `path` into the file `to` (created, written, synced).
    pub fn download(&self, path: &str, to: &Path) -> Result<(), BlobError> {
        self.0.download_document(path, to)
    }

    /// The length of the document `path` and the SHA-256 its upload kept with it
    /// (`None`: there is none), without its bytes.
    pub fn head(&self, path: &str) -> Result<Option<Head>, BlobError> {
        self.0.document_head(path)
    }

    /// The documents directly in the folder `dir` (a path under `data_dir/www`), by
    /// name, with their lengths: one listing.
    pub fn lengths_in(
        &self,
        dir: &str,
    ) -> Result<std::collections::BTreeMap<String, u64>, BlobError> {
        self.0.document_lengths(dir)
    }

    /// Removes the document `path`.
    pub fn delete(&self, path: &str) -> Result<(), BlobError> {
        self.0.delete_document(path)
    }

    /// Where the document `path` is: `s3://bucket/<prefix>www/<path>`.
    pub fn location(&self, path: &str) -> String {
        self.0.document_location(path)
    }

    /// The length and digests of the document `path`, every byte read again (`None`:
    /// there is none): what `plikt audit` compares a dump package with. Blocks.
    pub fn digests(&self, path: &str) -> Result<Option<Digests>, BlobError> {
        self.0.document_digests(path)
    }

    /// The document `path`, streamed, with its length and version (`None`: there is
    /// none); or [`Fetched::NotModified`] when its entity tag is one of `if_none_match`
    /// (a Destination's `If-None-Match`, passed on: the store sends no bytes then).
    pub async fn stream(
        &self,
        path: &str,
        if_none_match: Option<String>,
    ) -> Result<Option<Fetched>, BlobError> {
        self.0.stream_document(path, if_none_match).await
    }
}

/// What the object store says of a document without its bytes ([`Documents::head`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// Its length in bytes.
    pub length: u64,
    /// The SHA-256 kept with it ([`Documents::upload_with_sha256`]), if any.
    pub sha256: Option<String>,
}

/// A published document asked for on a condition ([`Documents::stream`]).
#[derive(Debug)]
pub enum Fetched {
    /// Its current version.
    Document(Document),
    /// Its entity tag is one the request named: it has not changed.
    NotModified,
}

/// A published document as the object store has it ([`Documents::stream`]).
pub struct Document {
    /// Its length in bytes.
    pub length: u64,
    /// The object store's entity tag of this version of it, quoted (`None`: the store
    /// gave none).
    pub etag: Option<String>,
    /// When this version was written.
    pub modified: std::time::SystemTime,
    /// Its bytes.
    pub stream: ByteStream,
}

impl std::fmt::Debug for Document {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Document")
            .field("length", &self.length)
            .field("etag", &self.etag)
            .finish_non_exhaustive()
    }
}

/// A blob being written: bytes go to a temporary file or object and to both digests at
/// once. Dropped without [`BlobWriter::finish`], what it wrote is removed (an object
/// store's multipart upload is aborted).
#[derive(Debug)]
pub struct BlobWriter {
    inner: WriterInner,
    digester: Digester,
}

#[derive(Debug)]
enum WriterInner {
    Local(Option<File>, local::TmpFile),
    S3(s3::Upload),
}

impl BlobWriter {
    /// Appends a chunk. An object store gets it in parts of `part_size_mib` as they
    /// fill: this waits while a part is being sent and the next one is full.
    pub async fn write(&mut self, chunk: &Bytes) -> Result<(), BlobError> {
        match &mut self.inner {
            WriterInner::Local(file, tmp) => {
                local::write(file.as_mut().expect("open until finish"), chunk)
                    .map_err(BlobError::io(tmp.path()))?;
            }
            WriterInner::S3(upload) => upload.write(chunk.clone()).await?,
        }
        self.digester.update(chunk);
        Ok(())
    }

    /// Bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.digester.bytes()
    }

    /// Whether [`BlobWriter::finish`] returns without blocking: the digests are still
    /// computed in place (at most [`crate::store::INLINE_LIMIT`] bytes) and nothing is
    /// left to send (a local file; a small blob held in memory for a pack). The harvest
    /// then finishes it on its own thread instead of a hop to a blocking one.
    pub fn finishes_at_once(&self) -> bool {
        self.digester.bytes() <= super::INLINE_LIMIT
            && match &self.inner {
                WriterInner::Local(..) => true,
                WriterInner::S3(upload) => upload.is_held(),
            }
    }

    /// Computes the digests and closes the temporary file (or completes the upload: a
    /// blob smaller than one part goes to its name on the object store now). The catalog
    /// may record it only after [`Blobs::commit`]. Blocks (on the digest threads; on the
    /// object store).
    pub fn finish(self) -> Result<Written, BlobError> {
        let BlobWriter { inner, digester } = self;
        let digests = digester.finish();
        let tmp = match inner {
            WriterInner::Local(file, tmp) => {
                drop(file);
                Tmp::Local(tmp)
            }
            WriterInner::S3(upload) => Tmp::S3(upload.finish(&digests.sha256)?),
        };
        Ok(Written { digests, tmp })
    }
}

/// A fully written temporary blob with its digests, waiting for [`Blobs::commit`].
/// Dropped without a commit, the temporary file (or object) is removed.
#[derive(Debug)]
pub struct Written {
    /// The digests.
    pub digests: Digests,
    tmp: Tmp,
}

#[derive(Debug)]
enum Tmp {
    Local(local::TmpFile),
    S3(s3::TmpObject),
}

impl Written {
    /// Bytes of it held in memory until its commit (a small blob for a pack).
    pub fn held_bytes(&self) -> u64 {
        match &self.tmp {
            Tmp::S3(t) => t.held().map_or(0, |b| b.len() as u64),
            Tmp::Local(_) => 0,
        }
    }

    /// Reads the temporary blob back, for checks that need more than the stream gave
    /// them (an EPUB's ZIP directory, H-DRM): the file, or ranged reads of the object.
    /// Blocks.
    pub fn reader(&self) -> Result<Box<dyn ReadSeek>, BlobError> {
        match &self.tmp {
            Tmp::Local(t) => {
                let file = File::open(t.path()).map_err(BlobError::io(t.path()))?;
                Ok(Box::new(io::BufReader::new(file)))
            }
            Tmp::S3(t) => match t.held() {
                Some(b) => Ok(Box::new(io::Cursor::new(b.clone()))),
                None => Ok(Box::new(t.ranged(self.digests.length))),
            },
        }
    }
}

/// fsync of a folder, so a rename or a new entry in it survives a crash.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The errors of a local blob store that takes no file at all, as Linux reports
    /// them (ENOSPC, EDQUOT, EROFS, EACCES, EPERM), stop a run's downloads and say what to do;
    /// one file's trouble (a name that is not there) does neither.
    #[test]
    fn a_blob_store_that_cannot_be_written_at_all_is_told_apart_and_explained() {
        let at = |errno: i32| BlobError::Io {
            path: PathBuf::from("data/tmp/1-1.part"),
            source: io::Error::from_raw_os_error(errno),
        };
        for (errno, said) in [
            (28, "is full (or plikt's user is over its quota there)"),
            (122, "is full (or plikt's user is over its quota there)"),
            (30, "is read-only"),
            (13, "may not read or write there"),
            (1, "an immutable or append-only attribute"),
        ] {
            let e = at(errno);
            assert!(e.takes_nothing_now(), "errno {errno}: {e}");
            assert!(e.to_string().contains(said), "errno {errno}: {e}");
        }
        let missing = at(2);
        assert!(!missing.takes_nothing_now());
        assert_eq!(
            missing.to_string(),
            "data/tmp/1-1.part: No such file or directory (os error 2)"
        );
    }

    #[tokio::test]
    async fn identical_bytes_are_stored_once_and_tmp_is_cleaned() {
        let tmp = tempfile::Builder::new()
            .prefix("plikt-blobs-")
            .tempdir()
            .unwrap();
        let dir = tmp.path();
        let blobs = Blobs::open(dir, &BlobsConfig::default()).unwrap();
        let mut shas = Vec::new();
        // Twice in one batch, then again in a batch of its own.
        for n in [2, 1] {
            let mut batch = Vec::new();
            for _ in 0..n {
                let mut w = blobs.writer().unwrap();
                w.write(&Bytes::from_static(b"hello ")).await.unwrap();
                w.write(&Bytes::from_static(b"world")).await.unwrap();
                let written = w.finish().unwrap();
                assert_eq!(written.digests.length, 11);
                shas.push(written.digests.sha256.clone());
                batch.push(written);
            }
            let done = blobs.commit(batch, &|_| false, Packing::Small).unwrap();
            assert!(done.iter().all(|d| matches!(d, Ok(None))));
        }
        assert!(shas.iter().all(|s| *s == shas[0]));
        let mut back = String::new();
        blobs
            .reader(&shas[0], None)
            .unwrap()
            .read_to_string(&mut back)
            .unwrap();
        assert_eq!(back, "hello world");
        let mut listed = 0;
        blobs
            .list_pages(|page| {
                listed += page.len();
                Ok::<_, BlobError>(())
            })
            .unwrap();
        assert_eq!(listed, 1);
        assert_eq!(blobs.digest(&shas[0], None).unwrap().length, 11);
        // An abandoned writer, or a written blob never committed, leaves nothing behind.
        let mut w = blobs.writer().unwrap();
        w.write(&Bytes::from_static(b"partial")).await.unwrap();
        drop(w);
        let mut w = blobs.writer().unwrap();
        w.write(&Bytes::from_static(b"wrong bytes")).await.unwrap();
        drop(w.finish().unwrap());
        assert_eq!(std::fs::read_dir(dir.join("tmp")).unwrap().count(), 0);
    }
}

//! Blobs on an S3-compatible object store (issue 17 §2), through `object_store`'s
//! `AmazonS3`: path-style addressing, SigV4 with signed payloads, and
//! `x-amz-checksum-sha256` on every PUT and every part. (Past 800 lines with its tests:
//! uploads, commits, ranged and streamed reads and the sweep of leftovers share the
//! client, its runtime and its error messages.)
//!
//! Object names:
//! - `<prefix>blobs/ab/<sha256>`: a blob, named by its content;
//! - `<prefix>tmp/<token>/<n>`: a blob being written, `token` being this process's
//!   (process id and 32 random bits), so that what a process leaves is told apart;
//! - `<prefix>www/<path>`: the published ResourceSync documents and dump packages
//!   (`documents.rs`), as `data_dir/www/<path>` holds them on the node that published.
//!
//! **Writing** ([`Upload`]): a file smaller than one part (`part_size_mib`) is kept in
//! memory while it streams in and then sent with one PUT straight to its name, which its
//! SHA-256 gives; a larger one streams to a temporary object, a multipart
//! upload whose parts are sent as they fill, at most two in flight and one filling, so
//! memory per file is bounded by three parts whatever the file's size. Its SHA-256 is
//! known only at the end, so [`S3::commit`] then moves the temporary object to its name
//! (server-side CopyObject, then DELETE) — or, when the catalog already has the blob,
//! only deletes it: identical bytes are stored once, decided in the catalog,
//! not by a conditional write (Garage 2.5 ignores `If-None-Match: *` and overwrites).
//!
//! **Verified on upload**: every PUT and UploadPart carries `x-amz-content-sha256` (the
//! signed payload hash) and `x-amz-checksum-sha256` of its body; Garage recomputes both
//! while it stores the body and refuses a mismatch with `400 InvalidDigest`
//! (`garage_api_common::signature::checksum::Checksums::verify`), and so does AWS S3.
//! Multipart uploads are created with `x-amz-checksum-algorithm: SHA256`, so the
//! completion is checked against the parts' checksums too. The whole object's SHA-256,
//! its name, is plikt's own, computed over the bytes it sent.
//!
//! **Crashes**: a temporary object or an unfinished multipart upload can outlive a
//! process killed with SIGKILL. [`S3::clean_tmp`] (at every harvest start) removes those
//! of other processes older than `stale_upload_secs`: a live worker's upload in flight
//! is younger than that, and a process's own are never touched. Should a live upload be
//! removed all the same (a threshold set too short), its file fails and is fetched again
//! by a later run: the catalog never names an object that was not copied into place.
//!
//! The client's I/O runs on a runtime of its own (two threads), so that the blocking
//! methods work from any thread that is not an async worker, and the async ones from
//! any runtime; bytes cross between them through bounded channels.

use std::future::Future;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3, AmazonS3Builder, AwsAuthorizer, AwsCredential, Checksum};
use object_store::buffered::BufWriter;
use object_store::multipart::MultipartStore;
use object_store::path::Path;
use object_store::{BackoffConfig, ClientOptions, GetOptions, GetRange, ObjectStore, RetryConfig};
use tokio::sync::{mpsc, oneshot};

use super::{BlobError, ByteStream, Failure};
use crate::config::S3Settings;

mod documents;

/// The runtime every object-store request runs on (two worker threads, made once).
fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("plikt-s3")
            .enable_all()
            .build()
            .expect("the object store's runtime starts")
    })
}

/// Runs `fut` on the object store's runtime and waits for it. Not on an async worker
/// thread: from blocking code (`spawn_blocking`, a plain thread).
fn block<T: Send + 'static>(fut: impl Future<Output = T> + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    runtime().spawn(async move {
        let _ = tx.send(fut.await);
    });
    rx.recv().expect("an object store task panicked")
}

/// This process's name in temporary objects: its id and 32 random bits.
fn token() -> &'static str {
    static TOKEN: OnceLock<String> = OnceLock::new();
    TOKEN.get_or_init(|| {
        let mut b = [0u8; 4];
        let _ = getrandom::fill(&mut b);
        format!("{}-{}", std::process::id(), hex::encode(b))
    })
}

/// Objects per page of [`S3::list_pages`].
pub(super) const LIST_PAGE: usize = 1000;

/// What the object store answered a GET ([`S3::get`]).
#[derive(Debug)]
enum Got {
    /// The object, whose bytes follow on the channel.
    Object(object_store::ObjectMeta),
    /// `304 Not Modified`: the object's entity tag is one the request named in
    /// `If-None-Match`; no bytes follow.
    NotModified,
}

/// Bytes fetched per ranged read of [`Ranged`].
const RANGE_READ: u64 = 256 << 10;
/// Chunks in flight between the object store's runtime and a reader or writer.
const CHANNEL: usize = 4;

/// An object store holding blobs.
#[derive(Clone)]
pub(super) struct S3 {
    /// Uploads, copies, deletes, listings: each request within `timeout_secs`. Every
    /// PUT carries `x-amz-checksum-sha256` for the server to check.
    ops: Arc<AmazonS3>,
    /// The parts of a new blob's multipart upload (the temporary object later copied to
    /// its name): as `ops`, but the upload does not declare `x-amz-checksum-algorithm`.
    /// Each part is still checked by the server, against the SHA-256 of its body that
    /// the request signs (`x-amz-content-sha256`, SigV4's signed payload). An object
    /// uploaded in parts with a checksum algorithm cannot be copied by reference: the
    /// server must compute the algorithm's checksum of the whole object anew (Garage
    /// 2.x reads, hashes and writes every byte again in its CopyObject, `must_recopy`
    /// in `src/api/s3/copy.rs`), which doubled its work for every large file.
    parts: Arc<AmazonS3>,
    /// Streaming reads: no limit on a whole response (a Destination may read slowly);
    /// each chunk must come within `timeout_secs` ([`S3::get`]).
    reads: Arc<AmazonS3>,
    settings: Arc<S3Settings>,
    /// For the one request `object_store` does not make: ListMultipartUploads.
    http: reqwest::Client,
    /// Packs read whole ([`S3::held_pack`]).
    held: Arc<std::sync::Mutex<HeldPacks>>,
}

/// Packs asked for lately, and the few held whole. Whoever reads small files reads a
/// pack's one after another (a Destination through `plikt serve`, a dump package, `plikt
/// audit` in pack order), and each ranged GET of a pack costs a request (Garage answers a
/// small one in about 44 ms on loopback, BENCHMARKS.md). A pack asked for again while it
/// is among the recent ones is read whole, and the reads after are answered from memory.
/// Packs are named by their content ([`pack_name`]) and never change: what is held is
/// never stale.
#[derive(Debug, Default)]
struct HeldPacks {
    /// Packs asked for lately, the newest last.
    asked: std::collections::VecDeque<String>,
    /// Packs held whole, the most recently used last.
    held: std::collections::VecDeque<(String, Bytes)>,
}

const NOT_FOUND: &str = "the object does not exist (removed behind plikt's back?): `plikt audit` lists every blob the catalog names that is missing";
const UNREACHABLE: &str = "check that the object store is running and reachable at this endpoint, that the bucket exists and that the credentials of [blobs] may read and write it; nothing is lost: a file being harvested stays pending for a later run, and `plikt migrate` run again goes on where it stopped";
/// Whether the object store refused the request for plikt's settings: a 401 or 403, or
/// an S3 error code that says the credentials, the bucket or the region are wrong (the
/// client reports a 404 of a bucket that does not exist, or a 400 of another region, as
/// any failure; the code is in the answer's body, which its message quotes).
fn refusal(e: &object_store::Error) -> bool {
    const CODES: &[&str] = &[
        "NoSuchBucket",
        "AuthorizationHeaderMalformed",
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "AccessDenied",
        "PermanentRedirect",
    ];
    matches!(
        e,
        object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. }
    ) || {
        let text = crate::store::with_causes(e);
        CODES
            .iter()
            .any(|c| text.contains(&format!("<Code>{c}</Code>")))
    }
}

/// How long [`S3::check_access`] waits for the object store.
const CHECK_WITHIN: Duration = Duration::from_secs(10);

const REFUSED: &str = "the object store refused plikt's request: check that [blobs] bucket names a bucket that exists, that region is the one the object store signs with (Garage: its s3_region), and that the key of access_key_id_… / secret_access_key_… is right and may read and write the bucket; nothing can be stored until it accepts them";
const CERTIFICATE: &str = "the object store's TLS certificate was not accepted: if the deposit's own authority signed it, name that authority's PEM file in [blobs] extra_root_certificates; check that s3_endpoint names a host the certificate is for; nothing is lost: a file being harvested stays pending for a later run, and `plikt migrate` run again goes on where it stopped";

/// What to do about a failed request; it also says what kind of failure that is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Advice {
    Unreachable,
    NotFound,
    Refused,
    Certificate,
}

impl Advice {
    fn text(self) -> &'static str {
        match self {
            Advice::Unreachable => UNREACHABLE,
            Advice::NotFound => NOT_FOUND,
            Advice::Refused => REFUSED,
            Advice::Certificate => CERTIFICATE,
        }
    }

    /// A certificate the client does not accept is the deposit's setting to change
    /// (`extra_root_certificates`, the endpoint's name), not an outage to wait out.
    fn failure(self) -> Failure {
        match self {
            Advice::Unreachable => Failure::Unreachable,
            Advice::NotFound => Failure::NotFound,
            Advice::Refused | Advice::Certificate => Failure::Refused,
        }
    }
}

/// What the client's error `e` says, with its causes (the client names only the kind,
/// "error sending request"), and what to do: a refused certificate needs
/// `extra_root_certificates`, anything else a reachable object store.
fn describe(e: &(dyn std::error::Error + 'static)) -> (String, Advice) {
    let advice = match crate::store::tls::tls_cause(e) {
        Some(_) => Advice::Certificate,
        None => Advice::Unreachable,
    };
    (crate::store::with_causes(e), advice)
}

/// Packs held whole (about 8 MiB each).
const HELD_PACKS: usize = 4;

impl std::fmt::Debug for S3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3")
            .field("endpoint", &self.settings.endpoint.as_str())
            .field("bucket", &self.settings.bucket)
            .field("prefix", &self.settings.prefix)
            .finish_non_exhaustive()
    }
}

impl S3 {
    /// A client of the object store `settings` name; no request is made.
    pub(super) fn open(settings: &S3Settings) -> Result<Self, BlobError> {
        let s = settings;
        // The deposit's own authorities (`extra_root_certificates`), for both clients.
        let mut store_roots = Vec::new();
        let mut http_roots = Vec::new();
        for file in &s.extra_root_certificates {
            let unusable = |e: &dyn std::fmt::Display| {
                BlobError::Config(format!(
                    "[blobs] extra_root_certificates: {}: {e}",
                    file.display()
                ))
            };
            let pem =
                std::fs::read(file).map_err(|e| unusable(&format_args!("cannot be read: {e}")))?;
            let certs = object_store::Certificate::from_pem_bundle(&pem)
                .map_err(|e| unusable(&format_args!("holds no usable PEM certificate: {e}")))?;
            if certs.is_empty() {
                return Err(unusable(&"holds no PEM certificate"));
            }
            store_roots.extend(certs);
            http_roots
                .extend(reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
                    unusable(&format_args!("holds no usable PEM certificate: {e}"))
                })?);
        }
        let build = |timeout: Option<Duration>, checksum: bool, max_retries: usize| {
            let mut options = ClientOptions::new()
                .with_allow_http(s.endpoint.scheme() == "http")
                .with_connect_timeout(Duration::from_secs(10));
            for root in &store_roots {
                options = options.with_root_certificate(root.clone());
            }
            options = match timeout {
                Some(t) => options.with_timeout(t),
                None => options.with_timeout_disabled(),
            };
            let builder = AmazonS3Builder::new()
                .with_endpoint(s.endpoint.as_str().trim_end_matches('/'))
                .with_bucket_name(&s.bucket)
                .with_region(&s.region)
                .with_access_key_id(s.access_key_id.expose())
                .with_secret_access_key(s.secret_access_key.expose())
                .with_allow_http(s.endpoint.scheme() == "http")
                .with_virtual_hosted_style_request(false)
                // The default, said here because `parts` relies on it: the body's
                // SHA-256 is signed, and the server refuses a body that does not match.
                .with_unsigned_payload(false);
            let builder = if checksum {
                builder.with_checksum_algorithm(Checksum::SHA256)
            } else {
                builder
            };
            builder
                .with_retry(RetryConfig {
                    backoff: BackoffConfig::default(),
                    // `retry_timeout_secs` bounds the retries, as the README says: ten
                    // (the client's own default) ran out after about 2 s of backoff,
                    // so a store restarting for a few seconds failed files.
                    max_retries,
                    retry_timeout: s.retry_timeout,
                })
                .with_client_options(options)
                .build()
                .map(Arc::new)
                .map_err(|e| BlobError::Config(format!("[blobs]: {e}")))
        };
        let mut http = reqwest::Client::builder();
        for root in http_roots {
            http = http.add_root_certificate(root);
        }
        let http = http
            .user_agent(concat!("plikt/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10))
            .timeout(s.timeout)
            // A redirect would carry the signed request elsewhere: none is followed.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| BlobError::Config(format!("[blobs]: {e}")))?;
        Ok(Self {
            ops: build(Some(s.timeout), true, usize::MAX)?,
            parts: build(Some(s.timeout), false, usize::MAX)?,
            // What `plikt serve` reads for a Destination: the client's ten retries (about
            // 2 s), not `retry_timeout_secs`, before it answers 503 and Retry-After.
            reads: build(None, true, 10)?,
            settings: Arc::new(s.clone()),
            http,
            held: Arc::default(),
        })
    }

    fn blob_key(&self, sha256: &str) -> Path {
        let folder = &sha256[..2.min(sha256.len())];
        Path::from(format!("{}blobs/{folder}/{sha256}", self.settings.prefix))
    }

    fn tmp_prefix(&self) -> String {
        format!("{}tmp/", self.settings.prefix)
    }

    /// `s3://bucket/key` of a blob.
    pub(super) fn location(&self, sha256: &str) -> String {
        format!("s3://{}/{}", self.settings.bucket, self.blob_key(sha256))
    }

    /// The error of `op` on `key`, with what to do about it.
    fn error(
        &self,
        op: &'static str,
        key: &str,
        e: impl std::fmt::Display,
        not_found: bool,
    ) -> BlobError {
        let advice = match not_found {
            true => Advice::NotFound,
            false => Advice::Unreachable,
        };
        self.failure(op, key, (e.to_string(), advice))
    }

    /// The error of `op` on `key` for `cause` ([`describe`]).
    fn failure(
        &self,
        op: &'static str,
        key: &str,
        (reason, advice): (String, Advice),
    ) -> BlobError {
        self.failed(op, key, reason, (advice.text(), advice.failure()))
    }

    /// The error of `op` on `key`, for `reason`, with the advice and kind of failure
    /// given.
    fn failed(
        &self,
        op: &'static str,
        key: &str,
        reason: String,
        (advice, failure): (&'static str, Failure),
    ) -> BlobError {
        BlobError::ObjectStore(Box::new(super::ObjectStoreError {
            endpoint: self.settings.endpoint.to_string(),
            bucket: self.settings.bucket.clone(),
            op,
            key: key.to_string(),
            reason,
            advice,
            failure,
        }))
    }

    fn err(&self, op: &'static str, key: &Path, e: object_store::Error) -> BlobError {
        match e {
            e if refusal(&e) => self.refused(op, key, &e),
            object_store::Error::NotFound { .. } => self.error(op, key.as_ref(), e, true),
            e => self.failure(op, key.as_ref(), describe(&e)),
        }
    }

    fn refused(&self, op: &'static str, key: &Path, e: &object_store::Error) -> BlobError {
        let reason = crate::store::with_causes(e);
        self.failure(op, key.as_ref(), (reason, Advice::Refused))
    }

    /// Whether the object store takes plikt's requests (endpoint, bucket, region,
    /// credentials), before a command relies on it: one listing of the unfinished
    /// uploads under `<prefix>tmp/`, whose HTTP status plikt reads itself (the client's
    /// listings report a refusal as any other failure). Blocks.
    pub(super) fn check_access(&self) -> Result<(), BlobError> {
        let s3 = self.clone();
        block(async move {
            let prefix = s3.tmp_prefix();
            // Not retried: an object store away now is not waited for here.
            match tokio::time::timeout(CHECK_WITHIN, s3.list_uploads(&prefix)).await {
                Ok(listed) => listed.map(drop),
                Err(_) => Err(s3.error(
                    "listing unfinished uploads under",
                    &prefix,
                    format_args!("no answer within {} s", CHECK_WITHIN.as_secs()),
                    false,
                )),
            }
        })
    }

    /// Claims the prefix for the catalog `id`: `<prefix>catalog-id` names the catalog
    /// whose collection is under the prefix; written by the first process to find it
    /// missing, and any other catalog is refused. Blocks.
    pub(super) fn claim(&self, id: &str, write: bool) -> Result<(), BlobError> {
        let s3 = self.clone();
        let id = id.to_string();
        block(async move {
            let key = Path::from(format!("{}catalog-id", s3.settings.prefix));
            match s3.ops.get(&key).await {
                Ok(found) => {
                    let bytes = found
                        .bytes()
                        .await
                        .map_err(|e| s3.err("reading", &key, e))?;
                    let found = String::from_utf8_lossy(&bytes).trim().to_string();
                    match found == id {
                        true => Ok(()),
                        false => Err(BlobError::OtherCatalog {
                            location: format!("s3://{}/{key}", s3.settings.bucket),
                            found,
                            ours: id,
                        }),
                    }
                }
                // A server only reads: the next writer names the prefix's catalog.
                Err(e @ object_store::Error::NotFound { .. }) if !refusal(&e) => match write {
                    false => Ok(()),
                    true => s3
                        .ops
                        .put(&key, format!("{id}\n").into())
                        .await
                        .map(drop)
                        .map_err(|e| s3.err("writing", &key, e)),
                },
                Err(e) => Err(s3.err("reading", &key, e)),
            }
        })
    }

    /// A reading error of the blob `sha256` (from [`S3::reader`]).
    pub(super) fn read_error(&self, sha256: &str, e: io::Error) -> BlobError {
        match e.into_inner().map(|e| e.downcast::<BlobError>()) {
            Some(Ok(e)) => *e,
            Some(Err(e)) => self.error("reading", self.blob_key(sha256).as_ref(), e, false),
            None => self.error(
                "reading",
                self.blob_key(sha256).as_ref(),
                "I/O error",
                false,
            ),
        }
    }

    /// A new temporary object being uploaded.
    pub(super) fn writer(&self) -> Upload {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let key = Path::from(format!("{}{}/{n}", self.tmp_prefix(), token()));
        Upload {
            pending: Vec::new(),
            pending_len: 0,
            tx: None,
            task: None,
            tmp: Some(TmpObject {
                s3: self.clone(),
                key,
                // Armed once an object may exist: when the upload task starts.
                armed: false,
                in_place: false,
                held: None,
            }),
        }
    }

    fn pack_key(&self, name: &str) -> Path {
        let folder = &name[..2.min(name.len())];
        Path::from(format!("{}packs/{folder}/{name}", self.settings.prefix))
    }

    /// Where a blob's bytes are: its own object, or its range of a pack.
    fn key_of(&self, sha256: &str, packed: Option<&Packed>) -> (Path, u64) {
        match packed {
            Some(p) => (self.pack_key(&p.pack), p.offset),
            None => (self.blob_key(sha256), 0),
        }
    }

    /// `s3://bucket/key` of a blob (and its bytes in its pack).
    pub(super) fn location_of(&self, sha256: &str, packed: Option<&Packed>) -> String {
        match packed {
            Some(p) => format!(
                "s3://{}/{} (bytes {}–{})",
                self.settings.bucket,
                self.pack_key(&p.pack),
                p.offset,
                (p.offset + p.length).saturating_sub(1)
            ),
            None => self.location(sha256),
        }
    }

    /// Puts each new blob of a batch in its place, or drops it when `known` (the
    /// catalog has the blob): a temporary object is moved to the blob's name
    /// (CopyObject, then DELETE); a held one (at most [`PACK_BLOB_MAX`] bytes) goes with
    /// the others into packs of about [`PACK_TARGET`] bytes, one PUT each
    /// ([`Packing::Small`]), or to its own name ([`Packing::None`]). Per blob: where it
    /// is (`None`: at its own name, or the catalog has it), or the error.
    // Over 100 lines: moves, packs and drops share one pass over the batch and its error list.
    pub(super) fn commit(
        &self,
        batch: Vec<(String, TmpObject, bool)>,
        packing: Packing,
    ) -> Vec<Result<Option<Packed>, BlobError>> {
        use std::collections::HashMap;
        // The first of identical new blobs in the batch is stored; the others share its
        // place.
        let mut first = HashMap::new();
        for (i, (sha, _, known)) in batch.iter().enumerate() {
            if !known {
                first.entry(sha.clone()).or_insert(i);
            }
        }
        let is_first = |i: usize, sha: &String| first.get(sha) == Some(&i);
        // Packs of the held blobs, in the batch's order. A pack's body is its blobs' own
        // buffers one after the other: nothing is copied. Its name is `pack_name` of its
        // blobs' SHA-256s, known already: its bytes are not hashed again here (the
        // PUT's signature hashes them once, and the server checks that).
        let mut packs: Vec<(String, object_store::PutPayload, Vec<Member>)> = Vec::new();
        let mut jobs: Vec<(usize, Job)> = Vec::new();
        let mut filling: Vec<Bytes> = Vec::new();
        let mut filled = 0u64;
        let mut members: Vec<Member> = Vec::new();
        let mut names: Vec<&str> = Vec::new();
        let mut close = |filling: &mut Vec<Bytes>,
                         filled: &mut u64,
                         members: &mut Vec<Member>,
                         names: &mut Vec<&str>| {
            if members.is_empty() {
                return;
            }
            let name = pack_name(names);
            names.clear();
            let body = object_store::PutPayload::from_iter(std::mem::take(filling));
            *filled = 0;
            packs.push((name, body, std::mem::take(members)));
        };
        for (i, (sha, tmp, _)) in batch.iter().enumerate() {
            if !is_first(i, sha) || tmp.in_place {
                continue;
            }
            match (tmp.held(), packing) {
                (Some(b), Packing::Small) => {
                    members.push((i, filled, b.len() as u64));
                    names.push(sha);
                    filled += b.len() as u64;
                    filling.push(b.clone());
                    if filled >= PACK_TARGET as u64 {
                        close(&mut filling, &mut filled, &mut members, &mut names);
                    }
                }
                (Some(b), Packing::None) => jobs.push((i, Job::Put(self.blob_key(sha), b.clone()))),
                (None, _) => jobs.push((i, Job::Copy(tmp.key.clone(), self.blob_key(sha)))),
            }
        }
        close(&mut filling, &mut filled, &mut members, &mut names);
        let s3 = self.clone();
        let (packed, failed) = block(async move {
            let mut packed: HashMap<usize, Packed> = HashMap::new();
            let mut failed: HashMap<usize, BlobError> = HashMap::new();
            let puts = futures_util::stream::iter(packs)
                .map(|(name, bytes, members)| {
                    let s3 = s3.clone();
                    async move {
                        let key = s3.pack_key(&name);
                        // With its x-amz-checksum-sha256, as every PUT: the server
                        // checks the pack's bytes; each blob's SHA-256 is plikt's own,
                        // over the bytes it put in.
                        let done = s3.ops.put(&key, bytes).await;
                        (name, members, done.err().map(|e| (key, describe(&e))))
                    }
                })
                .buffer_unordered(4)
                .collect::<Vec<_>>()
                .await;
            for (name, members, error) in puts {
                for (i, offset, length) in members {
                    match &error {
                        None => {
                            packed.insert(
                                i,
                                Packed {
                                    pack: name.clone(),
                                    offset,
                                    length,
                                },
                            );
                        }
                        Some((key, cause)) => {
                            failed.insert(
                                i,
                                s3.failure(
                                    "storing a pack of new blobs",
                                    key.as_ref(),
                                    cause.clone(),
                                ),
                            );
                        }
                    }
                }
            }
            let own = futures_util::stream::iter(jobs)
                .map(|(i, job)| {
                    let s3 = s3.clone();
                    async move {
                        let error = match job {
                            // A plain CopyObject, which replaces an object of the same
                            // name: two workers racing on identical new bytes both copy,
                            // the second writes the same bytes again, and the catalog's
                            // `ON CONFLICT DO NOTHING` keeps one row. Content addressing
                            // makes the duplicate copy harmless.
                            Job::Copy(from, to) => s3
                                .ops
                                .copy(&from, &to)
                                .await
                                .err()
                                .map(|e| s3.err("copying a new blob into place", &to, e)),
                            Job::Put(to, bytes) => s3
                                .ops
                                .put(&to, bytes.into())
                                .await
                                .err()
                                .map(|e| s3.err("storing a new blob", &to, e)),
                        };
                        (i, error)
                    }
                })
                .buffer_unordered(16)
                .collect::<Vec<_>>()
                .await;
            failed.extend(own.into_iter().filter_map(|(i, e)| Some((i, e?))));
            (packed, failed)
        });
        let mut failed = failed;
        // Why the first of identical blobs failed, for its twins: its reason, advice
        // and kind of failure.
        let mut twins: HashMap<usize, (String, (&'static str, Failure))> = HashMap::new();
        let mut out = Vec::with_capacity(batch.len());
        let mut tmps = Vec::with_capacity(batch.len());
        for (i, (sha, tmp, known)) in batch.into_iter().enumerate() {
            let at = if known {
                None
            } else {
                first.get(&sha).copied()
            };
            out.push(match at {
                None => Ok(None),
                Some(f) if f == i => match failed.remove(&i) {
                    Some(e) => {
                        // Its twins fail too, for the same reason.
                        let cause = match &e {
                            BlobError::ObjectStore(o) => (o.reason.clone(), (o.advice, o.failure)),
                            other => (
                                other.to_string(),
                                (Advice::Unreachable.text(), Failure::Unreachable),
                            ),
                        };
                        twins.insert(i, cause);
                        Err(e)
                    }
                    None => Ok(packed.get(&i).cloned()),
                },
                Some(f) => match twins.get(&f) {
                    Some((reason, advice)) => Err(self.failed(
                        "storing a new blob",
                        self.blob_key(&sha).as_ref(),
                        format!("an identical blob of the same batch failed: {reason}"),
                        *advice,
                    )),
                    None => Ok(packed.get(&f).cloned()),
                },
            });
            tmps.push(tmp);
        }
        // The temporary objects go either way, 16 deletes at a time; a delete that
        // fails leaves its object to `clean_tmp`.
        block(async move {
            futures_util::stream::iter(tmps)
                .for_each_concurrent(16, TmpObject::delete)
                .await;
        });
        out
    }

    /// Removes other processes' temporary objects and unfinished multipart uploads
    /// older than `stale_upload_secs`. Blocks.
    pub(super) fn clean_tmp(&self) -> Result<usize, BlobError> {
        let s3 = self.clone();
        block(async move {
            let cutoff = chrono::Utc::now()
                - chrono::Duration::from_std(s3.settings.stale_after)
                    .unwrap_or(chrono::Duration::MAX);
            let prefix = s3.tmp_prefix();
            let mine = format!("{prefix}{}/", token());
            let mut removed = 0;
            let list = Path::from(prefix.trim_end_matches('/'));
            let objects: Vec<_> = s3
                .ops
                .list(Some(&list))
                .try_collect()
                .await
                .map_err(|e| s3.err("listing temporary objects under", &list, e))?;
            for o in objects {
                if !o.location.as_ref().starts_with(&mine) && o.last_modified < cutoff {
                    match s3.ops.delete(&o.location).await {
                        Ok(()) | Err(object_store::Error::NotFound { .. }) => removed += 1,
                        Err(e) => return Err(s3.err("deleting the leftover", &o.location, e)),
                    }
                }
            }
            for (key, id, initiated) in s3.list_uploads(&prefix).await? {
                if !key.starts_with(&mine) && initiated < cutoff {
                    let path = Path::from(key.as_str());
                    match s3.ops.abort_multipart(&path, &id).await {
                        Ok(()) | Err(object_store::Error::NotFound { .. }) => removed += 1,
                        Err(e) => {
                            return Err(s3.err("aborting the unfinished upload of", &path, e));
                        }
                    }
                }
            }
            Ok(removed)
        })
    }

    /// Temporary objects and unfinished multipart uploads now, with their age. Blocks.
    pub(super) fn leftovers(&self) -> Result<Vec<String>, BlobError> {
        let s3 = self.clone();
        block(async move {
            let now = chrono::Utc::now();
            let age = |t: chrono::DateTime<chrono::Utc>| (now - t).num_seconds().max(0);
            let prefix = s3.tmp_prefix();
            let list = Path::from(prefix.trim_end_matches('/'));
            let bucket = &s3.settings.bucket;
            let mut out: Vec<String> = s3
                .ops
                .list(Some(&list))
                .map_ok(|o| {
                    format!(
                        "s3://{bucket}/{}: temporary object, {} s old",
                        o.location,
                        age(o.last_modified)
                    )
                })
                .try_collect()
                .await
                .map_err(|e| s3.err("listing temporary objects under", &list, e))?;
            for (key, id, initiated) in s3.list_uploads(&prefix).await? {
                out.push(format!(
                    "s3://{bucket}/{key}: unfinished multipart upload {id}, {} s old",
                    age(initiated)
                ));
            }
            out.sort();
            Ok(out)
        })
    }

    /// Unfinished multipart uploads under `prefix`: (key, upload id, initiated). The S3
    /// request ListMultipartUploads, signed with `object_store`'s SigV4 signer and read
    /// with plikt's XML reader.
    async fn list_uploads(
        &self,
        prefix: &str,
    ) -> Result<Vec<(String, String, chrono::DateTime<chrono::Utc>)>, BlobError> {
        let s = &self.settings;
        let mut out = Vec::new();
        let mut markers: Option<(String, String)> = None;
        let enc = |v: &str| percent_encoding::utf8_percent_encode(v, &S3_QUERY).to_string();
        loop {
            let mut url = format!(
                "{}{}?prefix={}&uploads=",
                s.endpoint,
                enc(&s.bucket),
                enc(prefix)
            );
            if let Some((key, id)) = &markers {
                url = format!(
                    "{}{}?key-marker={}&prefix={}&upload-id-marker={}&uploads=",
                    s.endpoint,
                    enc(&s.bucket),
                    enc(key),
                    enc(prefix),
                    enc(id)
                );
            }
            let failed = |e: &dyn std::fmt::Display| {
                self.error(
                    "listing unfinished uploads under",
                    prefix,
                    e.to_string(),
                    false,
                )
            };
            let mut request = http::Request::builder()
                .method(http::Method::GET)
                .uri(&url)
                .body(object_store::client::HttpRequestBody::from(Bytes::new()))
                .map_err(|e| failed(&e))?;
            let credential = AwsCredential {
                key_id: s.access_key_id.expose().to_string(),
                secret_key: s.secret_access_key.expose().to_string(),
                token: None,
            };
            AwsAuthorizer::new(&credential, "s3", &s.region).authorize(&mut request, None);
            let mut get = self.http.get(&url);
            for (name, value) in request.headers() {
                get = get.header(name.as_str(), value.as_bytes());
            }
            let sending = |e: reqwest::Error| {
                self.failure("listing unfinished uploads under", prefix, describe(&e))
            };
            let response = get.send().await.map_err(sending)?;
            let status = response.status();
            let body = response.bytes().await.map_err(sending)?;
            if !status.is_success() {
                let text = String::from_utf8_lossy(&body[..body.len().min(500)]).into_owned();
                // A 4xx other than a timeout or throttling (a wrong key or secret, a
                // bucket that does not exist, another region), or a redirect (AWS
                // sends one for another region): the request will never succeed.
                let refused = status.is_redirection()
                    || (status.is_client_error() && !matches!(status.as_u16(), 408 | 429));
                return Err(match refused {
                    true => self.failure(
                        "listing unfinished uploads under",
                        prefix,
                        (format!("HTTP {status}: {text}"), Advice::Refused),
                    ),
                    false => failed(&format!("HTTP {status}: {text}")),
                });
            }
            let page = parse_uploads(&body).map_err(|e| failed(&e))?;
            out.extend(page.uploads);
            match page.next {
                Some(next) if page.truncated => markers = Some(next),
                _ => return Ok(out),
            }
        }
    }

    /// Sends a GET of `key` (`range`, or all of it) on the object store's runtime and
    /// forwards its chunks through a bounded channel: the answer to the request (the
    /// object's metadata), then the chunks. A chunk that takes longer than
    /// `timeout_secs` ends the stream with an error.
    fn get(
        &self,
        key: Path,
        range: Option<GetRange>,
        if_none_match: Option<String>,
    ) -> (
        oneshot::Receiver<Result<Got, BlobError>>,
        mpsc::Receiver<io::Result<Bytes>>,
    ) {
        let (answer_tx, answer) = oneshot::channel();
        let (tx, rx) = mpsc::channel(CHANNEL);
        let s3 = self.clone();
        runtime().spawn(async move {
            let options = GetOptions {
                range,
                if_none_match,
                ..GetOptions::default()
            };
            let result = match s3.reads.get_opts(&key, options).await {
                Ok(r) => r,
                Err(object_store::Error::NotModified { .. }) => {
                    let _ = answer_tx.send(Ok(Got::NotModified));
                    return;
                }
                Err(e) => {
                    let _ = answer_tx.send(Err(s3.err("reading", &key, e)));
                    return;
                }
            };
            let _ = answer_tx.send(Ok(Got::Object(result.meta.clone())));
            let mut stream = result.into_stream();
            loop {
                let next = tokio::time::timeout(s3.settings.timeout, stream.next()).await;
                let item = match next {
                    Ok(None) => return,
                    Ok(Some(Ok(chunk))) => Ok(chunk),
                    Ok(Some(Err(e))) => Err(io::Error::other(s3.err("reading", &key, e))),
                    Err(_) => Err(io::Error::other(s3.error(
                        "reading",
                        key.as_ref(),
                        format!("no bytes for {} s", s3.settings.timeout.as_secs()),
                        false,
                    ))),
                };
                let failed = item.is_err();
                if tx.send(item).await.is_err() || failed {
                    return;
                }
            }
        });
        (answer, rx)
    }

    /// `length` bytes of a blob from `start`: a ranged GET.
    pub(super) async fn stream(
        &self,
        sha256: &str,
        packed: Option<&Packed>,
        start: u64,
        length: u64,
    ) -> Result<ByteStream, BlobError> {
        if length == 0 {
            return Ok(futures_util::stream::empty().boxed());
        }
        if let Some(p) = packed
            && let Some(slice) = self
                .held_pack(p)
                .await?
                .and_then(|b| part(&b, p, start, length))
        {
            return Ok(futures_util::stream::once(async move { Ok(slice) }).boxed());
        }
        let (key, at) = self.key_of(sha256, packed);
        let (answer, rx) = self.get(
            key,
            Some(GetRange::Bounded(at + start..at + start + length)),
            None,
        );
        match answer.await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(self.error("reading", sha256, "the request was dropped", false)),
        }
        Ok(futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        })
        .boxed())
    }

    /// `p`'s pack whole, when it is held or was asked for lately ([`HeldPacks`]);
    /// `None`: read the range.
    async fn held_pack(&self, p: &Packed) -> Result<Option<Bytes>, BlobError> {
        {
            let mut held = self
                .held
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(i) = held.held.iter().position(|(name, _)| *name == p.pack) {
                let entry = held.held.remove(i).expect("found just now");
                let bytes = entry.1.clone();
                held.held.push_back(entry);
                return Ok(Some(bytes));
            }
            if !held.asked.contains(&p.pack) {
                held.asked.push_back(p.pack.clone());
                if held.asked.len() > 4 * HELD_PACKS {
                    held.asked.pop_front();
                }
                return Ok(None);
            }
        }
        let bytes = runtime()
            .spawn(self.clone().fetch_pack(p.pack.clone()))
            .await
            .map_err(|e| self.error("reading", &p.pack, e, false))??;
        let mut held = self
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        held.asked.retain(|name| *name != p.pack);
        if !held.held.iter().any(|(name, _)| *name == p.pack) {
            held.held.push_back((p.pack.clone(), bytes.clone()));
            if held.held.len() > HELD_PACKS {
                held.held.pop_front();
            }
        }
        Ok(Some(bytes))
    }

    /// A whole pack, in memory (about [`PACK_TARGET`] bytes): one request within
    /// `timeout_secs`, on the object store's runtime.
    async fn fetch_pack(self, pack: String) -> Result<Bytes, BlobError> {
        let key = self.pack_key(&pack);
        let read = async {
            self.ops
                .get(&key)
                .await
                .map_err(|e| self.err("reading", &key, e))?
                .bytes()
                .await
                .map_err(|e| self.err("reading", &key, e))
        };
        tokio::time::timeout(self.settings.timeout, read)
            .await
            .unwrap_or_else(|_| {
                Err(self.error(
                    "reading",
                    key.as_ref(),
                    format!("not read within {} s", self.settings.timeout.as_secs()),
                    false,
                ))
            })
    }

    /// A whole blob, read a few chunks at a time (a packed one from its pack when that
    /// is held, [`HeldPacks`]). Blocks.
    pub(super) fn reader(
        &self,
        sha256: &str,
        packed: Option<&Packed>,
    ) -> Result<Box<dyn Read + Send>, BlobError> {
        if let Some(p) = packed {
            let (s3, pack) = (self.clone(), p.clone());
            if let Some(slice) = block(async move { s3.held_pack(&pack).await })?
                .and_then(|b| part(&b, p, 0, p.length))
            {
                return Ok(Box::new(io::Cursor::new(slice)));
            }
        }
        let (key, at) = self.key_of(sha256, packed);
        let range = packed.map(|p| GetRange::Bounded(at..at + p.length));
        if packed.is_some_and(|p| p.length == 0) {
            return Ok(Box::new(io::empty()));
        }
        let (answer, rx) = self.get(key, range, None);
        match answer.blocking_recv() {
            Ok(Ok(_)) => Ok(Box::new(ChannelReader {
                rx,
                chunk: Bytes::new(),
            })),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(self.error("reading", sha256, "the request was dropped", false)),
        }
    }

    /// Every blob, then every pack: (its SHA-256, or the pack's name; location), in pages of at most
    /// [`LIST_PAGE`] (each folder's in key order, which is SHA-256 order), handed to `f`
    /// as they are listed. Blocks.
    pub(super) fn list_pages<E: From<BlobError>>(
        &self,
        mut f: impl FnMut(Vec<(String, String)>) -> Result<(), E>,
    ) -> Result<(), E> {
        let (tx, mut rx) = mpsc::channel::<Result<Vec<(String, String)>, BlobError>>(2);
        let s3 = self.clone();
        runtime().spawn(async move {
            for folder in ["blobs", "packs"] {
                let prefix = Path::from(format!("{}{folder}", s3.settings.prefix));
                let mut pages = s3.ops.list(Some(&prefix)).try_chunks(LIST_PAGE);
                while let Some(page) = pages.next().await {
                    let page = match page {
                        Ok(objects) => Ok(objects
                            .into_iter()
                            .filter_map(|o| {
                                let name = o.location.filename()?.to_string();
                                Some((name, format!("s3://{}/{}", s3.settings.bucket, o.location)))
                            })
                            .collect()),
                        Err(e) => Err(s3.err("listing the blobs under", &prefix, e.1)),
                    };
                    let failed = page.is_err();
                    if tx.send(page).await.is_err() || failed {
                        return;
                    }
                }
            }
        });
        while let Some(page) = rx.blocking_recv() {
            f(page?)?;
        }
        Ok(())
    }
}

/// Characters escaped in S3 query values (SigV4's canonical query: all but unreserved).
const S3_QUERY: percent_encoding::AsciiSet = percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// One page of ListMultipartUploads.
#[derive(Debug, Default)]
struct UploadsPage {
    uploads: Vec<(String, String, chrono::DateTime<chrono::Utc>)>,
    truncated: bool,
    /// (NextKeyMarker, NextUploadIdMarker)
    next: Option<(String, String)>,
}

/// Reads a ListMultipartUploadsResult (by local names: S3 servers differ on the
/// namespace).
fn parse_uploads(body: &[u8]) -> Result<UploadsPage, String> {
    use crate::xml::{ReadError, ReaderLimits, XmlEvent, XmlReader};
    let mut reader = XmlReader::new(body, ReaderLimits::default());
    let mut path: Vec<String> = Vec::new();
    let mut text = String::new();
    let mut page = UploadsPage::default();
    let (mut key, mut id, mut initiated) = (String::new(), String::new(), String::new());
    let (mut next_key, mut next_id) = (String::new(), String::new());
    loop {
        let event = reader.read_event().map_err(|e| match e {
            ReadError::Malformed(e) => format!("{}: {}", e.pos, e.kind),
            ReadError::Io(e) => e.to_string(),
        })?;
        match event {
            XmlEvent::Start(s) => {
                path.push(s.local.to_string());
                text.clear();
            }
            XmlEvent::Text(t) => text.push_str(t),
            XmlEvent::End => {
                let name = path.pop().unwrap_or_default();
                let parent = path.last().map(String::as_str).unwrap_or("");
                let value = std::mem::take(&mut text);
                match (parent, name.as_str()) {
                    ("Upload", "Key") => key = value,
                    ("Upload", "UploadId") => id = value,
                    ("Upload", "Initiated") => initiated = value,
                    ("ListMultipartUploadsResult", "Upload") => {
                        let at = chrono::DateTime::parse_from_rfc3339(initiated.trim())
                            .map_err(|e| format!("Initiated `{initiated}`: {e}"))?;
                        page.uploads.push((
                            std::mem::take(&mut key),
                            std::mem::take(&mut id),
                            at.to_utc(),
                        ));
                    }
                    ("ListMultipartUploadsResult", "IsTruncated") => {
                        page.truncated = value.trim() == "true";
                    }
                    ("ListMultipartUploadsResult", "NextKeyMarker") => next_key = value,
                    ("ListMultipartUploadsResult", "NextUploadIdMarker") => next_id = value,
                    _ => {}
                }
            }
            XmlEvent::Eof => break,
            XmlEvent::Boundary => {}
        }
    }
    if !next_key.is_empty() {
        page.next = Some((next_key, next_id));
    }
    Ok(page)
}

/// Whether [`S3::commit`] puts small blobs in packs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    /// Blobs of at most 1 MiB go into packs (a harvest: one PUT for hundreds of files).
    Small,
    /// Every blob at its own name (`plikt migrate`, whose catalog rows name none).
    None,
}

/// The name of a pack of these blobs, in this order: the SHA-256 of their SHA-256s,
/// one per line after a line `plikt pack`, and `.pack`. Blobs are named by their bytes'
/// SHA-256, so the name says the pack's bytes as surely as their own SHA-256 would,
/// without reading them again. (Earlier packs are named by their bytes' SHA-256 alone:
/// the catalog records each pack's name, and readers take it as it is. The suffix keeps
/// the two kinds of name apart, so that no new pack can take an earlier one's name, as
/// one whose bytes were a crafted `plikt pack` list would otherwise allow.)
fn pack_name(blobs: &[&str]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(b"plikt pack\n");
    for sha in blobs {
        h.update(sha.as_bytes());
        h.update(b"\n");
    }
    format!("{}.pack", hex::encode(h.finalize()))
}

/// Where a blob is in a pack (issue 17 §6): the pack's name ([`pack_name`]) and the
/// blob's bytes in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packed {
    /// The pack's name: its object is `<prefix>packs/ab/<name>`.
    pub pack: String,
    /// The blob's first byte in the pack.
    pub offset: u64,
    /// The blob's length.
    pub length: u64,
}

/// A blob of a pack being made: its place in the batch, its offset and length.
type Member = (usize, u64, u64);

/// A blob to put in its own place at commit.
enum Job {
    /// A temporary object copied to the blob's name.
    Copy(Path, Path),
    /// Held bytes sent to the blob's name.
    Put(Path, Bytes),
}

/// What the writer side sends the upload task.
#[derive(Debug)]
enum Msg {
    Chunk(Bytes),
    /// The last chunk was sent: complete the upload (a blob smaller than one part goes
    /// straight to this name, its own).
    Finish(Path),
}

/// The upload of one temporary object. A blob's first [`PACK_BLOB_MAX`] bytes are kept
/// here: most blobs are no larger, end up in a pack and never need a task. Past that, a
/// task on the object store's runtime runs the upload and the writer sends it chunks
/// through a bounded channel.
#[derive(Debug)]
pub(super) struct Upload {
    /// Chunks written before the task started.
    pending: Vec<Bytes>,
    pending_len: usize,
    tx: Option<mpsc::Sender<Msg>>,
    task: Option<tokio::task::JoinHandle<Result<Finished, BlobError>>>,
    tmp: Option<TmpObject>,
}

impl Upload {
    /// Keeps or sends a chunk (waits while the task's part buffers are full).
    pub(super) async fn write(&mut self, chunk: Bytes) -> Result<(), BlobError> {
        if self.task.is_none() {
            self.pending_len += chunk.len();
            self.pending.push(chunk);
            if self.pending_len <= PACK_BLOB_MAX {
                return Ok(());
            }
            let tmp = self.tmp.as_mut().expect("made with the upload");
            tmp.armed = true;
            let (tx, rx) = mpsc::channel(CHANNEL);
            self.task = Some(runtime().spawn(upload(tmp.s3.clone(), tmp.key.clone(), rx)));
            self.tx = Some(tx);
            for chunk in std::mem::take(&mut self.pending) {
                self.send(chunk).await?;
            }
            return Ok(());
        }
        self.send(chunk).await
    }

    async fn send(&mut self, chunk: Bytes) -> Result<(), BlobError> {
        let tx = self.tx.as_ref().expect("open until finish");
        if tx.send(Msg::Chunk(chunk)).await.is_ok() {
            return Ok(());
        }
        // The task ended early: it failed.
        self.tx = None;
        let task = self.task.take().expect("running until finish");
        Err(match task.await {
            Ok(Err(e)) => e,
            Ok(Ok(_)) => BlobError::Config("the upload ended before its last chunk".into()),
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        })
    }

    /// Whether every byte is still here, held for a pack: no upload started, so
    /// [`Upload::finish`] does not block.
    pub(super) fn is_held(&self) -> bool {
        self.tmp.as_ref().is_some_and(|t| !t.armed)
    }

    /// Completes the upload of the blob with this SHA-256. Blocks, unless the blob is
    /// small enough for a pack.
    pub(super) fn finish(mut self, sha256: &str) -> Result<TmpObject, BlobError> {
        // Not armed: no upload started (a failed one leaves it armed, and no task).
        if self.is_held() {
            // At most PACK_BLOB_MAX bytes, all here: held for a pack, no object yet (the
            // temporary object is not armed).
            let mut tmp = self.tmp.take().expect("made with the upload");
            tmp.held = Some(concat(std::mem::take(&mut self.pending), self.pending_len));
            return Ok(tmp);
        }
        let (tx, task) = (self.tx.take(), self.task.take());
        let name = self
            .tmp
            .as_ref()
            .expect("made with the upload")
            .s3
            .blob_key(sha256);
        let done = block(async move {
            if let Some(tx) = tx {
                let _ = tx.send(Msg::Finish(name)).await;
            }
            match task {
                Some(task) => match task.await {
                    Ok(r) => r,
                    Err(e) => std::panic::resume_unwind(e.into_panic()),
                },
                None => Err(BlobError::Config("the upload failed before".into())),
            }
        });
        // On an error the temporary object is dropped (and deleted, if it exists).
        let mut tmp = self.tmp.take().expect("made with the upload");
        done.map(|finished| {
            match finished {
                Finished::Tmp => {}
                Finished::InPlace(name) => {
                    // A small blob, already at its name: nothing to move or delete.
                    tmp.armed = false;
                    tmp.key = name;
                    tmp.in_place = true;
                }
            }
            tmp
        })
    }
}

/// How an upload ended.
#[derive(Debug)]
enum Finished {
    /// In the temporary object (a multipart upload).
    Tmp,
    /// At its own name already (one PUT).
    InPlace(Path),
}

/// Blobs of at most this many bytes are kept in memory when written and stored in
/// packs at commit ([`S3::commit`]).
pub(super) const PACK_BLOB_MAX: usize = 1 << 20;

/// A pack holds blobs until it has at least this many bytes.
const PACK_TARGET: usize = 8 << 20;

/// The upload task, started once a blob is past [`PACK_BLOB_MAX`] (smaller ones stay
/// with their [`Upload`] for a pack). One smaller than a part is kept in memory until its
/// last chunk and then sent with one PUT straight to its name, which its SHA-256 gives
/// (one request instead of a PUT, a copy and a delete; memory is freed at once;
/// identical bytes sent twice land on the same name, and the catalog keeps one row). A
/// larger one goes into an `object_store` `BufWriter` as its chunks come (a multipart
/// upload of the temporary object, at most two parts in flight; see `S3::parts`). The
/// channel closing without [`Msg::Finish`] (the writer was dropped: a failed or
/// abandoned download) aborts it.
async fn upload(s3: S3, key: Path, mut rx: mpsc::Receiver<Msg>) -> Result<Finished, BlobError> {
    use tokio::io::AsyncWriteExt;
    let mut held: Vec<Bytes> = Vec::new();
    let mut held_len = 0usize;
    let mut w: Option<BufWriter> = None;
    loop {
        match rx.recv().await {
            Some(Msg::Chunk(bytes)) => {
                held_len += bytes.len();
                held.push(bytes);
                if w.is_none() && held_len < s3.settings.part_size {
                    continue;
                }
                let writer = w.get_or_insert_with(|| {
                    BufWriter::with_capacity(s3.parts.clone(), key.clone(), s3.settings.part_size)
                        .with_max_concurrency(1)
                });
                for chunk in std::mem::take(&mut held) {
                    if let Err(e) = writer.put(chunk).await {
                        let _ = writer.abort().await;
                        return Err(s3.err("uploading (a part of)", &key, e));
                    }
                }
                held_len = 0;
            }
            Some(Msg::Finish(name)) => {
                let Some(mut writer) = w else {
                    // With its x-amz-checksum-sha256, as every PUT.
                    return s3
                        .ops
                        .put(&name, concat(held, held_len).into())
                        .await
                        .map(|_| Finished::InPlace(name.clone()))
                        .map_err(|e| s3.err("storing a new blob", &name, e));
                };
                return writer
                    .shutdown()
                    .await
                    .map(|()| Finished::Tmp)
                    .map_err(|e| s3.error("completing the upload of", key.as_ref(), e, false));
            }
            None => {
                if let Some(mut writer) = w {
                    let _ = writer.abort().await;
                }
                return Err(BlobError::Config("the upload was abandoned".into()));
            }
        }
    }
}

/// `length` bytes from `start` of the packed blob `p`, out of its whole `pack`; `None`
/// when the pack is shorter than the catalog says (the ranged read then reports it).
fn part(pack: &Bytes, p: &Packed, start: u64, length: u64) -> Option<Bytes> {
    let from = usize::try_from(p.offset.checked_add(start)?).ok()?;
    let to = from.checked_add(usize::try_from(length).ok()?)?;
    (to <= pack.len()).then(|| pack.slice(from..to))
}

/// `chunks` (`len` bytes together) in one buffer of their size: a chunk may be a slice of
/// a larger read buffer, which it would keep alive while the blob waits for its PUT or
/// its pack.
fn concat(chunks: Vec<Bytes>, len: usize) -> Bytes {
    let mut all = bytes::BytesMut::with_capacity(len);
    for chunk in chunks {
        all.extend_from_slice(&chunk);
    }
    all.freeze()
}

/// A temporary object, deleted when dropped unless committed.
#[derive(Debug)]
pub(super) struct TmpObject {
    s3: S3,
    key: Path,
    armed: bool,
    /// A blob smaller than a part, stored at its name (`key`) already.
    in_place: bool,
    /// A blob of at most [`PACK_BLOB_MAX`] bytes, not sent yet: its bytes.
    held: Option<Bytes>,
}

impl TmpObject {
    /// Deletes it now (a failure leaves it to `clean_tmp`).
    async fn delete(mut self) {
        if self.in_place || self.held.is_some() {
            return;
        }
        self.armed = false;
        if let Err(e) = self.s3.ops.delete(&self.key).await {
            tracing::warn!(key = %self.key, error = %e, "a temporary object could not be deleted; a later harvest removes it");
        }
    }

    /// The bytes of a blob held for a pack.
    pub(super) fn held(&self) -> Option<&Bytes> {
        self.held.as_ref()
    }

    /// Reads it back with ranged GETs of [`RANGE_READ`] bytes (`length`: its size).
    pub(super) fn ranged(&self, length: u64) -> Ranged {
        Ranged {
            s3: self.s3.clone(),
            key: self.key.clone(),
            length,
            pos: 0,
            buf: Bytes::new(),
            buf_at: 0,
        }
    }
}

impl Drop for TmpObject {
    fn drop(&mut self) {
        if self.armed {
            let (s3, key) = (self.s3.clone(), self.key.clone());
            // Not awaited: a process that exits first leaves it to `clean_tmp`.
            runtime().spawn(async move {
                let _ = s3.ops.delete(&key).await;
            });
        }
    }
}

/// `Read + Seek` over an object by ranged GETs, one aligned window of [`RANGE_READ`]
/// bytes at a time: a ZIP's central directory at the end, then the entries it names.
#[derive(Debug)]
pub(super) struct Ranged {
    s3: S3,
    key: Path,
    length: u64,
    pos: u64,
    buf: Bytes,
    buf_at: u64,
}

impl Read for Ranged {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.length || out.is_empty() {
            return Ok(0);
        }
        let end = self.buf_at + self.buf.len() as u64;
        if self.pos < self.buf_at || self.pos >= end {
            // Windows aligned to their size: a reader that walks backwards from the end
            // (a ZIP's end-of-directory search) finds what it needs in the last one.
            let from = self.pos - self.pos % RANGE_READ;
            let (s3, key) = (self.s3.clone(), self.key.clone());
            let to = (from + RANGE_READ).min(self.length);
            self.buf = block(async move {
                let range = from..to;
                s3.ops
                    .get_range(&key, range)
                    .await
                    .map_err(|e| io::Error::other(s3.err("reading back", &key, e)))
            })?;
            self.buf_at = from;
            if self.buf.is_empty() {
                return Ok(0);
            }
        }
        let at = usize::try_from(self.pos - self.buf_at).unwrap_or(usize::MAX);
        let n = out.len().min(self.buf.len() - at);
        out[..n].copy_from_slice(&self.buf[at..at + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Ranged {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.length.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = pos
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        Ok(self.pos)
    }
}

/// A blocking `Read` over chunks that arrive through a channel.
struct ChannelReader {
    rx: mpsc::Receiver<io::Result<Bytes>>,
    chunk: Bytes,
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.chunk.is_empty() {
            match self.rx.blocking_recv() {
                None => return Ok(0),
                Some(chunk) => self.chunk = chunk?,
            }
        }
        let n = out.len().min(self.chunk.len());
        out[..n].copy_from_slice(&self.chunk.split_to(n));
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pack_is_named_by_its_blobs_in_their_order() {
        let (a, b) = ("a".repeat(64), "b".repeat(64));
        let ab = pack_name(&[&a, &b]);
        assert_eq!(ab.len(), 69);
        assert_eq!(ab, pack_name(&[&a, &b]));
        assert_ne!(ab, pack_name(&[&b, &a]));
        assert_ne!(ab, pack_name(&[&a]));
        use sha2::Digest;
        let expected = sha2::Sha256::digest(format!("plikt pack\n{a}\n{b}\n"));
        assert_eq!(ab, format!("{}.pack", hex::encode(expected)));
    }

    #[test]
    fn list_multipart_uploads_is_read_with_its_markers() {
        let body = br#"<?xml version="1.0" encoding="UTF-8"?>
<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Bucket>plikt</Bucket><KeyMarker></KeyMarker><UploadIdMarker></UploadIdMarker>
  <NextKeyMarker>kb/tmp/2-b/1</NextKeyMarker><NextUploadIdMarker>u2</NextUploadIdMarker>
  <Prefix>kb/tmp/</Prefix><MaxUploads>1000</MaxUploads><IsTruncated>true</IsTruncated>
  <Upload><Key>kb/tmp/1-a/0</Key><UploadId>u1</UploadId><Initiated>2026-01-02T03:04:05.000Z</Initiated></Upload>
  <Upload><Key>kb/tmp/2-b/1</Key><UploadId>u2</UploadId><Initiated>2026-01-02T03:04:06Z</Initiated></Upload>
</ListMultipartUploadsResult>"#;
        let page = parse_uploads(body).unwrap();
        assert!(page.truncated);
        assert_eq!(page.uploads.len(), 2);
        assert_eq!(page.uploads[0].0, "kb/tmp/1-a/0");
        assert_eq!(page.uploads[1].1, "u2");
        assert_eq!(page.uploads[0].2.to_rfc3339(), "2026-01-02T03:04:05+00:00");
        assert_eq!(page.next, Some(("kb/tmp/2-b/1".into(), "u2".into())));
    }
}

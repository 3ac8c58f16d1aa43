//! The published documents on the object store (issue 17 §2): `<prefix>www/<path>` for
//! `data_dir/www/<path>`, so that every `plikt serve` node serves the collection the
//! last publish wrote, whichever worker wrote it. What to copy, and in which order, is
//! `resourcesync::mirror`'s; these are the requests.

use std::io;
use std::path::Path as FsPath;

use bytes::Bytes;
use futures_util::StreamExt;
use object_store::buffered::BufWriter;
use object_store::path::Path;
use object_store::{ObjectStore, PutPayload};
use tokio::io::AsyncWriteExt;

use super::{BlobError, S3, block};

/// The user metadata a document's SHA-256 is kept in (`x-amz-meta-sha256`).
const SHA256_METADATA: &str = "sha256";

impl S3 {
    fn document_key(&self, rel: &str) -> Path {
        Path::from(format!("{}www/{rel}", self.settings.prefix))
    }

    /// Where the document `rel` is: `s3://bucket/<prefix>www/<rel>`.
    pub(in crate::store::blobs) fn document_location(&self, rel: &str) -> String {
        format!("s3://{}/{}", self.settings.bucket, self.document_key(rel))
    }

    /// The length and digests of the document at `rel`, every byte read again as it
    /// streams (`None`: there is none). Blocks.
    pub(in crate::store::blobs) fn document_digests(
        &self,
        rel: &str,
    ) -> Result<Option<crate::store::Digests>, BlobError> {
        let (s3, rel) = (self.clone(), rel.to_string());
        block(async move {
            let Some(super::super::Fetched::Document(doc)) = s3.stream_document(&rel, None).await?
            else {
                return Ok(None);
            };
            let mut digester = crate::store::Digester::new();
            let mut stream = doc.stream;
            while let Some(chunk) = stream.next().await {
                let chunk = chunk
                    .map_err(|e| s3.error("reading", s3.document_key(&rel).as_ref(), e, false))?;
                digester.update(&chunk);
            }
            Ok(Some(digester.finish()))
        })
    }

    /// A small document, whole (`None`: there is none). Blocks.
    pub(in crate::store::blobs) fn document(&self, rel: &str) -> Result<Option<Bytes>, BlobError> {
        let (s3, key) = (self.clone(), self.document_key(rel));
        block(async move {
            match s3.ops.get(&key).await {
                Ok(r) => r
                    .bytes()
                    .await
                    .map(Some)
                    .map_err(|e| s3.err("reading", &key, e)),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(s3.err("reading", &key, e)),
            }
        })
    }

    /// Writes `bytes` as the document `rel`. Blocks.
    pub(in crate::store::blobs) fn put_document(
        &self,
        rel: &str,
        bytes: Bytes,
    ) -> Result<(), BlobError> {
        let (s3, key) = (self.clone(), self.document_key(rel));
        block(async move {
            s3.ops
                .put(&key, PutPayload::from(bytes))
                .await
                .map(|_| ())
                .map_err(|e| s3.err("writing", &key, e))
        })
    }

    /// Copies the file `from` to the document `rel`, in parts while it is read (dump
    /// packages can be large), with its SHA-256 as the object's metadata
    /// (`x-amz-meta-sha256`) when it is given. Blocks.
    pub(in crate::store::blobs) fn upload_document(
        &self,
        rel: &str,
        from: &FsPath,
        sha256: Option<&str>,
    ) -> Result<(), BlobError> {
        let (s3, key, from) = (self.clone(), self.document_key(rel), from.to_path_buf());
        let mut attributes = object_store::Attributes::new();
        if let Some(sha256) = sha256 {
            attributes.insert(
                object_store::Attribute::Metadata(SHA256_METADATA.into()),
                sha256.to_string().into(),
            );
        }
        block(async move {
            let io_err = |e: io::Error| BlobError::Io {
                path: from.clone(),
                source: e,
            };
            let mut file = tokio::fs::File::open(&from).await.map_err(io_err)?;
            let mut writer = BufWriter::with_capacity(s3.ops.clone(), key.clone(), 8 << 20)
                .with_attributes(attributes);
            let copied = tokio::io::copy(&mut file, &mut writer).await;
            match copied {
                Ok(_) => writer
                    .shutdown()
                    .await
                    .map_err(|e| s3.error("writing", key.as_ref(), e, false)),
                Err(e) => {
                    let _ = writer.abort().await;
                    Err(s3.error("writing", key.as_ref(), e, false))
                }
            }
        })
    }

    /// Copies the document `rel` into the file `to` (written whole, then renamed by the
    /// caller). Blocks.
    pub(in crate::store::blobs) fn download_document(
        &self,
        rel: &str,
        to: &FsPath,
    ) -> Result<(), BlobError> {
        let (s3, key, to) = (self.clone(), self.document_key(rel), to.to_path_buf());
        let (answer, mut rx) = self.get(key.clone(), None, None);
        match answer.blocking_recv() {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                return Err(s3.error("reading", key.as_ref(), "the request was dropped", false));
            }
        }
        let io_err = |e: io::Error| BlobError::Io {
            path: to.clone(),
            source: e,
        };
        let mut file = io::BufWriter::new(std::fs::File::create(&to).map_err(io_err)?);
        while let Some(chunk) = rx.blocking_recv() {
            let chunk = chunk.map_err(|e| s3.error("reading", key.as_ref(), e, false))?;
            io::Write::write_all(&mut file, &chunk).map_err(io_err)?;
        }
        let file = file.into_inner().map_err(|e| io_err(e.into_error()))?;
        file.sync_all().map_err(io_err)
    }

    /// The length of the document `rel` and the SHA-256 its upload gave it, if any
    /// (`None`: there is none): a HEAD. Blocks.
    pub(in crate::store::blobs) fn document_head(
        &self,
        rel: &str,
    ) -> Result<Option<super::super::Head>, BlobError> {
        let (s3, key) = (self.clone(), self.document_key(rel));
        block(async move {
            let options = object_store::GetOptions {
                head: true,
                ..Default::default()
            };
            match s3.ops.get_opts(&key, options).await {
                Ok(r) => Ok(Some(super::super::Head {
                    length: r.meta.size,
                    sha256: r
                        .attributes
                        .get(&object_store::Attribute::Metadata(SHA256_METADATA.into()))
                        .map(|v| v.to_string()),
                })),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(s3.err("reading", &key, e)),
            }
        })
    }

    /// The documents directly in the folder `dir` (below `www/`), by name, with their
    /// lengths: one listing, in pages. Blocks.
    pub(in crate::store::blobs) fn document_lengths(
        &self,
        dir: &str,
    ) -> Result<std::collections::BTreeMap<String, u64>, BlobError> {
        let (s3, key) = (self.clone(), self.document_key(dir));
        block(async move {
            let listed = s3
                .ops
                .list_with_delimiter(Some(&key))
                .await
                .map_err(|e| s3.err("listing", &key, e))?;
            Ok(listed
                .objects
                .into_iter()
                .filter_map(|o| Some((o.location.filename()?.to_string(), o.size)))
                .collect())
        })
    }

    /// Removes the document `rel` (absent already is fine). Blocks.
    pub(in crate::store::blobs) fn delete_document(&self, rel: &str) -> Result<(), BlobError> {
        let (s3, key) = (self.clone(), self.document_key(rel));
        block(async move {
            match s3.ops.delete(&key).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(s3.err("deleting", &key, e)),
            }
        })
    }

    /// The document `rel` streamed, with its length and version (`None`: there is none),
    /// unless its entity tag is one of `if_none_match` (a request's `If-None-Match`, which
    /// the object store is asked too: an unchanged document is not transferred).
    pub(in crate::store::blobs) async fn stream_document(
        &self,
        rel: &str,
        if_none_match: Option<String>,
    ) -> Result<Option<super::super::Fetched>, BlobError> {
        let key = self.document_key(rel);
        let (answer, rx) = self.get(key.clone(), None, if_none_match);
        let meta = match answer.await {
            Ok(Ok(super::Got::Object(meta))) => meta,
            Ok(Ok(super::Got::NotModified)) => return Ok(Some(super::super::Fetched::NotModified)),
            Ok(Err(e)) if e.is_not_found() => return Ok(None),
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                return Err(self.error("reading", key.as_ref(), "the request was dropped", false));
            }
        };
        let stream = futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        })
        .boxed();
        Ok(Some(super::super::Fetched::Document(
            super::super::Document {
                length: meta.size,
                // The object store's ETag: the same on every node that serves the document.
                etag: meta.e_tag,
                modified: std::time::SystemTime::from(meta.last_modified),
                stream,
            },
        )))
    }
}

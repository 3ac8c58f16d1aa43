//! Republishing the collection as a ResourceSync Source (ANSI/NISO Z39.99; plikt is an
//! aggregator that republishes what it collected, §14.8).
//!
//! [`publish`] writes static documents under `data_dir/www/` (any web server could
//! serve them), each replaced atomically (write, fsync, rename, folder fsync):
//!
//! ```text
//! .well-known/resourcesync                        Source Description
//! resourcesync/<publisher>/capabilitylist.xml     one public set per publisher
//! resourcesync/<publisher>/resourcelist.xml       current files of deposits (at, completed)
//! resourcesync/<publisher>/changelist.xml         the change journal, forward chronological
//! ```
//!
//! Resources are served by `plikt serve` / `plikt run` at
//! `<base_url>d/<publisher>/<deposit>/<key>`, where `key` is the first 16 hex digits of
//! the SHA-256 of the publisher's URL: stable across versions of the deposit, so an
//! updated file is the same resource with new content. Every version stays retrievable
//! at `<base_url>d/<publisher>/<deposit>/v<version>/<key>`, which each entry names in a
//! `rel="memento"` link (§14.6): nothing deposited is ever overwritten.
//!
//! This is the first part of the ResourceSync issue: only public sets (items whose
//! effective access is `gratis`); no restricted sets, indexes, rotation, dumps
//! or metadata records yet.

mod writer;

use std::fs::{self, File};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

pub use writer::{DocumentWriter, Entry, Ln, MAX_BYTES, MAX_ENTRIES, Md, RS_NS, Root, SITEMAP_NS};

use crate::config::Config;
use crate::store::{Catalog, PublishedFile, StoreError, hex, sync_dir};

/// Why publishing failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PublishError {
    /// The catalog failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Writing a document failed.
    #[error("{path}: {source}")]
    Write {
        /// The document.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// A document would pass the Sitemap limits.
    #[error(
        "{path}: more than {MAX_ENTRIES} entries or {MAX_BYTES} bytes; splitting into an index is not implemented yet"
    )]
    TooLarge {
        /// The document.
        path: PathBuf,
    },
}

/// What [`publish`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Published {
    /// Capability lists (sets).
    pub sets: usize,
    /// Entries in all Resource Lists.
    pub resources: u64,
    /// Entries in all Change Lists.
    pub changes: u64,
}

/// The capability the access level `gratis` is published under.
pub const PUBLIC: &str = "gratis";

/// The path of a resource below `base_url`.
pub fn resource_path(publisher: &str, deposit: i64, url: &str) -> String {
    format!("d/{publisher}/{deposit}/{}", url_key(url))
}

/// The version-specific path of a resource below `base_url` (§14.6, a Memento).
pub fn version_path(publisher: &str, deposit: i64, version: i64, url: &str) -> String {
    format!("d/{publisher}/{deposit}/v{version}/{}", url_key(url))
}

/// The resource key of a publisher's URL: 16 hex digits of its SHA-256.
pub fn url_key(url: &str) -> String {
    hex(&Sha256::digest(url.as_bytes())[..8])
}

/// Where the documents live.
pub fn www(config: &Config) -> PathBuf {
    config.data_dir.join("www")
}

/// The path of a publisher's capability list below `base_url`.
pub fn capability_list_path(publisher: &str) -> String {
    format!("resourcesync/{publisher}/capabilitylist.xml")
}

/// Writes every document from the catalog.
pub fn publish(config: &Config) -> Result<Published, PublishError> {
    let catalog = Catalog::open(&config.data_dir.join("catalog.sqlite"))?;
    let www = www(config);
    let base = config.base_url.as_str();
    let now = || crate::store::now();
    let mut published = Published::default();

    // Source Description (§11): one capability list per public set.
    let sd_path = www.join(".well-known/resourcesync");
    atomic_write(&sd_path, |out| {
        let mut w = DocumentWriter::new(out, Root::UrlSet, &[], &Md::capability("description"))?;
        for p in &config.publishers {
            w.entry(&Entry {
                loc: format!("{base}{}", capability_list_path(&p.id)),
                md: Some(Md::capability("capabilitylist")),
                ..Entry::default()
            })?;
        }
        w.finish().map(drop)
    })?;

    for p in &config.publishers {
        let dir = format!("resourcesync/{}", p.id);
        let cap = format!("{base}{}", capability_list_path(&p.id));
        // Capability List (§9).
        atomic_write(&www.join(capability_list_path(&p.id)), |out| {
            let mut w = DocumentWriter::new(
                out,
                Root::UrlSet,
                &[Ln::new("up", format!("{base}.well-known/resourcesync"))],
                &Md::capability("capabilitylist"),
            )?;
            for cap in ["resourcelist", "changelist"] {
                w.entry(&Entry {
                    loc: format!("{base}{dir}/{cap}.xml"),
                    md: Some(Md::capability(cap)),
                    ..Entry::default()
                })?;
            }
            w.finish().map(drop)
        })?;
        published.sets += 1;

        // Resource List (§10): `at` before reading, `completed` after. `completed` is
        // written as a placeholder of the same width and filled in at the end, so the
        // list streams to disk.
        let path = www.join(format!("{dir}/resourcelist.xml"));
        let at = now();
        let placeholder = "0000-00-00T00:00:00.000Z";
        let md = Md::capability("resourcelist")
            .with("at", at.clone())
            .with("completed", placeholder);
        let lns = [Ln::new("up", cap.clone())];
        let header = DocumentWriter::new(Vec::new(), Root::UrlSet, &lns, &md)
            .map_err(|source| PublishError::Write {
                path: path.clone(),
                source,
            })?
            .bytes();
        let completed_at = header - "\"/>\n".len() as u64 - placeholder.len() as u64;
        let mut count = 0u64;
        let mut too_large = false;
        atomic_write(&path, |out| {
            let mut w = DocumentWriter::new(&mut *out, Root::UrlSet, &lns, &md)?;
            let r = catalog.current_files(&p.id, PUBLIC, &mut |f| {
                if w.full(2048) {
                    too_large = true;
                    return Ok(());
                }
                count += 1;
                w.entry(&resource_entry(base, &p.id, &f, None))
            });
            r.map_err(|e| io::Error::other(e.to_string()))?;
            w.finish()?;
            out.flush()?;
            let file = out.get_mut();
            file.seek(SeekFrom::Start(completed_at))?;
            file.write_all(now().as_bytes())?;
            file.seek(SeekFrom::End(0)).map(drop)
        })?;
        if too_large {
            return Err(PublishError::TooLarge { path });
        }
        published.resources += count;

        // Change List (§12): the journal in forward chronological order.
        let path = www.join(format!("{dir}/changelist.xml"));
        let from = catalog.first_change(&p.id)?.unwrap_or_else(now);
        let mut count = 0u64;
        let mut too_large = false;
        atomic_write(&path, |out| {
            let mut w = DocumentWriter::new(
                out,
                Root::UrlSet,
                &[Ln::new("up", cap.clone())],
                &Md::capability("changelist").with("from", from.clone()),
            )?;
            let r = catalog.journal(&p.id, PUBLIC, &mut |e, f| {
                if w.full(2048) {
                    too_large = true;
                    return Ok(());
                }
                count += 1;
                w.entry(&resource_entry(base, &p.id, &f, Some((&e.change, &e.at))))
            });
            r.map_err(|e| io::Error::other(e.to_string()))?;
            w.finish().map(drop)
        })?;
        if too_large {
            return Err(PublishError::TooLarge { path });
        }
        published.changes += count;
    }
    Ok(published)
}

/// A `<url>` of a Resource List (`change` = None) or Change List.
fn resource_entry(
    base: &str,
    publisher: &str,
    f: &PublishedFile,
    change: Option<(&str, &str)>,
) -> Entry {
    let hash = format!("md5:{} sha-256:{}", f.md5, f.sha256);
    let mut md = Md::default();
    let lastmod = match change {
        // §12 + 1.1: the change and its time on rs:md, and lastmod too (1.0 readers).
        Some((change, at)) => {
            md = md.with("change", change).with("datetime", at);
            at.to_string()
        }
        None => f.stored_at.clone(),
    };
    md = md
        .with("hash", hash.clone())
        .with("length", f.length.to_string());
    let mut via = Ln::new("via", f.url.clone())
        .with("modified", f.pub_date.clone())
        .with("hash", hash.clone())
        .with("length", f.length.to_string());
    // §14.6, first approach: the time-specific URI of the version this entry describes;
    // it stays retrievable after the resource changes again.
    let mut memento = Ln::new(
        "memento",
        format!(
            "{base}{}",
            version_path(publisher, f.deposit_id, f.version_id, &f.url)
        ),
    )
    .with("modified", f.stored_at.clone())
    .with("hash", hash)
    .with("length", f.length.to_string());
    if let Some(t) = &f.content_type {
        md = md.with("type", t.clone());
        via = via.with("type", t.clone());
        memento = memento.with("type", t.clone());
    }
    Entry {
        loc: format!("{base}{}", resource_path(publisher, f.deposit_id, &f.url)),
        lastmod: Some(lastmod),
        md: Some(md),
        lns: vec![via, memento],
    }
}

/// Writes `path` atomically: a temporary file beside it, fsync, rename, folder fsync.
/// A reader sees the old document or the new one, never half of one.
fn atomic_write(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> Result<(), PublishError> {
    let err = |source| PublishError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().expect("documents live in folders");
    fs::create_dir_all(dir).map_err(err)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("doc"),
        std::process::id()
    ));
    let result = (|| {
        let mut out = BufWriter::new(File::create(&tmp)?);
        write(&mut out)?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        fs::rename(&tmp, path)?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(err)
}

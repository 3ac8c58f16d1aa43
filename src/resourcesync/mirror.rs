//! The published documents shared through the object store (issue 17 §2): several
//! workers publish in turn (one at a time, under the catalog's publish lock) and any
//! number of `plikt serve` nodes serve what the last one wrote, from the object store.
//!
//! A publish with `[blobs]` on an object store: [`pull`] brings `data_dir/www` up to
//! the object store's copy (what another worker published since: archives, snapshots,
//! fingerprints, packages), the publish writes its documents locally as on one
//! machine, and [`Mirror::push`] copies what changed back, **leaves first** — dump
//! packages and dated documents, then the live documents and archives that list them,
//! then the Capability Lists, then the Source Descriptions — so that a Destination
//! reading the object store meanwhile never follows a link to what is not there yet.
//! Then the manifest (`www/.manifest.json`: every document's length and SHA-256), and
//! only then the deletions of what the publish removed.
//!
//! `www/.synced.json` remembers, per file, the length, modification time and SHA-256
//! it had when last copied, so that only changed files are hashed and copied.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::PublishError;
use super::files::write_err;
use crate::store::{Documents, StoreError};

/// The object store's list of documents.
const MANIFEST: &str = ".manifest.json";
/// This folder's record of what it last copied.
const SYNCED: &str = ".synced.json";

/// A document as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    length: u64,
    sha256: String,
}

/// A local file as last copied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Synced {
    length: u64,
    modified_ns: u128,
    sha256: String,
}

impl Synced {
    fn of(length: u64, modified_ns: u128, sha256: &str) -> Self {
        Self {
            length,
            modified_ns,
            sha256: sha256.to_string(),
        }
    }
}

/// What a publish copies back: the object store's manifest as pulled.
#[derive(Debug)]
pub(super) struct Mirror {
    documents: Documents,
    www: PathBuf,
    remote: BTreeMap<String, Entry>,
}

/// What [`pull`] and [`Mirror::push`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Copied {
    /// Documents copied.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Documents removed.
    pub removed: u64,
}

fn store_err(e: crate::store::BlobError) -> PublishError {
    PublishError::Store(StoreError::from(e))
}

/// Files under `www` that are documents (not the lock, the record, or a temporary
/// file), by path relative to `www` with `/`.
pub(super) fn local_files(www: &Path) -> Result<Vec<String>, PublishError> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) -> io::Result<()> {
        for e in fs::read_dir(dir)? {
            let e = e?;
            let path = e.path();
            if e.file_type()?.is_dir() {
                walk(&path, root, out)?;
                continue;
            }
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name == ".publish.lock"
                || name == SYNCED
                || name == MANIFEST
                || name.ends_with(".tmp")
            {
                continue;
            }
            if let Ok(rel) = path.strip_prefix(root) {
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(www, www, &mut out).map_err(write_err(www))?;
    out.sort();
    Ok(out)
}

fn read_synced(www: &Path) -> BTreeMap<String, Synced> {
    fs::read(www.join(SYNCED))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn write_synced(www: &Path, synced: &BTreeMap<String, Synced>) -> Result<(), PublishError> {
    let path = www.join(SYNCED);
    super::files::atomic_write(&path, |out| {
        serde_json::to_writer(&mut *out, synced).map_err(io::Error::other)
    })
}

/// Length and modification time of `path`.
fn stamp(path: &Path) -> io::Result<(u64, u128)> {
    let meta = fs::metadata(path)?;
    let modified = meta
        .modified()?
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    Ok((meta.len(), modified))
}

fn sha256_of(path: &Path) -> io::Result<String> {
    let mut file = fs::File::open(path)?;
    let mut hasher = Sha256::new();
    io::copy(&mut file, &mut hasher)?;
    Ok(hex::encode(hasher.finalize()))
}

/// The order in which a document is copied up: what others link to first.
fn rank(rel: &str) -> u8 {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    if name == super::layout::SET_STATE {
        // A set's record of the state its documents are in goes up after all of
        // them: a worker that pulls it leaves the set alone.
        5
    } else if rel.starts_with(".well-known/") {
        4
    } else if name == "capabilitylist.xml" {
        3
    } else if name.ends_with(".zip") || name.starts_with('.') || name.contains(char::is_numeric) {
        // Packages, dated and numbered documents (snapshots, closed change lists,
        // chunks, dump manifests), the publisher's own state files.
        1
    } else {
        // Live documents, indexes, archives.
        2
    }
}

/// Brings `www` up to the object store's copy of the documents: downloads what
/// differs, removes what another publish removed. Under the publish lock.
pub(super) fn pull(documents: Documents, www: &Path) -> Result<(Mirror, Copied), PublishError> {
    fs::create_dir_all(www).map_err(write_err(www))?;
    let remote: BTreeMap<String, Entry> = match documents.get(MANIFEST).map_err(store_err)? {
        Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| PublishError::Write {
            path: www.join(MANIFEST),
            source: io::Error::other(format!(
                "the object store's list of published documents is not valid JSON ({e}); remove the object `www/{MANIFEST}` and publish again: every document is then copied anew"
            )),
        })?,
        None => BTreeMap::new(),
    };
    let mut synced = read_synced(www);
    let mut copied = Copied::default();
    for (rel, entry) in &remote {
        let path = www.join(rel);
        let current = stamp(&path).ok();
        let known = synced.get(rel).is_some_and(|s| {
            s.sha256 == entry.sha256 && current == Some((s.length, s.modified_ns))
        });
        if known {
            continue;
        }
        super::files::fill_then_rename(&path, |tmp| {
            documents.download(rel, tmp).map_err(store_err)
        })?;
        let (length, modified_ns) = stamp(&path).map_err(write_err(&path))?;
        synced.insert(rel.clone(), Synced::of(length, modified_ns, &entry.sha256));
        copied.files += 1;
        copied.bytes += length;
    }
    // Copied before and gone from the object store: another publish removed it.
    let gone: Vec<String> = synced
        .keys()
        .filter(|rel| !remote.contains_key(*rel))
        .cloned()
        .collect();
    for rel in gone {
        let path = www.join(&rel);
        match fs::remove_file(&path) {
            Ok(()) => copied.removed += 1,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(write_err(&path)(e)),
        }
        synced.remove(&rel);
    }
    write_synced(www, &synced)?;
    Ok((
        Mirror {
            documents,
            www: www.to_path_buf(),
            remote,
        },
        copied,
    ))
}

impl Mirror {
    /// Copies what the publish changed up to the object store, leaves first, then the
    /// manifest, then removes what the publish removed.
    pub(super) fn push(self) -> Result<Copied, PublishError> {
        let www = &self.www;
        let mut synced = read_synced(www);
        let mut now: BTreeMap<String, Entry> = BTreeMap::new();
        let mut changed: Vec<(u8, String, u64)> = Vec::new();
        for rel in local_files(www)? {
            let path = www.join(&rel);
            let (length, modified_ns) = stamp(&path).map_err(write_err(&path))?;
            let sha256 = match synced.get(&rel) {
                Some(s) if s.length == length && s.modified_ns == modified_ns => s.sha256.clone(),
                _ => sha256_of(&path).map_err(write_err(&path))?,
            };
            let entry = Entry { length, sha256 };
            if self.remote.get(&rel) != Some(&entry) {
                changed.push((rank(&rel), rel.clone(), length));
            }
            synced.insert(rel.clone(), Synced::of(length, modified_ns, &entry.sha256));
            now.insert(rel, entry);
        }
        synced.retain(|rel, _| now.contains_key(rel));
        changed.sort();
        let mut copied = Copied::default();
        for (_, rel, length) in &changed {
            self.documents
                .upload(rel, &www.join(rel))
                .map_err(store_err)?;
            copied.files += 1;
            copied.bytes += length;
        }
        let manifest = serde_json::to_vec(&now).map_err(|e| PublishError::Write {
            path: www.join(MANIFEST),
            source: io::Error::other(e),
        })?;
        self.documents
            .put(MANIFEST, Bytes::from(manifest))
            .map_err(store_err)?;
        for rel in self.remote.keys().filter(|rel| !now.contains_key(*rel)) {
            self.documents.delete(rel).map_err(store_err)?;
            copied.removed += 1;
        }
        write_synced(www, &synced)?;
        Ok(copied)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_linked_to_is_copied_before_what_links_to_it() {
        let mut docs = [
            ".well-known/resourcesync",
            "resourcesync/a/capabilitylist.xml",
            "resourcesync/a/resourcelist.xml",
            "resourcesync/a/resourcelist-archive.xml",
            "resourcesync/a/resourcelist-2026-11-20.xml",
            "resourcesync/a/changelist-2026-11-25.xml",
            "resourcesync/a/changedump/2026-11-25.zip",
            "resourcesync/a/.resourcelist.fingerprint",
            "resourcesync/a/.published",
        ];
        docs.sort_by_key(|d| (rank(d), *d));
        let pos = |d: &str| docs.iter().position(|x| *x == d).unwrap();
        assert!(
            pos("resourcesync/a/changedump/2026-11-25.zip")
                < pos("resourcesync/a/resourcelist.xml")
        );
        assert!(
            pos("resourcesync/a/resourcelist-2026-11-20.xml")
                < pos("resourcesync/a/resourcelist-archive.xml")
        );
        assert!(pos("resourcesync/a/resourcelist.xml") < pos("resourcesync/a/capabilitylist.xml"));
        assert!(pos("resourcesync/a/capabilitylist.xml") < pos(".well-known/resourcesync"));
        assert_eq!(pos("resourcesync/a/.published"), docs.len() - 1);
    }
}

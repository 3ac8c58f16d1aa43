//! The published documents shared through the object store (issue 17 §2): several
//! workers publish in turn (one at a time, under the catalog's publish lock) and any
//! number of `plikt serve` nodes serve what the last one wrote, from the object store.
//!
//! A publish with `[blobs]` on an object store: [`pull`] brings `data_dir/www` up to
//! the object store's copy (what another worker published since: archives, snapshots,
//! fingerprints, packages), the publish writes its documents locally as on one
//! machine, and [`Mirror::push`] copies what changed back, **leaves first** — dump
//! packages and dated documents, then the live documents and archives that list them,
//! then the Capability Lists, then the Source Descriptions, then each set's state
//! (`.published`) — so that a Destination reading the object store meanwhile never
//! follows a link to what is not there yet. Then the manifests, and only then the
//! deletions of what the publish removed.
//!
//! The documents are kept in partitions, one per set (`resourcesync/<publisher>`,
//! `resourcesync/<publisher>/restricted`) and one for the rest (the Source
//! Descriptions), so that what a publish reads and writes follows what changed, not the
//! whole collection: each partition has a manifest in the object store
//! (`<set>/.documents.json`: its documents' lengths and SHA-256), and the object store's
//! `www/.manifest.json` names each partition with the SHA-256 of its manifest. A pull
//! reads that and the manifests of the partitions that changed since this folder last
//! saw them; a push walks the partitions of the sets the publish wrote. A publish with
//! nothing new reads one object and writes none.
//!
//! In the folder, `<set>/.mirrored.json` remembers, per file, the length, modification
//! time and SHA-256 it had when last copied, so that only changed files are hashed and
//! copied; `www/.mirrored-parts.json` the manifest each partition was last in step with,
//! and its state file's length and modification time then ([`Mirror::in_step`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::PublishError;
use super::files::write_err;
use super::layout::SET_STATE;
use crate::store::{Documents, StoreError};

/// The object store's list of partitions.
const MANIFEST: &str = ".manifest.json";
/// A partition's manifest, in the object store.
const PART_MANIFEST: &str = ".documents.json";
/// This folder's record of a partition's files as last copied.
const SYNCED: &str = ".mirrored.json";
/// This folder's record of the partitions.
const PARTS: &str = ".mirrored-parts.json";
/// The record of every file, before partitions (removed when seen).
const OLD_SYNCED: &str = ".synced.json";
/// The top manifest's format.
const FORMAT: u32 = 2;

/// A document as a manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    length: u64,
    sha256: String,
}

/// A partition's documents, by path relative to `www`.
type Entries = BTreeMap<String, Entry>;

/// The object store's `www/.manifest.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Manifest {
    format: u32,
    /// Partition → SHA-256 of its manifest.
    parts: BTreeMap<String, String>,
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

/// What the folder last had in step with the object store of a partition.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Part {
    /// SHA-256 of the partition's manifest.
    sha256: String,
    /// Length and modification time of the set's state file (`.published`) then.
    state: Option<(u64, u128)>,
}

/// What a publish copies back: the object store's partitions as pulled.
#[derive(Debug)]
pub(super) struct Mirror {
    documents: Documents,
    www: PathBuf,
    /// This folder's record of the partitions, after the pull.
    parts: BTreeMap<String, Part>,
    /// The object store's partitions, as pulled.
    remote: BTreeMap<String, String>,
    /// The object store had a manifest of every document (before partitions): the push
    /// writes every partition's.
    legacy: bool,
}

/// Which partitions a push walks.
#[derive(Debug, Clone, Copy)]
pub(super) enum Touched<'a> {
    /// Every partition of the folder and of the object store (`plikt migrate`).
    All,
    /// The Source Descriptions' and these sets' (their folders below `www`).
    Sets(&'a [String]),
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

/// Whether `name` is one of the mirror's own files (or the lock, or a temporary file),
/// not a document.
fn is_own_file(name: &str) -> bool {
    name == ".publish.lock"
        || name == MANIFEST
        || name == PART_MANIFEST
        || name == SYNCED
        || name == PARTS
        || name == OLD_SYNCED
        || name.ends_with(".tmp")
}

/// The partition of a document (by path relative to `www`): its set's folder, or ""
/// for what is not in a set.
fn partition_of(rel: &str) -> &str {
    let Some(rest) = rel.strip_prefix("resourcesync/") else {
        return "";
    };
    let Some((publisher, inner)) = rest.split_once('/') else {
        return "";
    };
    let set = "resourcesync/".len() + publisher.len();
    if inner.starts_with("restricted/") {
        &rel[..set + "/restricted".len()]
    } else {
        &rel[..set]
    }
}

/// Where a partition keeps `name` (below `www`, or its key in the object store).
fn in_part(part: &str, name: &str) -> String {
    if part.is_empty() {
        name.to_string()
    } else {
        format!("{part}/{name}")
    }
}

/// Walks `dir` (below `root`) into `out`, by path relative to `root` with `/`, leaving
/// out the mirror's own files and the folders `skip` (relative to `root`).
fn walk(dir: &Path, root: &Path, skip: &[String], out: &mut Vec<String>) -> io::Result<()> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for e in entries {
        let e = e?;
        let path = e.path();
        let Ok(rel) = path.strip_prefix(root) else {
            continue;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        if e.file_type()?.is_dir() {
            if !skip.contains(&rel) {
                walk(&path, root, skip, out)?;
            }
            continue;
        }
        if !is_own_file(&e.file_name().to_string_lossy()) {
            out.push(rel);
        }
    }
    Ok(())
}

/// Files under `www` that are documents (not the lock, the mirror's records, or a
/// temporary file), by path relative to `www` with `/`.
pub(super) fn local_files(www: &Path) -> Result<Vec<String>, PublishError> {
    let mut out = Vec::new();
    walk(www, www, &[], &mut out).map_err(write_err(www))?;
    out.sort();
    Ok(out)
}

/// The documents of one partition in the folder.
fn part_files(www: &Path, part: &str) -> Result<Vec<String>, PublishError> {
    let mut out = Vec::new();
    let (dir, skip) = if part.is_empty() {
        (www.to_path_buf(), vec!["resourcesync".to_string()])
    } else {
        // A public set's folder holds the restricted set's.
        (www.join(part), vec![format!("{part}/restricted")])
    };
    walk(&dir, www, &skip, &mut out).map_err(write_err(&dir))?;
    out.retain(|rel| partition_of(rel) == part);
    out.sort();
    Ok(out)
}

fn read_json<T: for<'de> Deserialize<'de> + Default>(path: &Path) -> T {
    fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), PublishError> {
    super::files::atomic_write(path, |out| {
        serde_json::to_writer(&mut *out, value).map_err(io::Error::other)
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
    if name == SET_STATE || name == super::layout::CLOSED_MARK {
        // A set's records of the state its documents are in go up after all of
        // them: a worker that pulls them leaves the set (or those days) alone.
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

/// A JSON document of the object store that is not what plikt wrote.
fn bad_json(www: &Path, key: &str, e: &serde_json::Error) -> PublishError {
    PublishError::Write {
        path: www.join(key),
        source: io::Error::other(format!(
            "the object store's list of published documents `www/{key}` is not valid JSON ({e}); remove the object `www/{MANIFEST}` and publish again: every document is then copied anew"
        )),
    }
}

/// Brings `www` up to the object store's copy of the documents: downloads what
/// differs in the partitions that changed since this folder last saw them, removes what
/// another publish removed. Under the publish lock.
pub(super) fn pull(documents: Documents, www: &Path) -> Result<(Mirror, Copied), PublishError> {
    fs::create_dir_all(www).map_err(write_err(www))?;
    let _ = fs::remove_file(www.join(OLD_SYNCED));
    let mut parts: BTreeMap<String, Part> = read_json(&www.join(PARTS));
    // The object store's partitions; a manifest of every document (before partitions)
    // is taken apart into them.
    let mut legacy: Option<BTreeMap<String, Entries>> = None;
    let remote: BTreeMap<String, String> = match documents.get(MANIFEST).map_err(store_err)? {
        None => BTreeMap::new(),
        Some(bytes) => match serde_json::from_slice::<Manifest>(&bytes) {
            // A newer plikt's layout (a worker not yet upgraded in a rolling upgrade):
            // written back in this one's, the newer workers' documents would be lost.
            Ok(m) if m.format > FORMAT => {
                return Err(PublishError::NewerDocuments {
                    found: m.format,
                    known: FORMAT,
                });
            }
            Ok(m) => m.parts,
            Err(e) => {
                let all: Entries =
                    serde_json::from_slice(&bytes).map_err(|_| bad_json(www, MANIFEST, &e))?;
                let mut by_part: BTreeMap<String, Entries> = BTreeMap::new();
                for (rel, entry) in all {
                    by_part
                        .entry(partition_of(&rel).to_string())
                        .or_default()
                        .insert(rel, entry);
                }
                let remote = by_part.keys().map(|p| (p.clone(), String::new())).collect();
                legacy = Some(by_part);
                remote
            }
        },
    };
    let mut copied = Copied::default();
    for (part, sha) in &remote {
        let seen = parts.get(part).map(|p| p.sha256.as_str());
        if legacy.is_none() && seen == Some(sha.as_str()) {
            continue;
        }
        let entries = match legacy.as_mut() {
            Some(by_part) => by_part.remove(part).unwrap_or_default(),
            None => {
                let key = in_part(part, PART_MANIFEST);
                match documents.get(&key).map_err(store_err)? {
                    Some(b) => serde_json::from_slice(&b).map_err(|e| bad_json(www, &key, &e))?,
                    None => Entries::new(),
                }
            }
        };
        let as_listed = sync_part(&documents, www, part, &entries, &mut copied)?;
        // Taken apart from a manifest of every document, or fetched newer than its
        // manifest: not in step, so that its sets are written and copied up whole.
        let state = if legacy.is_none() && as_listed {
            stamp(&www.join(in_part(part, SET_STATE))).ok()
        } else {
            None
        };
        parts.insert(
            part.clone(),
            Part {
                sha256: sha.clone(),
                state,
            },
        );
    }
    // Partitions gone from the object store: another publish removed them.
    let gone: Vec<String> = parts
        .keys()
        .filter(|p| !remote.contains_key(*p))
        .cloned()
        .collect();
    for part in gone {
        sync_part(&documents, www, &part, &Entries::new(), &mut copied)?;
        parts.remove(&part);
    }
    write_json(&www.join(PARTS), &parts)?;
    Ok((
        Mirror {
            documents,
            www: www.to_path_buf(),
            parts,
            remote,
            legacy: legacy.is_some(),
        },
        copied,
    ))
}

/// Brings one partition of `www` to `entries`: downloads what differs, removes what
/// is gone (of what this folder copied before). Returns whether every file downloaded
/// had the digest the manifest gives it: an object is fetched by its path, and a
/// publish that stopped between copying a document up and writing the manifests leaves
/// bytes newer than the manifest says; the set is then not in step, and is written again.
fn sync_part(
    documents: &Documents,
    www: &Path,
    part: &str,
    entries: &Entries,
    copied: &mut Copied,
) -> Result<bool, PublishError> {
    sync_part_from(documents, www, part, record_of(www, part), entries, copied)
}

/// The folder's record of a partition's files as last copied.
fn record_of(www: &Path, part: &str) -> BTreeMap<String, Synced> {
    read_json(&www.join(in_part(part, SYNCED)))
}

/// [`sync_part`] with the partition's record `synced` read already.
fn sync_part_from(
    documents: &Documents,
    www: &Path,
    part: &str,
    mut synced: BTreeMap<String, Synced>,
    entries: &Entries,
    copied: &mut Copied,
) -> Result<bool, PublishError> {
    let mut as_listed = true;
    let record = www.join(in_part(part, SYNCED));
    for (rel, entry) in entries {
        let path = www.join(rel);
        let current = stamp(&path).ok();
        let known = synced.get(rel).is_some_and(|s| {
            s.sha256 == entry.sha256 && current == Some((s.length, s.modified_ns))
        });
        if known {
            continue;
        }
        // The same bytes already here (a record lost, or written here before).
        if let Some((length, modified_ns)) = current
            && length == entry.length
            && sha256_of(&path).is_ok_and(|sha| sha == entry.sha256)
        {
            synced.insert(rel.clone(), Synced::of(length, modified_ns, &entry.sha256));
            continue;
        }
        super::files::fill_then_rename(&path, |tmp| {
            documents.download(rel, tmp).map_err(store_err)
        })?;
        let (length, modified_ns) = stamp(&path).map_err(write_err(&path))?;
        let sha256 = sha256_of(&path).map_err(write_err(&path))?;
        as_listed &= sha256 == entry.sha256;
        synced.insert(rel.clone(), Synced::of(length, modified_ns, &sha256));
        copied.files += 1;
        copied.bytes += length;
    }
    // Copied before and gone from the object store: another publish removed it.
    let gone: Vec<String> = synced
        .keys()
        .filter(|rel| !entries.contains_key(*rel))
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
    if synced.is_empty() {
        let _ = fs::remove_file(&record);
    } else {
        write_json(&record, &synced)?;
    }
    Ok(as_listed)
}

impl Mirror {
    /// Puts back what the folder lost of a set's documents as last copied (a file
    /// removed by hand, a folder restored in part), from the object store, before the
    /// set is written: what the publish does not write again (closed days, snapshots)
    /// would otherwise be taken for removed and deleted from the object store too.
    pub(super) fn restore(&self, dir: &str) -> Result<Copied, PublishError> {
        let synced = record_of(&self.www, dir);
        let entries: Entries = synced
            .iter()
            .map(|(rel, s)| {
                (
                    rel.clone(),
                    Entry {
                        length: s.length,
                        sha256: s.sha256.clone(),
                    },
                )
            })
            .collect();
        let mut copied = Copied::default();
        sync_part_from(
            &self.documents,
            &self.www,
            dir,
            synced,
            &entries,
            &mut copied,
        )?;
        Ok(copied)
    }

    /// Whether the set in `dir` (below `www`) is as the object store has it: its state
    /// file unchanged since it was last copied up or down. A set written here whose
    /// copy to the object store did not finish is not, and is written again.
    pub(super) fn in_step(&self, dir: &str) -> bool {
        self.parts.get(dir).is_some_and(|p| {
            p.state.is_some() && stamp(&self.www.join(dir).join(SET_STATE)).ok() == p.state
        })
    }

    /// Copies what the publish changed in the `touched` partitions up to the object
    /// store, leaves first, then their manifests and the list of partitions, then
    /// removes what the publish removed. Writes nothing when nothing changed.
    pub(super) fn push(mut self, touched: Touched<'_>) -> Result<Copied, PublishError> {
        let www = self.www.clone();
        let mut walked: BTreeSet<String> = match touched {
            Touched::Sets(dirs) => std::iter::once(String::new())
                .chain(dirs.iter().cloned())
                .collect(),
            Touched::All => BTreeSet::new(),
        };
        if self.legacy || matches!(touched, Touched::All) {
            walked.extend(
                local_files(&www)?
                    .iter()
                    .map(|rel| partition_of(rel).to_string()),
            );
            walked.extend(self.remote.keys().cloned());
            walked.extend(self.parts.keys().cloned());
        }
        let mut changed: Vec<(u8, String, u64)> = Vec::new();
        let mut removed: Vec<String> = Vec::new();
        // Each partition walked: its documents now, as the record will have them, and
        // whether its manifest is to be written.
        type Walked = (String, Entries, Option<BTreeMap<String, Synced>>, bool);
        let mut walked_now: Vec<Walked> = Vec::new();
        for part in &walked {
            let synced = record_of(&www, part);
            // In step since the pull: the object store's manifest of the partition is
            // what this folder's record says.
            let in_store = self.remote.contains_key(part);
            let mut now = Entries::new();
            let mut now_synced = BTreeMap::new();
            let mut differs = self.legacy || !in_store;
            for rel in part_files(&www, part)? {
                let path = www.join(&rel);
                let (length, modified_ns) = stamp(&path).map_err(write_err(&path))?;
                let sha256 = match synced.get(&rel) {
                    Some(s) if s.length == length && s.modified_ns == modified_ns => {
                        s.sha256.clone()
                    }
                    _ => sha256_of(&path).map_err(write_err(&path))?,
                };
                let entry = Entry { length, sha256 };
                let before = synced.get(&rel).filter(|_| in_store);
                if before.is_none_or(|s| s.length != length || s.sha256 != entry.sha256) {
                    changed.push((rank(&rel), rel.clone(), length));
                    differs = true;
                }
                now_synced.insert(rel.clone(), Synced::of(length, modified_ns, &entry.sha256));
                now.insert(rel, entry);
            }
            for rel in synced.keys().filter(|rel| !now.contains_key(*rel)) {
                removed.push(rel.clone());
                differs = true;
            }
            // The record is written again only if it changed.
            let record = (now_synced != synced).then_some(now_synced);
            walked_now.push((part.clone(), now, record, differs));
        }
        let mut copied = Copied::default();
        if walked_now.iter().any(|(_, _, _, differs)| *differs) {
            changed.sort();
            for (_, rel, length) in &changed {
                self.documents
                    .upload(rel, &www.join(rel))
                    .map_err(store_err)?;
                copied.files += 1;
                copied.bytes += length;
            }
            // The partitions' manifests, then the list of them.
            for (part, now, _, differs) in &walked_now {
                if !differs {
                    continue;
                }
                let key = in_part(part, PART_MANIFEST);
                if now.is_empty() {
                    self.remote.remove(part);
                    continue;
                }
                let bytes = serde_json::to_vec(now).map_err(|e| PublishError::Write {
                    path: www.join(&key),
                    source: io::Error::other(e),
                })?;
                let sha = hex::encode(Sha256::digest(&bytes));
                self.documents
                    .put(&key, Bytes::from(bytes))
                    .map_err(store_err)?;
                self.remote.insert(part.clone(), sha);
            }
            let manifest = Manifest {
                format: FORMAT,
                parts: self.remote.clone(),
            };
            let bytes = serde_json::to_vec(&manifest).map_err(|e| PublishError::Write {
                path: www.join(MANIFEST),
                source: io::Error::other(e),
            })?;
            self.documents
                .put(MANIFEST, Bytes::from(bytes))
                .map_err(store_err)?;
            for rel in &removed {
                self.documents.delete(rel).map_err(store_err)?;
                copied.removed += 1;
            }
            for (part, now, _, differs) in &walked_now {
                if *differs && now.is_empty() {
                    self.documents
                        .delete(&in_part(part, PART_MANIFEST))
                        .map_err(store_err)?;
                }
            }
        }
        // This folder's records: what each partition walked now is in the object store.
        let parts_before = self.parts.clone();
        for (part, now, now_synced, _) in &walked_now {
            let record = www.join(in_part(part, SYNCED));
            if now.is_empty() {
                let _ = fs::remove_file(&record);
                self.parts.remove(part);
                continue;
            }
            if let Some(now_synced) = now_synced {
                write_json(&record, now_synced)?;
            }
            let state = stamp(&www.join(in_part(part, SET_STATE))).ok();
            let sha256 = self.remote.get(part).cloned().unwrap_or_default();
            self.parts.insert(part.clone(), Part { sha256, state });
        }
        if self.parts == parts_before {
            return Ok(copied);
        }
        write_json(&www.join(PARTS), &self.parts)?;
        Ok(copied)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_set_is_a_partition_and_the_rest_another() {
        for (rel, part) in [
            (".well-known/resourcesync", ""),
            ("resourcesync/a/capabilitylist.xml", "resourcesync/a"),
            ("resourcesync/a/.published", "resourcesync/a"),
            ("resourcesync/a/changedump/2026-11-25.zip", "resourcesync/a"),
            (
                "resourcesync/a/restricted/.published",
                "resourcesync/a/restricted",
            ),
            (
                "resourcesync/a/restricted/changelist/2026-11-25.xml",
                "resourcesync/a/restricted",
            ),
            (
                "resourcesync/restricted/changelist.xml",
                "resourcesync/restricted",
            ),
        ] {
            assert_eq!(partition_of(rel), part, "{rel}");
        }
        // A public set's files leave out its restricted set's; the rest leaves out
        // every set's; the mirror's own files are no documents.
        let www = std::env::temp_dir().join(format!("plikt-mirror-parts-{}", std::process::id()));
        let _ = fs::remove_dir_all(&www);
        for rel in [
            ".well-known/resourcesync",
            ".mirrored-parts.json",
            "resourcesync/a/changelist.xml",
            "resourcesync/a/.mirrored.json",
            "resourcesync/a/.documents.json",
            "resourcesync/a/changelist/2026-11-25.xml",
            "resourcesync/a/restricted/changelist.xml",
            "resourcesync/b/changelist.xml",
        ] {
            let path = www.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, rel).unwrap();
        }
        assert_eq!(part_files(&www, "").unwrap(), [".well-known/resourcesync"]);
        assert_eq!(
            part_files(&www, "resourcesync/a").unwrap(),
            [
                "resourcesync/a/changelist.xml",
                "resourcesync/a/changelist/2026-11-25.xml"
            ]
        );
        assert_eq!(
            part_files(&www, "resourcesync/a/restricted").unwrap(),
            ["resourcesync/a/restricted/changelist.xml"]
        );
        assert_eq!(local_files(&www).unwrap().len(), 5);
        fs::remove_dir_all(&www).unwrap();
    }

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
            "resourcesync/a/changedump/.closed",
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
        assert!(pos("resourcesync/a/.published") >= docs.len() - 2);
        assert!(pos("resourcesync/a/changedump/.closed") >= docs.len() - 2);
    }
}

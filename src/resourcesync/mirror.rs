//! Past 800 lines: the pull → write → push mirror, to go whole once documents are
//! written through one interface (issue 35 §1).
//!
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
//! A partition's dated documents (closed Change Lists and Change Dumps, snapshots, their
//! packages and sidecars: written once, then left alone) are listed by year, in shards
//! of its manifest (`<set>/.documents-YYYY-<16 hex>.json`, named by content and so never
//! overwritten) that its manifest names by SHA-256;
//! the rest in the manifest itself. A publish writes the shards that changed (the
//! current year's), so what it writes and reads per set stays the size of a year of
//! history, not of twenty.
//!
//! In the folder, `<set>/.mirrored.json` (and `.mirrored-YYYY.json`, by year as the
//! manifest) remembers, per file, the length, modification time and SHA-256 it had when
//! last copied, so that only changed files are hashed and copied;
//! `www/.mirrored-sets.json` the manifest each partition was last in step with, and its
//! state file's length and modification time then ([`Mirror::in_step`]).
//!
//! **Dump packages are kept in the object store only.** They hold the files' bytes
//! again, so that a Resource Dump of the whole collection and the Change Dumps of every
//! day come to about the collection's size: a copy in every worker's folder would give
//! each worker the object store's disk. A package the object store has is, in the
//! folder, a *stub* ([`super::stub`]: its length and SHA-256, a few lines). A package
//! under a new name goes up as soon as it is written ([`Mirror::send_package`]), so that
//! a publish holds one at a time; a push replaces by a stub any other it finds whole
//! (written again under a name the object store has, or kept by a plikt before stubs:
//! looked for in the object store first, and copied up if missing); a pull writes one
//! for each package another worker wrote once the object store says it has it
//! ([`Lengths`]), instead of downloading it, and under the publish lock forgets one it
//! lacks so that the publish writes it anew ([`Lost`]). The publish only ever asks whether a
//! package is there (its sidecar says what it holds) or removes it, which a stub serves
//! alike; `plikt serve` serves packages from the object store. A push never copies a
//! stub up: it checks that the object store holds the package instead, and one it lost
//! is forgotten in the folder ([`lost_packages`]), so that the next publish writes it
//! anew from the catalog. A plikt before this wrote its record of partitions as
//! `.mirrored-parts.json`, which this one reads and replaces before it writes any stub;
//! one that finds no record of partitions (an older plikt run after this one) copies the
//! documents anew, and with them the packages' bytes, rather than take stubs for them.

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
use super::layout::{Kind, SET_STATE};
use super::stub::{Entry, only_in_store};
use crate::store::{Documents, Head, StoreError};

/// The object store's list of partitions.
const MANIFEST: &str = ".manifest.json";
/// A partition's manifest, in the object store.
const PART_MANIFEST: &str = ".documents.json";
/// This folder's record of a partition's files as last copied.
const SYNCED: &str = ".mirrored.json";
/// Its shards' names: `.mirrored-YYYY.json`.
const SYNCED_STEM: &str = ".mirrored";
/// The shards of a partition's manifest: `.documents-YYYY-<16 hex>.json` ([`shard_key`]).
const PART_MANIFEST_STEM: &str = ".documents";
/// This folder's record of the partitions.
const PARTS: &str = ".mirrored-sets.json";
/// The same record as a plikt that kept every dump package in the folder wrote it:
/// read, and replaced by [`PARTS`] before a stub is written. A plikt that knows no
/// stubs finds no record of partitions then, and copies every document anew.
const OLD_PARTS: &str = ".mirrored-parts.json";
/// The dump packages a publish copied up as it wrote them whose push has not yet
/// listed them ([`Mirror::send_package`]): a publish stopped before its push leaves them
/// in the object store, and the next push removes those no document lists.
const SENT: &str = ".mirrored-sent.json";
/// The record of every file, before partitions (removed when seen).
const OLD_SYNCED: &str = ".synced.json";
/// The top manifest's format: 3 since the partitions' manifests have shards by year
/// (2: a manifest of every document per partition, still read).
const FORMAT: u32 = 3;

/// A partition's documents, by path relative to `www`.
type Entries = BTreeMap<String, Entry>;

/// The shards of a partition's manifest: year → SHA-256.
type Shards = BTreeMap<String, String>;

/// A partition's manifest as [`put_part`] wrote it.
#[derive(Debug)]
struct PutPart {
    /// The manifest's SHA-256.
    sha256: String,
    /// Its shards'.
    shards: Shards,
    /// The keys of the shards it no longer names.
    stale: Vec<String>,
}

/// A partition's manifest in the object store (`<part>/.documents.json`): its documents
/// that are not dated, and the SHA-256 of each year's shard of the dated ones
/// ([`shard_key`], [`bucket_of`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PartManifest {
    entries: Entries,
    years: BTreeMap<String, String>,
}

/// A partition's manifest as found: with shards, or (format 2) every document in it.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum FoundPartManifest {
    Sharded(PartManifest),
    Whole(Entries),
}

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
    /// The document's length (not the stub's, for a package kept in the object store).
    length: u64,
    modified_ns: u128,
    sha256: String,
    /// The folder holds a stub of this length: the document is in the object store only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stub: Option<u64>,
}

impl Synced {
    fn of(length: u64, modified_ns: u128, sha256: &str) -> Self {
        Self {
            length,
            modified_ns,
            sha256: sha256.to_string(),
            stub: None,
        }
    }

    /// A stub of `entry`, with the stub's length and modification time.
    fn stub_of(entry: &Entry, (stub_length, modified_ns): (u64, u128)) -> Self {
        Self {
            length: entry.length,
            modified_ns,
            sha256: entry.sha256.clone(),
            stub: Some(stub_length),
        }
    }

    /// The length and modification time the local file had when last copied.
    fn local_stamp(&self) -> (u64, u128) {
        (self.stub.unwrap_or(self.length), self.modified_ns)
    }

    /// The document as the object store has it.
    fn entry(&self) -> Entry {
        Entry {
            length: self.length,
            sha256: self.sha256.clone(),
        }
    }
}

/// Replaces the file at `path` by a stub of `entry`; returns its length and
/// modification time.
fn write_stub(path: &Path, entry: &Entry) -> Result<(u64, u128), PublishError> {
    super::stub::write(path, entry)?;
    stamp(path).map_err(write_err(path))
}

/// A document a push found changed since the object store last had it.
struct Changed {
    /// Its place in the order of copying: leaves first ([`rank`]).
    rank: u8,
    rel: String,
    entry: Entry,
    /// The folder holds only a stub of it (a dump package).
    stub: bool,
}

/// A partition a push walked: its documents now, as the record will have them, whether
/// its manifest is to be written, and the record as it was.
struct Walked {
    part: String,
    now: Entries,
    synced: BTreeMap<String, Synced>,
    differs: bool,
    before: Record,
}

/// Lookups of one folder past which it is listed whole rather than asked file by file.
const HEADS_PER_FOLDER: usize = 16;

/// What the object store says of documents without their bytes: asked one at a time (a
/// HEAD: the length, and the SHA-256 kept with a package), or, past [`HEADS_PER_FOLDER`]
/// in one folder, from one listing of that folder (the length only: a new worker's first
/// pull of twenty years of Change Dumps is a listing per set, not a request per day).
struct Heads<'a> {
    documents: &'a Documents,
    asked: BTreeMap<String, usize>,
    listed: BTreeMap<String, BTreeMap<String, u64>>,
}

impl<'a> Heads<'a> {
    fn new(documents: &'a Documents) -> Self {
        Self {
            documents,
            asked: BTreeMap::new(),
            listed: BTreeMap::new(),
        }
    }

    /// The document `rel` as the object store has it (`None`: it lacks it).
    fn of(&mut self, rel: &str) -> Result<Option<Head>, PublishError> {
        let (folder, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        let listed = |length: u64| Head {
            length,
            sha256: None,
        };
        if let Some(listing) = self.listed.get(folder) {
            return Ok(listing.get(name).copied().map(listed));
        }
        let asked = self.asked.entry(folder.to_string()).or_default();
        *asked += 1;
        if *asked <= HEADS_PER_FOLDER {
            return self.documents.head(rel).map_err(store_err);
        }
        let listing = self.documents.lengths_in(folder).map_err(store_err)?;
        let found = listing.get(name).copied().map(listed);
        self.listed.insert(folder.to_string(), listing);
        Ok(found)
    }
}

/// What the object store holds under a package's name, as `head` says: "lacks it", or
/// its length and kept SHA-256.
fn held(head: Option<&Head>) -> String {
    match head {
        None => "lacks it".to_string(),
        Some(h) => format!(
            "holds {} bytes under its name, SHA-256 {}",
            h.length,
            h.sha256.as_deref().unwrap_or("not kept")
        ),
    }
}

/// Whether the object store holds `entry`'s bytes as `head` says: its length, and its
/// SHA-256 where the object store kept one (packages uploaded since it does; a listing
/// gives lengths only).
fn holds(head: Option<&Head>, entry: &Entry) -> bool {
    head.is_some_and(|h| {
        h.length == entry.length && h.sha256.as_ref().is_none_or(|s| *s == entry.sha256)
    })
}

/// Copies the document `rel` of `www` up, a package with its SHA-256 (`entry`'s).
fn upload(documents: &Documents, www: &Path, rel: &str, entry: &Entry) -> Result<(), PublishError> {
    let path = www.join(rel);
    if only_in_store(rel) {
        documents.upload_with_sha256(rel, &path, &entry.sha256)
    } else {
        documents.upload(rel, &path)
    }
    .map_err(store_err)
}

/// Whether the file at `path` begins as a ZIP does (a local file header, or the end of
/// an empty archive's directory).
fn is_zip(path: &Path) -> bool {
    let mut head = [0u8; 4];
    fs::File::open(path)
        .and_then(|mut f| io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|()| head == *b"PK\x03\x04" || head == *b"PK\x05\x06")
}

/// A `.zip` in the folder that is neither a package nor a stub of one (a stub damaged
/// by hand): never copied up in place of the package.
fn not_a_package(www: &Path, rel: &str) -> PublishError {
    PublishError::Write {
        path: www.join(rel),
        source: io::Error::other(
            "neither a dump package nor a stub of one (damaged?): it is not copied to the object store in the package's place; remove it, and the next publish puts the stub back (or writes the package anew)",
        ),
    }
}

/// A dump package of another folder (`src`: `plikt migrate`'s old folder) moved into
/// `www` as a stub: put to the object store under `rel` with its SHA-256, unless the
/// object store keeps the same bytes there already (a migrate run again after an
/// interruption), then its stub written; so that the new folder never holds the
/// packages, and a resumed migrate does not copy them up again. Returns false, having
/// done nothing, when the object store holds other bytes under that name (or bytes of
/// the same length whose SHA-256 it did not keep): the caller copies the file as any
/// document, and the push copies it up.
pub(super) fn move_package(
    documents: &Documents,
    www: &Path,
    rel: &str,
    src: &Path,
) -> Result<bool, PublishError> {
    // A stub (it starts with its own line, not a ZIP's), or any other file that is not a
    // ZIP, is copied as any document: the push then refuses it rather than put it in a
    // package's place.
    if !is_zip(src) {
        return Ok(false);
    }
    let length = fs::metadata(src).map_err(write_err(src))?.len();
    let sha256 = sha256_of(src).map_err(write_err(src))?;
    let entry = Entry { length, sha256 };
    match documents.head(rel).map_err(store_err)? {
        Some(h) if h.sha256.is_some() && holds(Some(&h), &entry) => {}
        Some(_) => return Ok(false),
        None => documents
            .upload_with_sha256(rel, src, &entry.sha256)
            .map_err(store_err)?,
    }
    write_stub(&www.join(rel), &entry)?;
    Ok(true)
}

/// The dump packages the object store's lists of published documents name (its list
/// of partitions, each partition's manifest and shards), each looked up in the object
/// store (a HEAD: the length, and the SHA-256 kept with it): how many, and a line for
/// each it lacks or holds other bytes of (`plikt audit`). `www` names the folder in
/// messages.
pub(super) fn audit_packages(
    documents: &Documents,
    www: &Path,
) -> Result<(u64, Vec<String>), PublishError> {
    let listed = listed_packages(documents, www)?;
    // Each package looked up, then read again whole: what the object store holds under
    // its name, if that is not what the lists say.
    let failing =
        |listed: &BTreeMap<String, Entry>| -> Result<Vec<(String, Entry, String, bool)>, PublishError> {
            let mut failing = Vec::new();
            for (rel, entry) in listed {
                let head = documents.head(rel).map_err(store_err)?;
                if !holds(head.as_ref(), entry) {
                    failing.push((rel.clone(), entry.clone(), held(head.as_ref()), false));
                    continue;
                }
                let read = documents.digests(rel).map_err(store_err)?;
                match read {
                    Some(d) if d.length == entry.length && d.sha256 == entry.sha256 => {}
                    // Its length, and any SHA-256 kept with it, match the lists, so a
                    // publish would keep it: it goes first.
                    Some(d) => failing.push((
                        rel.clone(),
                        entry.clone(),
                        format!(
                            "holds other bytes under its name, read again: {} bytes, SHA-256 {}",
                            d.length, d.sha256,
                        ),
                        true,
                    )),
                    None => failing.push((rel.clone(), entry.clone(), held(None), false)),
                }
            }
            Ok(failing)
        };
    let checked = listed.packages.len() as u64;
    let mut failed = failing(&listed.packages)?;
    let mut now = listed;
    // A publish under way replaces lists, packages and shards: what failed is looked at
    // again with the lists as they are now, and reported only if it still fails.
    if !failed.is_empty() || !now.unread.is_empty() {
        let again = listed_packages(documents, www)?;
        let still: BTreeMap<String, Entry> = failed
            .iter()
            .filter(|(rel, entry, ..)| again.packages.get(rel) == Some(entry))
            .map(|(rel, entry, ..)| (rel.clone(), entry.clone()))
            .collect();
        failed = failing(&still)?;
        now = again;
    }
    let Listed { unread, rels, .. } = now;
    // What brings a package back, as the sidecars in the object store say (a worker's
    // folder may not have copied the latest).
    let sidecars = InStore {
        documents,
        rels: &rels,
    };
    let mut remedies = super::audit::Remedies::new(&sidecars);
    let mut found: Vec<String> = unread
        .into_iter()
        .map(|(part, e)| format!("the object store's list of the published documents of `{part}` could not be read: {e}"))
        .collect();
    for (rel, entry, held, rotten) in failed {
        let advice = match remedies.of(&rel) {
            Some(remedy) => {
                let first = match &remedy {
                    super::audit::Remedy::Publish { .. } if rotten => {
                        format!(
                            "remove that object, {}, first; then ",
                            documents.location(&rel)
                        )
                    }
                    _ => String::new(),
                };
                // Its stub is named whether or not this folder has one: the worker
                // that publishes must not have it. Written again without its sidecar, a
                // Resource Dump package is dated anew.
                let dated = rels.contains(&super::package::sidecar_of(&rel));
                format!("{first}{}", remedy.advice(&rel, true, true, dated))
            }
            None => "restore it from a backup of the bucket".to_string(),
        };
        found.push(format!(
            "www/{rel}: listed ({} bytes, SHA-256 {}), and the object store {held} (twice, the lists read again between); {advice}",
            entry.length, entry.sha256,
        ));
    }
    Ok((checked, found))
}

/// The sidecars of the published documents as the object store holds them: `rels`, the
/// documents its lists name, each read when asked for.
struct InStore<'a> {
    documents: &'a Documents,
    rels: &'a BTreeSet<String>,
}

impl super::package::Sidecars for InStore<'_> {
    fn lines(&self, rel: &str) -> Option<Vec<String>> {
        let bytes = self.documents.get(rel).ok().flatten()?;
        Some(
            String::from_utf8_lossy(&bytes)
                .lines()
                .map(str::to_string)
                .collect(),
        )
    }

    fn names(&self, folder: &str) -> Vec<String> {
        let prefix = format!("{folder}/");
        self.rels
            .range(prefix.clone()..)
            .take_while(|r| r.starts_with(&prefix))
            .map(|r| &r[prefix.len()..])
            .filter(|name| !name.contains('/'))
            .map(str::to_string)
            .collect()
    }
}

/// The packages the object store's lists name ([`listed_packages`]), and the
/// partitions whose list could not be read (a shard or manifest gone: replaced by a
/// publish meanwhile, or lost).
struct Listed {
    packages: BTreeMap<String, Entry>,
    unread: Vec<(String, PublishError)>,
    /// Every document the lists name.
    rels: BTreeSet<String>,
}

/// The dump packages the object store's lists of published documents name.
fn listed_packages(documents: &Documents, www: &Path) -> Result<Listed, PublishError> {
    let mut listed = Listed {
        packages: BTreeMap::new(),
        unread: Vec::new(),
        rels: BTreeSet::new(),
    };
    let mut take = |entries: Entries| {
        listed.rels.extend(entries.keys().cloned());
        listed
            .packages
            .extend(entries.into_iter().filter(|(rel, _)| only_in_store(rel)));
    };
    let Some(bytes) = documents.get(MANIFEST).map_err(store_err)? else {
        return Ok(listed);
    };
    let mut unread = Vec::new();
    match serde_json::from_slice::<Manifest>(&bytes) {
        Ok(m) if m.format > FORMAT => {
            return Err(PublishError::NewerDocuments {
                found: m.format,
                known: FORMAT,
            });
        }
        Ok(m) => {
            for part in m.parts.keys() {
                match fetch_part(documents, www, part, &Record::default()) {
                    Ok((entries, _, _)) => take(entries),
                    Err(e @ PublishError::Write { .. }) => unread.push((part.clone(), e)),
                    Err(e) => return Err(e),
                }
            }
        }
        // A manifest of every document (before partitions).
        Err(e) => take(
            serde_json::from_slice::<Entries>(&bytes).map_err(|_| bad_json(www, MANIFEST, &e))?,
        ),
    }
    listed.unread = unread;
    Ok(listed)
}

/// This folder's record of a partition's files as last copied (`.mirrored.json` and
/// its shards by year, `.mirrored-YYYY.json`), with the SHA-256 of each shard of the
/// object store's manifest the year's files were last in step with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Record {
    files: BTreeMap<String, Synced>,
    /// Year → SHA-256 of the object store's shard of that year.
    shards: Shards,
    /// `.mirrored.json` holds dated files too (written before shards): it is written
    /// again at the next change.
    unsharded: bool,
}

/// A year's shard of a [`Record`], as kept in `.mirrored-YYYY.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct RecordShard {
    sha256: String,
    files: BTreeMap<String, Synced>,
}

/// The shard a document is listed in, in manifests and records: the year (`YYYY`) of a
/// dated document (its name, or its sidecar's after the dot, starts with its UTC day:
/// closed Change Lists and Change Dumps, snapshots and their parts), which is written
/// once and then left alone; "" for the rest (live documents, archives, packages named
/// by content, state files).
fn bucket_of(rel: &str) -> &str {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let name = name.strip_prefix('.').unwrap_or(name);
    match name.get(..10) {
        Some(day) if super::layout::is_day(day) => &name[..4],
        _ => "",
    }
}

/// Whether `name` is a year's shard of a record (`.mirrored-YYYY.json`): its year.
fn shard_year(name: &str) -> Option<&str> {
    name.strip_prefix(SYNCED_STEM)?
        .strip_prefix('-')?
        .strip_suffix(".json")
        .filter(|y| y.len() == 4 && y.bytes().all(|b| b.is_ascii_digit()))
}

/// The files of `files` by [`bucket_of`].
fn by_bucket<T: Clone>(files: &BTreeMap<String, T>) -> BTreeMap<String, BTreeMap<String, T>> {
    let mut out: BTreeMap<String, BTreeMap<String, T>> = BTreeMap::new();
    for (rel, v) in files {
        out.entry(bucket_of(rel).to_string())
            .or_default()
            .insert(rel.clone(), v.clone());
    }
    out
}

impl Record {
    /// The record of `part` in `www` (empty if there is none).
    fn read(www: &Path, part: &str) -> Self {
        let mut files: BTreeMap<String, Synced> = read_json(&www.join(in_part(part, SYNCED)));
        let unsharded = files.keys().any(|rel| !bucket_of(rel).is_empty());
        let mut shards = BTreeMap::new();
        let dir = if part.is_empty() {
            www.to_path_buf()
        } else {
            www.join(part)
        };
        for e in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let Some(year) = shard_year(&name) else {
                continue;
            };
            let shard: RecordShard = read_json(&e.path());
            shards.insert(year.to_string(), shard.sha256);
            files.extend(shard.files);
        }
        Self {
            files,
            shards,
            unsharded,
        }
    }

    /// Writes what differs from `before` (the record as read): the shards whose files or
    /// digest changed, removing those left empty.
    fn write(&self, www: &Path, part: &str, before: &Record) -> Result<(), PublishError> {
        let (now, then) = (by_bucket(&self.files), by_bucket(&before.files));
        // The years first, `.mirrored.json` last: moving off a record of every file in
        // `.mirrored.json`, the dated files are in their shards before they leave it.
        let mut buckets: Vec<&String> = now
            .keys()
            .chain(then.keys())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        buckets.sort_by_key(|b| b.is_empty());
        for bucket in buckets {
            let files = now.get(bucket);
            let sha = self.shards.get(bucket);
            let same = files == then.get(bucket) && sha == before.shards.get(bucket);
            // Off a flat record, every bucket is written once.
            if same && !before.unsharded {
                continue;
            }
            let path = if bucket.is_empty() {
                www.join(in_part(part, SYNCED))
            } else {
                www.join(in_part(part, &format!("{SYNCED_STEM}-{bucket}.json")))
            };
            match files {
                None => {
                    remove_if_there(&path)?;
                }
                Some(files) if bucket.is_empty() => write_json(&path, files)?,
                Some(files) => write_json(
                    &path,
                    &RecordShard {
                        sha256: sha.cloned().unwrap_or_default(),
                        files: files.clone(),
                    },
                )?,
            }
        }
        // Dated files of an unsharded `.mirrored.json` whose live files are all gone.
        if before.unsharded && !now.contains_key("") {
            let _ = fs::remove_file(www.join(in_part(part, SYNCED)));
        }
        Ok(())
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
    /// The dump packages this publish copied up as it wrote them ([`Mirror::send_package`]).
    sent: std::sync::Mutex<BTreeSet<String>>,
}

/// What stops a push once the publish lock among workers is lost ([`Mirror::push`]):
/// it asks `catalog`, the connection that took the lock, whether it still holds it.
pub(super) struct Fence<'a> {
    catalog: &'a crate::store::Catalog,
    /// When the lock was last found held.
    asked: std::cell::Cell<Option<std::time::Instant>>,
}

impl<'a> Fence<'a> {
    /// The fence of the publish lock `catalog` took.
    pub(super) fn new(catalog: &'a crate::store::Catalog) -> Self {
        Self {
            catalog,
            asked: std::cell::Cell::new(None),
        }
    }

    /// Before a write that others' documents depend on (a manifest, a removal).
    pub(super) fn now(&self) -> Result<(), PublishError> {
        let reason = match self.catalog.holds_publishing() {
            Ok(true) => {
                self.asked.set(Some(std::time::Instant::now()));
                return Ok(());
            }
            Ok(false) => "PostgreSQL no longer holds it for this connection".into(),
            Err(e) => e.to_string(),
        };
        Err(PublishError::LockLost { reason })
    }

    /// Before a document: asked again once a second (the lock's check reads pg_locks,
    /// which a publish of many documents should not do per document).
    pub(super) fn now_and_then(&self) -> Result<(), PublishError> {
        match self.asked.get() {
            Some(t) if t.elapsed() < std::time::Duration::from_secs(1) => Ok(()),
            _ => self.now(),
        }
    }
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
        || name == OLD_PARTS
        || name == SENT
        || name == OLD_SYNCED
        || shard_year(name).is_some()
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

/// The object store's key of a year's shard of `part`'s manifest whose SHA-256 is
/// `sha256`: `<part>/.documents-YYYY-<16 hex>.json`. Named by content, a shard is never
/// overwritten, so a manifest always names the shard it was written with (a publish
/// stopped between the two leaves an unnamed shard, not a named one changed); shards no
/// longer named are deleted after the list of partitions.
fn shard_key(part: &str, year: &str, sha256: &str) -> String {
    in_part(
        part,
        &format!(
            "{PART_MANIFEST_STEM}-{year}-{}.json",
            sha256.get(..16).unwrap_or(sha256)
        ),
    )
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

/// `value` as the JSON of the object `key` (below `www/` in the object store).
fn to_json<T: Serialize>(www: &Path, key: &str, value: &T) -> Result<Vec<u8>, PublishError> {
    serde_json::to_vec(value).map_err(|e| PublishError::Write {
        path: www.join(key),
        source: io::Error::other(e),
    })
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), PublishError> {
    super::files::atomic_write(path, |out| {
        serde_json::to_writer(&mut *out, value).map_err(io::Error::other)
    })
}

/// Removes the file at `path`; whether it was there.
fn remove_if_there(path: &Path) -> Result<bool, PublishError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(write_err(path)(e)),
    }
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
    if only_in_store(name) {
        // Packages first, before their sidecars, manifests and the dumps that list them:
        // a push that stops part way leaves no document naming bytes not yet there (a
        // package written again under its name goes up in the push), and the SHA-256
        // kept with a package that went up tells the next pull it is not the one listed.
        0
    } else if name == SET_STATE || name == super::layout::CLOSED_MARK {
        // A set's records of the state its documents are in go up after all of
        // them: a worker that pulls them leaves the set (or those days) alone.
        6
    } else if rel.starts_with(".well-known/") {
        5
    } else if name == "capabilitylist.xml" {
        4
    } else if rel
        .rsplit('/')
        .nth(1)
        .is_some_and(|folder| folder.ends_with("-archive"))
    {
        // An archive's parts (`<kind>-archive/YYYY.xml`) list the dated documents and
        // are listed by the archive: between the two.
        2
    } else if name.starts_with('.') || name.contains(char::is_numeric) {
        // Dated and numbered documents (snapshots, closed change lists, chunks, dump
        // manifests), sidecars, the publisher's own state files.
        1
    } else {
        // Live documents, indexes, archives.
        3
    }
}

/// What to do when the object store's lists of published documents are not what plikt
/// wrote: this worker's folder becomes the source again. (Removing only the object store's
/// list would make every partition this folder knows look removed, and its copies go.)
const REBUILD: &str = "to have every set written and copied anew from this worker's folder, remove `www/.mirrored-sets.json` from its data folder and the object `www/.manifest.json`, then publish again";

/// Whether the dump package `rel`, which the object store lacks or holds other bytes of,
/// stays listed: only snapshots of past days list it (as the sidecars in `www` say), so
/// no publish writes it again, and forgotten it would drop from the lists while they
/// list it; kept, `plikt audit` names it until a copy from a backup brings it back.
fn kept_though_lost(www: &Path, rel: &str) -> bool {
    let past = super::audit::only_past_snapshots(www, rel);
    if past {
        tracing::warn!(package = %rel, "a dump package that only snapshots of past days list is missing from the object store or holds other bytes there, and plikt cannot write it again: restore it from a backup of the bucket (`plikt audit` names it)");
    }
    past
}

/// What a pull does with a dump package its lists name and the object store lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lost {
    /// Fails, naming it: a pull before the publish lock, while another worker's publish
    /// may be replacing it (one only snapshots of past days list is kept listed in both
    /// modes: no publish writes it again).
    Fail,
    /// Forgets it with what was written with it ([`forgotten_with`]), so that this
    /// publish writes it anew from the catalog: under the publish lock, where nothing
    /// else changes the object store, a package it lacks was lost.
    Forget,
}

/// The documents of the folder that go with the dump package `rel`, which the object
/// store lost, and are forgotten with it so that the next publish of its set writes it
/// anew from the catalog (no worker keeps its bytes): the set's state; for a Resource
/// Dump package, its stub and manifest and the Resource Dump's fingerprint (the snapshot
/// of the day is written again, and the package with it; its sidecar stays, whose times
/// make it the same bytes again, as past snapshots list it); for a Change Dump
/// package, every file of its day (its parts, their sidecars and manifests, the day's
/// Change Dump and marker) and the mark of the last day written, so that the day is
/// packed again whole and its Change Dump lists what is then in the object store.
fn forgotten_with(lost: &str) -> impl Fn(&str) -> bool + use<> {
    let (folder, file) = lost.rsplit_once('/').unwrap_or(("", lost));
    let (set, capability) = folder.rsplit_once('/').unwrap_or(("", folder));
    let stem = file.strip_suffix(".zip").unwrap_or(file).to_string();
    let kind = Kind::dump(capability);
    // What a publish needs gone to write it again: the set's state, and the Resource
    // Dump's fingerprint or the mark of the last Change Dump day packed.
    let with = kind.map_or_else(
        || vec![in_part(partition_of(lost), SET_STATE)],
        |k| super::audit::rewritten_with(set, k).to_vec(),
    );
    let folder = folder.to_string();
    move |rel: &str| {
        if with.iter().any(|w| w == rel) {
            return true;
        }
        let Some(name) = rel
            .strip_prefix(folder.as_str())
            .and_then(|r| r.strip_prefix('/'))
            .filter(|n| !n.contains('/'))
        else {
            return false;
        };
        let bare = name.strip_prefix('.').unwrap_or(name);
        if kind == Some(Kind::ChangeDump) {
            let day = stem.get(..10).unwrap_or(&stem);
            bare.strip_prefix(day)
                .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('-'))
        } else {
            bare.strip_prefix(stem.as_str())
                .is_some_and(|rest| rest == ".zip" || rest == "-manifest.xml")
        }
    }
}

/// What [`forgotten_with`] gives: whether a document goes with a lost package.
type Forgets = Box<dyn Fn(&str) -> bool>;

/// Removes from `www` and from `files` (a partition's record) what `forgets` names.
fn forget(
    www: &Path,
    part: &str,
    files: &mut BTreeMap<String, Synced>,
    forgetting: &[Forgets],
) -> Result<(), PublishError> {
    let forgets = |rel: &str| forgetting.iter().any(|f| f(rel));
    for rel in part_files(www, part)?.iter().filter(|r| forgets(r)) {
        remove_if_there(&www.join(rel))?;
    }
    files.retain(|rel, _| !forgets(rel));
    Ok(())
}

/// Dump packages this folder keeps stubs of and the object store lacks (path, and the
/// length of what it holds under that name instead, if anything): no worker holds their
/// bytes, but the catalog does. Each is forgotten with what was written with it
/// ([`forgotten_with`]), in the folder and its record, so that the next publish writes
/// it anew.
fn lost_packages(www: &Path, lost: &[(String, Option<Head>)]) -> PublishError {
    let mut by_part: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (rel, ..) in lost {
        by_part.entry(partition_of(rel)).or_default().push(rel);
    }
    let mut failed = None;
    for (part, rels) in by_part {
        let before = Record::read(www, part);
        let mut after = before.clone();
        let forgetting: Vec<Forgets> = rels
            .iter()
            .map(|lost| Box::new(forgotten_with(lost)) as Forgets)
            .collect();
        if let Err(e) = forget(www, part, &mut after.files, &forgetting)
            .and_then(|()| after.write(www, part, &before))
        {
            failed = Some(e);
        }
    }
    let (rel, found) = &lost[0];
    let held = held(found.as_ref());
    let more = match lost.len() {
        1 => String::new(),
        n => format!(
            " (and {} more: {})",
            n - 1,
            lost[1..]
                .iter()
                .map(|(r, ..)| r.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let then = match failed {
        None => "it is forgotten in this folder with what was written with it, so that the next publish writes it anew from the catalog, byte for byte: publish again".to_string(),
        Some(e) => {
            let remove: Vec<String> = super::package::dump_parts(rel)
                .map(|(set, kind, _)| super::audit::rewritten_with(set, kind))
                .into_iter()
                .flatten()
                .map(|f| format!("`www/{f}`"))
                .collect();
            format!(
                "forgetting it in this folder failed ({e}): remove `www/{rel}` (its stub), {}, then publish again",
                remove.join(", ")
            )
        }
    };
    PublishError::Write {
        path: www.join(rel),
        source: io::Error::other(format!(
            "a dump package kept in the object store only, and the object store {held}{more}; {then}"
        )),
    }
}

/// A list of published documents that the object store's lists name and it lacks.
fn missing(www: &Path, key: &str) -> PublishError {
    PublishError::Write {
        path: www.join(key),
        source: io::Error::other(format!(
            "the object store's list of published documents names `www/{key}`, which is missing; {REBUILD}"
        )),
    }
}

/// A document that a partition's list in the object store names and the store lacks.
fn missing_document(www: &Path, rel: &str) -> PublishError {
    // A package no worker keeps, but the catalog can make again.
    let whose = if only_in_store(rel) {
        "on any worker (the push finds the package missing, and the publish after it writes it anew from the catalog)"
    } else {
        "on a worker whose folder holds every document"
    };
    PublishError::Write {
        path: www.join(rel),
        source: io::Error::other(format!(
            "the object store's list of published documents names `www/{rel}`, which the object store does not have: another worker's publish may have replaced it while this one copied (publish again); if it stays missing, it was lost: {whose}, {REBUILD}"
        )),
    }
}

/// A JSON document of the object store that is not what plikt wrote.
fn bad_json(www: &Path, key: &str, e: &serde_json::Error) -> PublishError {
    PublishError::Write {
        path: www.join(key),
        source: io::Error::other(format!(
            "the object store's list of published documents `www/{key}` is not valid JSON ({e}); {REBUILD}"
        )),
    }
}

/// Whether `www` never copied the object store's documents (no record of its
/// partitions, nor the older record of every document): a new worker's folder.
pub(super) fn never_copied(www: &Path) -> bool {
    !www.join(PARTS).exists() && !www.join(OLD_PARTS).exists() && !www.join(OLD_SYNCED).exists()
}

/// This folder's record of its partitions: the one a plikt before stubs wrote, if there
/// is one (that plikt ran on the folder last), written again under the new name first.
fn read_parts(www: &Path) -> Result<BTreeMap<String, Part>, PublishError> {
    let old = www.join(OLD_PARTS);
    if !old.exists() {
        return Ok(read_json(&www.join(PARTS)));
    }
    let parts: BTreeMap<String, Part> = read_json(&old);
    write_json(&www.join(PARTS), &parts)?;
    match fs::remove_file(&old) {
        Ok(()) => Ok(parts),
        Err(e) => Err(write_err(&old)(e)),
    }
}

/// Brings `www` up to the object store's copy of the documents: downloads what
/// differs in the partitions that changed since this folder last saw them, removes what
/// another publish removed. Under the publish lock, except in a folder that never
/// copied them ([`never_copied`]): it reads the object store only, and writes nothing
/// there.
// Over 100 lines: see `push`.
pub(super) fn pull(
    documents: Documents,
    www: &Path,
    lost: Lost,
) -> Result<(Mirror, Copied), PublishError> {
    fs::create_dir_all(www).map_err(write_err(www))?;
    let _ = fs::remove_file(www.join(OLD_SYNCED));
    let mut parts = read_parts(www)?;
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
        let before = Record::read(www, part);
        let (entries, years, whole) = match legacy.as_mut() {
            Some(by_part) => (
                by_part.remove(part).unwrap_or_default(),
                BTreeMap::new(),
                true,
            ),
            None => fetch_part(&documents, www, part, &before)?,
        };
        // A shard's digest is kept in the record only if the shard fetched is the one the
        // manifest names.
        let years = if whole { years } else { Shards::new() };
        let as_listed = sync_part(
            &documents,
            www,
            part,
            before,
            &entries,
            years,
            lost,
            false,
            &mut copied,
        )? && whole;
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
        let before = Record::read(www, &part);
        sync_part(
            &documents,
            www,
            &part,
            before,
            &Entries::new(),
            BTreeMap::new(),
            lost,
            false,
            &mut copied,
        )?;
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
            sent: Default::default(),
        },
        copied,
    ))
}

/// The object store's manifest of `part`, whole: the shards of the years whose digest
/// is the one `known` (this folder's record) was last in step with are taken from the
/// record, the others fetched. Returns its documents, its shards' digests, and whether
/// each shard fetched is the one the manifest names (a publish stopped between writing
/// a shard and the manifest leaves a newer one: the set is then not in step).
fn fetch_part(
    documents: &Documents,
    www: &Path,
    part: &str,
    known: &Record,
) -> Result<(Entries, Shards, bool), PublishError> {
    let key = in_part(part, PART_MANIFEST);
    let Some(bytes) = documents.get(&key).map_err(store_err)? else {
        return Err(missing(www, &key));
    };
    let found: FoundPartManifest =
        serde_json::from_slice(&bytes).map_err(|e| bad_json(www, &key, &e))?;
    let PartManifest { mut entries, years } = match found {
        FoundPartManifest::Whole(entries) => return Ok((entries, BTreeMap::new(), true)),
        FoundPartManifest::Sharded(m) => m,
    };
    let mut whole = true;
    for (year, sha) in &years {
        if known.shards.get(year) == Some(sha) {
            entries.extend(
                known
                    .files
                    .iter()
                    .filter(|(rel, _)| bucket_of(rel) == year)
                    .map(|(rel, s)| (rel.clone(), s.entry())),
            );
            continue;
        }
        let key = shard_key(part, year, sha);
        let Some(bytes) = documents.get(&key).map_err(store_err)? else {
            return Err(missing(www, &key));
        };
        whole &= hex::encode(Sha256::digest(&bytes)) == *sha;
        let shard: Entries = serde_json::from_slice(&bytes).map_err(|e| bad_json(www, &key, &e))?;
        entries.extend(shard);
    }
    Ok((entries, years, whole))
}

/// Puts `part`'s manifest listing `now`: first the shards by year whose digest differs
/// from `known` (the object store's, as this folder's record has them), then the
/// manifest. Returns the manifest's SHA-256, the shards' digests, and the keys of the
/// shards it no longer names (deleted once the list of partitions no longer leads to
/// them).
fn put_part(
    documents: &Documents,
    www: &Path,
    part: &str,
    now: &Entries,
    known: &Shards,
) -> Result<PutPart, PublishError> {
    let mut buckets = by_bucket(now);
    let entries = buckets.remove("").unwrap_or_default();
    let mut years = BTreeMap::new();
    for (year, shard) in &buckets {
        let bytes = to_json(www, &in_part(part, PART_MANIFEST), shard)?;
        let sha = hex::encode(Sha256::digest(&bytes));
        let key = shard_key(part, year, &sha);
        if known.get(year) != Some(&sha) {
            documents.put(&key, Bytes::from(bytes)).map_err(store_err)?;
        }
        years.insert(year.clone(), sha);
    }
    let gone = known
        .iter()
        .filter(|(y, sha)| years.get(*y) != Some(*sha))
        .map(|(y, sha)| shard_key(part, y, sha))
        .collect();
    let key = in_part(part, PART_MANIFEST);
    let bytes = to_json(
        www,
        &key,
        &PartManifest {
            entries,
            years: years.clone(),
        },
    )?;
    let sha = hex::encode(Sha256::digest(&bytes));
    documents.put(&key, Bytes::from(bytes)).map_err(store_err)?;
    Ok(PutPart {
        sha256: sha,
        shards: years,
        stale: gone,
    })
}

/// Brings one partition of `www` to `entries` (the object store's manifest, whose
/// shards have the digests `shards`): downloads what differs, removes what is gone (of
/// what this folder copied before, `before`). Returns whether every file downloaded
/// had the digest the manifest gives it: an object is fetched by its path, and a
/// publish that stopped between copying a document up and writing the manifests leaves
/// bytes newer than the manifest says; the set is then not in step, and is written again.
// Over 100 lines: see `push`.
#[allow(clippy::too_many_arguments)]
fn sync_part(
    documents: &Documents,
    www: &Path,
    part: &str,
    before: Record,
    entries: &Entries,
    shards: Shards,
    lost: Lost,
    only_missing: bool,
    copied: &mut Copied,
) -> Result<bool, PublishError> {
    let mut synced = before.files.clone();
    let mut as_listed = true;
    let mut heads = Heads::new(documents);
    // Packages the object store lost, forgotten with what goes with them (`Lost::Forget`).
    let mut forgetting: Vec<Forgets> = Vec::new();
    let mut copy = |synced: &mut BTreeMap<String, Synced>| -> Result<(), PublishError> {
        for (rel, entry) in entries {
            if forgetting.iter().any(|f| f(rel)) {
                continue;
            }
            // One of the mirror's own files, which a plikt that did not know it took for
            // a document and copied up (this folder's record of partitions, by a plikt
            // before stubs): never copied down over the record; recorded, so that the next
            // push removes it from the object store.
            if is_own_file(rel.rsplit('/').next().unwrap_or(rel)) {
                synced.insert(rel.clone(), Synced::of(entry.length, 0, &entry.sha256));
                continue;
            }
            let path = www.join(rel);
            let current = stamp(&path).ok();
            // A restore of a set not in step brings back what the folder lacks, and
            // leaves what it has: a document written again since the last push (a push
            // that failed part way) goes up in the next push, not replaced by the object
            // store's copy, which may be older than the sidecars and dumps beside it.
            if only_missing && current.is_some() {
                continue;
            }
            let known = synced
                .get(rel)
                .is_some_and(|s| s.sha256 == entry.sha256 && current == Some(s.local_stamp()));
            if known {
                continue;
            }
            // A stub of the same package already here (a record lost, or written here
            // before).
            if let Some(here) = current
                && only_in_store(rel)
                && super::stub::read(&path).as_ref() == Some(entry)
            {
                synced.insert(rel.clone(), Synced::stub_of(entry, here));
                continue;
            }
            // The same bytes already here.
            if let Some((length, modified_ns)) = current
                && length == entry.length
                && sha256_of(&path).is_ok_and(|sha| sha == entry.sha256)
            {
                synced.insert(rel.clone(), Synced::of(length, modified_ns, &entry.sha256));
                continue;
            }
            // A package another worker wrote stays in the object store, if it is there
            // as listed. One it lacks, or holds other bytes of (a push that stopped part
            // way, then another worker's publish), was lost: under the publish lock it is
            // forgotten with what goes with it, and the publish writes it anew.
            if only_in_store(rel) {
                let head = heads.of(rel)?;
                // One only snapshots of past days list (as the set's sidecars, copied
                // before it, say), which no publish writes again, stays listed, so that
                // `plikt audit` names it and a copy from a backup of the bucket brings it
                // back; forgotten, it would drop from the lists while they list it.
                if holds(head.as_ref(), entry) || kept_though_lost(www, rel) {
                    let here = write_stub(&path, entry)?;
                    synced.insert(rel.clone(), Synced::stub_of(entry, here));
                    continue;
                }
                if lost == Lost::Fail {
                    return Err(match head {
                        None => missing_document(www, rel),
                        Some(_) => PublishError::Write {
                            path: www.join(rel),
                            source: io::Error::other(format!(
                                "the object store holds other bytes under the name of the dump package `www/{rel}` than its lists say: another worker's publish may be replacing it (publish again; under the publish lock the package is written anew)"
                            )),
                        },
                    });
                }
                tracing::warn!(package = %rel, found = ?head, "a dump package the object store's lists name is missing from it or holds other bytes: it is written anew from the catalog");
                forgetting.push(Box::new(forgotten_with(rel)));
                as_listed = false;
                continue;
            }
            super::files::fill_then_rename(&path, |tmp| {
                documents.download(rel, tmp).map_err(|e| {
                    if e.is_not_found() {
                        missing_document(www, rel)
                    } else {
                        store_err(e)
                    }
                })
            })?;
            let (length, modified_ns) = stamp(&path).map_err(write_err(&path))?;
            let sha256 = sha256_of(&path).map_err(write_err(&path))?;
            as_listed &= sha256 == entry.sha256;
            synced.insert(rel.clone(), Synced::of(length, modified_ns, &sha256));
            copied.files += 1;
            copied.bytes += length;
        }
        Ok(())
    };
    let copying = copy(&mut synced);
    if !forgetting.is_empty() {
        forget(www, part, &mut synced, &forgetting)?;
    }
    if let Err(e) = copying {
        // What was copied before the failure is recorded (without the shards' digests:
        // not in step), so that the next pull removes it if the object store no longer
        // lists it, rather than a push taking it for this folder's own and copying it
        // back.
        let partial = Record {
            files: synced,
            shards: BTreeMap::new(),
            unsharded: false,
        };
        partial.write(www, part, &before)?;
        return Err(e);
    }
    // Copied before and gone from the object store: another publish removed it.
    let gone: Vec<String> = synced
        .keys()
        .filter(|rel| !entries.contains_key(*rel))
        .cloned()
        .collect();
    for rel in gone {
        if remove_if_there(&www.join(&rel))? {
            copied.removed += 1;
        }
        synced.remove(&rel);
    }
    // A shard's digest is kept only if its files are as the manifest lists them.
    let after = Record {
        files: synced,
        shards: if as_listed { shards } else { BTreeMap::new() },
        unsharded: false,
    };
    after.write(www, part, &before)?;
    Ok(as_listed)
}

impl Mirror {
    /// Puts back what the folder lost of a set's documents as last copied (a file
    /// removed by hand, a folder restored in part), from the object store, before the
    /// set is written: what the publish does not write again (closed days, snapshots)
    /// would otherwise be taken for removed and deleted from the object store too. A set
    /// in step has in the folder what its record says, and a file that differs is put
    /// back as well (edited or damaged by hand); a set not in step holds writes the last
    /// push did not finish, which are left for the next push.
    pub(super) fn restore(&self, dir: &str) -> Result<Copied, PublishError> {
        let before = Record::read(&self.www, dir);
        let entries: Entries = before
            .files
            .iter()
            .map(|(rel, s)| (rel.clone(), s.entry()))
            .collect();
        let mut copied = Copied::default();
        let shards = before.shards.clone();
        sync_part(
            &self.documents,
            &self.www,
            dir,
            before,
            &entries,
            shards,
            Lost::Forget,
            !self.in_step(dir),
            &mut copied,
        )?;
        Ok(copied)
    }

    /// Copies the dump package just written at `path` (below `www`; `length` bytes of
    /// SHA-256 `sha256`) up to the object store and leaves a stub of it in the folder,
    /// so that a publish holds one package at a time whatever it writes, if the object
    /// store has nothing under its name: nothing links to it until the push copies up
    /// the dumps that list it, leaves first as ever, and the push then knows it is there.
    /// A package written again under a name the object store has (a day packed again)
    /// stays whole until the push, as every other document: the documents that list the
    /// bytes there now keep matching them until the push replaces both, and a publish
    /// stopped before its push leaves the object store as it was.
    pub(super) fn send_package(
        &self,
        path: &Path,
        length: u64,
        sha256: &str,
    ) -> Result<(), PublishError> {
        let rel = path
            .strip_prefix(&self.www)
            .map_err(|_| {
                write_err(path)(io::Error::other("a package outside the published folder"))
            })?
            .to_string_lossy()
            .replace('\\', "/");
        if self.documents.head(&rel).map_err(store_err)?.is_some() {
            return Ok(());
        }
        // Named before it goes up: a publish stopped before its push leaves it to the
        // next push, which removes it if nothing lists it by then.
        let sent_path = self.www.join(SENT);
        let mut unlisted: BTreeSet<String> = read_json(&sent_path);
        if unlisted.insert(rel.clone()) {
            write_json(&sent_path, &unlisted)?;
        }
        let entry = Entry {
            length,
            sha256: sha256.to_string(),
        };
        upload(&self.documents, &self.www, &rel, &entry)?;
        write_stub(path, &entry)?;
        self.sent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(rel);
        Ok(())
    }

    /// Whether this publish copied the package `rel` up as it wrote it.
    fn was_sent(&self, rel: &str) -> bool {
        self.sent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(rel)
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
    /// removes what the publish removed. Writes nothing when nothing changed. `fence`
    /// stops the push once the publish lock among workers is lost (it ends with its
    /// catalog connection: a PostgreSQL restart), after which another worker's newer
    /// documents may be there: it is asked before each manifest and each removal, and
    /// at least once a second among the documents.
    // Over 100 lines, as `pull` and `sync_part`: the mirror goes whole with one document interface (issue 35 §1).
    pub(super) fn push(
        mut self,
        touched: Touched<'_>,
        fence: &Fence<'_>,
    ) -> Result<Copied, PublishError> {
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
        let mut changed: Vec<Changed> = Vec::new();
        let mut removed: Vec<String> = Vec::new();
        let mut walked_now: Vec<Walked> = Vec::new();
        for part in &walked {
            let before = Record::read(&www, part);
            let synced = &before.files;
            // In step since the pull: the object store's manifest of the partition is
            // what this folder's record says.
            let in_store = self.remote.contains_key(part);
            let mut now = Entries::new();
            let mut now_synced = BTreeMap::new();
            let mut differs = self.legacy || !in_store;
            for rel in part_files(&www, part)? {
                let path = www.join(&rel);
                let here = stamp(&path).map_err(write_err(&path))?;
                let file = match synced.get(&rel) {
                    Some(s) if s.local_stamp() == here => s.clone(),
                    _ => match super::stub::read(&path).filter(|_| only_in_store(&rel)) {
                        Some(entry) => Synced::stub_of(&entry, here),
                        None => {
                            if only_in_store(&rel) && !is_zip(&path) {
                                return Err(not_a_package(&www, &rel));
                            }
                            let sha256 = sha256_of(&path).map_err(write_err(&path))?;
                            Synced::of(here.0, here.1, &sha256)
                        }
                    },
                };
                let entry = file.entry();
                let before = synced.get(&rel).filter(|_| in_store);
                if before.is_none_or(|s| s.entry() != entry) {
                    changed.push(Changed {
                        rank: rank(&rel),
                        rel: rel.clone(),
                        entry: entry.clone(),
                        stub: file.stub.is_some(),
                    });
                    differs = true;
                }
                now_synced.insert(rel.clone(), file);
                now.insert(rel, entry);
            }
            for rel in synced.keys().filter(|rel| !now.contains_key(*rel)) {
                removed.push(rel.clone());
                differs = true;
            }
            walked_now.push(Walked {
                part: part.clone(),
                now,
                synced: now_synced,
                differs,
                before,
            });
        }
        let mut copied = Copied::default();
        // The documents this push copied up.
        let mut uploaded: BTreeSet<&str> = BTreeSet::new();
        let documents = self.documents.clone();
        let mut heads = Heads::new(&documents);
        // The shards' digests of the manifests written, by partition.
        let mut shards: BTreeMap<String, Shards> = BTreeMap::new();
        if walked_now.iter().any(|w| w.differs) {
            changed.sort_by(|a, b| (a.rank, &a.rel).cmp(&(b.rank, &b.rel)));
            // Stubs are never copied up: the object store is to hold their packages
            // already (sent as they were written, or their record was lost, or the
            // object store's lists were removed to be written anew from this folder).
            // Those it lacks are named before anything is copied.
            let mut lost: Vec<(String, Option<Head>)> = Vec::new();
            for Changed { rel, entry, .. } in changed.iter().filter(|c| c.stub) {
                if self.was_sent(rel) {
                    continue;
                }
                let found = heads.of(rel)?;
                if !holds(found.as_ref(), entry) {
                    // Kept listed, as a pull keeps it ([`sync_part`]).
                    if kept_though_lost(&www, rel) {
                        continue;
                    }
                    lost.push((rel.clone(), found));
                }
            }
            if !lost.is_empty() {
                return Err(lost_packages(&www, &lost));
            }
            for Changed { rel, entry, .. } in changed.iter().filter(|c| !c.stub) {
                fence.now_and_then()?;
                upload(&self.documents, &www, rel, entry)?;
                uploaded.insert(rel.as_str());
                copied.files += 1;
                copied.bytes += entry.length;
            }
            // The partitions' manifests (their shards first), then the list of them.
            let mut stale: Vec<String> = Vec::new();
            for Walked {
                part,
                now,
                differs,
                before,
                ..
            } in &walked_now
            {
                if !differs {
                    continue;
                }
                if now.is_empty() {
                    self.remote.remove(part);
                    stale.push(in_part(part, PART_MANIFEST));
                    stale.extend(before.shards.iter().map(|(y, sha)| shard_key(part, y, sha)));
                    continue;
                }
                // What the object store has of the shards, unless it is to be written
                // whole (a manifest of every document, or a partition it lacks).
                let known = if self.legacy || !self.remote.contains_key(part) {
                    BTreeMap::new()
                } else {
                    before.shards.clone()
                };
                fence.now()?;
                let put = put_part(&self.documents, &www, part, now, &known)?;
                self.remote.insert(part.clone(), put.sha256);
                shards.insert(part.clone(), put.shards);
                stale.extend(put.stale);
            }
            let manifest = Manifest {
                format: FORMAT,
                parts: self.remote.clone(),
            };
            let bytes = to_json(&www, MANIFEST, &manifest)?;
            fence.now()?;
            self.documents
                .put(MANIFEST, Bytes::from(bytes))
                .map_err(store_err)?;
            for rel in &removed {
                fence.now()?;
                self.documents.delete(rel).map_err(store_err)?;
                copied.removed += 1;
            }
            for key in &stale {
                fence.now()?;
                self.documents.delete(key).map_err(store_err)?;
            }
        }
        // Packages copied up as they were written: listed now, or, in a partition
        // walked, no longer in the folder (a publish stopped before its push, then the
        // package's content changed) and so listed by nothing: removed.
        let sent_path = www.join(SENT);
        let unlisted: BTreeSet<String> = read_json(&sent_path);
        if !unlisted.is_empty() {
            let mut left = BTreeSet::new();
            for rel in unlisted {
                let Some(Walked { now, .. }) =
                    walked_now.iter().find(|w| w.part == partition_of(&rel))
                else {
                    left.insert(rel);
                    continue;
                };
                if !now.contains_key(&rel) {
                    fence.now()?;
                    self.documents.delete(&rel).map_err(store_err)?;
                    copied.removed += 1;
                }
            }
            if left.is_empty() {
                remove_if_there(&sent_path)?;
            } else {
                write_json(&sent_path, &left)?;
            }
        }
        // This folder's records: what each partition walked now is in the object store.
        let parts_before = self.parts.clone();
        for Walked {
            part,
            now,
            synced: mut now_synced,
            before,
            ..
        } in walked_now
        {
            if now.is_empty() {
                Record::default().write(&www, &part, &before)?;
                self.parts.remove(&part);
                continue;
            }
            // Every package is in the object store now: the folder keeps a stub of it.
            // One this push did not copy up (kept whole by a plikt before stubs) is
            // looked for first, and copied up if the object store lacks it: the folder
            // may hold its last copy.
            for (rel, file) in now_synced
                .iter_mut()
                .filter(|(rel, file)| only_in_store(rel) && file.stub.is_none())
            {
                let entry = file.entry();
                let path = www.join(rel);
                if !uploaded.contains(rel.as_str()) && !holds(heads.of(rel)?.as_ref(), &entry) {
                    fence.now_and_then()?;
                    upload(&self.documents, &www, rel, &entry)?;
                    copied.files += 1;
                    copied.bytes += entry.length;
                }
                *file = Synced::stub_of(&entry, write_stub(&path, &entry)?);
            }
            let record = Record {
                files: now_synced,
                shards: shards
                    .remove(&part)
                    .unwrap_or_else(|| before.shards.clone()),
                unsharded: false,
            };
            record.write(&www, &part, &before)?;
            let state = stamp(&www.join(in_part(&part, SET_STATE))).ok();
            let sha256 = self.remote.get(&part).cloned().unwrap_or_default();
            self.parts.insert(part, Part { sha256, state });
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
        let tmp = tempfile::Builder::new()
            .prefix("plikt-mirror-parts-")
            .tempdir()
            .unwrap();
        let www = tmp.path();
        for rel in [
            ".well-known/resourcesync",
            ".mirrored-parts.json",
            ".mirrored-sets.json",
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
        assert_eq!(part_files(www, "").unwrap(), [".well-known/resourcesync"]);
        assert_eq!(
            part_files(www, "resourcesync/a").unwrap(),
            [
                "resourcesync/a/changelist.xml",
                "resourcesync/a/changelist/2026-11-25.xml"
            ]
        );
        assert_eq!(
            part_files(www, "resourcesync/a/restricted").unwrap(),
            ["resourcesync/a/restricted/changelist.xml"]
        );
        assert_eq!(local_files(www).unwrap().len(), 5);
    }

    #[test]
    fn dated_documents_are_kept_by_year_and_a_record_is_written_by_the_year_that_changed() {
        for (rel, bucket) in [
            ("resourcesync/a/changelist/2026-11-25.xml", "2026"),
            ("resourcesync/a/changedump/.2025-01-02.packages", "2025"),
            ("resourcesync/a/changedump/2025-01-02.zip", "2025"),
            (
                "resourcesync/a/resourcelist/2024-03-01-part-00001.xml",
                "2024",
            ),
            ("resourcesync/a/changelist.xml", ""),
            ("resourcesync/a/changelist-archive/2026.xml", ""),
            ("resourcesync/a/resourcedump/0123456789abcdef.zip", ""),
            ("resourcesync/a/.published", ""),
        ] {
            assert_eq!(bucket_of(rel), bucket, "{rel}");
        }
        assert_eq!(shard_year(".mirrored-2026.json"), Some("2026"));
        assert_eq!(shard_year(PARTS), None);
        assert!(is_own_file(".mirrored-2025.json"));
        assert_eq!(
            shard_key("resourcesync/a", "2026", &"ab".repeat(32)),
            "resourcesync/a/.documents-2026-abababababababab.json"
        );

        let tmp = tempfile::Builder::new()
            .prefix("plikt-mirror-record-")
            .tempdir()
            .unwrap();
        let www = tmp.path();
        let part = "resourcesync/a";
        fs::create_dir_all(www.join(part)).unwrap();
        let s = |n: u64| Synced::of(n, u128::from(n), "x");
        let day = |d: &str| format!("{part}/changelist/{d}.xml");
        // A record of before shards: every file in `.mirrored.json`.
        let old: BTreeMap<String, Synced> = [
            (format!("{part}/changelist.xml"), s(1)),
            (day("2025-12-31"), s(2)),
            (day("2026-01-01"), s(3)),
        ]
        .into_iter()
        .collect();
        write_json(&www.join(in_part(part, SYNCED)), &old).unwrap();
        let before = Record::read(www, part);
        assert!(before.unsharded);
        assert_eq!(before.files, old);
        // Split by year at the next change, and read back whole.
        let mut now = before.clone();
        now.unsharded = false;
        now.files.insert(day("2026-01-02"), s(4));
        now.shards = [("2025", "a"), ("2026", "b")]
            .map(|(y, h)| (y.to_string(), h.to_string()))
            .into();
        now.write(www, part, &before).unwrap();
        let read = Record::read(www, part);
        assert_eq!(read, now);
        let live: BTreeMap<String, Synced> = read_json(&www.join(in_part(part, SYNCED)));
        assert_eq!(
            live.keys().collect::<Vec<_>>(),
            [&format!("{part}/changelist.xml")]
        );
        // A change of this year's files leaves last year's shard as it was.
        let shard_2025 = www.join(part).join(".mirrored-2025.json");
        let written = fs::metadata(&shard_2025).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut next = read.clone();
        next.files.insert(day("2026-01-03"), s(5));
        next.shards.insert("2026".into(), "c".into());
        next.write(www, part, &read).unwrap();
        assert_eq!(
            fs::metadata(&shard_2025).unwrap().modified().unwrap(),
            written
        );
        assert_eq!(Record::read(www, part), next);
        // Nothing left: no record.
        Record::default().write(www, part, &next).unwrap();
        assert_eq!(fs::read_dir(www.join(part)).unwrap().count(), 0);
        // Off a flat record with nothing changed and no shard digests (a restore before
        // the first push, a pull of a manifest of format 2): every file stays recorded.
        write_json(&www.join(in_part(part, SYNCED)), &old).unwrap();
        let flat = Record::read(www, part);
        let same = Record {
            unsharded: false,
            ..flat.clone()
        };
        same.write(www, part, &flat).unwrap();
        let read = Record::read(www, part);
        assert_eq!(read.files, old);
        assert!(!read.unsharded);
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
            "resourcesync/a/changedump/.2026-11-25.meta",
            "resourcesync/a/changedump/2026-11-25.xml",
            "resourcesync/a/.resourcelist.fingerprint",
            "resourcesync/a/.published",
            "resourcesync/a/changedump/.closed",
            "resourcesync/a/changelist/2026-11-25.xml",
            "resourcesync/a/changelist-archive/2026.xml",
            "resourcesync/a/changelist-archive.xml",
        ];
        docs.sort_by_key(|d| (rank(d), *d));
        let pos = |d: &str| docs.iter().position(|x| *x == d).unwrap();
        let before = |a: &str, b: &str| assert!(pos(a) < pos(b), "{a} after {b}: {docs:?}");
        before(
            "resourcesync/a/changedump/2026-11-25.zip",
            "resourcesync/a/resourcelist.xml",
        );
        // A package before its sidecar and the day's Change Dump, which name its bytes.
        before(
            "resourcesync/a/changedump/2026-11-25.zip",
            "resourcesync/a/changedump/.2026-11-25.meta",
        );
        before(
            "resourcesync/a/changedump/2026-11-25.zip",
            "resourcesync/a/changedump/2026-11-25.xml",
        );
        before(
            "resourcesync/a/resourcelist-2026-11-20.xml",
            "resourcesync/a/resourcelist-archive.xml",
        );
        // A year's part of an archive after the days it lists, before the index.
        before(
            "resourcesync/a/changelist/2026-11-25.xml",
            "resourcesync/a/changelist-archive/2026.xml",
        );
        before(
            "resourcesync/a/changelist-archive/2026.xml",
            "resourcesync/a/changelist-archive.xml",
        );
        before(
            "resourcesync/a/resourcelist.xml",
            "resourcesync/a/capabilitylist.xml",
        );
        before(
            "resourcesync/a/capabilitylist.xml",
            ".well-known/resourcesync",
        );
        assert!(pos("resourcesync/a/.published") >= docs.len() - 2);
        assert!(pos("resourcesync/a/changedump/.closed") >= docs.len() - 2);
    }
}

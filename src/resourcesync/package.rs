//! Dump packages (§11, §13): a ZIP of resources at their paths plus `manifest.xml`
//! (`path` with a leading `/`, `hash`, `length`, `type`, the same links as the lists,
//! and `rel="up"` to the Capability List, §11.2, §13.2); a byte-identical copy of the
//! manifest sits beside the package (`<stem>-manifest.xml`, linked from the dump as
//! `rel="contents"`), and a sidecar `.<stem>.meta` keeps the package's length, hash,
//! `at` and `completed` so that listing it again costs nothing.
//!
//! Packages stream: the ZIP and its manifest are written to temporary files as files
//! are added, so memory does not grow with a package's size or entries.

use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::files::{
    COMPLETED_PLACEHOLDER, completed_offset, read_sidecar, write_err, write_sidecar,
};
use super::layout::{CLOSED_MARK, Kind, SET_STATE};
use super::{DocumentWriter, Entry, Ln, Md, PublishError, Root, Set};
use crate::store::{PublishedFile, digest_file, sync_dir};

/// A finished package.
#[derive(Debug, Clone)]
pub(super) struct Package {
    /// Its URL.
    pub url: String,
    /// The URL of the copy of its manifest.
    pub manifest_url: String,
    /// Its length.
    pub length: u64,
    /// `md5:… sha-256:…`.
    pub hash: String,
    /// When its writing started.
    pub at: String,
    /// When it was complete.
    pub completed: String,
}

impl Package {
    /// The package `<stem>.zip` in `folder` (URL `folder_url`) as its sidecar recorded
    /// it, if it is complete.
    pub(super) fn recorded(folder: &Path, folder_url: &str, stem: &str) -> Option<Package> {
        let lines = read_sidecar(&folder.join(format!(".{stem}.meta")))?;
        if !folder.join(format!("{stem}.zip")).exists() {
            return None;
        }
        let [length, hash, at, completed] = lines.get(..4)? else {
            return None;
        };
        Some(Package {
            url: format!("{folder_url}/{stem}.zip"),
            manifest_url: format!("{folder_url}/{stem}-manifest.xml"),
            length: length.parse().ok()?,
            hash: hash.clone(),
            at: at.clone(),
            completed: completed.clone(),
        })
    }

    /// The `at` and `completed` its sidecar `.<stem>.meta` in `folder` keeps, whether or
    /// not the package is there: a package lost since it was written is written again
    /// with them, so that its bytes, and the hash every snapshot lists it with, stay the
    /// same (given the same files and records).
    pub(super) fn recorded_times(folder: &Path, stem: &str) -> Option<(String, String)> {
        let lines = read_sidecar(&folder.join(format!(".{stem}.meta")))?;
        let [_, _, at, completed] = lines.get(..4)? else {
            return None;
        };
        Some((at.clone(), completed.clone()))
    }

    /// Records it in its sidecar `.<stem>.meta` in `folder`.
    pub(super) fn record(&self, folder: &Path, stem: &str) -> Result<(), PublishError> {
        write_sidecar(
            &folder.join(format!(".{stem}.meta")),
            &[
                &self.length.to_string(),
                &self.hash,
                &self.at,
                &self.completed,
            ],
        )
    }

    /// Its entry in a dump: type, length, hash, and `extra` (`at`/`completed` or
    /// `from`/`until`); `rel="contents"` to the copy of its manifest.
    pub(super) fn entry(&self, extra: Md) -> Entry {
        let mut md = Md::default()
            .with("type", "application/zip")
            .with("length", self.length.to_string())
            .with("hash", self.hash.clone());
        md.0.extend(extra.0);
        Entry {
            loc: self.url.clone(),
            md: Some(md),
            lns: vec![
                Ln::new("contents", self.manifest_url.clone()).with("type", "application/xml"),
            ],
            ..Entry::default()
        }
    }
}

/// Where a package puts its files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Paths {
    /// At the resource's path (a Resource Dump: one version of each resource).
    Current,
    /// At the version's path (a Change Dump: a resource changed twice in a period has
    /// two bitstreams, §13.2).
    Version,
}

/// A package being written: the ZIP and its manifest, each in a temporary file.
pub(super) struct PackageWriter {
    zip: Option<zip::ZipWriter<BufWriter<File>>>,
    manifest: Option<DocumentWriter<BufWriter<File>>>,
    dir: PathBuf,
    stem: String,
    /// The ZIP being written.
    tmp: PathBuf,
    /// The manifest being written.
    manifest_tmp: PathBuf,
    /// Where the manifest's `completed` placeholder is, if it has one.
    completed_at: Option<u64>,
    at: String,
    /// The manifest's `completed` when given (a package written again), not filled in.
    completed: Option<String>,
    paths: Paths,
    /// Bytes added so far.
    pub bytes: u64,
    /// Files added so far.
    pub files: u64,
}

impl std::fmt::Debug for PackageWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackageWriter")
            .field("tmp", &self.tmp)
            .finish()
    }
}

fn zip_err(path: &Path) -> impl Fn(zip::result::ZipError) -> PublishError {
    let path = path.to_path_buf();
    move |e| PublishError::Write {
        path: path.clone(),
        source: io::Error::other(e.to_string()),
    }
}

impl PackageWriter {
    /// Starts `<dir>/<stem>.zip`, whose manifest has `md` (if it ends with a
    /// `completed` placeholder, the time the package is finished goes there; a
    /// `completed` time given is the package's) and an `up`
    /// link to the Capability List `cap`; its files go at `paths`.
    pub(super) fn new(
        dir: &Path,
        stem: &str,
        md: Md,
        cap: &str,
        paths: Paths,
    ) -> Result<Self, PublishError> {
        let pid = std::process::id();
        let tmp = dir.join(format!(".{stem}.zip.{pid}.tmp"));
        let manifest_tmp = dir.join(format!(".{stem}-manifest.xml.{pid}.tmp"));
        let lns = [Ln::new("up", cap.to_string())];
        let completed_at = match md.0.last() {
            Some(("completed", v)) if v == COMPLETED_PLACEHOLDER => {
                Some(completed_offset(Root::UrlSet, &lns, &md).map_err(write_err(&manifest_tmp))?)
            }
            _ => None,
        };
        let given = |key: &str| md.0.iter().find(|(k, _)| *k == key).map(|(_, v)| v.clone());
        let at = given("at").unwrap_or_else(|| crate::store::now().to_string());
        let completed = given("completed").filter(|_| completed_at.is_none());
        let file = File::create(&tmp).map_err(write_err(&tmp))?;
        let mut w = Self {
            zip: Some(zip::ZipWriter::new(BufWriter::new(file))),
            manifest: None,
            dir: dir.to_path_buf(),
            stem: stem.to_string(),
            tmp,
            manifest_tmp,
            completed_at,
            at,
            completed,
            paths,
            bytes: 0,
            files: 0,
        };
        // Read back into the package when it is finished.
        let out = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&w.manifest_tmp)
            .map_err(write_err(&w.manifest_tmp))?;
        w.manifest = Some(
            DocumentWriter::new(BufWriter::new(out), Root::UrlSet, &lns, &md)
                .map_err(write_err(&w.manifest_tmp))?,
        );
        Ok(w)
    }

    /// Adds a file, preceded by its version's metadata record when it is the version's
    /// first file (as in the lists).
    pub(super) fn add(
        &mut self,
        set: &Set<'_>,
        f: &PublishedFile,
        change: Option<(&str, &str)>,
    ) -> Result<(), PublishError> {
        let manifest = self.manifest.as_mut().expect("open until finish");
        if f.first_of_version {
            let bytes = set.record_of(f).map_err(write_err(&self.tmp))?;
            let path = match self.paths {
                Paths::Current => format!("d/{}/{}/metadata.xml", set.publisher, f.deposit_id),
                Paths::Version => format!(
                    "d/{}/{}/v{}/metadata.xml",
                    set.publisher, f.deposit_id, f.version_id
                ),
            };
            set.write_record(manifest, f, change, Some(&format!("/{path}")))
                .map_err(write_err(&self.manifest_tmp))?;
            self.put(&path, &mut &bytes[..], bytes.len() as u64)?;
            self.bytes += bytes.len() as u64;
        }
        let path = match self.paths {
            Paths::Current => super::resource_path(set.publisher, f.deposit_id, &f.url),
            Paths::Version => {
                super::version_path(set.publisher, f.deposit_id, f.version_id, &f.url)
            }
        };
        let manifest = self.manifest.as_mut().expect("open until finish");
        set.write_file(manifest, f, change, Some(&format!("/{path}")))
            .map_err(write_err(&self.manifest_tmp))?;
        // `io::copy` brings its own buffer: no BufReader (and its allocation) per file.
        // An object is streamed a few chunks at a time (issue 17 §2).
        let mut input = set
            .blobs
            .reader(&f.sha256, f.pack.as_ref())
            .map_err(crate::store::StoreError::from)?;
        self.put(&path, &mut input, f.length)?;
        self.bytes += f.length;
        self.files += 1;
        Ok(())
    }

    /// Stores `length` bytes from `input` at `path` in the package, as they are (most
    /// resources are compressed already).
    fn put(&mut self, path: &str, input: &mut dyn Read, length: u64) -> Result<(), PublishError> {
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            .large_file(length >= u64::from(u32::MAX));
        let zip = self.zip.as_mut().expect("open until finish");
        zip.start_file(path, options).map_err(zip_err(&self.tmp))?;
        io::copy(input, zip).map_err(write_err(&self.tmp))?;
        Ok(())
    }

    /// Ends the manifest, puts it into the package and beside it (byte for byte the
    /// same: `<stem>-manifest.xml`), and moves the package into place as
    /// `<dir>/<stem>.zip`; `folder_url` is `dir`'s URL. With an object store a package
    /// under a name it does not have goes there at once, and the folder keeps a stub of
    /// it ([`super::mirror::Mirror::send_package`]).
    pub(super) fn finish(
        mut self,
        set: &Set<'_>,
        folder_url: &str,
    ) -> Result<Package, PublishError> {
        let manifest_err = write_err(&self.manifest_tmp);
        let mut manifest = self
            .manifest
            .take()
            .expect("open until finish")
            .finish()
            .and_then(|out| out.into_inner().map_err(io::IntoInnerError::into_error))
            .map_err(&manifest_err)?;
        let completed = self
            .completed
            .take()
            .unwrap_or_else(|| crate::store::now().to_string());
        if let Some(at) = self.completed_at {
            manifest
                .seek(SeekFrom::Start(at))
                .and_then(|_| manifest.write_all(completed.as_bytes()))
                .map_err(&manifest_err)?;
        }
        manifest.sync_all().map_err(&manifest_err)?;
        manifest.seek(SeekFrom::Start(0)).map_err(&manifest_err)?;
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        let mut zip = self.zip.take().expect("open until finish");
        zip.start_file("manifest.xml", options)
            .map_err(zip_err(&self.tmp))?;
        io::copy(&mut BufReader::new(&manifest), &mut zip).map_err(&manifest_err)?;
        drop(manifest);
        let file = zip
            .finish()
            .map_err(zip_err(&self.tmp))?
            .into_inner()
            .map_err(|e| write_err(&self.tmp)(e.into_error()))?;
        file.sync_all().map_err(write_err(&self.tmp))?;
        drop(file);
        let (dir, stem) = (self.dir.clone(), self.stem.clone());
        let name = format!("{stem}.zip");
        let target = dir.join(&name);
        let manifest_name = format!("{stem}-manifest.xml");
        fs::rename(&self.tmp, &target).map_err(write_err(&target))?;
        fs::rename(&self.manifest_tmp, dir.join(&manifest_name))
            .map_err(write_err(&dir.join(&manifest_name)))?;
        sync_dir(&dir).map_err(write_err(&dir))?;
        // The package's own digests and length, for the Resource Dump.
        let digests = digest_file(&target).map_err(write_err(&target))?;
        if let Some(mirror) = set.spec.mirror {
            mirror.send_package(&target, digests.length, &digests.sha256)?;
        }
        Ok(Package {
            url: format!("{folder_url}/{name}"),
            manifest_url: format!("{folder_url}/{manifest_name}"),
            length: digests.length,
            hash: format!("md5:{} sha-256:{}", digests.md5, digests.sha256),
            at: self.at.clone(),
            completed,
        })
    }
}

impl Drop for PackageWriter {
    fn drop(&mut self) {
        // Removes the temporary files of an abandoned package (no-ops after the renames).
        let _ = fs::remove_file(&self.tmp);
        let _ = fs::remove_file(&self.manifest_tmp);
    }
}

/// What is wrong with a package the folder's dumps list.
enum Wrong {
    /// Its sidecar (its length, hash and times) is gone.
    NoSidecar,
    /// The file is gone; the sidecar says what it was.
    Missing { length: u64, hash: String },
    /// The file holds other bytes.
    Other {
        length: u64,
        hash: String,
        held_length: u64,
        held_hash: String,
    },
}

/// What brings back a package of the folder as listed.
pub(super) enum Remedy {
    /// These files removed (besides the package), then a publish: it is written again
    /// from the catalog, byte for byte. `unlisted`: the folder's dumps do not list it
    /// (a worker that has not copied the object store's documents since it was
    /// written), so whether only past snapshots list it is not known.
    Publish { remove: Vec<String>, unlisted: bool },
    /// None: only the Resource Dump snapshots of these past days list it, and plikt
    /// writes again only the live Resource Dump's packages.
    Restore(Vec<String>),
}

/// How the package `<stem>.zip` in `folder` compares with its sidecar; `None` if it is
/// as listed.
fn compare(folder: &Path, stem: &str) -> Result<Option<Wrong>, PublishError> {
    let Some(lines) = read_sidecar(&folder.join(format!(".{stem}.meta"))) else {
        return Ok(Some(Wrong::NoSidecar));
    };
    let (Some(length), Some(hash)) = (lines.first().and_then(|l| l.parse().ok()), lines.get(1))
    else {
        return Ok(Some(Wrong::NoSidecar));
    };
    let hash = hash.clone();
    let path = folder.join(format!("{stem}.zip"));
    match digest_file(&path) {
        Ok(d) => {
            let held_hash = format!("md5:{} sha-256:{}", d.md5, d.sha256);
            Ok(
                (d.length != length || held_hash != hash).then_some(Wrong::Other {
                    length,
                    hash,
                    held_length: d.length,
                    held_hash,
                }),
            )
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Some(Wrong::Missing { length, hash })),
        Err(e) => Err(write_err(&path)(e)),
    }
}

impl Remedy {
    /// What the audit says to do for the package `rel` (under `www`): `there`, whether a
    /// file is in its place (the package, or with an object store its stub);
    /// `object_store`, whether the package is kept there.
    pub(super) fn advice(&self, rel: &str, there: bool, object_store: bool) -> String {
        match self {
            Remedy::Publish { remove, unlisted } => {
                let stub = if object_store { " (its stub)" } else { "" };
                let remove: Vec<String> = there
                    .then(|| format!("`www/{rel}`{stub}"))
                    .into_iter()
                    .chain(remove.iter().map(|f| format!("`www/{f}`")))
                    .collect();
                let (from, there) = if object_store {
                    (" from one worker's data folder", " there")
                } else {
                    ("", "")
                };
                let unlisted = if *unlisted {
                    " (this data folder's dumps do not list it yet: if only Resource Dump snapshots of past days list it, plikt does not write it again, and a backup must bring it back)"
                } else {
                    ""
                };
                format!(
                    "to have it written again from the catalog, byte for byte as listed, remove {}{from}, and publish{there}{unlisted}",
                    remove.join(", ")
                )
            }
            Remedy::Restore(days) => format!(
                "only the Resource Dump snapshots of {} list it, and plikt writes again only the live Resource Dump's packages: restore {} (until then a Destination that checks its hash finds it differs)",
                days.join(", "),
                if object_store {
                    "the object from a backup of the bucket"
                } else {
                    "it from a backup of data_dir/www"
                }
            ),
        }
    }
}

/// What brings back the package `rel` (under `www`) as the dumps in `www` list it, or
/// as its kind's are brought back if they do not list it; `None` if `rel` is no dump
/// package's path.
pub(super) fn remedy_of(www: &Path, rel: &str) -> Option<Remedy> {
    let (folder, name) = rel.rsplit_once('/')?;
    let (set, capability) = folder.rsplit_once('/')?;
    let stem = name.strip_suffix(".zip")?;
    let kind = [Kind::ResourceDump, Kind::ChangeDump]
        .into_iter()
        .find(|k| k.capability() == capability)?;
    let listed = listed_in(www, set, kind)
        .into_iter()
        .find_map(|(s, remedy)| (s == stem).then_some(remedy));
    Some(listed.unwrap_or_else(|| Remedy::Publish {
        remove: rewritten_with(set, kind),
        unlisted: true,
    }))
}

/// What to remove, besides a package of the set `set`'s dump of `kind`, for the next
/// publish to write it again: the set's state, and for a Resource Dump the fingerprint
/// that keeps the day's snapshot, for a Change Dump the mark of the last day packed
/// (then every written day is looked at, and a day that lacks a package packed again).
fn rewritten_with(set: &str, kind: Kind) -> Vec<String> {
    let last = if kind == Kind::ResourceDump {
        format!("{set}/{}", super::archive::fingerprint_file(kind))
    } else {
        format!("{set}/{}/{CLOSED_MARK}", kind.capability())
    };
    vec![format!("{set}/{SET_STATE}"), last]
}

/// The packages the dump folder `<set>/<kind>` under `www` lists, each with what would
/// bring it back.
fn listed_in(www: &Path, set: &str, kind: Kind) -> Vec<(String, Remedy)> {
    let folder = www.join(set).join(kind.capability());
    let publish = || Remedy::Publish {
        remove: rewritten_with(set, kind),
        unlisted: false,
    };
    if kind == Kind::ResourceDump {
        // The day of the snapshot the live Resource Dump copies: its packages are those
        // a publish writes again.
        let fingerprint = www.join(set).join(super::archive::fingerprint_file(kind));
        let live = read_sidecar(&fingerprint).and_then(|l| l.get(1).cloned());
        super::resource_dump::listed_packages(&folder)
            .into_iter()
            .map(|(stem, days)| {
                let remedy = if live.as_ref().is_some_and(|d| days.contains(d)) {
                    publish()
                } else {
                    Remedy::Restore(days)
                };
                (stem, remedy)
            })
            .collect()
    } else {
        super::change_dump::listed_packages(&folder)
            .into_keys()
            .map(|stem| (stem, publish()))
            .collect()
    }
}

/// Every dump package the dumps in the folder `www` list (with the local folder: the
/// packages of every kept Resource Dump snapshot and every Change Dump day) read again
/// and compared with the length and hash its sidecar, and so its dump, lists: (packages
/// checked, a line for each that is missing or holds other bytes, saying what brings it
/// back). One that differs is looked at again, listed anew, before it is reported: a
/// publish may be replacing it meanwhile.
pub(super) fn audit_folder(www: &Path) -> Result<(u64, Vec<String>), PublishError> {
    // The dump folders: `<set>/resourcedump/…`, `<set>/changedump/…`.
    let mut folders: Vec<(String, Kind)> = Vec::new();
    for rel in super::mirror::local_files(www)? {
        let Some((set, capability)) = rel
            .rsplit_once('/')
            .and_then(|(parent, _)| parent.rsplit_once('/'))
        else {
            continue;
        };
        for kind in [Kind::ResourceDump, Kind::ChangeDump] {
            let folder = (set.to_string(), kind);
            if capability == kind.capability() && !folders.contains(&folder) {
                folders.push(folder);
            }
        }
    }
    let mut checked = 0;
    let mut found = Vec::new();
    for (set, kind) in &folders {
        let folder = www.join(set).join(kind.capability());
        for (stem, _) in listed_in(www, set, *kind) {
            checked += 1;
            if compare(&folder, &stem)?.is_none() {
                continue;
            }
            let Some((_, remedy)) = listed_in(www, set, *kind)
                .into_iter()
                .find(|(s, _)| *s == stem)
            else {
                continue;
            };
            let Some(wrong) = compare(&folder, &stem)? else {
                continue;
            };
            let rel = format!("{set}/{}/{stem}.zip", kind.capability());
            found.push(finding(&rel, &wrong, &remedy));
        }
    }
    Ok((checked, found))
}

/// The audit's line for the package `rel` (under `www`).
fn finding(rel: &str, wrong: &Wrong, remedy: &Remedy) -> String {
    let (listed, what, there) = match wrong {
        Wrong::NoSidecar => {
            let sidecar = match rel.rsplit_once('/') {
                Some((folder, name)) => format!("{folder}/.{}", name.replace(".zip", ".meta")),
                None => rel.to_string(),
            };
            return format!(
                "www/{rel}: listed, and its sidecar `www/{sidecar}` (its length, hash and times) is gone (looked at twice); restore both from a backup of data_dir/www"
            );
        }
        Wrong::Missing { length, hash } => (
            format!("{length} bytes, {hash}"),
            "the file is missing".to_string(),
            false,
        ),
        Wrong::Other {
            length,
            hash,
            held_length,
            held_hash,
        } => (
            format!("{length} bytes, {hash}"),
            format!("the file holds {held_length} bytes, {held_hash}"),
            true,
        ),
    };
    let advice = remedy.advice(rel, there, false);
    format!("www/{rel}: listed ({listed}), and {what} (looked at twice); {advice}")
}

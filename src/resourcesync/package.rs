//! Dump packages (§11, §13): a ZIP of resources at their paths plus `manifest.xml`
//! (`path` with a leading `/`, `hash`, `length`, `type`, the same links as the lists,
//! and `rel="up"` to the Capability List, §11.2, §13.2); a byte-identical copy of the
//! manifest sits beside the package (`<stem>-manifest.xml`, linked from the dump as
//! `rel="contents"`), and a sidecar `.<stem>.meta` keeps the package's length, hash,
//! `at` and `completed` so that listing it again costs nothing.
//!
//! Packages stream: the ZIP and its manifest are written to temporary files as files
//! are added, so memory does not grow with a package's size or entries.

use std::collections::HashMap;
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
        if !folder.join(format!("{stem}.zip")).exists() {
            return None;
        }
        Self::in_sidecar(folder, folder_url, stem)
    }

    /// The package `<stem>.zip` in `folder` (URL `folder_url`) as its sidecar
    /// `.<stem>.meta` records it, whether or not it is there. A package lost since it was
    /// written is written again with its `at` and `completed`, so that its bytes, and the
    /// hash every snapshot lists it with, stay the same (given the same files and
    /// records); the audit compares a package with its length and hash.
    pub(super) fn in_sidecar(folder: &Path, folder_url: &str, stem: &str) -> Option<Package> {
        let lines = read_sidecar(&folder.join(format!(".{stem}.meta")))?;
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

    /// The SHA-256 of its hash (`md5:… sha-256:…`).
    pub(super) fn sha256(&self) -> Option<&str> {
        self.hash.split("sha-256:").nth(1).map(str::trim)
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

impl Paths {
    /// Where `f`'s version's metadata record goes in the package.
    fn record(self, set: &Set<'_>, f: &PublishedFile) -> String {
        match self {
            Paths::Current => format!("d/{}/{}/metadata.xml", set.publisher, f.deposit_id),
            Paths::Version => format!(
                "d/{}/{}/v{}/metadata.xml",
                set.publisher, f.deposit_id, f.version_id
            ),
        }
    }

    /// Where `f` goes in the package.
    fn file(self, set: &Set<'_>, f: &PublishedFile) -> String {
        match self {
            Paths::Current => super::resource_path(set.publisher, f.deposit_id, &f.url),
            Paths::Version => {
                super::version_path(set.publisher, f.deposit_id, f.version_id, &f.url)
            }
        }
    }
}

/// What a file takes of a package, counted before the package is written, so that a
/// package stays within `dump_package_bytes` (before, only the files' bytes were
/// counted: with 400,000, packages of 412–417 kB came out).
pub(super) struct Sizer {
    /// Manifest entries are written here only to be counted.
    manifest: DocumentWriter<io::Sink>,
    /// The manifest's head (before its entries).
    head: u64,
    paths: Paths,
}

/// A ZIP entry's headers besides its path, twice (local and central): 30 + 46 bytes,
/// and room for ZIP64 extra fields (20 + 28).
const ZIP_ENTRY: u64 = 30 + 46 + 20 + 28;

impl Sizer {
    /// For packages whose manifest links `up` to `cap`, their files at `paths`.
    pub(super) fn new(cap: &str, paths: Paths) -> io::Result<Self> {
        let lns = [Ln::new("up", cap.to_string())];
        let manifest = DocumentWriter::new(io::sink(), Root::UrlSet, &lns, &Self::md())?;
        Ok(Self {
            head: manifest.bytes(),
            manifest,
            paths,
        })
    }

    /// The manifest's `rs:md` at its widest.
    fn md() -> Md {
        Md::capability("resourcedump-manifest")
            .with("at", COMPLETED_PLACEHOLDER)
            .with("completed", COMPLETED_PLACEHOLDER)
    }

    /// What every package takes besides its files: the manifest's head and end and its
    /// ZIP entry, and the ZIP's end records (22 bytes, and ZIP64's 56 + 20).
    pub(super) fn fixed(&self) -> u64 {
        self.head
            + "</urlset>\n".len() as u64
            + ZIP_ENTRY
            + 2 * "manifest.xml".len() as u64
            + 22
            + 76
    }

    /// What `f` takes of a package: its bytes, its record's when it is its version's
    /// first file, their paths and headers in the ZIP, their manifest entries.
    pub(super) fn cost(&mut self, set: &Set<'_>, f: &PublishedFile) -> io::Result<u64> {
        let before = self.manifest.bytes();
        let mut zip = 0;
        if f.first_of_version {
            let path = self.paths.record(set, f);
            let length = match &f.record {
                Some(d) => d.length,
                None => set.record_of(f)?.len() as u64,
            };
            set.write_record(&mut self.manifest, f, None, Some(&format!("/{path}")))?;
            zip += ZIP_ENTRY + 2 * path.len() as u64 + length;
        }
        let path = self.paths.file(set, f);
        set.write_file(&mut self.manifest, f, None, Some(&format!("/{path}")))?;
        zip += ZIP_ENTRY + 2 * path.len() as u64 + f.length;
        // In the manifest inside the ZIP and in its copy beside it alike; the copy is
        // not in the package, but the manifest in it is.
        Ok(zip + (self.manifest.bytes() - before))
    }
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
            let path = self.paths.record(set, f);
            set.write_record(manifest, f, change, Some(&format!("/{path}")))
                .map_err(write_err(&self.manifest_tmp))?;
            self.put(&path, &mut &bytes[..], bytes.len() as u64)?;
            self.bytes += bytes.len() as u64;
        }
        let path = self.paths.file(set, f);
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
            hash: hash_of(&digests),
            at: self.at.clone(),
            completed,
        })
    }
}

/// A package's hash as dumps list it: `md5:… sha-256:…`.
fn hash_of(d: &crate::store::Digests) -> String {
    format!("md5:{} sha-256:{}", d.md5, d.sha256)
}

/// The sidecar (`<folder>/.<stem>.meta`) of the package at `rel` (`<folder>/<stem>.zip`).
pub(super) fn sidecar_of(rel: &str) -> String {
    let (folder, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    let stem = name.strip_suffix(".zip").unwrap_or(name);
    format!("{folder}/.{stem}.meta")
}

/// The set, the dump and the name (without `.zip`) of the dump package at `rel`
/// (`<set>/<resourcedump|changedump>/<stem>.zip`); `None` for any other path.
pub(super) fn dump_parts(rel: &str) -> Option<(&str, Kind, &str)> {
    let (folder, name) = rel.rsplit_once('/')?;
    let (set, capability) = folder.rsplit_once('/')?;
    Some((set, Kind::dump(capability)?, name.strip_suffix(".zip")?))
}

impl Drop for PackageWriter {
    fn drop(&mut self) {
        // Removes the temporary files of an abandoned package (no-ops after the renames).
        let _ = fs::remove_file(&self.tmp);
        let _ = fs::remove_file(&self.manifest_tmp);
    }
}

/// Where the audit reads a dump folder's sidecars (`.<day>.packages`, `.<stem>.meta`,
/// the set's fingerprints): the data folder, or the object store's copy of the
/// published documents, which every worker's folder copies.
pub(super) trait Sidecars {
    /// The lines of the sidecar `rel` (below `www/`), if it is there.
    fn lines(&self, rel: &str) -> Option<Vec<String>>;
    /// The names of the files in the folder `rel` (below `www/`).
    fn names(&self, folder: &str) -> Vec<String>;
}

/// The sidecars of the data folder `www`.
pub(super) struct InFolder<'a>(pub &'a Path);

impl Sidecars for InFolder<'_> {
    fn lines(&self, rel: &str) -> Option<Vec<String>> {
        read_sidecar(&self.0.join(rel))
    }

    fn names(&self, folder: &str) -> Vec<String> {
        super::files::names_in(&self.0.join(folder))
    }
}

/// What is wrong with a package its dump lists.
enum Wrong {
    /// Its sidecar (its length, hash and times) is gone.
    NoSidecar,
    /// The file is gone.
    Missing(Package),
    /// The file holds other bytes.
    Other {
        listed: Package,
        length: u64,
        hash: String,
    },
    /// The file could not be read.
    Unreadable(io::Error),
}

/// What brings back a package as its dump lists it.
#[derive(Debug, Clone)]
pub(super) enum Remedy {
    /// These files removed (besides the package), then a publish: it is written again
    /// from the catalog, byte for byte. `unsure`: the sidecars read do not list it, or
    /// do not say which snapshot is live, so whether only past snapshots list it is not
    /// known.
    Publish { remove: Vec<String>, unsure: bool },
    /// None: only the Resource Dump snapshots of these past days list it, and plikt
    /// writes again only the live Resource Dump's packages.
    Restore(Vec<String>),
}

impl Remedy {
    /// What the audit says to do for the package `rel` (below `www/`): `there`, whether
    /// a file is in its place (the package, or with an object store its stub);
    /// `object_store`, whether the package is kept there; `dated`, whether its times are
    /// known (a Resource Dump package's sidecar keeps them).
    pub(super) fn advice(&self, rel: &str, there: bool, object_store: bool, dated: bool) -> String {
        match self {
            Remedy::Publish { remove, unsure } => {
                let stub = if object_store {
                    " (its stub, if it is there)"
                } else {
                    ""
                };
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
                let unsure = if *unsure {
                    "; the dumps' sidecars do not say whether the live dump lists it: if only Resource Dump snapshots of past days do, plikt does not write it again, and a backup must bring it back"
                } else {
                    ""
                };
                let changed = if rel.contains("/resourcedump/") {
                    " (a package of a Resource Dump whose set changed since its last publish is then listed by a past snapshot only, as the next audit says)"
                } else {
                    ""
                };
                let how = if dated {
                    "byte for byte as listed"
                } else {
                    "dated anew, so snapshots of past days that list it no longer match"
                };
                format!(
                    "to have it written again from the catalog, {how}, remove {}{from}, and publish{there}{changed}{unsure}",
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

/// What brings back packages, as the dumps `sidecars` hold list them: each dump's
/// sidecars read once, when a package of it is first asked for.
pub(super) struct Remedies<'a> {
    sidecars: &'a dyn Sidecars,
    /// `(set, dump)` → its packages and what brings each back.
    listed: HashMap<(String, &'static str), Vec<(String, Remedy)>>,
}

impl<'a> Remedies<'a> {
    pub(super) fn new(sidecars: &'a dyn Sidecars) -> Self {
        Self {
            sidecars,
            listed: HashMap::new(),
        }
    }

    /// What brings back the package `rel` (below `www/`) as its dump lists it; `None`
    /// if its dump does not list it, or `rel` is no dump package's path.
    pub(super) fn listed(&mut self, rel: &str) -> Option<Remedy> {
        let (set, kind, stem) = dump_parts(rel)?;
        self.listed
            .entry((set.to_string(), kind.capability()))
            .or_insert_with(|| listed_in(self.sidecars, set, kind))
            .iter()
            .find_map(|(s, remedy)| (s == stem).then(|| remedy.clone()))
    }

    /// [`Remedies::listed`], or, if its dump does not list it, what brings back a
    /// package of its kind; `None` if `rel` is no dump package's path.
    pub(super) fn of(&mut self, rel: &str) -> Option<Remedy> {
        let (set, kind, _) = dump_parts(rel)?;
        Some(self.listed(rel).unwrap_or_else(|| Remedy::Publish {
            remove: rewritten_with(set, kind).to_vec(),
            unsure: true,
        }))
    }
}

/// Whether only snapshots of past days list the dump package `rel` (below `www/`), as
/// the sidecars in the data folder `www` say: no publish writes it again.
pub(super) fn only_past_snapshots(www: &Path, rel: &str) -> bool {
    matches!(
        Remedies::new(&InFolder(www)).of(rel),
        Some(Remedy::Restore(_))
    )
}

/// What to remove, besides a package of the set `set`'s dump of `kind`, for the next
/// publish to write it again: the set's state, and for a Resource Dump the fingerprint
/// that keeps the day's snapshot, for a Change Dump the mark of the last day packed
/// (then every written day is looked at, and a day that lacks a package is packed
/// again).
pub(super) fn rewritten_with(set: &str, kind: Kind) -> [String; 2] {
    let last = if kind == Kind::ResourceDump {
        format!("{set}/{}", super::archive::fingerprint_file(kind))
    } else {
        format!("{set}/{}/{CLOSED_MARK}", kind.capability())
    };
    [format!("{set}/{SET_STATE}"), last]
}

/// The packages the dump of `kind` of the set `set` lists, as the `sidecars` say,
/// each with what would bring it back.
fn listed_in(sidecars: &dyn Sidecars, set: &str, kind: Kind) -> Vec<(String, Remedy)> {
    let folder = format!("{set}/{}", kind.capability());
    let publish = |unsure| Remedy::Publish {
        remove: rewritten_with(set, kind).to_vec(),
        unsure,
    };
    if kind == Kind::ResourceDump {
        // The day of the snapshot the live Resource Dump copies: its packages are those
        // a publish writes again.
        let fingerprint = format!("{set}/{}", super::archive::fingerprint_file(kind));
        let live = sidecars.lines(&fingerprint).and_then(|l| l.get(1).cloned());
        super::resource_dump::listed_packages(sidecars, &folder)
            .into_iter()
            .map(|(stem, days)| {
                // Past only if the live day is known (a folder without the fingerprint
                // would make every package look past).
                let remedy = match &live {
                    Some(d) if !days.contains(d) => Remedy::Restore(days),
                    Some(_) => publish(false),
                    None => publish(true),
                };
                (stem, remedy)
            })
            .collect()
    } else {
        super::change_dump::listed_packages(sidecars, &folder)
            .into_iter()
            .map(|stem| (stem, publish(false)))
            .collect()
    }
}

/// How the package `<stem>.zip` in `folder` (below `www`) compares with its sidecar;
/// `None` if it is as listed.
fn compare(www: &Path, folder: &str, stem: &str) -> Option<Wrong> {
    let Some(listed) = Package::in_sidecar(&www.join(folder), "", stem) else {
        return Some(Wrong::NoSidecar);
    };
    match digest_file(&www.join(format!("{folder}/{stem}.zip"))) {
        Ok(d) => {
            let hash = hash_of(&d);
            (d.length != listed.length || hash != listed.hash).then_some(Wrong::Other {
                listed,
                length: d.length,
                hash,
            })
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Some(Wrong::Missing(listed)),
        Err(e) => Some(Wrong::Unreadable(e)),
    }
}

/// The dump folders below `www`: `(set, kind)` of every `<set>/resourcedump` and
/// `<set>/changedump` folder.
fn dump_folders(www: &Path) -> Vec<(String, Kind)> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<(String, Kind)>) {
        for e in fs::read_dir(dir).into_iter().flatten().flatten() {
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let name = e.file_name().to_string_lossy().to_string();
            match Kind::dump(&name) {
                Some(kind) if !rel.is_empty() => out.push((rel.to_string(), kind)),
                _ => {
                    let rel = if rel.is_empty() {
                        name
                    } else {
                        format!("{rel}/{name}")
                    };
                    walk(&e.path(), &rel, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(www, "", &mut out);
    out.sort_by(|a, b| (&a.0, a.1.capability()).cmp(&(&b.0, b.1.capability())));
    out
}

/// Every dump package the dumps in the data folder `www` list (with the local folder:
/// the packages of every kept Resource Dump snapshot and every Change Dump day) read
/// again and compared with the length and hash its sidecar recorded, which its dumps
/// list: (packages checked, a line for each that is missing, holds other bytes or cannot
/// be read, saying what brings it back). Those that differ are looked at again after
/// all were read, listed anew, and reported only if they still differ: a publish may
/// be replacing them meanwhile.
pub(super) fn audit_folder(www: &Path) -> (u64, Vec<String>) {
    let sidecars = InFolder(www);
    let mut checked = 0;
    let mut suspects = Vec::new();
    for (set, kind) in dump_folders(www) {
        let folder = format!("{set}/{}", kind.capability());
        for (stem, _) in listed_in(&sidecars, &set, kind) {
            checked += 1;
            if compare(www, &folder, &stem).is_some() {
                suspects.push((set.clone(), kind, stem));
            }
        }
    }
    // Listed anew, each dump once.
    let mut remedies = Remedies::new(&sidecars);
    let mut found = Vec::new();
    for (set, kind, stem) in suspects {
        let folder = format!("{set}/{}", kind.capability());
        let rel = format!("{folder}/{stem}.zip");
        let Some(remedy) = remedies.listed(&rel) else {
            continue;
        };
        if let Some(wrong) = compare(www, &folder, &stem) {
            let there = www.join(&rel).exists();
            found.push(finding(&rel, &wrong, &remedy, there));
        }
    }
    (checked, found)
}

/// The audit's line for the package `rel` (below `www/`) of the data folder; `there`:
/// whether a file is in its place.
fn finding(rel: &str, wrong: &Wrong, remedy: &Remedy, there: bool) -> String {
    let listed = |p: &Package| format!("listed ({} bytes, {})", p.length, p.hash);
    let what = match wrong {
        Wrong::NoSidecar => format!(
            "listed, and its sidecar www/{} (its length, hash and times) is gone",
            sidecar_of(rel)
        ),
        Wrong::Missing(p) => format!("{}, and the file is missing", listed(p)),
        Wrong::Other {
            listed: p,
            length,
            hash,
        } => format!("{}, and the file holds {length} bytes, {hash}", listed(p)),
        Wrong::Unreadable(e) => format!("listed, and the file could not be read: {e}"),
    };
    let dated = !(matches!(wrong, Wrong::NoSidecar) && rel.contains("/resourcedump/"));
    let advice = remedy.advice(rel, there, false, dated);
    format!("www/{rel}: {what} (looked at twice); {advice}")
}

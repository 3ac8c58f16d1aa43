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
use super::layout::Kind;
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
pub(super) fn hash_of(d: &crate::store::Digests) -> String {
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

//! Resource Dump (§13): the set's current resources in ZIP packages of at most
//! `dump_package_bytes` and [`PART_ENTRIES`] files, each holding the resources at their
//! paths and a `manifest.xml` (`capability="resourcedump-manifest"`, `path` with a
//! leading `/`, `hash`, `length`, `type`); a copy of each manifest sits beside its
//! package and the Resource Dump links it as `rel="contents"`. Packages are rebuilt
//! only when the set changed (its count of files or the journal's last change), so
//! publishing after a harvest that changed nothing copies nothing.
//!
//! Change Dump (§14): the changes of each closed Change List period in one package, or
//! past [`PART_ENTRIES`] files in parts `<day>-part-NNNNN.zip`; written once.
//!
//! Packages stream: the ZIP and its manifest are written to temporary files as files
//! are added, so memory does not grow with a package's size or entries.

use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::{
    COMPLETED_PLACEHOLDER, DocumentWriter, Entry, Ln, Md, PART_ENTRIES, PublishError, Root, Set,
    SetSpec, atomic_write, completed_offset, list_document,
};
use crate::store::{PublishedFile, digest_file, sync_dir};

/// Writes the set's Resource Dump (if its content changed); returns the packages.
pub(super) fn write_resource_dump(set: &Set<'_>, package_bytes: u64) -> Result<u64, PublishError> {
    let SetSpec {
        www,
        base,
        dir,
        cap,
        ..
    } = set.spec;
    let dump_doc = www.join(format!("{dir}/resourcedump.xml"));
    let packages_dir = www.join(format!("{dir}/resourcedump"));
    let fingerprint = &set.fingerprint;
    let stamp = packages_dir.join(".fingerprint");
    if dump_doc.exists() && fs::read_to_string(&stamp).is_ok_and(|s| s == *fingerprint) {
        return Ok(0);
    }
    let err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| PublishError::Write { path, source }
    };
    fs::create_dir_all(&packages_dir).map_err(err(&packages_dir))?;
    let dump_url = format!("{base}{dir}/resourcedump.xml");
    let folder_url = format!("{base}{dir}/resourcedump");
    let stem = |n: usize| format!("part-{n:05}");

    // Group the files into packages, streaming: a package is closed when the next file
    // would take it past the limit.
    let mut packages: Vec<Package> = Vec::new();
    let mut current: Option<PackageWriter> = None;
    let mut failure: Option<PublishError> = None;
    set.current_files(None, &mut |f| {
        if failure.is_some() {
            return Ok(());
        }
        let step = (|| {
            if current.as_ref().is_some_and(|p| {
                (p.bytes > 0 && p.bytes + f.length > package_bytes) || p.files >= PART_ENTRIES
            }) {
                let p = current.take().expect("checked");
                packages.push(p.finish(&folder_url)?);
            }
            if current.is_none() {
                current = Some(PackageWriter::new(
                    &packages_dir,
                    &stem(packages.len() + 1),
                    Md::capability("resourcedump-manifest")
                        .with("at", crate::store::now())
                        .with("completed", COMPLETED_PLACEHOLDER),
                    &dump_url,
                )?);
            }
            current.as_mut().expect("set above").add(set, f, None)
        })();
        if let Err(e) = step {
            failure = Some(e);
        }
        Ok(())
    })?;
    if let Some(e) = failure {
        return Err(e);
    }
    if let Some(p) = current.take() {
        packages.push(p.finish(&folder_url)?);
    }
    // Packages of an earlier, larger dump.
    if let Ok(entries) = fs::read_dir(&packages_dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let n: Option<usize> = name
                .strip_prefix("part-")
                .and_then(|n| n.split(['.', '-']).next())
                .and_then(|n| n.parse().ok());
            if n.is_some_and(|n| n > packages.len()) {
                let _ = fs::remove_file(e.path());
            }
        }
    }
    list_document(
        &dump_doc,
        Root::UrlSet,
        &[Ln::new("up", cap.to_string())],
        "resourcedump",
        &mut |w| {
            for p in &packages {
                w.entry(&Entry {
                    loc: p.url.clone(),
                    md: Some(
                        Md::default()
                            .with("type", "application/zip")
                            .with("length", p.length.to_string())
                            .with("hash", p.hash.clone())
                            .with("at", p.at.clone())
                            .with("completed", p.completed.clone()),
                    ),
                    lns: vec![
                        Ln::new("contents", p.manifest_url.clone()).with("type", "application/xml"),
                    ],
                    ..Entry::default()
                })?;
            }
            Ok(true)
        },
    )?;
    atomic_write(&stamp, |out| out.write_all(fingerprint.as_bytes()))?;
    Ok(packages.len() as u64)
}

/// Writes the set's Change Dump: the packages of each closed Change List period
/// (written once, like the closed lists; each package's length and hash kept in a
/// sidecar file so that listing it costs nothing), listed in `changedump.xml`. Returns
/// the packages written.
pub(super) fn write_change_dump(
    set: &Set<'_>,
    closed: &[(String, String)],
) -> Result<u64, PublishError> {
    let SetSpec {
        www,
        base,
        dir,
        cap,
        ..
    } = set.spec;
    let folder = www.join(format!("{dir}/changedump"));
    fs::create_dir_all(&folder).map_err(|source| PublishError::Write {
        path: folder.clone(),
        source,
    })?;
    let folder_url = format!("{base}{dir}/changedump");
    let doc_url = format!("{base}{dir}/changedump.xml");
    let mut written = 0;
    let mut listed: Vec<(Package, String, String)> = Vec::new();
    for (from, until) in closed {
        let day = from.get(..10).unwrap_or(from).to_string();
        if let Some(packages) = written_day(&folder, &folder_url, &day) {
            listed.extend(
                packages
                    .into_iter()
                    .map(|p| (p, from.clone(), until.clone())),
            );
            continue;
        }
        // A day past PART_ENTRIES files is packed in parts.
        let files = set.count_journal(from, Some(until), PART_ENTRIES + 1)?;
        let parted = files > PART_ENTRIES;
        let stem = |n: u64| {
            if parted {
                format!("{day}-part-{n:05}")
            } else {
                day.clone()
            }
        };
        let md = Md::capability("changedump-manifest")
            .with("from", from.clone())
            .with("until", until.clone());
        let mut package: Option<PackageWriter> = None;
        let mut done: Vec<Package> = Vec::new();
        let mut failure: Option<PublishError> = None;
        set.journal(from, Some(until), None, &mut |e, f| {
            if failure.is_some() {
                return Ok(());
            }
            let step = (|| {
                if package.as_ref().is_some_and(|p| p.files >= PART_ENTRIES) {
                    let p = package.take().expect("checked");
                    done.push(p.finish(&folder_url)?);
                }
                if package.is_none() {
                    let n = done.len() as u64 + 1;
                    package = Some(PackageWriter::new(&folder, &stem(n), md.clone(), &doc_url)?);
                }
                package
                    .as_mut()
                    .expect("set above")
                    .add(set, f, Some((&e.change, &e.at)))
            })();
            if let Err(e) = step {
                failure = Some(e);
            }
            Ok(())
        })?;
        if let Some(e) = failure {
            return Err(e);
        }
        if let Some(p) = package {
            done.push(p.finish(&folder_url)?);
        }
        // A period without changes has no package.
        if done.is_empty() {
            continue;
        }
        for (n, p) in done.iter().enumerate() {
            let sidecar = format!("{}\n{}\n{}\n{}\n", p.length, p.hash, p.at, p.completed);
            let meta = folder.join(format!(".{}.meta", stem(n as u64 + 1)));
            atomic_write(&meta, |out| out.write_all(sidecar.as_bytes()))?;
        }
        // The day is complete: how many packages it has.
        atomic_write(&folder.join(format!(".{day}.packages")), |out| {
            out.write_all(done.len().to_string().as_bytes())
        })?;
        written += done.len() as u64;
        listed.extend(done.into_iter().map(|p| (p, from.clone(), until.clone())));
    }
    let from = closed
        .first()
        .map_or_else(crate::store::now, |c| c.0.clone());
    atomic_write(&www.join(format!("{dir}/changedump.xml")), |out| {
        let mut w = DocumentWriter::new(
            out,
            Root::UrlSet,
            &[Ln::new("up", cap.to_string())],
            &Md::capability("changedump").with("from", from.clone()),
        )?;
        for (p, from, until) in &listed {
            w.entry(&Entry {
                loc: p.url.clone(),
                md: Some(
                    Md::default()
                        .with("type", "application/zip")
                        .with("length", p.length.to_string())
                        .with("hash", p.hash.clone())
                        .with("from", from.clone())
                        .with("until", until.clone()),
                ),
                lns: vec![
                    Ln::new("contents", p.manifest_url.clone()).with("type", "application/xml"),
                ],
                ..Entry::default()
            })?;
        }
        w.finish().map(drop)
    })?;
    Ok(written)
}

/// The packages of a closed day written before (its `.packages` marker is written
/// last), from their sidecar files; `None` if the day is not written completely.
fn written_day(folder: &Path, folder_url: &str, day: &str) -> Option<Vec<Package>> {
    let count: u64 = fs::read_to_string(folder.join(format!(".{day}.packages")))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let mut out = Vec::new();
    for n in 1..=count {
        let stem = if count == 1 && folder.join(format!(".{day}.meta")).exists() {
            day.to_string()
        } else {
            format!("{day}-part-{n:05}")
        };
        let text = fs::read_to_string(folder.join(format!(".{stem}.meta"))).ok()?;
        let mut l = text.lines();
        let (length, hash, at, completed) = (l.next()?, l.next()?, l.next()?, l.next()?);
        out.push(Package {
            url: format!("{folder_url}/{stem}.zip"),
            manifest_url: format!("{folder_url}/{stem}-manifest.xml"),
            length: length.parse().ok()?,
            hash: hash.to_string(),
            at: at.to_string(),
            completed: completed.to_string(),
        });
    }
    Some(out)
}

/// A finished package.
#[derive(Debug)]
struct Package {
    url: String,
    manifest_url: String,
    length: u64,
    hash: String,
    at: String,
    completed: String,
}

/// A package being written: the ZIP and its manifest, each in a temporary file.
struct PackageWriter {
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
    bytes: u64,
    files: u64,
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

fn write_err(path: &Path) -> impl Fn(io::Error) -> PublishError {
    let path = path.to_path_buf();
    move |source| PublishError::Write {
        path: path.clone(),
        source,
    }
}

impl PackageWriter {
    /// Starts `<dir>/<stem>.zip`, whose manifest has `md` (if it ends with a
    /// `completed` placeholder, the time the package is finished goes there) and an `up`
    /// link to `up`.
    fn new(dir: &Path, stem: &str, md: Md, up: &str) -> Result<Self, PublishError> {
        let pid = std::process::id();
        let tmp = dir.join(format!(".{stem}.zip.{pid}.tmp"));
        let manifest_tmp = dir.join(format!(".{stem}-manifest.xml.{pid}.tmp"));
        let lns = [Ln::new("up", up.to_string())];
        let completed_at = match md.0.last() {
            Some(("completed", v)) if v == COMPLETED_PLACEHOLDER => {
                Some(completed_offset(Root::UrlSet, &lns, &md).map_err(write_err(&manifest_tmp))?)
            }
            _ => None,
        };
        let at =
            md.0.iter()
                .find(|(k, _)| *k == "at")
                .map_or_else(crate::store::now, |(_, v)| v.clone());
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
    fn add(
        &mut self,
        set: &Set<'_>,
        f: &PublishedFile,
        change: Option<(&str, &str)>,
    ) -> Result<(), PublishError> {
        let manifest = self.manifest.as_mut().expect("open until finish");
        if f.first_of_version {
            let bytes = set.record_of(f).map_err(write_err(&self.tmp))?;
            let path = format!("d/{}/{}/metadata.xml", set.publisher, f.deposit_id);
            set.write_record(manifest, f, change, Some(&format!("/{path}")))
                .map_err(write_err(&self.manifest_tmp))?;
            self.put(&path, &mut &bytes[..], bytes.len() as u64)?;
            self.bytes += bytes.len() as u64;
        }
        let path = super::resource_path(set.publisher, f.deposit_id, &f.url);
        let manifest = self.manifest.as_mut().expect("open until finish");
        set.write_file(manifest, f, change, Some(&format!("/{path}")))
            .map_err(write_err(&self.manifest_tmp))?;
        let blob = set.blobs.path(&f.sha256);
        // `io::copy` brings its own buffer: no BufReader (and its allocation) per file.
        let mut input = File::open(&blob).map_err(write_err(&blob))?;
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
    /// `<dir>/<stem>.zip`; `folder_url` is `dir`'s URL.
    fn finish(mut self, folder_url: &str) -> Result<Package, PublishError> {
        let manifest_err = write_err(&self.manifest_tmp);
        let mut manifest = self
            .manifest
            .take()
            .expect("open until finish")
            .finish()
            .and_then(|out| out.into_inner().map_err(io::IntoInnerError::into_error))
            .map_err(&manifest_err)?;
        if let Some(at) = self.completed_at {
            manifest
                .seek(SeekFrom::Start(at))
                .and_then(|_| manifest.write_all(crate::store::now().as_bytes()))
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
        Ok(Package {
            url: format!("{folder_url}/{name}"),
            manifest_url: format!("{folder_url}/{manifest_name}"),
            length: digests.length,
            hash: format!("md5:{} sha-256:{}", digests.md5, digests.sha256),
            at: self.at.clone(),
            completed: crate::store::now(),
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

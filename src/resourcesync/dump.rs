//! Resource Dump (§13): the set's current resources in ZIP packages of at most
//! `dump_package_bytes`, each holding the resources at their paths and a
//! `manifest.xml` (`capability="resourcedump-manifest"`, `path` with a leading `/`,
//! `hash`, `length`, `type`); a copy of each manifest sits beside its package and the
//! Resource Dump links it as `rel="contents"`. Packages are rebuilt only when the set
//! changed (its count of files or the journal's last change), so publishing after a
//! harvest that changed nothing copies nothing.

use std::fs::{self, File};
use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use super::{DocumentWriter, Entry, Ln, Md, PublishError, Root, Set, atomic_write, list_document};
use crate::store::{PublishedFile, digest_file, sync_dir};

/// Writes the set's Resource Dump (if its content changed); returns the packages.
pub(super) fn write_resource_dump(set: &Set<'_>, package_bytes: u64) -> Result<u64, PublishError> {
    let Set {
        catalog,
        www,
        base,
        publisher,
        access,
        dir,
        cap,
        ..
    } = set;
    let dump_doc = www.join(format!("{dir}/resourcedump.xml"));
    let packages_dir = www.join(format!("{dir}/resourcedump"));
    let fingerprint = format!(
        "{} {}",
        catalog.count_current_files(publisher, access)?,
        catalog.last_change_seq(publisher)?
    );
    let stamp = packages_dir.join(".fingerprint");
    if dump_doc.exists() && fs::read_to_string(&stamp).is_ok_and(|s| s == fingerprint) {
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
    catalog.current_files(publisher, access, None, &mut |f| {
        if failure.is_some() {
            return Ok(());
        }
        let step = (|| {
            if current
                .as_ref()
                .is_some_and(|p| p.bytes > 0 && p.bytes + f.length > package_bytes)
            {
                let p = current.take().expect("checked");
                let n = packages.len() + 1;
                let md = resource_manifest_md(&p.at);
                packages.push(p.finish(&packages_dir, &folder_url, &stem(n), md, &dump_url)?);
            }
            if current.is_none() {
                current = Some(PackageWriter::new(
                    &packages_dir,
                    &stem(packages.len() + 1),
                )?);
            }
            current.as_mut().expect("set above").add(set, &f, None)
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
        let md = resource_manifest_md(&p.at);
        packages.push(p.finish(
            &packages_dir,
            &folder_url,
            &stem(packages.len() + 1),
            md,
            &dump_url,
        )?);
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
            Ok(())
        },
    )?;
    atomic_write(&stamp, |out| out.write_all(fingerprint.as_bytes()))?;
    Ok(packages.len() as u64)
}

fn resource_manifest_md(at: &str) -> Md {
    Md::capability("resourcedump-manifest")
        .with("at", at)
        .with("completed", crate::store::now())
}

/// Writes the set's Change Dump: one package per closed Change List period (written
/// once, like the closed lists; its length and hash kept in a sidecar file so that
/// listing it costs nothing), listed in `changedump.xml`. Returns the packages written.
pub(super) fn write_change_dump(
    set: &Set<'_>,
    closed: &[(String, String)],
) -> Result<u64, PublishError> {
    let Set {
        catalog,
        www,
        base,
        publisher,
        access,
        dir,
        cap,
        ..
    } = set;
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
        let stem = from.get(..10).unwrap_or(from).to_string();
        let meta = folder.join(format!(".{stem}.meta"));
        if let Ok(text) = fs::read_to_string(&meta) {
            let mut l = text.lines();
            if let (Some(length), Some(hash), Some(at), Some(completed)) =
                (l.next(), l.next(), l.next(), l.next())
            {
                listed.push((
                    Package {
                        url: format!("{folder_url}/{stem}.zip"),
                        manifest_url: format!("{folder_url}/{stem}-manifest.xml"),
                        length: length.parse().unwrap_or(0),
                        hash: hash.to_string(),
                        at: at.to_string(),
                        completed: completed.to_string(),
                    },
                    from.clone(),
                    until.clone(),
                ));
                continue;
            }
        }
        let mut package: Option<PackageWriter> = None;
        let mut failure: Option<PublishError> = None;
        catalog.journal(publisher, access, from, Some(until), None, &mut |e, f| {
            if failure.is_some() {
                return Ok(());
            }
            let step = (|| {
                if package.is_none() {
                    package = Some(PackageWriter::new(&folder, &stem)?);
                }
                package
                    .as_mut()
                    .expect("set above")
                    .add(set, &f, Some((&e.change, &e.at)))
            })();
            if let Err(e) = step {
                failure = Some(e);
            }
            Ok(())
        })?;
        if let Some(e) = failure {
            return Err(e);
        }
        // A period without changes has no package.
        let Some(p) = package else { continue };
        let md = Md::capability("changedump-manifest")
            .with("from", from.clone())
            .with("until", until.clone());
        let done = p.finish(&folder, &folder_url, &stem, md, &doc_url)?;
        let sidecar = format!(
            "{}\n{}\n{}\n{}\n",
            done.length, done.hash, done.at, done.completed
        );
        atomic_write(&meta, |out| out.write_all(sidecar.as_bytes()))?;
        written += 1;
        listed.push((done, from.clone(), until.clone()));
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

/// A package being written: the ZIP in a temporary file, the manifest's entries.
struct PackageWriter {
    zip: Option<zip::ZipWriter<File>>,
    tmp: PathBuf,
    at: String,
    entries: Vec<Entry>,
    bytes: u64,
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
    fn new(dir: &Path, stem: &str) -> Result<Self, PublishError> {
        let tmp = dir.join(format!(".{stem}.zip.{}.tmp", std::process::id()));
        let file = File::create(&tmp).map_err(|source| PublishError::Write {
            path: tmp.clone(),
            source,
        })?;
        Ok(Self {
            zip: Some(zip::ZipWriter::new(file)),
            tmp,
            at: crate::store::now(),
            entries: Vec::new(),
            bytes: 0,
        })
    }

    /// Adds a file, preceded by its version's metadata record when it is the version's
    /// first file (as in the lists).
    fn add(
        &mut self,
        set: &Set<'_>,
        f: &PublishedFile,
        change: Option<(&str, &str)>,
    ) -> Result<(), PublishError> {
        let write_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| PublishError::Write { path, source }
        };
        if f.first_of_version
            && let Some(mut e) = set
                .record_entry(f.deposit_id, f.version_id, change)
                .map_err(write_err(&self.tmp))?
        {
            let file = super::record_file(set.www, set.publisher, f.deposit_id, f.version_id);
            let bytes = fs::read(&file).map_err(write_err(&file))?;
            let path = format!("d/{}/{}/metadata.xml", set.publisher, f.deposit_id);
            self.put(&path, &mut &bytes[..], bytes.len() as u64)?;
            if let Some(md) = &mut e.md {
                md.0.push(("path", format!("/{path}")));
            }
            self.entries.push(e);
            self.bytes += bytes.len() as u64;
        }
        let path = super::resource_path(set.publisher, f.deposit_id, &f.url);
        let blob = set.blobs.path(&f.sha256);
        let mut input = BufReader::new(File::open(&blob).map_err(write_err(&blob))?);
        self.put(&path, &mut input, f.length)?;
        let mut e = set.file_entry(f, change);
        if let Some(md) = &mut e.md {
            md.0.push(("path", format!("/{path}")));
        }
        self.entries.push(e);
        self.bytes += f.length;
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
        io::copy(input, zip).map_err(|source| PublishError::Write {
            path: self.tmp.clone(),
            source,
        })?;
        Ok(())
    }

    /// Writes the manifest (`md`, `up` link) into the package and beside it, moves the
    /// package into place as `<dir>/<stem>.zip`; `folder_url` is `dir`'s URL.
    fn finish(
        mut self,
        dir: &Path,
        folder_url: &str,
        stem: &str,
        md: Md,
        up: &str,
    ) -> Result<Package, PublishError> {
        // The manifest, inside the package and beside it, byte for byte the same.
        let dump_url = up;
        let mut manifest = Vec::new();
        {
            let mut w = DocumentWriter::new(
                &mut manifest,
                Root::UrlSet,
                &[Ln::new("up", dump_url.to_string())],
                &md,
            )
            .map_err(|source| PublishError::Write {
                path: self.tmp.clone(),
                source,
            })?;
            for e in &self.entries {
                w.entry(e).map_err(|source| PublishError::Write {
                    path: self.tmp.clone(),
                    source,
                })?;
            }
            w.finish().map_err(|source| PublishError::Write {
                path: self.tmp.clone(),
                source,
            })?;
        }
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        let mut zip = self.zip.take().expect("open until finish");
        zip.start_file("manifest.xml", options)
            .map_err(zip_err(&self.tmp))?;
        zip.write_all(&manifest)
            .map_err(|source| PublishError::Write {
                path: self.tmp.clone(),
                source,
            })?;
        let file = zip.finish().map_err(zip_err(&self.tmp))?;
        file.sync_all().map_err(|source| PublishError::Write {
            path: self.tmp.clone(),
            source,
        })?;
        drop(file);
        let name = format!("{stem}.zip");
        let target = dir.join(&name);
        fs::rename(&self.tmp, &target).map_err(|source| PublishError::Write {
            path: target.clone(),
            source,
        })?;
        sync_dir(dir).map_err(|source| PublishError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
        let manifest_name = format!("{stem}-manifest.xml");
        atomic_write(&dir.join(&manifest_name), |out| out.write_all(&manifest))?;
        // The package's own digests and length, for the Resource Dump.
        let digests = digest_file(&target).map_err(|source| PublishError::Write {
            path: target.clone(),
            source,
        })?;
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
        // Removes the temporary ZIP of an abandoned package (a no-op after the rename).
        let _ = fs::remove_file(&self.tmp);
    }
}

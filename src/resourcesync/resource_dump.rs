//! The Resource Dump (§11): the set's current resources (and their records) in ZIP
//! packages of at most `dump_package_bytes` and [`PART_ENTRIES`] files.
//!
//! Packages are named by their content: `resourcedump/<16 hex>.zip`, the digest of the
//! (version, URL, SHA-256) of every file in it. The files are grouped in a fixed order
//! (deposit, file), so a publish after new deposits finds the earlier packages unchanged
//! under the same names and writes only the new last one (or one whose files changed).
//! Like the Resource List, the dump is written as the dated snapshot
//! `resourcedump/<YYYY-MM-DD>.xml` and copied to the live `resourcedump.xml`; snapshots
//! share every package they have in common, so keeping a snapshot costs its document
//! and the packages no later snapshot has, not a copy of the collection. A package is
//! removed only when no kept snapshot lists it.

use std::collections::HashSet;
use std::fs;

use sha2::{Digest, Sha256};

use super::archive::{self, is_day};
use super::files::{list_document, read_sidecar, write_err, write_sidecar};
use super::layout::Kind;
use super::package::{Package, PackageWriter, Paths};
use super::{Ln, Md, PART_ENTRIES, PublishError, Root, Set, SetSpec};
use crate::store::PublishedFile;

/// Writes the set's Resource Dump (if the set changed) and its archive, and removes
/// packages no kept snapshot lists; returns the packages written.
pub(super) fn write_resource_dump(set: &Set<'_>, package_bytes: u64) -> Result<u64, PublishError> {
    let written = archive::refresh_snapshot(set, Kind::ResourceDump, &mut |day| {
        write_snapshot(set, day, package_bytes)
    })?;
    remove_unlisted_packages(set)?;
    Ok(written)
}

/// Writes the packages the snapshot of `day` lacks and the snapshot itself (with its
/// sidecars: `at`/`completed`, and the packages it lists). Returns the packages written.
fn write_snapshot(set: &Set<'_>, day: &str, package_bytes: u64) -> Result<u64, PublishError> {
    let SetSpec {
        www,
        base,
        dir,
        cap,
        ..
    } = set.spec;
    let kind = Kind::ResourceDump;
    let folder = www.join(format!("{dir}/{}", kind.capability()));
    fs::create_dir_all(&folder).map_err(write_err(&folder))?;
    let folder_url = format!("{base}{dir}/{}", kind.capability());
    let mut packages: Vec<(String, Package)> = Vec::new();
    let mut written = 0u64;
    // The files of the package being gathered, and their bytes.
    let mut group: Vec<PublishedFile> = Vec::new();
    let mut bytes = 0u64;
    let mut failure: Option<PublishError> = None;
    let mut close = |group: &mut Vec<PublishedFile>| -> Result<(), PublishError> {
        if group.is_empty() {
            return Ok(());
        }
        let stem = package_name(set, group);
        let package = match Package::recorded(&folder, &folder_url, &stem) {
            Some(p) => p,
            None => {
                let mut w = PackageWriter::new(
                    &folder,
                    &stem,
                    Md::capability("resourcedump-manifest")
                        .with("at", crate::store::now())
                        .with("completed", super::files::COMPLETED_PLACEHOLDER),
                    cap,
                    Paths::Current,
                )?;
                for f in group.iter() {
                    w.add(set, f, None)?;
                }
                let p = w.finish(&folder_url)?;
                p.record(&folder, &stem)?;
                written += 1;
                p
            }
        };
        packages.push((stem, package));
        group.clear();
        Ok(())
    };
    // Group the files into packages, streaming: a package is closed when the next file
    // would take it past the limit.
    set.current_files(None, &mut |f| {
        if failure.is_some() {
            return Ok(());
        }
        if (bytes > 0 && bytes + f.length > package_bytes) || group.len() as u64 >= PART_ENTRIES {
            if let Err(e) = close(&mut group) {
                failure = Some(e);
            }
            bytes = 0;
        }
        bytes += f.length;
        group.push(f.clone());
        Ok(())
    })?;
    if let Some(e) = failure {
        return Err(e);
    }
    close(&mut group)?;
    let own = [Ln::new("up", cap.to_string()), set.archives_link(kind)];
    let doc = www.join(format!("{dir}/{}", kind.dated(day)));
    let w = list_document(&doc, Root::UrlSet, &own, kind.capability(), &mut |w| {
        for (_, p) in &packages {
            w.entry(
                &p.entry(
                    Md::default()
                        .with("at", p.at.clone())
                        .with("completed", p.completed.clone()),
                ),
            )?;
        }
        Ok(true)
    })?
    .expect("a dump is always written");
    let names: Vec<&str> = packages.iter().map(|(s, _)| s.as_str()).collect();
    write_sidecar(&folder.join(format!(".{day}.packages")), &names)?;
    write_sidecar(&folder.join(format!(".{day}.meta")), &[&w.at, &w.completed])?;
    Ok(written)
}

/// The name of the package of `files`: 16 hex digits of the digest of what it holds
/// and how it is written (the record mapping, `base_url` and access of the set).
fn package_name(set: &Set<'_>, files: &[PublishedFile]) -> String {
    let mut h = Sha256::new();
    // The set's fingerprint ends with the mapping and base URL; the layout's version
    // is part of it too.
    h.update(set.fingerprint.split_once(' ').map_or("", |(_, rest)| rest));
    h.update(set.access.as_str().as_bytes());
    for f in files {
        h.update(format!("\n{} {} {}", f.version_id, f.url, f.sha256));
    }
    hex::encode(&h.finalize()[..8])
}

/// Removes the packages (ZIP, manifest copy, sidecar) that no kept snapshot lists, and
/// the packages of the layout before snapshots (`part-NNNNN.zip`).
fn remove_unlisted_packages(set: &Set<'_>) -> Result<(), PublishError> {
    let folder = set
        .www
        .join(format!("{}/{}", set.dir, Kind::ResourceDump.capability()));
    let Ok(entries) = fs::read_dir(&folder) else {
        return Ok(());
    };
    let names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    let mut listed = HashSet::new();
    for n in &names {
        if let Some(day) = n
            .strip_prefix('.')
            .and_then(|n| n.strip_suffix(".packages"))
            && is_day(day)
        {
            listed.extend(read_sidecar(&folder.join(n)).unwrap_or_default());
        }
    }
    for n in &names {
        let bare = n.strip_prefix('.').unwrap_or(n);
        let stem = bare
            .strip_suffix("-manifest.xml")
            .or_else(|| bare.strip_suffix(".zip"))
            .or_else(|| bare.strip_suffix(".meta"));
        if let Some(stem) = stem
            && !is_day(stem)
            && !listed.contains(stem)
        {
            fs::remove_file(folder.join(n)).map_err(write_err(&folder.join(n)))?;
        }
    }
    Ok(())
}

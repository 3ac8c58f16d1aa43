//! The Resource Dump (§11): the set's current resources (and their records) in ZIP
//! packages of at most `dump_package_bytes` and [`PART_ENTRIES`] files.
//!
//! Packages are cut where the content says and named by it ([`super::chunks`]):
//! `resourcedump/<16 hex>.zip`, so a publish after changes finds the packages the
//! changes did not touch under the same names and writes only the others.
//! Like the Resource List, the dump is written as the dated snapshot
//! `resourcedump/<YYYY-MM-DD>.xml` and copied to the live `resourcedump.xml`; snapshots
//! share every package they have in common, so keeping a snapshot costs its document
//! and the packages no later snapshot has, not a copy of the collection. A package is
//! removed only when no kept snapshot lists it.

use std::collections::BTreeMap;
use std::fs;

use super::archive;
use super::chunks::{self, Chunker};
use super::files::{list_document, marked_days, write_err, write_sidecar};
use super::layout::Kind;
use super::package::{Package, PackageWriter, Paths, Sidecars, Sizer};
use super::{Ln, Md, PART_ENTRIES, PublishError, Root, Set, SetSpec};
use crate::store::PublishedFile;

/// Writes the set's Resource Dump (if the set changed) and its archive, and removes
/// packages no kept snapshot lists; returns the packages written.
pub(super) fn write_resource_dump(set: &Set<'_>, package_bytes: u64) -> Result<u64, PublishError> {
    let written = archive::refresh_snapshot(set, Kind::ResourceDump, &mut |day| {
        write_snapshot(set, day, package_bytes)
    })?;
    let lacking = chunks::remove_unlisted(set, Kind::ResourceDump, "packages", "zip")?;
    if set.spec.mirror.is_some() {
        stubs_again(set, &lacking)?;
    }
    Ok(written)
}

/// With an object store: the stub of each package a kept snapshot lists and the folder
/// lacks (`lacking`), made again from its sidecar. A pull forgets a package the object store lost so
/// that the publish writes it again; if the set changed since, so that it is not written
/// again, the snapshots of past days still list it: its stub keeps it in the object
/// store's lists, where a push finds it lost and keeps it listed, and `plikt audit`
/// names it, to be restored from a backup of the bucket.
fn stubs_again(set: &Set<'_>, lacking: &[String]) -> Result<(), PublishError> {
    let folder = set
        .www
        .join(format!("{}/{}", set.dir, Kind::ResourceDump.capability()));
    for stem in lacking {
        let zip = folder.join(format!("{stem}.zip"));
        let Some(p) = Package::in_sidecar(&folder, "", stem) else {
            continue;
        };
        let Some(sha256) = p.sha256() else {
            continue;
        };
        tracing::warn!(package = %zip.display(), "a dump package snapshots of past days list was lost from the object store and is not written again: it stays listed, to be restored from a backup of the bucket (`plikt audit` names it)");
        let entry = super::stub::Entry {
            length: p.length,
            sha256: sha256.to_string(),
        };
        super::stub::write(&zip, &entry)?;
    }
    Ok(())
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
    let mut failure: Option<PublishError> = None;
    let mut close = |group: &mut Vec<PublishedFile>| -> Result<(), PublishError> {
        if group.is_empty() {
            return Ok(());
        }
        let stem = chunks::content_name(set, Kind::ResourceDump, group);
        let package = match Package::recorded(&folder, &folder_url, &stem) {
            Some(p) => p,
            None => {
                let p = write_package(set, &folder, &folder_url, &stem, group)?;
                written += 1;
                p
            }
        };
        packages.push((stem, package));
        group.clear();
        Ok(())
    };
    // Group the files into packages where the content says (and at the limits).
    let mut sizer = Sizer::new(cap, Paths::Current).map_err(write_err(&folder))?;
    let mut chunker = Chunker::dump(
        PART_ENTRIES,
        package_bytes.saturating_sub(sizer.fixed()).max(1),
    );
    set.current_files(None, &mut |f| {
        let cost = sizer.cost(set, f)?;
        if failure.is_none() && chunker.cut_before_costing(f, cost) {
            failure = close(&mut group).err();
        }
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

/// Writes the package `stem` of `group` in `folder` (URL `folder_url`) and its sidecar:
/// new, or lost since it was written, then with the times it had.
fn write_package(
    set: &Set<'_>,
    folder: &std::path::Path,
    folder_url: &str,
    stem: &str,
    group: &[PublishedFile],
) -> Result<Package, PublishError> {
    set.spec.go_on()?;
    // Written before and lost since (its file removed, its object lost):
    // written again with the times it had, so byte for byte as before and
    // as every snapshot that lists it says.
    let before = Package::in_sidecar(folder, folder_url, stem);
    let (at, completed) = before.as_ref().map_or_else(
        || {
            let placeholder = super::files::COMPLETED_PLACEHOLDER;
            (crate::store::now().to_string(), placeholder.to_string())
        },
        |p| (p.at.clone(), p.completed.clone()),
    );
    let mut w = PackageWriter::new(
        folder,
        stem,
        Md::capability("resourcedump-manifest")
            .with("at", at)
            .with("completed", completed),
        &set.spec.cap,
        Paths::Current,
    )?;
    for f in group {
        w.add(set, f, None)?;
    }
    let p = w.finish(set, folder_url)?;
    // Other files or records under the same name (a record mapping changed
    // in place, say): the snapshots of past days list the hash it had.
    if let Some(before) = before.filter(|b| b.hash != p.hash) {
        tracing::warn!(package = %p.url, listed = %before.hash, now = %p.hash, "a Resource Dump package lost since it was written was written again with other bytes: the snapshots of past days that list it name the hash it had");
    }
    p.record(folder, stem)?;
    Ok(p)
}

/// The packages the kept snapshots in the Resource Dump folder `folder` (below `www/`)
/// list, as `sidecars` say, by name (without `.zip`), with the days of the snapshots
/// that list each, oldest first.
pub(super) fn listed_packages(
    sidecars: &dyn Sidecars,
    folder: &str,
) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for day in marked_days(&sidecars.names(folder), "packages") {
        let stems = sidecars
            .lines(&format!("{folder}/.{day}.packages"))
            .unwrap_or_default();
        for stem in stems {
            out.entry(stem).or_default().push(day.clone());
        }
    }
    out
}

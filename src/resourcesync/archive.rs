//! ResourceSync Archives (0.9.1): for each kind of document, an archive listing its
//! earlier documents: `<capability>-archive.xml` with `rel="up"` to the Capability
//! List and one entry per archived document, with `at`/`completed` (Resource Lists and
//! Dumps, §3, §4) or `from`/`until` (Change Lists and Dumps, §5, §6), in chronological
//! order. Past [`MAX_ARCHIVE_ENTRIES`] entries the archive is an Archive Index (§3.1): a
//! `<sitemapindex>` with the same capability over parts
//! `<capability>-archive/part-NNNNN.xml`, each linking it as `rel="index"`.
//!
//! Resource Lists and Resource Dumps are archived as dated snapshots: each is written
//! at `<capability>/<YYYY-MM-DD>.xml` for the UTC day it is written on (and copied to
//! the live `<capability>.xml`), so a day keeps at most one, the last; once its day is
//! over it is never written again and the archive lists it. `snapshot_retention_days`
//! bounds how long snapshots are kept: an expired one leaves the archive first and its
//! files are removed after, so nothing an archive lists is ever missing (the live
//! document's own day is always kept).

use std::fs;
use std::path::Path;

use super::files::{
    atomic_copy, atomic_write, read_sidecar, remove_parts, write_err, write_sidecar,
};
use super::layout::Kind;
use super::{DocumentWriter, Entry, Ln, MAX_ENTRIES, Md, PublishError, Root, Set, SetSpec};

/// Entries per archive document before it becomes an index (the Sitemap limit).
pub(super) const MAX_ARCHIVE_ENTRIES: usize = MAX_ENTRIES;

/// One archived document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ArchiveEntry {
    /// Its URL.
    pub loc: String,
    /// `at`/`completed` or `from`/`until`.
    pub md: Md,
}

/// Writes the archive of `kind` listing `entries` (chronological), as one document or,
/// past `limit` entries, an index over parts of `limit` entries.
pub(super) fn write(
    set: &SetSpec<'_>,
    kind: Kind,
    entries: &[ArchiveEntry],
    limit: usize,
) -> Result<(), PublishError> {
    let SetSpec {
        www,
        base,
        dir,
        cap,
        ..
    } = set;
    let capability = kind.archive_capability();
    let path = www.join(format!("{dir}/{}", kind.archive_document()));
    let parts_dir = www.join(format!("{dir}/{capability}"));
    let md = Md::capability(capability);
    let up = Ln::new("up", cap.to_string());
    let write_urlset = |path: &Path, lns: &[Ln], entries: &[ArchiveEntry]| {
        atomic_write(path, |out| {
            let mut w = DocumentWriter::new(out, Root::UrlSet, lns, &md)?;
            for e in entries {
                w.entry(&Entry {
                    loc: e.loc.clone(),
                    md: Some(e.md.clone()),
                    ..Entry::default()
                })?;
            }
            w.finish().map(drop)
        })
    };
    if entries.len() <= limit {
        write_urlset(&path, std::slice::from_ref(&up), entries)?;
        remove_parts(&parts_dir, "part-", 0);
        return Ok(());
    }
    let index_url = format!("{base}{dir}/{}", kind.archive_document());
    let mut parts = Vec::new();
    for (i, chunk) in entries.chunks(limit.max(1)).enumerate() {
        let name = format!("part-{:05}.xml", i + 1);
        write_urlset(
            &parts_dir.join(&name),
            &[up.clone(), Ln::new("index", index_url.clone())],
            chunk,
        )?;
        parts.push(format!("{base}{dir}/{capability}/{name}"));
    }
    remove_parts(&parts_dir, "part-", parts.len() as u64);
    atomic_write(&path, |out| {
        let mut w = DocumentWriter::new(out, Root::SitemapIndex, std::slice::from_ref(&up), &md)?;
        for loc in &parts {
            w.entry(&Entry {
                loc: loc.clone(),
                ..Entry::default()
            })?;
        }
        w.finish().map(drop)
    })
}

/// A dated snapshot of a Resource List or Resource Dump, from its sidecar
/// `<capability>/.<day>.meta` (`at` and `completed` of the dated document).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Snapshot {
    /// `YYYY-MM-DD`.
    pub day: String,
    /// When its writing started.
    pub at: String,
    /// When it was complete.
    pub completed: String,
}

/// Whether `s` is a `YYYY-MM-DD` day.
pub(super) fn is_day(s: &str) -> bool {
    s.len() == 10
        && s.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        })
}

/// The snapshots of `kind` in the set, oldest first.
pub(super) fn snapshots(set: &Set<'_>, kind: Kind) -> Vec<Snapshot> {
    let folder = set.www.join(format!("{}/{}", set.dir, kind.capability()));
    let mut out: Vec<Snapshot> = fs::read_dir(&folder)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let day = name.strip_prefix('.')?.strip_suffix(".meta")?;
            if !is_day(day) {
                return None;
            }
            let lines = read_sidecar(&e.path())?;
            Some(Snapshot {
                day: day.to_string(),
                at: lines.first()?.clone(),
                completed: lines.get(1)?.clone(),
            })
        })
        .collect();
    out.sort_by(|a, b| a.day.cmp(&b.day));
    out
}

/// Brings a kind archived as dated snapshots (Resource Lists, Resource Dumps) up to
/// date: if the set changed since the live document was written (its fingerprint is
/// kept in `.<capability>.fingerprint` with the day of the snapshot the live document
/// copies), `write` makes today's snapshot and it is copied to the live document; then
/// the archive. Returns what `write` returned (0 when nothing changed).
pub(super) fn refresh_snapshot(
    set: &Set<'_>,
    kind: Kind,
    write: &mut dyn FnMut(&str) -> Result<u64, PublishError>,
) -> Result<u64, PublishError> {
    let SetSpec { www, dir, .. } = set.spec;
    let live = www.join(format!("{dir}/{}", kind.document()));
    let stamp = www.join(format!("{dir}/.{}.fingerprint", kind.capability()));
    let recorded = read_sidecar(&stamp).filter(|_| live.exists());
    let unchanged = recorded
        .as_ref()
        .is_some_and(|l| l.first() == Some(&set.fingerprint));
    let mut written = 0;
    let live_day = if unchanged {
        recorded.and_then(|l| l.get(1).cloned())
    } else {
        let day = set.today();
        written = write(&day)?;
        atomic_copy(&www.join(format!("{dir}/{}", kind.dated(&day))), &live)?;
        write_sidecar(&stamp, &[&set.fingerprint, &day])?;
        Some(day)
    };
    write_snapshot_archive(set, kind, live_day.as_deref())?;
    Ok(written)
}

/// Writes the archive of a kind archived as dated snapshots (Resource Lists, Resource
/// Dumps): every snapshot of a day that is over, apart from those past the retention;
/// then removes the files of those, unless one is the day the live document comes from
/// (`live_day`). Returns the days removed.
fn write_snapshot_archive(
    set: &Set<'_>,
    kind: Kind,
    live_day: Option<&str>,
) -> Result<Vec<String>, PublishError> {
    let today = set.today();
    let cutoff = set.retention_cutoff();
    let (mut kept, mut expired) = (Vec::new(), Vec::new());
    for s in snapshots(set, kind) {
        if s.day.as_str() >= today.as_str() {
            continue;
        }
        if cutoff.as_deref().is_some_and(|c| s.day.as_str() < c) && Some(s.day.as_str()) != live_day
        {
            expired.push(s.day);
        } else {
            kept.push(ArchiveEntry {
                loc: format!("{}{}/{}", set.base, set.dir, kind.dated(&s.day)),
                md: Md::default()
                    .with("at", s.at)
                    .with("completed", s.completed),
            });
        }
    }
    // The archive stops listing them before they go.
    write(set, kind, &kept, MAX_ARCHIVE_ENTRIES)?;
    let folder = set.www.join(format!("{}/{}", set.dir, kind.capability()));
    for day in &expired {
        remove_day(&folder, day)?;
    }
    Ok(expired)
}

/// Removes every file of a dated document of `day` in `folder`: the document, its
/// parts and its sidecars (`<day>.xml`, `<day>-part-NNNNN.xml`, `.<day>.…`,
/// `.<day>-part-….fingerprint`).
fn remove_day(folder: &Path, day: &str) -> Result<(), PublishError> {
    for e in fs::read_dir(folder).map_err(write_err(folder))?.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let bare = name.strip_prefix('.').unwrap_or(&name);
        if bare
            .strip_prefix(day)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('-'))
        {
            fs::remove_file(e.path()).map_err(write_err(&e.path()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_archive_past_its_limit_is_an_index_over_parts() {
        let dir = std::env::temp_dir().join(format!("plikt-archive-index-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let blobs =
            crate::store::Blobs::open(&dir, &crate::config::BlobsConfig::default()).unwrap();
        let catalog_path = crate::store::Location::Sqlite(dir.join("catalog.sqlite"));
        let www = dir.join("www");
        let spec = SetSpec {
            catalog_path: &catalog_path,
            blobs: &blobs,
            www: &www,
            base: "https://kb.example/",
            publisher: "a",
            access: crate::store::Access::Gratis,
            dir: "resourcesync/a".into(),
            cap: "https://kb.example/resourcesync/a/capabilitylist.xml".into(),
            empty: true,
            fingerprint: String::new(),
            now: crate::store::now(),
            retention_days: 0,
            stopping: super::super::Stopping(&super::super::never),
        };
        let entries: Vec<ArchiveEntry> = (1..=5)
            .map(|d| ArchiveEntry {
                loc: format!("https://kb.example/resourcesync/a/changelist/2026-11-0{d}.xml"),
                md: Md::default()
                    .with("from", format!("2026-11-0{d}T00:00:00.000Z"))
                    .with("until", format!("2026-11-0{}T00:00:00.000Z", d + 1)),
            })
            .collect();
        let read = |p: &str| fs::read_to_string(www.join("resourcesync/a").join(p)).unwrap();
        write(&spec, Kind::ChangeList, &entries, 2).unwrap();
        let index = read("changelist-archive.xml");
        assert!(index.contains("<sitemapindex"), "{index}");
        assert!(
            index.contains("<rs:md capability=\"changelist-archive\"/>"),
            "{index}"
        );
        for n in 1..=3 {
            let loc =
                format!("https://kb.example/resourcesync/a/changelist-archive/part-0000{n}.xml");
            assert!(index.contains(&format!("<loc>{loc}</loc>")), "{index}");
            let part = read(&format!("changelist-archive/part-0000{n}.xml"));
            assert!(part.contains("<urlset") && part.contains("capability=\"changelist-archive\""));
            assert!(
                part.contains("rel=\"index\" href=\"https://kb.example/resourcesync/a/changelist-archive.xml\""),
                "{part}"
            );
            assert!(part.contains("rel=\"up\""), "{part}");
        }
        // In order: the first part has the first two days, the last one the fifth.
        assert!(read("changelist-archive/part-00001.xml").contains("2026-11-02.xml"));
        assert!(read("changelist-archive/part-00003.xml").contains("2026-11-05.xml"));
        // Back under the limit: one document again, and the parts are gone.
        write(&spec, Kind::ChangeList, &entries[..2], 2).unwrap();
        assert!(read("changelist-archive.xml").contains("<urlset"));
        assert!(
            !www.join("resourcesync/a/changelist-archive/part-00001.xml")
                .exists()
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn days_are_recognised_exactly() {
        assert!(is_day("2026-11-20"));
        for bad in [
            "2026-11-2",
            "2026-11-200",
            "2026_11_20",
            "part-00001",
            "abcd-ef-gh",
        ] {
            assert!(!is_day(bad), "{bad}");
        }
    }

    #[test]
    fn removing_a_day_leaves_other_days_and_packages() {
        let dir = std::env::temp_dir().join(format!("plikt-archive-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let names = [
            "2026-11-20.xml",
            "2026-11-20-part-00001.xml",
            ".2026-11-20.meta",
            ".2026-11-20-part-00001.fingerprint",
            "2026-11-21.xml",
            ".2026-11-21.meta",
            "0123456789abcdef.zip",
            "0123456789abcdef-manifest.xml",
        ];
        for n in names {
            fs::write(dir.join(n), "x").unwrap();
        }
        remove_day(&dir, "2026-11-20").unwrap();
        let mut left: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                ".2026-11-21.meta",
                "0123456789abcdef-manifest.xml",
                "0123456789abcdef.zip",
                "2026-11-21.xml"
            ]
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}

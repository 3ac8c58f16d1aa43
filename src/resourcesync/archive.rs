//! ResourceSync Archives (0.9.1): for each kind of document, an archive listing its
//! earlier documents: `<capability>-archive.xml` with `rel="up"` to the Capability
//! List and one entry per archived document, with `at`/`completed` (Resource Lists and
//! Dumps, §3, §4) or `from`/`until` (Change Lists and Dumps, §5, §6), in chronological
//! order. Once the archived documents span more than one year, the archive is an
//! Archive Index (§3.1, whose "archiving scheme (e.g. yearly collections)" this is): a
//! `<sitemapindex>` with the same capability over one part per year,
//! `<capability>-archive/YYYY.xml`, each linking it as `rel="index"`. A past year's
//! part does not change, so a publish leaves it as it is (its bytes are the same:
//! [`super::files::atomic_replace`]); what a daily publish writes stays the size of a
//! year, not of the whole history.
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

use super::files::{atomic_copy, atomic_write, read_sidecar, write_err, write_sidecar};
use super::layout::{Kind, is_day};
use super::{DocumentWriter, Entry, Ln, MAX_ENTRIES, Md, PublishError, Root, Set, SetSpec};

/// One archived document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ArchiveEntry {
    /// The UTC day it is of (`YYYY-MM-DD`): which year's part lists it.
    pub day: String,
    /// Its URL.
    pub loc: String,
    /// `at`/`completed` or `from`/`until`.
    pub md: Md,
}

impl ArchiveEntry {
    /// The year of its day, `YYYY`.
    fn year(&self) -> &str {
        self.day.get(..4).unwrap_or(&self.day)
    }
}

/// Writes the archive of `kind` listing `entries` (chronological, at most one a day):
/// one document while they are all of one year, else an index over a part per year.
pub(super) fn write(
    set: &SetSpec<'_>,
    kind: Kind,
    entries: &[ArchiveEntry],
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
        if entries.len() > MAX_ENTRIES {
            // A year has at most 366 (one document a day).
            return Err(PublishError::TooLarge {
                path: path.to_path_buf(),
            });
        }
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
    let years: Vec<&[ArchiveEntry]> = entries.chunk_by(|a, b| a.year() == b.year()).collect();
    if years.len() <= 1 {
        write_urlset(&path, std::slice::from_ref(&up), entries)?;
        remove_other_parts(&parts_dir, &[])?;
        return Ok(());
    }
    let index_url = format!("{base}{dir}/{}", kind.archive_document());
    let mut parts = Vec::new();
    let mut names = Vec::new();
    for year in years {
        let name = format!("{}.xml", year[0].year());
        write_urlset(
            &parts_dir.join(&name),
            &[up.clone(), Ln::new("index", index_url.clone())],
            year,
        )?;
        parts.push(format!("{base}{dir}/{capability}/{name}"));
        names.push(name);
    }
    atomic_write(&path, |out| {
        let mut w = DocumentWriter::new(out, Root::SitemapIndex, std::slice::from_ref(&up), &md)?;
        for loc in &parts {
            w.entry(&Entry {
                loc: loc.clone(),
                ..Entry::default()
            })?;
        }
        w.finish().map(drop)
    })?;
    // Parts no longer listed (a year whose snapshots all passed the retention; parts
    // of 50,000 entries, `part-NNNNN.xml`, of earlier plikt) go once the index no
    // longer lists them.
    remove_other_parts(&parts_dir, &names)
}

/// Removes the archive parts in `parts_dir` (`*.xml`) other than `keep`.
fn remove_other_parts(parts_dir: &Path, keep: &[String]) -> Result<(), PublishError> {
    let Ok(entries) = fs::read_dir(parts_dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name.ends_with(".xml") && !name.starts_with('.') && !keep.contains(&name) {
            fs::remove_file(e.path()).map_err(write_err(&e.path()))?;
        }
    }
    Ok(())
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

/// The sidecar in a set's folder that keeps the fingerprint of the set the live
/// document of `kind` was written for, and the day of its snapshot.
pub(super) fn fingerprint_file(kind: Kind) -> String {
    format!(".{}.fingerprint", kind.capability())
}

/// Brings a kind archived as dated snapshots (Resource Lists, Resource Dumps) up to
/// date: if the set changed since the live document was written (its fingerprint is
/// kept in [`fingerprint_file`] with the day of the snapshot the live document
/// copies), `write` makes today's snapshot and it is copied to the live document; then
/// the archive. Returns what `write` returned (0 when nothing changed).
pub(super) fn refresh_snapshot(
    set: &Set<'_>,
    kind: Kind,
    write: &mut dyn FnMut(&str) -> Result<u64, PublishError>,
) -> Result<u64, PublishError> {
    let SetSpec { www, dir, .. } = set.spec;
    let live = www.join(format!("{dir}/{}", kind.document()));
    let stamp = www.join(format!("{dir}/{}", fingerprint_file(kind)));
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
                day: s.day.clone(),
                loc: format!("{}{}/{}", set.base, set.dir, kind.dated(&s.day)),
                md: Md::default()
                    .with("at", s.at)
                    .with("completed", s.completed),
            });
        }
    }
    // The archive stops listing them before they go.
    write(set, kind, &kept)?;
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
    fn an_archive_of_more_than_one_year_is_an_index_over_a_part_per_year() {
        let tmp = tempfile::Builder::new()
            .prefix("plikt-archive-index-")
            .tempdir()
            .unwrap();
        let dir = tmp.path();
        let blobs = crate::store::Blobs::open(dir, &crate::config::BlobsConfig::default()).unwrap();
        let www = dir.join("www");
        let spec = SetSpec {
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
            mirror: None,
        };
        let days = [
            "2024-12-31",
            "2025-01-01",
            "2025-06-30",
            "2026-11-01",
            "2026-11-02",
        ];
        let entries: Vec<ArchiveEntry> = days
            .iter()
            .map(|d| ArchiveEntry {
                day: d.to_string(),
                loc: format!("https://kb.example/resourcesync/a/changelist/{d}.xml"),
                md: Md::default().with("from", format!("{d}T00:00:00.000Z")),
            })
            .collect();
        let read = |p: &str| fs::read_to_string(www.join("resourcesync/a").join(p)).unwrap();
        let parts = www.join("resourcesync/a/changelist-archive");
        // An old part of 50,000 entries goes.
        fs::create_dir_all(&parts).unwrap();
        fs::write(parts.join("part-00001.xml"), "<urlset/>").unwrap();
        write(&spec, Kind::ChangeList, &entries).unwrap();
        let index = read("changelist-archive.xml");
        assert!(index.contains("<sitemapindex"), "{index}");
        assert!(
            index.contains("<rs:md capability=\"changelist-archive\"/>"),
            "{index}"
        );
        for (year, listed) in [
            ("2024", &days[..1]),
            ("2025", &days[1..3]),
            ("2026", &days[3..]),
        ] {
            let loc = format!("https://kb.example/resourcesync/a/changelist-archive/{year}.xml");
            assert!(index.contains(&format!("<loc>{loc}</loc>")), "{index}");
            let part = read(&format!("changelist-archive/{year}.xml"));
            assert!(part.contains("<urlset") && part.contains("capability=\"changelist-archive\""));
            assert!(
                part.contains("rel=\"index\" href=\"https://kb.example/resourcesync/a/changelist-archive.xml\""),
                "{part}"
            );
            assert!(part.contains("rel=\"up\""), "{part}");
            assert_eq!(part.matches("<url>").count(), listed.len(), "{part}");
            for d in listed {
                assert!(part.contains(&format!("changelist/{d}.xml")), "{part}");
            }
        }
        assert!(!parts.join("part-00001.xml").exists());
        // A day later, the past years' parts are left as they were (the same bytes:
        // not written again), this year's gets the day.
        let mtime = |p: &str| fs::metadata(parts.join(p)).unwrap().modified().unwrap();
        let before = (mtime("2024.xml"), mtime("2025.xml"));
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut more = entries.clone();
        more.push(ArchiveEntry {
            day: "2026-11-03".into(),
            loc: "https://kb.example/resourcesync/a/changelist/2026-11-03.xml".into(),
            md: Md::default(),
        });
        write(&spec, Kind::ChangeList, &more).unwrap();
        assert_eq!((mtime("2024.xml"), mtime("2025.xml")), before);
        assert!(read("changelist-archive/2026.xml").contains("2026-11-03.xml"));
        // One year again (the others passed the retention): one document, no parts.
        write(&spec, Kind::ChangeList, &entries[3..]).unwrap();
        let archive = read("changelist-archive.xml");
        assert!(archive.contains("<urlset"), "{archive}");
        assert_eq!(archive.matches("<url>").count(), 2, "{archive}");
        assert_eq!(fs::read_dir(&parts).unwrap().count(), 0);
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
        let tmp = tempfile::Builder::new()
            .prefix("plikt-archive-")
            .tempdir()
            .unwrap();
        let dir = tmp.path();
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
        remove_day(dir, "2026-11-20").unwrap();
        let mut left: Vec<String> = fs::read_dir(dir)
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
    }
}

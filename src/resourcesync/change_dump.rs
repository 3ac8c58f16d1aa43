//! Change Dumps (§13): the changes of each closed UTC day (the period of its closed
//! Change List) in one package `changedump/<YYYY-MM-DD>.zip`, or past [`PART_ENTRIES`]
//! files in parts `<day>-part-NNNNN.zip`; each file at its version's path, so a resource
//! changed twice in a day has two bitstreams (§13.2). Each closed day has its own Change
//! Dump `changedump/<day>.xml` (`from`, `until`), written once with its packages and
//! listed in the Change Dump Archive (Archives §6); the live `changedump.xml` lists the
//! packages of the last [`LIVE_DAYS`] closed days.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use super::archive::{self, ArchiveEntry};
use super::change_list::Periods;
use super::files::{marked_days, read_sidecar, write_err, write_sidecar};
use super::layout::{CLOSED_MARK, Kind};
use super::package::{Package, PackageWriter, Paths, Sidecars};
use super::{DocumentWriter, Ln, Md, PART_ENTRIES, PublishError, Root, Set, SetSpec};
use crate::store::Timestamp;

/// Closed days whose packages the live Change Dump lists.
pub(super) const LIVE_DAYS: usize = 31;

/// The version of a day's packages: a day written by an earlier layout (files at the
/// resource's path, manifest `up` to the dump) is written again.
const LAYOUT: &str = "2";

/// Writes the Change Dump of every closed day not written yet, the live Change Dump
/// and the archive. Returns the packages written.
pub(super) fn write_change_dump(set: &Set<'_>, closed: &Periods) -> Result<u64, PublishError> {
    let SetSpec { www, base, dir, .. } = set.spec;
    let kind = Kind::ChangeDump;
    let folder = www.join(format!("{dir}/{}", kind.capability()));
    fs::create_dir_all(&folder).map_err(write_err(&folder))?;
    let folder_url = format!("{base}{dir}/{}", kind.capability());
    let mut written = 0;
    let mut days: Vec<Day> = Vec::new();
    let mut archived = Vec::new();
    // The days up to the mark were written by an earlier publish (of this layout); of
    // those, only the ones the live Change Dump lists are looked at.
    let mark_path = folder.join(CLOSED_MARK);
    let mark = read_sidecar(&mark_path)
        .filter(|l| l.get(1).map(String::as_str) == Some(LAYOUT))
        .and_then(|l| l.into_iter().next());
    let live_from = closed.len().saturating_sub(LIVE_DAYS);
    for (i, &(from, until)) in closed.iter().enumerate() {
        let day = from.day();
        archived.push(ArchiveEntry {
            day: day.clone(),
            loc: format!("{base}{dir}/{}", kind.dated(&day)),
            md: Md::default().with("from", from).with("until", until),
        });
        let done = mark.as_deref().is_some_and(|m| day.as_str() <= m);
        if done && i < live_from {
            continue;
        }
        let packages = match written_day(&folder, &folder_url, &day) {
            Some(p) => p,
            None => {
                set.spec.go_on()?;
                let p = write_day(set, &folder, &folder_url, &day, from, until)?;
                written += p.len() as u64;
                // Its Change Dump goes with its packages (again, if they were rewritten).
                let _ = fs::remove_file(www.join(format!("{dir}/{}", kind.dated(&day))));
                p
            }
        };
        let day_doc = Day {
            packages,
            from,
            until,
        };
        let doc = www.join(format!("{dir}/{}", kind.dated(&day)));
        if !doc.exists() {
            dump_document(set, &doc, from, until, std::slice::from_ref(&day_doc))?;
        }
        days.push(day_doc);
    }
    archive::write(set, kind, &archived)?;
    if let Some(last) = closed.last().map(|(from, _)| from.day())
        && mark.as_deref() != Some(last.as_str())
    {
        write_sidecar(&mark_path, &[&last, LAYOUT])?;
    }
    // The live Change Dump: the last closed days, up to the open days.
    let recent = &days[days.len().saturating_sub(LIVE_DAYS)..];
    let open_from = set.open_from();
    let from = recent.first().map_or(open_from, |d| d.from);
    dump_document(
        set,
        &www.join(format!("{dir}/{}", kind.document())),
        from,
        open_from,
        recent,
    )?;
    Ok(written)
}

/// A closed day's packages.
#[derive(Debug)]
struct Day {
    packages: Vec<Package>,
    from: Timestamp,
    until: Timestamp,
}

/// Writes a Change Dump document covering [`from`, `until`) listing `days`' packages.
fn dump_document(
    set: &Set<'_>,
    path: &Path,
    from: Timestamp,
    until: Timestamp,
    days: &[Day],
) -> Result<(), PublishError> {
    let kind = Kind::ChangeDump;
    let md = Md::capability(kind.capability())
        .with("from", from)
        .with("until", until);
    let own = [Ln::new("up", set.cap.clone()), set.archives_link(kind)];
    super::files::atomic_write(path, |out| {
        let mut w = DocumentWriter::new(out, Root::UrlSet, &own, &md)?;
        for d in days {
            for p in &d.packages {
                w.entry(&p.entry(Md::default().with("from", d.from).with("until", d.until)))?;
            }
        }
        w.finish().map(drop)
    })
}

/// Packs the changes of one closed day; returns its packages (none for a day without
/// changes) after recording them (each package's sidecar, then the day's marker).
fn write_day(
    set: &Set<'_>,
    folder: &Path,
    folder_url: &str,
    day: &str,
    from: Timestamp,
    until: Timestamp,
) -> Result<Vec<Package>, PublishError> {
    // A day past PART_ENTRIES files is packed in parts.
    let files = set.count_journal(from, Some(until), PART_ENTRIES + 1)?;
    let parted = files > PART_ENTRIES;
    let stem = |n: u64| {
        if parted {
            format!("{day}-part-{n:05}")
        } else {
            day.to_string()
        }
    };
    let md = Md::capability("changedump-manifest")
        .with("from", from)
        .with("until", until);
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
                done.push(p.finish(set, folder_url)?);
            }
            if package.is_none() {
                let n = done.len() as u64 + 1;
                package = Some(PackageWriter::new(
                    folder,
                    &stem(n),
                    md.clone(),
                    &set.cap,
                    Paths::Version,
                )?);
            }
            package
                .as_mut()
                .expect("set above")
                .add(set, f, Some((e.change.as_str(), &e.at)))
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
        done.push(p.finish(set, folder_url)?);
    }
    for (n, p) in done.iter().enumerate() {
        p.record(folder, &stem(n as u64 + 1))?;
    }
    // The day is complete: how many packages it has, and in which layout.
    write_sidecar(
        &folder.join(format!(".{day}.packages")),
        &[&done.len().to_string(), LAYOUT],
    )?;
    Ok(done)
}

/// The packages of a closed day written before (its `.packages` marker is written
/// last), from their sidecar files; `None` if the day is not written completely, or
/// was written by an earlier layout.
fn written_day(folder: &Path, folder_url: &str, day: &str) -> Option<Vec<Package>> {
    let marker = read_sidecar(&folder.join(format!(".{day}.packages")))?;
    day_stems(&marker, day, |name| folder.join(name).exists())?
        .iter()
        .map(|stem| Package::recorded(folder, folder_url, stem))
        .collect()
}

/// The names (without `.zip`) of the packages of a closed day its `marker`'s lines say
/// were written, in order (`has`: whether the day's folder has a file of that name);
/// `None` if the day was written by an earlier layout.
fn day_stems(marker: &[String], day: &str, has: impl Fn(&str) -> bool) -> Option<Vec<String>> {
    if marker.get(1).map(String::as_str) != Some(LAYOUT) {
        return None;
    }
    let count: u64 = marker.first()?.trim().parse().ok()?;
    // A day of one package is `<day>.zip`, unless it was packed in parts (one part:
    // the day shrank between the count and the packing), which any file of its first
    // part shows.
    let whole = count == 1
        && [".zip", "-manifest.xml"]
            .iter()
            .all(|end| !has(&format!("{day}-part-00001{end}")))
        && !has(&format!(".{day}-part-00001.meta"));
    Some(
        (1..=count)
            .map(|n| {
                if whole {
                    day.to_string()
                } else {
                    format!("{day}-part-{n:05}")
                }
            })
            .collect(),
    )
}

/// The packages every day written in the Change Dump folder `folder` (below `www/`)
/// has, as `sidecars` say (the day's Change Dump and the archive list them), by name
/// (without `.zip`). Each can be written again, byte for byte, from the catalog's
/// journal: its manifest holds no time of its writing.
pub(super) fn listed_packages(sidecars: &dyn Sidecars, folder: &str) -> BTreeSet<String> {
    let names = sidecars.names(folder);
    let present: std::collections::HashSet<&str> = names.iter().map(String::as_str).collect();
    let mut out = BTreeSet::new();
    for day in marked_days(&names, "packages") {
        let marker = sidecars
            .lines(&format!("{folder}/.{day}.packages"))
            .unwrap_or_default();
        let has = |name: &str| present.contains(name);
        out.extend(day_stems(&marker, &day, has).unwrap_or_default());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_days_packages_are_named_by_its_marker_and_its_first_parts_files() {
        let day = "2026-11-26";
        let marker = |count: &str, layout: &str| vec![count.to_string(), layout.to_string()];
        let none = |_: &str| false;
        assert_eq!(
            day_stems(&marker("1", LAYOUT), day, none),
            Some(vec![day.to_string()])
        );
        assert_eq!(
            day_stems(&marker("2", LAYOUT), day, none),
            Some(vec![
                format!("{day}-part-00001"),
                format!("{day}-part-00002")
            ])
        );
        // A day packed in one part: any file of that part tells, its sidecar lost or not.
        for file in [
            format!(".{day}-part-00001.meta"),
            format!("{day}-part-00001.zip"),
            format!("{day}-part-00001-manifest.xml"),
        ] {
            assert_eq!(
                day_stems(&marker("1", LAYOUT), day, |n| n == file),
                Some(vec![format!("{day}-part-00001")]),
                "{file}"
            );
        }
        // An earlier layout is written again, not listed.
        assert_eq!(day_stems(&marker("1", "1"), day, none), None);
    }
}

//! The Resource List (§10): the set's current files and their records, with `at` and
//! `completed`. Written as the dated snapshot `resourcelist/<YYYY-MM-DD>.xml` of the UTC
//! day of the publish and copied to the live `resourcelist.xml` (see [`super::archive`]:
//! a day's snapshot is final once the day is over, and the Resource List Archive lists
//! it). Past [`PART_ENTRIES`] files the list is a Resource List Index (§10.2) over parts
//! `resourcelist/<16 hex>.xml`, cut where the content says and named by it
//! ([`super::chunks`]): a part that exists already is listed again, not written, so a
//! day's snapshot costs its index and the parts that changed. A part links the index it
//! was first written for as `rel="index"`; when that day's snapshot passes its
//! retention, the part is linked to the oldest kept index that lists it.
//!
//! Cost follows the changes: an unchanged set (its fingerprint: the journal's last
//! change, the record mapping, `base_url`) leaves the list alone.

use std::fs;
use std::io;

use super::archive;
use super::chunks::{self, Chunker};
use super::files::{atomic_write, list_document, read_sidecar, write_sidecar};
use super::layout::Kind;
use super::{Entry, Ln, Md, PART_ENTRIES, PublishError, Root, Set, SetSpec};
use crate::store::PublishedFile;

/// Writes the Resource List if the set changed, then the Resource List Archive, and
/// removes the parts no kept snapshot lists. Returns the entries written.
pub(super) fn write_resource_list(set: &Set<'_>) -> Result<u64, PublishError> {
    let written =
        archive::refresh_snapshot(set, Kind::ResourceList, &mut |day| write_snapshot(set, day))?;
    relink_parts(set)?;
    chunks::remove_unlisted(set, Kind::ResourceList, "parts", "xml")?;
    Ok(written)
}

/// Writes the snapshot of `day`: one document, or an index over parts. Returns the
/// entries written.
fn write_snapshot(set: &Set<'_>, day: &str) -> Result<u64, PublishError> {
    let SetSpec {
        www,
        base,
        dir,
        cap,
        ..
    } = set.spec;
    let kind = Kind::ResourceList;
    let folder = www.join(format!("{dir}/{}", kind.capability()));
    let doc = www.join(format!("{dir}/{}", kind.dated(day)));
    let index_url = format!("{base}{dir}/{}", kind.dated(day));
    let meta = folder.join(format!(".{day}.meta"));
    let own = [Ln::new("up", cap.to_string()), set.archives_link(kind)];
    // One document, or (counting no further than needed to tell) an index.
    if set.count_current_files(PART_ENTRIES + 1)? <= PART_ENTRIES {
        let written = list_document(&doc, Root::UrlSet, &own, kind.capability(), &mut |w| {
            set.current_files(None, &mut |f| set.write_current(w, f))
                .map(|()| true)
                .map_err(|e| io::Error::other(e.to_string()))
        })?
        .expect("a whole list is always written");
        // The day lists no parts (an earlier, larger list of the day may have).
        write_sidecar(&folder.join(format!(".{day}.parts")), &[])?;
        write_sidecar(&meta, &[&written.at, &written.completed])?;
        return Ok(written.entries);
    }
    // Parts cut where the content says, each written unless it exists already.
    let mut written_entries = 0u64;
    let mut index: Vec<(String, String, String)> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut chunker = Chunker::list(PART_ENTRIES);
    let mut piece: Vec<PublishedFile> = Vec::new();
    let mut failure = None;
    let mut close = |piece: &mut Vec<PublishedFile>| -> Result<(), PublishError> {
        if piece.is_empty() {
            return Ok(());
        }
        let part = write_part(set, day, piece, &index_url)?;
        written_entries += part.written;
        names.push(part.name);
        index.push((part.url, part.at, part.completed));
        piece.clear();
        Ok(())
    };
    set.current_files(None, &mut |f| {
        if failure.is_none() && chunker.cut_before(f) {
            failure = close(&mut piece).err();
        }
        piece.push(f.clone());
        Ok(())
    })?;
    if let Some(e) = failure {
        return Err(e);
    }
    close(&mut piece)?;
    let written = list_document(
        &doc,
        Root::SitemapIndex,
        &own,
        kind.capability(),
        &mut |w| {
            for (loc, at, completed) in &index {
                w.entry(&Entry {
                    loc: loc.clone(),
                    md: Some(
                        Md::default()
                            .with("at", at.clone())
                            .with("completed", completed.clone()),
                    ),
                    ..Entry::default()
                })?;
            }
            Ok(true)
        },
    )?
    .expect("an index is always written");
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    write_sidecar(&folder.join(format!(".{day}.parts")), &names)?;
    write_sidecar(&meta, &[&written.at, &written.completed])?;
    Ok(written_entries)
}

/// A part of a Resource List Index.
#[derive(Debug)]
struct Part {
    name: String,
    url: String,
    at: String,
    completed: String,
    /// Entries written (0 when it existed already).
    written: u64,
}

/// The part holding `files`: written, with `rel="index"` to `index_url` (the index of
/// `day`), unless a part of the same content exists already. Its sidecar
/// `.<name>.meta` keeps its `at`, `completed` and the day of the index it links.
fn write_part(
    set: &Set<'_>,
    day: &str,
    files: &[PublishedFile],
    index_url: &str,
) -> Result<Part, PublishError> {
    let SetSpec {
        www,
        base,
        dir,
        cap,
        ..
    } = set.spec;
    let kind = Kind::ResourceList;
    let folder = www.join(format!("{dir}/{}", kind.capability()));
    let name = chunks::content_name(set, kind, files);
    let path = folder.join(format!("{name}.xml"));
    let meta = folder.join(format!(".{name}.meta"));
    let url = format!("{base}{dir}/{}/{name}.xml", kind.capability());
    if let Some(l) = read_sidecar(&meta).filter(|_| path.exists())
        && let [at, completed, ..] = &l[..]
    {
        return Ok(Part {
            name,
            url,
            at: at.clone(),
            completed: completed.clone(),
            written: 0,
        });
    }
    let lns = [
        Ln::new("up", cap.to_string()),
        Ln::new("index", index_url.to_string()),
    ];
    let w = list_document(&path, Root::UrlSet, &lns, kind.capability(), &mut |w| {
        for f in files {
            set.write_current(w, f)?;
        }
        Ok(true)
    })?
    .expect("a part is always written");
    write_sidecar(&meta, &[&w.at, &w.completed, day])?;
    Ok(Part {
        name,
        url,
        at: w.at,
        completed: w.completed,
        written: w.entries,
    })
}

/// Links every kept part whose index is no longer kept (its day passed the retention)
/// to the oldest kept index that lists it, so no part links a removed document.
fn relink_parts(set: &Set<'_>) -> Result<(), PublishError> {
    let SetSpec { www, base, dir, .. } = set.spec;
    let kind = Kind::ResourceList;
    let folder = www.join(format!("{dir}/{}", kind.capability()));
    let days: Vec<String> = archive::snapshots(set, kind)
        .into_iter()
        .map(|s| s.day)
        .collect();
    let kept = |d: &str| days.iter().any(|k| k == d);
    let mut done = std::collections::HashSet::new();
    for day in &days {
        for name in read_sidecar(&folder.join(format!(".{day}.parts"))).unwrap_or_default() {
            if !done.insert(name.clone()) {
                continue;
            }
            let meta = folder.join(format!(".{name}.meta"));
            let Some(l) = read_sidecar(&meta) else {
                continue;
            };
            let Some(linked) = l.get(2) else { continue };
            if kept(linked) {
                continue;
            }
            let path = folder.join(format!("{name}.xml"));
            let text = fs::read_to_string(&path).map_err(super::files::write_err(&path))?;
            let from = format!("{base}{dir}/{}", kind.dated(linked));
            let to = format!("{base}{dir}/{}", kind.dated(day));
            atomic_write(&path, |out| {
                io::Write::write_all(out, text.replacen(&from, &to, 1).as_bytes())
            })?;
            write_sidecar(&meta, &[&l[0], &l[1], day])?;
        }
    }
    Ok(())
}

//! The Resource List (§10): the set's current files and their records, with `at` and
//! `completed`. Written as the dated snapshot `resourcelist/<YYYY-MM-DD>.xml` of the UTC
//! day of the publish and copied to the live `resourcelist.xml` (see [`super::archive`]:
//! a day's snapshot is final once the day is over, and the Resource List Archive lists
//! it). Past [`PART_ENTRIES`] files the list is a Resource List Index (§10.2) over parts
//! `resourcelist/<day>-part-NNNNN.xml`, each linking the day's index as `rel="index"`.
//!
//! Cost follows the changes: an unchanged set (its fingerprint: the journal's last
//! change, the record mapping, `base_url`) leaves the list alone, and within a day only
//! the parts whose files changed are rewritten.

use std::fs;
use std::io;

use sha2::{Digest, Sha256};

use super::archive;
use super::files::{list_document, read_sidecar, remove_parts, write_sidecar};
use super::layout::Kind;
use super::{Entry, Ln, Md, PART_ENTRIES, PublishError, Root, Set, SetSpec, writer};
use crate::store::Page;

/// Writes the Resource List if the set changed, then the Resource List Archive.
/// Returns the entries written.
pub(super) fn write_resource_list(set: &Set<'_>) -> Result<u64, PublishError> {
    archive::refresh_snapshot(set, Kind::ResourceList, &mut |day| {
        let written = write_snapshot(set, day)?;
        // Parts of the layout before snapshots (`resourcelist/part-NNNNN.xml`).
        let folder = set
            .www
            .join(format!("{}/{}", set.dir, Kind::ResourceList.capability()));
        remove_parts(&folder, "part-", 0);
        Ok(written)
    })
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
        // Parts of an earlier, larger list of the day are gone with the index.
        remove_parts(&folder, &format!("{day}-part-"), 0);
        write_sidecar(&meta, &[&written.at, &written.completed])?;
        return Ok(written.entries);
    }
    // Parts of PART_ENTRIES files until the files run out.
    let mut written_entries = 0u64;
    let mut index = Vec::new();
    let mut after = (0, -1);
    for n in 1.. {
        let Some(part) = write_part(set, day, n, after, &index_url)? else {
            // The part before ended the list exactly.
            break;
        };
        written_entries += part.written;
        after = part.last;
        let full = part.files == PART_ENTRIES;
        index.push((part.url, part.at, part.completed));
        if !full {
            break;
        }
    }
    // Parts of an earlier, larger list of the day beyond the new last part.
    remove_parts(&folder, &format!("{day}-part-"), index.len() as u64);
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
    write_sidecar(&meta, &[&written.at, &written.completed])?;
    // Stamps of parts that are gone.
    for e in fs::read_dir(&folder).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let n: Option<usize> = name
            .strip_prefix(&format!(".{day}-part-"))
            .and_then(|n| n.strip_suffix(".fingerprint"))
            .and_then(|n| n.parse().ok());
        if n.is_some_and(|n| n > index.len()) {
            let _ = fs::remove_file(e.path());
        }
    }
    Ok(written_entries)
}

/// A part [`write_part`] wrote (or found unchanged).
#[derive(Debug)]
struct Part {
    url: String,
    at: String,
    completed: String,
    /// Files in it.
    files: u64,
    /// Entries written (0 when it was unchanged).
    written: u64,
    /// The key of its last file: where the next part starts.
    last: (i64, i64),
}

/// Writes part `n` of the day's index: the next [`PART_ENTRIES`] files after `after`.
/// A part is replaced only when its content changed: the files it lists (version, URL,
/// digest) are fingerprinted as it is written, and a part whose fingerprint is the one
/// recorded is dropped before it replaces anything. New deposits land in the last
/// part, so usually only that one changes. `None` when no file is left.
fn write_part(
    set: &Set<'_>,
    day: &str,
    n: u64,
    after: (i64, i64),
    index_url: &str,
) -> Result<Option<Part>, PublishError> {
    let SetSpec {
        www,
        base,
        dir,
        cap,
        ..
    } = set.spec;
    let kind = Kind::ResourceList;
    let folder = www.join(format!("{dir}/{}", kind.capability()));
    let name = format!("{day}-part-{n:05}.xml");
    let page = Some(Page {
        after,
        limit: PART_ENTRIES,
    });
    let part_stamp = folder.join(format!(".{day}-part-{n:05}.fingerprint"));
    let path = folder.join(&name);
    let recorded = read_sidecar(&part_stamp).filter(|_| path.exists());
    let mut fp = Sha256::new();
    let mut fingerprint = String::new();
    let mut last = after;
    let mut files = 0u64;
    let mut digits = [0u8; 20];
    let lns = [
        Ln::new("up", cap.to_string()),
        Ln::new("index", index_url.to_string()),
    ];
    let written = list_document(&path, Root::UrlSet, &lns, kind.capability(), &mut |w| {
        set.current_files(page, &mut |f| {
            let version = writer::decimal(u64::try_from(f.version_id).unwrap_or(0), &mut digits);
            for piece in [version, " ", &f.url, " ", &f.sha256, "\n"] {
                fp.update(piece.as_bytes());
            }
            last = f.key();
            files += 1;
            set.write_current(w, f)
        })
        .map_err(|e| io::Error::other(e.to_string()))?;
        fingerprint = hex::encode(fp.clone().finalize());
        // No files left: no part.
        Ok(files > 0 && recorded.as_ref().and_then(|l| l.first()) != Some(&fingerprint))
    })?;
    if files == 0 {
        return Ok(None);
    }
    let url = format!("{base}{dir}/{}/{name}", kind.capability());
    Ok(Some(match written {
        Some(w) => {
            write_sidecar(&part_stamp, &[&fingerprint, &w.at, &w.completed])?;
            Part {
                url,
                at: w.at,
                completed: w.completed,
                files,
                written: w.entries,
                last,
            }
        }
        None => {
            // Unchanged: listed with the times recorded when it was written.
            let l = recorded.unwrap_or_default();
            let time = |i: usize| l.get(i).cloned().unwrap_or_default();
            Part {
                url,
                at: time(1),
                completed: time(2),
                files,
                written: 0,
                last,
            }
        }
    }))
}

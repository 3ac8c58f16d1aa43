//! Change Lists (§12): one closed list per UTC day, written once; the open list
//! `changelist.xml` of the days not closed yet; past [`PART_ENTRIES`] files a list is a
//! Change List Index over parts. The closed lists are archived (Archives §5) in
//! `changelist-archive.xml`.

use std::io;
use std::path::Path;

use super::archive::{self, ArchiveEntry};
use super::files::{atomic_replace, atomic_write, read_sidecar, remove_parts, write_sidecar};
use super::layout::{CLOSED_MARK, Kind};
use super::{DocumentWriter, Entry, Ln, Md, PART_ENTRIES, PublishError, Root, Set, SetSpec};
use crate::store::{JournalKey, JournalPage, Timestamp};

/// Days are closed this long after they end, so that a change committed a moment
/// after midnight with an earlier time stamp still lands in its day's list.
const CLOSE_AFTER_SECS: i64 = 300;

/// Closed periods (one per UTC day): (from, until), oldest first.
pub(super) type Periods = Vec<(Timestamp, Timestamp)>;

/// Change Lists (§12), one per UTC day. A day's list is closed (`until`) and written
/// once, a few minutes after the day ends; the open list `changelist.xml` (advertised
/// in the Capability List: `resync --incremental` reads it) covers the days not closed
/// yet; `changelist-archive.xml` (Archives §5) lists every closed list, in order and
/// without gaps, so a Destination reaches all history. Returns the entries written
/// and the closed periods.
pub(super) fn write_change_lists(set: &Set<'_>) -> Result<(u64, Periods), PublishError> {
    let SetSpec { www, base, dir, .. } = set.spec;
    let open_from = set.open_from();
    let mut changes = 0u64;
    let mut closed = Vec::new();
    let mut periods = Vec::new();
    // The days up to the mark were written by an earlier publish.
    let mark_path = www.join(format!(
        "{dir}/{}/{CLOSED_MARK}",
        Kind::ChangeList.capability()
    ));
    let mark = read_sidecar(&mark_path).and_then(|l| l.into_iter().next());
    for (from, until) in set.closed_days()? {
        let day = from.day();
        let name = Kind::ChangeList.dated(&day);
        let path = www.join(format!("{dir}/{name}"));
        let url = format!("{base}{dir}/{name}");
        // Closed lists are never rewritten.
        let done = mark.as_deref().is_some_and(|m| day.as_str() <= m);
        if !done && !path.exists() {
            changes += change_list(set, &path, &url, from, Some(until))?;
        }
        closed.push(ArchiveEntry {
            day: day.clone(),
            loc: url,
            md: Md::default()
                .with("from", from.to_string())
                .with("until", until.to_string()),
        });
        periods.push((from, until));
    }
    let open = www.join(format!("{dir}/{}", Kind::ChangeList.document()));
    let open_url = format!("{base}{dir}/{}", Kind::ChangeList.document());
    changes += change_list(set, &open, &open_url, open_from, None)?;
    archive::write(set, Kind::ChangeList, &closed)?;
    if let Some(last) = periods.last().map(|(from, _)| from.day())
        && mark.as_deref() != Some(last.as_str())
    {
        write_sidecar(&mark_path, &[&last])?;
    }
    Ok((changes, periods))
}

impl SetSpec<'_> {
    /// The start of the days that are not closed yet, as of this publish.
    pub(super) fn open_from(&self) -> Timestamp {
        day_start(self.now.plus(chrono::Duration::seconds(-CLOSE_AFTER_SECS)))
    }
}

impl Set<'_> {
    /// The closed days of the set's publisher, from the day of its first change: (from,
    /// until) of each, oldest first.
    pub(super) fn closed_days(&self) -> Result<Periods, PublishError> {
        let open_from = self.open_from();
        let first = self.catalog.first_change(self.publisher)?.map(day_start);
        let mut out = Vec::new();
        let mut day = first.unwrap_or(open_from);
        while day < open_from {
            let until = day.plus(chrono::Duration::days(1));
            out.push((day, until));
            day = until;
        }
        Ok(out)
    }
}

/// The start of `t`'s UTC day.
fn day_start(t: Timestamp) -> Timestamp {
    Timestamp::from(
        t.get()
            .date_naive()
            .and_time(chrono::NaiveTime::MIN)
            .and_utc(),
    )
}

/// Writes one Change List of the set's changes in [`from`, `until`) at `path` (URL
/// `url`); past [`PART_ENTRIES`] files a Change List Index over parts
/// `<stem>-part-NNNNN.xml` beside it, each with `rel="index"`. Returns the entries.
fn change_list(
    set: &Set<'_>,
    path: &Path,
    url: &str,
    from: Timestamp,
    until: Option<Timestamp>,
) -> Result<u64, PublishError> {
    let SetSpec { cap, .. } = set.spec;
    // A whole list and an index link the archive (Archives §2.2); parts their index.
    let own = [
        Ln::new("up", cap.to_string()),
        set.archives_link(Kind::ChangeList),
    ];
    let mut md = Md::capability("changelist").with("from", from);
    if let Some(u) = until {
        md = md.with("until", u);
    }
    // One document, or (counting no further than needed to tell) an index.
    let total = set.count_journal(from, until, PART_ENTRIES + 1)?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .map_or("changelist".to_string(), |s| {
            if s == "changelist" {
                "open".to_string()
            } else {
                s.to_string()
            }
        });
    let parts_dir = path
        .parent()
        .expect("documents live in folders")
        .join(if stem == "open" { "changelist" } else { "" });
    let part_name = |n: u64| format!("{stem}-part-{n:05}.xml");
    let url_dir = url.rsplit_once('/').map_or("", |(d, _)| d).to_string();
    let part_url_dir = if stem == "open" {
        format!("{url_dir}/changelist")
    } else {
        url_dir.clone()
    };
    if total <= PART_ENTRIES {
        let (count, _, _) = change_list_document(set, path, &md, &own, from, until, None)?;
        remove_parts(&parts_dir, &format!("{stem}-part-"), 0);
        return Ok(count);
    }
    // Parts of PART_ENTRIES files until the changes run out.
    let mut count = 0;
    let mut listed = Vec::new();
    let mut after = None;
    for i in 0.. {
        let name = part_name(i + 1);
        let (n, files, last) = change_list_document(
            set,
            &parts_dir.join(&name),
            &md,
            &[
                Ln::new("up", cap.to_string()),
                Ln::new("index", url.to_string()),
            ],
            from,
            until,
            Some(JournalPage {
                after: after.take(),
                limit: PART_ENTRIES,
            }),
        )?;
        if files == 0 {
            // The part before ended the list exactly (no part was written).
            break;
        }
        count += n;
        after = last;
        listed.push(format!("{part_url_dir}/{name}"));
        if files < PART_ENTRIES {
            break;
        }
    }
    let parts = listed.len() as u64;
    remove_parts(&parts_dir, &format!("{stem}-part-"), parts);
    atomic_write(path, |out| {
        let mut w = DocumentWriter::new(out, Root::SitemapIndex, &own, &md)?;
        for loc in &listed {
            w.entry(&Entry {
                loc: loc.clone(),
                md: Some(
                    md.clone()
                        .0
                        .into_iter()
                        .filter(|(k, _)| *k != "capability")
                        .fold(Md::default(), |m, (k, v)| m.with(k, v)),
                ),
                ..Entry::default()
            })?;
        }
        w.finish().map(drop)
    })?;
    Ok(count)
}

/// One Change List document (a whole list, or one part of an index; a part with no
/// files is not written). Returns its entries, its files and the key of its last file
/// (where the next part starts).
fn change_list_document(
    set: &Set<'_>,
    path: &Path,
    md: &Md,
    lns: &[Ln],
    from: Timestamp,
    until: Option<Timestamp>,
    page: Option<JournalPage>,
) -> Result<(u64, u64, Option<JournalKey>), PublishError> {
    let mut count = 0u64;
    let mut files = 0u64;
    let mut last = None;
    let mut too_large = false;
    let part = page.is_some();
    let result = atomic_replace(path, |out| {
        let mut w = DocumentWriter::new(out, Root::UrlSet, lns, md)?;
        let r = set.journal(from, until, page, &mut |e, f| {
            if w.full(4096) {
                too_large = true;
                // Refused before the rename: the previous document stays in place.
                return Err(io::Error::other("over the Sitemap limits"));
            }
            // A version's record goes first, with the version's change.
            let change = Some((e.change.as_str(), e.at.as_str()));
            if f.first_of_version {
                count += 1;
                set.write_record(&mut w, f, change, None)?;
            }
            count += 1;
            files += 1;
            last = Some(e.key(f));
            set.write_file(&mut w, f, change, None)
        });
        r.map_err(|e| io::Error::other(e.to_string()))?;
        // A part past the last file is not written; a whole list is, even empty.
        if part && files == 0 {
            return Ok(false);
        }
        w.finish().map(|_| true)
    });
    if too_large {
        return Err(PublishError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    result.map(|_| (count, files, last))
}

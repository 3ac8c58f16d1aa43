//! Where a large Resource List is cut into parts and a Resource Dump into packages, and
//! what the pieces are called.
//!
//! The cut points are defined by the content: a piece ends after a deposit whose id
//! hashes to a cut point (once the piece holds [`Chunker::min_files`]), so the pieces
//! are the same from one publish to the next except where the collection changed. A
//! new deposit, an updated one, or one that leaves the set changes the piece it is in,
//! not every piece after it (as cutting every N files would). A piece is also cut when
//! it reaches its limits (files, bytes), which are far above the usual size.
//!
//! A piece is named by its content (16 hex digits of the digest of what it holds and
//! how it is written), so a piece that exists already is not written again and is
//! shared by every snapshot that has it: a day's snapshot costs its index and its
//! changed pieces, not a copy of the list or the dump.

use std::collections::HashSet;
use std::fs;

use sha2::{Digest, Sha256};

use super::files::{is_own_tmp, marked_days, names_in, read_sidecar, write_err};
use super::layout::Kind;
use super::layout::is_day;
use super::{PublishError, Set};
use crate::store::PublishedFile;

/// Decides where pieces end, file by file in the set's (deposit, file) order.
#[derive(Debug)]
pub(super) struct Chunker {
    /// A content-defined cut needs a piece at least this large.
    pub min_files: u64,
    /// One deposit in this many (by its id's hash) is a cut point: the usual size of a
    /// piece is `min_files` plus about this many files.
    pub spacing: u64,
    /// A piece ends at this many files whatever the content.
    pub max_files: u64,
    /// A piece ends before a file that would take it past this many bytes (0: no limit).
    pub max_bytes: u64,
    files: u64,
    bytes: u64,
    deposit: Option<i64>,
}

impl Chunker {
    /// Pieces of Resource List parts: about 10,000 files, at most `max_files`.
    pub(super) fn list(max_files: u64) -> Self {
        Self::new(max_files.min(2_000), 8_192, max_files, 0)
    }

    /// Dump packages: as list parts, and at most `max_bytes` (a single larger file
    /// gets a package of its own).
    pub(super) fn dump(max_files: u64, max_bytes: u64) -> Self {
        Self::new(max_files.min(2_000), 8_192, max_files, max_bytes)
    }

    fn new(min_files: u64, spacing: u64, max_files: u64, max_bytes: u64) -> Self {
        Self {
            min_files,
            spacing: spacing.max(1),
            max_files: max_files.max(1),
            max_bytes,
            files: 0,
            bytes: 0,
            deposit: None,
        }
    }

    /// Whether the piece so far ends before `f` (which then starts the next one).
    pub(super) fn cut_before(&mut self, f: &PublishedFile) -> bool {
        self.cut_before_costing(f, f.length)
    }

    /// [`Chunker::cut_before`], where `f` takes `cost` of the piece's `max_bytes` (a
    /// package's bytes: the file, its record, their ZIP headers and manifest entries).
    pub(super) fn cut_before_costing(&mut self, f: &PublishedFile, cost: u64) -> bool {
        let new_deposit = self.deposit != Some(f.deposit_id);
        let at_cut_point = new_deposit
            && self
                .deposit
                .is_some_and(|d| mix(d.unsigned_abs()).is_multiple_of(self.spacing))
            && self.files >= self.min_files;
        let full = self.files >= self.max_files
            || (self.max_bytes > 0 && self.bytes > 0 && self.bytes + cost > self.max_bytes);
        let cut = self.files > 0 && (at_cut_point || full);
        if cut {
            self.files = 0;
            self.bytes = 0;
        }
        self.files += 1;
        self.bytes += cost;
        self.deposit = Some(f.deposit_id);
        cut
    }
}

/// A fixed, well-spread hash of a deposit id (SplitMix64's finaliser): the cut points
/// must be the same in every publish, on every machine.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The name of the piece of `kind` holding `files`: 16 hex digits of the digest of
/// the files (version, URL, SHA-256) and of how the set writes them (the layout, the
/// record mapping, `base_url` and the set's access).
pub(super) fn content_name(set: &Set<'_>, kind: Kind, files: &[PublishedFile]) -> String {
    let mut h = Sha256::new();
    // The set's fingerprint after its journal position: layout, mapping, base URL.
    h.update(set.fingerprint.split_once(' ').map_or("", |(_, rest)| rest));
    h.update(set.access.as_str().as_bytes());
    h.update(kind.capability().as_bytes());
    for f in files {
        h.update(format!("\n{} {} {}", f.version_id, f.url, f.sha256));
    }
    hex::encode(&h.finalize()[..8])
}

/// Removes the pieces of `kind` (files named `<16 hex>…` in its folder: the piece and
/// what goes with it) that no kept day lists (the days' `.<day>.<listing>` sidecars name
/// their pieces), and anything of an earlier layout that is neither a day's nor a
/// listed piece's. Returns the pieces listed that have no `<piece>.<end>` in the folder.
pub(super) fn remove_unlisted(
    set: &Set<'_>,
    kind: Kind,
    listing: &str,
    end: &str,
) -> Result<Vec<String>, PublishError> {
    let folder = set.www.join(format!("{}/{}", set.dir, kind.capability()));
    let names = names_in(&folder);
    let mut listed = HashSet::new();
    for day in marked_days(&names, listing) {
        listed.extend(read_sidecar(&folder.join(format!(".{day}.{listing}"))).unwrap_or_default());
    }
    for n in &names {
        let bare = n.strip_prefix('.').unwrap_or(n);
        // Another process's temporary file (`.<name>.<pid>.tmp`): under the publish lock
        // no other process writes here, so a process stopped mid-write (a publish or a
        // `plikt migrate` killed) left it. This process's own stay.
        if bare.ends_with(".tmp") {
            if !is_own_tmp(bare) {
                fs::remove_file(folder.join(n)).map_err(write_err(&folder.join(n)))?;
            }
            continue;
        }
        // A day's own files (`<day>.xml`, `.<day>.meta` …) stay.
        if bare.get(..10).is_some_and(is_day) {
            continue;
        }
        let stem = bare.split(['.', '-']).next().unwrap_or(bare);
        if !listed.contains(stem) {
            fs::remove_file(folder.join(n)).map_err(write_err(&folder.join(n)))?;
        }
    }
    let mut lacking: Vec<String> = listed
        .into_iter()
        .filter(|piece| !names.contains(&format!("{piece}.{end}")))
        .collect();
    lacking.sort();
    Ok(lacking)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(deposit: i64, length: u64) -> PublishedFile {
        PublishedFile {
            deposit_id: deposit,
            length,
            ..PublishedFile::default()
        }
    }

    /// The cut points of a list of (deposit, files), as the deposits each piece starts with.
    fn pieces(deposits: &[(i64, u64)], c: &mut Chunker) -> Vec<i64> {
        let mut starts = Vec::new();
        for &(d, n) in deposits {
            for i in 0..n {
                if c.cut_before(&file(d, 10)) || (starts.is_empty() && i == 0) {
                    starts.push(d);
                }
            }
        }
        starts
    }

    #[test]
    fn a_change_moves_only_the_cut_points_near_it() {
        let deposits: Vec<(i64, u64)> = (1..=20_000).map(|d| (d, 3)).collect();
        let before = pieces(&deposits, &mut Chunker::list(20_000));
        assert!(before.len() > 4, "{}", before.len());
        // A deposit in the middle leaves the set.
        let mut fewer = deposits.clone();
        fewer.remove(10_000);
        let after = pieces(&fewer, &mut Chunker::list(20_000));
        let same = before.iter().filter(|d| after.contains(d)).count();
        assert!(same + 1 >= before.len(), "{before:?}\n{after:?}");
    }

    #[test]
    fn limits_cut_whatever_the_content() {
        let mut c = Chunker::list(5);
        let cuts = (0..12).filter(|_| c.cut_before(&file(1, 1))).count();
        assert_eq!(cuts, 2);
        let mut c = Chunker::dump(1_000, 100);
        assert!(!c.cut_before(&file(1, 60)));
        assert!(c.cut_before(&file(2, 60)));
        // A file larger than the limit alone in its package.
        assert!(c.cut_before(&file(3, 500)));
        assert!(c.cut_before(&file(4, 1)));
    }
}

//! The audit of dump packages (`plikt audit`): every package a dump lists read again
//! and compared with its sidecar, and for each that is lost or differs what brings it
//! back ([`Remedy`]): a publish that writes it again from the catalog, or a restore
//! from a backup when only snapshots of past days list it.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::Path;

use super::layout::{CLOSED_MARK, Kind, SET_STATE};
use super::package::{InFolder, Package, Sidecars, dump_parts, hash_of, sidecar_of};
use crate::store::digest_file;

/// What is wrong with a package its dump lists.
enum Wrong {
    /// Its sidecar (its length, hash and times) is gone.
    NoSidecar,
    /// The file is gone.
    Missing(Package),
    /// The file holds other bytes.
    Other {
        listed: Package,
        length: u64,
        hash: String,
    },
    /// The file could not be read.
    Unreadable(io::Error),
}

/// What brings back a package as its dump lists it.
#[derive(Debug, Clone)]
pub(super) enum Remedy {
    /// These files removed (besides the package), then a publish: it is written again
    /// from the catalog, byte for byte. `unsure`: the sidecars read do not list it, or
    /// do not say which snapshot is live, so whether only past snapshots list it is not
    /// known.
    Publish { remove: Vec<String>, unsure: bool },
    /// None: only the Resource Dump snapshots of these past days list it, and plikt
    /// writes again only the live Resource Dump's packages.
    Restore(Vec<String>),
}

impl Remedy {
    /// What the audit says to do for the package `rel` (below `www/`): `there`, whether
    /// a file is in its place (the package, or with an object store its stub);
    /// `object_store`, whether the package is kept there; `dated`, whether its times are
    /// known (a Resource Dump package's sidecar keeps them).
    pub(super) fn advice(&self, rel: &str, there: bool, object_store: bool, dated: bool) -> String {
        match self {
            Remedy::Publish { remove, unsure } => {
                let stub = if object_store {
                    " (its stub, if it is there)"
                } else {
                    ""
                };
                let remove: Vec<String> = there
                    .then(|| format!("`www/{rel}`{stub}"))
                    .into_iter()
                    .chain(remove.iter().map(|f| format!("`www/{f}`")))
                    .collect();
                let (from, there) = if object_store {
                    (" from one worker's data folder", " there")
                } else {
                    ("", "")
                };
                let unsure = if *unsure {
                    "; the dumps' sidecars do not say whether the live dump lists it: if only Resource Dump snapshots of past days do, plikt does not write it again, and a backup must bring it back"
                } else {
                    ""
                };
                let changed = if rel.contains("/resourcedump/") {
                    " (a package of a Resource Dump whose set changed since its last publish is then listed by a past snapshot only, as the next audit says)"
                } else {
                    ""
                };
                let how = if dated {
                    "byte for byte as listed"
                } else {
                    "dated anew, so snapshots of past days that list it no longer match"
                };
                format!(
                    "to have it written again from the catalog, {how}, remove {}{from}, and publish{there}{changed}{unsure}",
                    remove.join(", ")
                )
            }
            Remedy::Restore(days) => format!(
                "only the Resource Dump snapshots of {} list it, and plikt writes again only the live Resource Dump's packages: restore {} (until then a Destination that checks its hash finds it differs)",
                days.join(", "),
                if object_store {
                    "the object from a backup of the bucket"
                } else {
                    "it from a backup of data_dir/www"
                }
            ),
        }
    }
}

/// What brings back packages, as the dumps `sidecars` hold list them: each dump's
/// sidecars read once, when a package of it is first asked for.
pub(super) struct Remedies<'a> {
    sidecars: &'a dyn Sidecars,
    /// `(set, dump)` → its packages and what brings each back.
    listed: HashMap<(String, &'static str), Vec<(String, Remedy)>>,
}

impl<'a> Remedies<'a> {
    pub(super) fn new(sidecars: &'a dyn Sidecars) -> Self {
        Self {
            sidecars,
            listed: HashMap::new(),
        }
    }

    /// What brings back the package `rel` (below `www/`) as its dump lists it; `None`
    /// if its dump does not list it, or `rel` is no dump package's path.
    pub(super) fn listed(&mut self, rel: &str) -> Option<Remedy> {
        let (set, kind, stem) = dump_parts(rel)?;
        self.listed
            .entry((set.to_string(), kind.capability()))
            .or_insert_with(|| listed_in(self.sidecars, set, kind))
            .iter()
            .find_map(|(s, remedy)| (s == stem).then(|| remedy.clone()))
    }

    /// [`Remedies::listed`], or, if its dump does not list it, what brings back a
    /// package of its kind; `None` if `rel` is no dump package's path.
    pub(super) fn of(&mut self, rel: &str) -> Option<Remedy> {
        let (set, kind, _) = dump_parts(rel)?;
        Some(self.listed(rel).unwrap_or_else(|| Remedy::Publish {
            remove: rewritten_with(set, kind).to_vec(),
            unsure: true,
        }))
    }
}

/// Whether only snapshots of past days list the dump package `rel` (below `www/`), as
/// the sidecars in the data folder `www` say: no publish writes it again.
pub(super) fn only_past_snapshots(www: &Path, rel: &str) -> bool {
    matches!(
        Remedies::new(&InFolder(www)).of(rel),
        Some(Remedy::Restore(_))
    )
}

/// What to remove, besides a package of the set `set`'s dump of `kind`, for the next
/// publish to write it again: the set's state, and for a Resource Dump the fingerprint
/// that keeps the day's snapshot, for a Change Dump the mark of the last day packed
/// (then every written day is looked at, and a day that lacks a package is packed
/// again).
pub(super) fn rewritten_with(set: &str, kind: Kind) -> [String; 2] {
    let last = if kind == Kind::ResourceDump {
        format!("{set}/{}", super::archive::fingerprint_file(kind))
    } else {
        format!("{set}/{}/{CLOSED_MARK}", kind.capability())
    };
    [format!("{set}/{SET_STATE}"), last]
}

/// The packages the dump of `kind` of the set `set` lists, as the `sidecars` say,
/// each with what would bring it back.
fn listed_in(sidecars: &dyn Sidecars, set: &str, kind: Kind) -> Vec<(String, Remedy)> {
    let folder = format!("{set}/{}", kind.capability());
    let publish = |unsure| Remedy::Publish {
        remove: rewritten_with(set, kind).to_vec(),
        unsure,
    };
    if kind == Kind::ResourceDump {
        // The day of the snapshot the live Resource Dump copies: its packages are those
        // a publish writes again.
        let fingerprint = format!("{set}/{}", super::archive::fingerprint_file(kind));
        let live = sidecars.lines(&fingerprint).and_then(|l| l.get(1).cloned());
        super::resource_dump::listed_packages(sidecars, &folder)
            .into_iter()
            .map(|(stem, days)| {
                // Past only if the live day is known (a folder without the fingerprint
                // would make every package look past).
                let remedy = match &live {
                    Some(d) if !days.contains(d) => Remedy::Restore(days),
                    Some(_) => publish(false),
                    None => publish(true),
                };
                (stem, remedy)
            })
            .collect()
    } else {
        super::change_dump::listed_packages(sidecars, &folder)
            .into_iter()
            .map(|stem| (stem, publish(false)))
            .collect()
    }
}

/// How the package `<stem>.zip` in `folder` (below `www`) compares with its sidecar;
/// `None` if it is as listed.
fn compare(www: &Path, folder: &str, stem: &str) -> Option<Wrong> {
    let Some(listed) = Package::in_sidecar(&www.join(folder), "", stem) else {
        return Some(Wrong::NoSidecar);
    };
    match digest_file(&www.join(format!("{folder}/{stem}.zip"))) {
        Ok(d) => {
            let hash = hash_of(&d);
            (d.length != listed.length || hash != listed.hash).then_some(Wrong::Other {
                listed,
                length: d.length,
                hash,
            })
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Some(Wrong::Missing(listed)),
        Err(e) => Some(Wrong::Unreadable(e)),
    }
}

/// The dump folders below `www`: `(set, kind)` of every `<set>/resourcedump` and
/// `<set>/changedump` folder.
fn dump_folders(www: &Path) -> Vec<(String, Kind)> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<(String, Kind)>) {
        for e in fs::read_dir(dir).into_iter().flatten().flatten() {
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let name = e.file_name().to_string_lossy().to_string();
            match Kind::dump(&name) {
                Some(kind) if !rel.is_empty() => out.push((rel.to_string(), kind)),
                _ => {
                    let rel = if rel.is_empty() {
                        name
                    } else {
                        format!("{rel}/{name}")
                    };
                    walk(&e.path(), &rel, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(www, "", &mut out);
    out.sort_by(|a, b| (&a.0, a.1.capability()).cmp(&(&b.0, b.1.capability())));
    out
}

/// Every dump package the dumps in the data folder `www` list (with the local folder:
/// the packages of every kept Resource Dump snapshot and every Change Dump day) read
/// again and compared with the length and hash its sidecar recorded, which its dumps
/// list: (packages checked, a line for each that is missing, holds other bytes or cannot
/// be read, saying what brings it back). Those that differ are looked at again after
/// all were read, listed anew, and reported only if they still differ: a publish may
/// be replacing them meanwhile.
pub(super) fn audit_folder(www: &Path) -> (u64, Vec<String>) {
    let sidecars = InFolder(www);
    let mut checked = 0;
    let mut suspects = Vec::new();
    for (set, kind) in dump_folders(www) {
        let folder = format!("{set}/{}", kind.capability());
        for (stem, _) in listed_in(&sidecars, &set, kind) {
            checked += 1;
            if compare(www, &folder, &stem).is_some() {
                suspects.push((set.clone(), kind, stem));
            }
        }
    }
    // Listed anew, each dump once.
    let mut remedies = Remedies::new(&sidecars);
    let mut found = Vec::new();
    for (set, kind, stem) in suspects {
        let folder = format!("{set}/{}", kind.capability());
        let rel = format!("{folder}/{stem}.zip");
        let Some(remedy) = remedies.listed(&rel) else {
            continue;
        };
        if let Some(wrong) = compare(www, &folder, &stem) {
            let there = www.join(&rel).exists();
            found.push(finding(&rel, &wrong, &remedy, there));
        }
    }
    (checked, found)
}

/// The audit's line for the package `rel` (below `www/`) of the data folder; `there`:
/// whether a file is in its place.
fn finding(rel: &str, wrong: &Wrong, remedy: &Remedy, there: bool) -> String {
    let listed = |p: &Package| format!("listed ({} bytes, {})", p.length, p.hash);
    let what = match wrong {
        Wrong::NoSidecar => format!(
            "listed, and its sidecar www/{} (its length, hash and times) is gone",
            sidecar_of(rel)
        ),
        Wrong::Missing(p) => format!("{}, and the file is missing", listed(p)),
        Wrong::Other {
            listed: p,
            length,
            hash,
        } => format!("{}, and the file holds {length} bytes, {hash}", listed(p)),
        Wrong::Unreadable(e) => format!("listed, and the file could not be read: {e}"),
    };
    let dated = !(matches!(wrong, Wrong::NoSidecar) && rel.contains("/resourcedump/"));
    let advice = remedy.advice(rel, there, false, dated);
    format!("www/{rel}: {what} (looked at twice); {advice}")
}
